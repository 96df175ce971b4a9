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
 * - Diagnostics are applied when they are about the text on screen; until the next report, CodeMirror keeps
 *   the previous ones mapped through the edits.
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
import { Annotation, Compartment, EditorState, type Text } from '@codemirror/state';
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { useEffect, useRef } from 'react';
import type { ShownDiagnostic } from './ProblemsPanel';
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
  /** Diagnostics and the source they are about; applied only when that source is what is on screen. */
  diagnostics: { source: string; items: readonly ShownDiagnostic[] } | null;
  onChange(value: string): void;
  /** The editor's handle once it exists (null when it goes away). */
  onReady?(handle: SourceEditorHandle | null): void;
  /** The accessible name of the text area. */
  label: string;
};

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

/** The editor positions of the worker's diagnostics (and the editor's own), in `doc`. */
function toEditorDiagnostics(doc: Text, items: readonly ShownDiagnostic[]): EditorDiagnostic[] {
  return items.map((item) => {
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

export default function SourceEditor({
  docKey,
  value,
  readOnly,
  diagnostics,
  onChange,
  onReady,
  label,
}: SourceEditorProps) {
  const hostRef = useRef<HTMLDivElement>(null);
  const viewRef = useRef<EditorView | null>(null);
  const readOnlyCompartment = useRef(new Compartment());
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
        // Typing `ctx.` offers the workflow context's members (from the engine's declaration); other
        // completions only on request (Ctrl Space).
        autocompletion({ override: [contextCompletions, explicitOnly(localCompletionSource)] }),
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
    view.dispatch(setDiagnostics(view.state, toEditorDiagnostics(view.state.doc, diagnostics.items)));
  }, [diagnostics, docKey]);

  return (
    <div ref={hostRef} style={{ height: '100%' }} data-testid="definitions.editor" data-doc-key={docKey} />
  );
}
