/**
 * The TypeScript editor of the definitions screen: CodeMirror 6 with TypeScript highlighting, line numbers,
 * folding, bracket matching, search, undo history, and the worker's diagnostics shown inline (underlined,
 * with a gutter marker and the message on hover). The only module that imports CodeMirror; the screen loads
 * it lazily, so the studio's main bundle does not carry it.
 *
 * - Each buffer (`docKey`) gets its own document and undo history; switching back and forth starts afresh
 *   from the buffer's text.
 * - A `value` that differs from the document (the version bumped, the saved source changed in another tab)
 *   replaces it without being reported back as an edit.
 * - Diagnostics come in two sets, each applied when it is about the text on screen: the engine worker's
 *   (compiling and loading the module) and TypeScript's (the type-checking worker). Until a set's next
 *   report, its previous diagnostics stay, mapped through the edits, beside the other set's newer ones.
 * - With the type checker (typecheck-client.ts): hovering a name shows its type and documentation, and
 *   completion offers what TypeScript offers there (after a `.` while typing, anything on Ctrl Space). Until
 *   its worker answers, `ctx.` completes the context's members from the engine's declaration.
 * - Colours come from the studio's CSS variables, so the theme follows light and dark without reconfiguring.
 */
import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  type CompletionContext,
  type CompletionSource,
} from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { javascript, localCompletionSource } from '@codemirror/lang-javascript';
import {
  bracketMatching,
  foldGutter,
  foldKeymap,
  HighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from '@codemirror/language';
import {
  lintGutter,
  lintKeymap,
  setDiagnostics,
  type Diagnostic as EditorDiagnostic,
} from '@codemirror/lint';
import { highlightSelectionMatches, searchKeymap } from '@codemirror/search';
import { Annotation, Compartment, EditorState, type ChangeDesc, type Text } from '@codemirror/state';
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  hoverTooltip,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { useEffect, useRef } from 'react';
import type { ShownDiagnostic } from './ProblemsPanel';
import type { TypeCheckClient } from './typecheck-client';
import { contextCompletions } from './workflow-api';

export type SourceEditorHandle = {
  /** Moves the cursor to a 1-based line and column, scrolls it into view and focuses the editor. */
  reveal(line: number, column: number): void;
  focus(): void;
};

export type SourceEditorProps = {
  /** Which buffer is shown: a new key starts a new document with its own undo history. */
  docKey: string;
  value: string;
  readOnly: boolean;
  /** The engine worker's diagnostics and the source they are about; applied when that source is on screen. */
  diagnostics: DiagnosticSet | null;
  /** TypeScript's diagnostics and the source they are about, likewise. */
  typeDiagnostics?: DiagnosticSet | null;
  /** The type checker, for hover and completion (null: `ctx.` completion from the engine's declaration). */
  typeChecker?: TypeCheckClient | null;
  onChange(value: string): void;
  /** The editor's handle once it exists (null when it goes away). */
  onReady?(handle: SourceEditorHandle | null): void;
  /** The accessible name of the text area. */
  label: string;
};

type DiagnosticSet = { source: string; items: readonly ShownDiagnostic[] };

/** Marks a transaction that sets the document from outside (not an edit by the person). */
const fromOutside = Annotation.define<boolean>();

const highlightStyle = HighlightStyle.define([
  {
    tag: [tags.keyword, tags.modifier, tags.controlKeyword, tags.operatorKeyword],
    color: 'var(--code-keyword)',
  },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: 'var(--code-string)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--code-number)' },
  {
    tag: [tags.comment, tags.lineComment, tags.blockComment, tags.docComment],
    color: 'var(--code-comment)',
    fontStyle: 'italic',
  },
  {
    tag: [tags.function(tags.variableName), tags.function(tags.propertyName)],
    color: 'var(--code-function)',
  },
  { tag: [tags.typeName, tags.className, tags.namespace], color: 'var(--code-type)' },
  { tag: [tags.definition(tags.propertyName), tags.propertyName], color: 'var(--code-property)' },
  { tag: [tags.punctuation, tags.bracket, tags.operator, tags.separator], color: 'var(--code-punctuation)' },
  { tag: tags.invalid, color: 'var(--color-danger)' },
]);

const theme = EditorView.theme({
  '&': {
    height: '100%',
    fontSize: '13px',
    color: 'var(--color-text)',
    backgroundColor: 'var(--color-surface)',
  },
  '&.cm-focused': { outline: 'none' },
  '.cm-scroller': { fontFamily: 'var(--font-mono)', lineHeight: '1.6' },
  '.cm-content': { padding: '10px 0', caretColor: 'var(--color-accent)' },
  '.cm-line': { padding: '0 16px 0 8px' },
  '.cm-gutters': {
    backgroundColor: 'var(--color-surface-muted)',
    color: 'var(--color-text-faint)',
    borderRight: '1px solid var(--color-border)',
  },
  '.cm-lineNumbers .cm-gutterElement': { padding: '0 8px 0 12px', minWidth: '36px' },
  '.cm-activeLine': { backgroundColor: 'var(--code-active-line)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--code-active-line)', color: 'var(--color-text)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--color-accent)', borderLeftWidth: '2px' },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection':
    { backgroundColor: 'var(--code-selection)' },
  '.cm-selectionMatch': { backgroundColor: 'var(--code-selection)' },
  '&.cm-focused .cm-matchingBracket': {
    backgroundColor: 'var(--color-accent-soft)',
    outline: '1px solid color-mix(in srgb, var(--color-accent) 40%, transparent)',
  },
  '.cm-foldPlaceholder': {
    backgroundColor: 'var(--color-neutral-soft)',
    border: '1px solid var(--color-border)',
    color: 'var(--color-text-muted)',
  },
  '.cm-tooltip': {
    backgroundColor: 'var(--color-surface-raised)',
    color: 'var(--color-text)',
    border: '1px solid var(--color-border-strong)',
    borderRadius: 'var(--radius-md)',
    boxShadow: 'var(--shadow-pop)',
    overflow: 'hidden',
  },
  '.cm-tooltip-lint': { maxWidth: '520px' },
  '.cm-type-info': { maxWidth: '560px', padding: '6px 10px' },
  '.cm-type-signature': { fontFamily: 'var(--font-mono)', fontSize: '12px', whiteSpace: 'pre-wrap' },
  '.cm-type-doc': {
    marginTop: '6px',
    fontFamily: 'var(--font-sans)',
    fontSize: '13px',
    color: 'var(--color-text-muted)',
    whiteSpace: 'pre-wrap',
  },
  '.cm-completionInfo': { maxWidth: '420px', padding: '6px 10px' },
  '.cm-diagnostic': { padding: '6px 10px', fontFamily: 'var(--font-sans)', fontSize: '13px' },
  '.cm-diagnostic-error': { borderLeft: '4px solid var(--color-danger)' },
  '.cm-lintRange-error': {
    backgroundImage: 'none',
    textDecoration: 'underline wavy var(--color-danger)',
    textDecorationSkipInk: 'none',
    textUnderlineOffset: '3px',
  },
  '.cm-panels': {
    backgroundColor: 'var(--color-surface-muted)',
    color: 'var(--color-text)',
    borderColor: 'var(--color-border)',
  },
  '.cm-panels input, .cm-panels button': { fontSize: '12px' },
  '.cm-textfield': {
    backgroundColor: 'var(--color-surface)',
    border: '1px solid var(--color-border-strong)',
    borderRadius: 'var(--radius-sm)',
  },
  '.cm-button': {
    backgroundImage: 'none',
    backgroundColor: 'var(--color-surface)',
    border: '1px solid var(--color-border-strong)',
    borderRadius: 'var(--radius-sm)',
    color: 'var(--color-text)',
  },
  '.cm-searchMatch': {
    backgroundColor: 'var(--color-warning-soft)',
    outline: '1px solid var(--color-warning)',
  },
  '.cm-searchMatch.cm-searchMatch-selected': { backgroundColor: 'var(--code-selection)' },
});

/** `source`, answering only when completion was asked for (Ctrl Space), not while typing. */
function explicitOnly(source: CompletionSource): CompletionSource {
  return (context: CompletionContext) => (context.explicit ? source(context) : null);
}

function readOnlyExtensions(readOnly: boolean) {
  return readOnly ? [EditorState.readOnly.of(true)] : [];
}

/** What a diagnostic's hover names as its source. */
const diagnosticSources: Record<ShownDiagnostic['kind'], string> = {
  syntax: 'syntax',
  evaluation: 'loading',
  export: 'export',
  determinism: 'determinism',
  type: 'type',
};

/** The offset of a 1-based line and column in `doc`, within the document. */
function offsetOf(doc: Text, lineNumber: number, column: number): number {
  const line = doc.line(Math.min(Math.max(1, lineNumber), doc.lines));
  return Math.min(line.from + Math.max(0, column - 1), line.to);
}

/**
 * The editor positions of the diagnostics, in `doc`: TypeScript's span exactly; for the others, which give a
 * position only, the word there.
 */
function toEditorDiagnostics(doc: Text, items: readonly ShownDiagnostic[]): EditorDiagnostic[] {
  return items.map((item) => {
    if ('endLine' in item) {
      const from = offsetOf(doc, item.line, item.column);
      const to = Math.max(from, offsetOf(doc, item.endLine, item.endColumn));
      const line = doc.lineAt(from);
      // An empty span (a missing `;`) is underlined on the character before it.
      const start = from === to && from > line.from ? from - 1 : from;
      return {
        from: start,
        to: from === to ? Math.min(start + 1, doc.length) : to,
        severity: 'error',
        source: `${diagnosticSources[item.kind]} · TS${item.code}`,
        message: item.message,
      };
    }
    const line = doc.line(Math.min(Math.max(1, item.line), doc.lines));
    const from = Math.min(line.from + Math.max(0, item.column - 1), line.to);
    const word = /^[\w$]+/.exec(doc.sliceString(from, line.to))?.[0].length ?? 1;
    const to = Math.min(from + Math.max(1, word), line.to);
    return {
      from: from === to && from > line.from ? from - 1 : from,
      to,
      severity: 'error',
      source: diagnosticSources[item.kind],
      message: item.message,
    };
  });
}

/** A set's diagnostics mapped through an edit (dropped when the text they marked is deleted). */
function mapDiagnostics(items: readonly EditorDiagnostic[], changes: ChangeDesc): EditorDiagnostic[] {
  return items.flatMap((item) => {
    const from = changes.mapPos(item.from, 1);
    const to = Math.max(from, changes.mapPos(item.to, -1));
    return from === to && item.from !== item.to ? [] : [{ ...item, from, to }];
  });
}

/** CodeMirror's completion types for TypeScript's kinds of completion. */
const completionTypes: Record<string, string> = {
  method: 'method',
  function: 'function',
  'local function': 'function',
  property: 'property',
  getter: 'property',
  setter: 'property',
  var: 'variable',
  let: 'variable',
  'local var': 'variable',
  parameter: 'variable',
  const: 'constant',
  class: 'class',
  interface: 'interface',
  type: 'type',
  'type parameter': 'type',
  enum: 'enum',
  'enum member': 'enum',
  module: 'namespace',
  keyword: 'keyword',
};

/** A tooltip's text block (a type or documentation). */
function textBlock(text: string, className: string): HTMLElement {
  const element = document.createElement('div');
  element.className = className;
  element.textContent = text;
  return element;
}

/**
 * TypeScript's completions at the cursor: while typing after a `.` or in a word, or anywhere on request
 * (Ctrl Space). Each option's signature and documentation are asked for when it is highlighted.
 */
function typeScriptCompletions(checker: TypeCheckClient): CompletionSource {
  return async (context: CompletionContext) => {
    const word = context.matchBefore(/[\w$]+$/);
    const member = context.matchBefore(/\.\s*[\w$]*$/);
    if (!context.explicit && !member && !word) return null;
    const text = context.state.doc.toString();
    const found = await checker.completions(text, context.pos).catch(() => null);
    if (!found || context.aborted) return null;
    return {
      from: found.from,
      to: Math.max(found.from, found.to),
      options: found.items.map((item) => ({
        label: item.name,
        ...(item.insertText !== undefined ? { apply: item.insertText } : {}),
        type: completionTypes[item.kind] ?? 'text',
        boost: -Math.min(99, Number.parseInt(item.sortText, 10) || 0),
        info: async () => {
          const detail = await checker.completionDetail(text, context.pos, item).catch(() => null);
          if (!detail) return null;
          const box = document.createElement('div');
          box.append(textBlock(detail.signature, 'cm-type-signature'));
          if (detail.doc) box.append(textBlock(detail.doc, 'cm-type-doc'));
          return box;
        },
      })),
      validFor: /^[\w$]*$/,
    };
  };
}

/** TypeScript's type (and documentation) of what the pointer rests on. */
function typeHover(checker: TypeCheckClient) {
  return hoverTooltip(async (view, pos) => {
    const info = await checker.quickInfo(view.state.doc.toString(), pos).catch(() => null);
    if (!info) return null;
    return {
      pos: info.from,
      end: info.to,
      above: true,
      create: () => {
        const dom = document.createElement('div');
        dom.className = 'cm-type-info';
        dom.dataset.testid = 'definitions.type-info';
        dom.append(textBlock(info.type, 'cm-type-signature'));
        if (info.doc) dom.append(textBlock(info.doc, 'cm-type-doc'));
        return { dom };
      },
    };
  });
}

export default function SourceEditor({
  docKey,
  value,
  readOnly,
  diagnostics,
  typeDiagnostics = null,
  typeChecker = null,
  onChange,
  onReady,
  label,
}: SourceEditorProps) {
  const hostRef = useRef<HTMLDivElement>(null);
  const viewRef = useRef<EditorView | null>(null);
  const readOnlyCompartment = useRef(new Compartment());
  // Each set's diagnostics as last applied, kept in step with the edits, so a set's report joins the other's.
  const shownSets = useRef<{ compile: EditorDiagnostic[]; type: EditorDiagnostic[] }>({
    compile: [],
    type: [],
  });
  const onChangeRef = useRef(onChange);
  useEffect(() => {
    onChangeRef.current = onChange;
  }, [onChange]);

  // A new document for every buffer.
  useEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    const state = EditorState.create({
      doc: value,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        foldGutter(),
        drawSelection(),
        indentOnInput(),
        syntaxHighlighting(highlightStyle),
        bracketMatching(),
        closeBrackets(),
        // TypeScript's completions; without the type checker, typing `ctx.` offers the workflow context's
        // members (from the engine's declaration), other completions only on request (Ctrl Space).
        autocompletion({
          override: typeChecker
            ? [typeScriptCompletions(typeChecker)]
            : [contextCompletions, explicitOnly(localCompletionSource)],
        }),
        ...(typeChecker ? [typeHover(typeChecker)] : []),
        highlightActiveLine(),
        highlightSelectionMatches(),
        keymap.of([
          ...closeBracketsKeymap,
          ...defaultKeymap,
          ...searchKeymap,
          ...historyKeymap,
          ...foldKeymap,
          ...lintKeymap,
          indentWithTab,
        ]),
        javascript({ typescript: true }),
        lintGutter(),
        readOnlyCompartment.current.of(readOnlyExtensions(readOnly)),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          const sets = shownSets.current;
          sets.compile = mapDiagnostics(sets.compile, update.changes);
          sets.type = mapDiagnostics(sets.type, update.changes);
          if (update.transactions.some((transaction) => transaction.annotation(fromOutside))) return;
          onChangeRef.current(update.state.doc.toString());
        }),
        // The text is focusable as it is editable (read-only sources too: CodeMirror keeps it editable and
        // marks it aria-readonly), so a keyboard reaches and scrolls all of it. tabindex 0 changes no tab
        // order; it says so to checkers that do not count contenteditable as focusable (axe's
        // scrollable-region-focusable, on sources longer than the editor).
        EditorView.contentAttributes.of({
          'aria-label': label,
          'data-testid': 'definitions.editor-content',
          tabindex: '0',
        }),
        theme,
      ],
    });
    const view = new EditorView({ state, parent: host });
    viewRef.current = view;
    onReady?.({
      reveal(line, column) {
        const doc = view.state.doc;
        const target = doc.line(Math.min(Math.max(1, line), doc.lines));
        const pos = Math.min(target.from + Math.max(0, column - 1), target.to);
        view.dispatch({
          selection: { anchor: pos },
          effects: EditorView.scrollIntoView(pos, { y: 'center' }),
        });
        view.focus();
      },
      focus: () => view.focus(),
    });
    shownSets.current = { compile: [], type: [] };
    return () => {
      onReady?.(null);
      view.destroy();
      viewRef.current = null;
    };
    // The document is created once per buffer; later values and settings are applied by the effects below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [docKey]);

  useEffect(() => {
    const view = viewRef.current;
    if (!view || view.state.doc.toString() === value) return;
    view.dispatch({
      changes: { from: 0, to: view.state.doc.length, insert: value },
      annotations: fromOutside.of(true),
    });
  }, [value]);

  useEffect(() => {
    viewRef.current?.dispatch({
      effects: readOnlyCompartment.current.reconfigure(readOnlyExtensions(readOnly)),
    });
  }, [readOnly]);

  useEffect(() => {
    const view = viewRef.current;
    if (!view || !diagnostics || view.state.doc.toString() !== diagnostics.source) return;
    const sets = shownSets.current;
    sets.compile = toEditorDiagnostics(view.state.doc, diagnostics.items);
    view.dispatch(setDiagnostics(view.state, [...sets.compile, ...sets.type]));
  }, [diagnostics, docKey]);

  useEffect(() => {
    const view = viewRef.current;
    if (!view || !typeDiagnostics || view.state.doc.toString() !== typeDiagnostics.source) return;
    const sets = shownSets.current;
    sets.type = toEditorDiagnostics(view.state.doc, typeDiagnostics.items);
    view.dispatch(setDiagnostics(view.state, [...sets.compile, ...sets.type]));
  }, [typeDiagnostics, docKey]);

  return (
    <div ref={hostRef} style={{ height: '100%' }} data-testid="definitions.editor" data-doc-key={docKey} />
  );
}
