/**
 * The editor panel of the definitions screen, for one definition: a toolbar (name, version, unsaved marker,
 * who saved it when; Run, Rename, Delete, Save — or Copy for a built-in), the notices that need an answer
 * (a version that running workflows use, a saved version this would replace), the source in CodeMirror
 * (loaded lazily), and the problems the worker finds as one types.
 *
 * - Ctrl-S / ⌘-S saves (anywhere on the screen, unless a dialog is open). Nothing is written unless it
 *   compiles; the worker's refusals are shown here in its words.
 * - Saving a changed body under a version that unfinished workflows use is refused with a warning that
 *   offers to bump the version (to the next one nobody saved) and save, or to save anyway.
 * - Saving under another saved definition's name and version (a draft, an edited name) asks first.
 * - Run opens the start dialog on this definition; it starts the newest registered version of the name,
 *   so it needs the edits saved first.
 */
import { lazy, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import type { DefinitionInfo, SaveOutcome } from '../../../public/browser';
import { readDeclaration, templateFrom, unusedName, withVersion } from './source-edits';
import { Button } from '../../components/Button';
import { InlineError } from '../../components/ErrorNotice';
import { Icon } from '../../components/icons';
import { Notice } from '../../components/Notice';
import { RelativeTime } from '../../components/RelativeTime';
import { useCompileAsYouType, useSaveDefinition } from '../../data/definition-queries';
import { useEngineDirectory } from '../../data/engine-queries';
import { useStudioMode } from '../../data/studio-mode';
import { routes } from '../../routing/route';
import { navigate } from '../../routing/router';
import { useViewStore } from '../../state/view-store';
import { findDefinition, takenNames } from '../../components/definition-catalog';
import { humanTitle } from '../../components/definition-names';
import { DeleteDialog, RenameDialog, type RenameResult } from './DefinitionDialogs';
import { bufferKey, useEditorStore } from './editor-store';
import { ProblemsPanel, type ShownDiagnostic, type ShownReport } from './ProblemsPanel';
import { useTypeCheck } from './use-type-check';
import { contextProblems } from './workflow-api';
import type { SourceEditorHandle } from './SourceEditor';
import styles from './DefinitionEditor.module.css';

const SourceEditor = lazy(() => import('./SourceEditor'));

/** What the panel edits: a built-in (read-only), a saved version, or a draft of this tab. */
export type EditorTarget =
  | { kind: 'built-in'; definition: DefinitionInfo }
  | { kind: 'saved'; definition: DefinitionInfo }
  | { kind: 'draft'; id: string };

type Refusal = Exclude<SaveOutcome, { ok: true }>;

/** What waits for the person's answer after they asked to save. */
type Pending =
  | { kind: 'refused'; outcome: Refusal; source: string }
  /** Not sent to the worker: the editor's type checker found problems (type-checker.ts, workflow-api.ts). */
  | { kind: 'type-problems'; count: number; source: string }
  | { kind: 'replace'; name: string; version: number; source: string };

export function keyOf(target: EditorTarget): string {
  return target.kind === 'draft'
    ? bufferKey.draft(target.id)
    : bufferKey.saved(target.definition.name, target.definition.version);
}

/** A message shown once by the panel of a buffer (e.g. after a rename moved there). */
const flashes = new Map<string, string>();

export function DefinitionEditor({
  target,
  definitions,
}: {
  target: EditorTarget;
  definitions: readonly DefinitionInfo[];
}) {
  const key = keyOf(target);
  const definition = target.kind === 'draft' ? null : target.definition;
  const base = definition ? (definition.source ?? '') : null;
  const edited = useEditorStore((state) => state.edits[key]);
  const edit = useEditorStore((state) => state.edit);
  const discard = useEditorStore((state) => state.discard);
  const createDraft = useEditorStore((state) => state.createDraft);
  const removeDraft = useEditorStore((state) => state.removeDraft);
  const openStartDialog = useViewStore((state) => state.openStartDialog);
  const engines = useEngineDirectory();
  const text = edited ?? base ?? '';
  const { authoring } = useStudioMode();
  const readOnly = target.kind === 'built-in' || !authoring;
  const dirty = target.kind === 'draft' || (edited !== undefined && edited !== base);
  const declared = readDeclaration(text);
  const compile = useCompileAsYouType(readOnly ? null : text);
  const typeCheck = useTypeCheck(readOnly ? null : text);
  // The built-in demos' sources sit beside the checked file: a copy of one imports types from another.
  const builtInSources = useMemo(
    () =>
      Object.fromEntries(
        definitions.flatMap((item) =>
          item.builtIn && item.source !== null ? [[item.name, item.source]] : [],
        ),
      ),
    [definitions],
  );
  useEffect(() => typeCheck.client?.setSiblings(builtInSources), [typeCheck.client, builtInSources]);
  const typeResult = typeCheck.result;
  const save = useSaveDefinition();
  const [pending, setPending] = useState<Pending | null>(null);
  const [flash] = useState(() => {
    const message = flashes.get(key) ?? null;
    flashes.delete(key);
    return message;
  });
  const [renaming, setRenaming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const editor = useRef<SourceEditorHandle | null>(null);

  // The engine worker's problems with the source it last compiled, and TypeScript's with the source it last
  // checked (in the editor's own worker: the engine worker strips types without checking them). Until
  // TypeScript has answered (or if it cannot load), the editor's quick check of `ctx` members stands in.
  // A syntax error both report is listed once, as TypeScript words it.
  const { shownReport, compileItems } = useMemo(() => {
    const report = compile.report;
    if (!report || compile.reportedSource === null) return { shownReport: report, compileItems: [] };
    const typeSyntax = typeResult?.problems.some((problem) => problem.kind === 'syntax') ?? false;
    const compiled: ShownDiagnostic[] = report.ok
      ? []
      : report.diagnostics.filter((problem) => !(typeSyntax && problem.kind === 'syntax'));
    const standIn = typeResult ? [] : contextProblems(compile.reportedSource);
    const problems = [...compiled, ...standIn, ...(typeResult?.problems ?? [])];
    const shownReport: ShownReport =
      problems.length === 0 && report.ok ? report : { ok: false, diagnostics: problems };
    return { shownReport, compileItems: [...compiled, ...standIn] };
  }, [compile.report, compile.reportedSource, typeResult]);
  const diagnostics = useMemo(
    () => (compile.reportedSource !== null ? { source: compile.reportedSource, items: compileItems } : null),
    [compileItems, compile.reportedSource],
  );
  const typeDiagnostics = useMemo(
    () => (typeResult ? { source: typeResult.source, items: typeResult.problems } : null),
    [typeResult],
  );

  const submit = (source: string, options: { force?: boolean; replace?: boolean } = {}) => {
    if (readOnly || save.isPending) return;
    // TypeScript's answer if it checked this very text; else the quick check of `ctx` members.
    const typeProblems = typeResult?.source === source ? typeResult.problems : contextProblems(source);
    if (typeProblems.length > 0) {
      setPending({ kind: 'type-problems', count: typeProblems.length, source });
      return;
    }
    const { name, version } = readDeclaration(source);
    if (!options.replace && name !== null && version !== null) {
      const existing = findDefinition(definitions, name, version);
      const same = definition !== null && definition.name === name && definition.version === version;
      if (existing && !existing.builtIn && !same) {
        setPending({ kind: 'replace', name, version, source });
        return;
      }
    }
    setPending(null);
    save.mutate(
      { source, ...(options.force ? { force: true } : {}) },
      {
        onSuccess: (outcome) => {
          if (!outcome.ok) {
            setPending({ kind: 'refused', outcome, source });
            return;
          }
          const savedKey = bufferKey.saved(outcome.name, outcome.version);
          discard(savedKey);
          if (savedKey === key) return;
          if (target.kind === 'draft') removeDraft(target.id);
          else discard(key);
          navigate(routes.definitions({ name: outcome.name, version: outcome.version }), {
            replace: target.kind === 'draft',
          });
        },
      },
    );
  };

  const saveNow = () => {
    if (dirty) submit(text);
  };
  const saveRef = useRef(saveNow);
  useEffect(() => {
    saveRef.current = saveNow;
  });
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey) || event.altKey || event.key.toLowerCase() !== 's') return;
      event.preventDefault();
      if (document.querySelector('dialog[open]')) return;
      saveRef.current();
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);

  const copyAsTemplate = () => {
    if (!definition?.source) return;
    const name = unusedName(`${definition.name}-copy`, takenNames(definitions));
    const id = createDraft(templateFrom(definition.source, name));
    navigate(routes.definitions({ draft: id }));
  };

  const onRenamed = (result: RenameResult) => {
    setRenaming(false);
    const renamedKey = bufferKey.saved(result.name, result.version);
    if (result.oldKept) flashes.set(renamedKey, `Renamed. The old name stays for now: ${result.oldKept}`);
    discard(key);
    discard(renamedKey);
    navigate(routes.definitions({ name: result.name, version: result.version }), { replace: true });
  };

  const onDeleted = (deleted: DefinitionInfo) => {
    setDeleting(false);
    discard(key);
    const next = definitions.find(
      (candidate) => !candidate.builtIn && candidate.name === deleted.name && candidate !== deleted,
    );
    navigate(next ? routes.definitions({ name: next.name, version: next.version }) : routes.definitions(), {
      replace: true,
    });
  };

  const fileName = `${(definition?.name ?? declared.name) || 'untitled'}.ts`;
  const savedBy = definition?.savedBy ? engines.get(definition.savedBy) : undefined;
  const runBlocked = !definition
    ? 'Save it first'
    : !definition.registered
      ? authoring
        ? 'This tab’s engine could not load it'
        : 'The server does not run it: workers load only the definition files they were started with'
      : dirty
        ? 'Save your changes first: Run starts the saved version'
        : null;

  return (
    <div className={styles.panel} data-testid="definitions.editor-panel" data-key={key}>
      <header className={styles.toolbar}>
        <div className={styles.identity}>
          <Icon name={readOnly ? 'lock' : 'file'} className={styles.fileIcon} />
          <div className={styles.identityText}>
            <div className={styles.fileLine}>
              <h2 className={styles.fileName} data-testid="definitions.file-name">
                {fileName}
              </h2>
              {(definition?.version ?? declared.version) !== null ? (
                <span className={styles.versionChip} data-testid="definitions.version">
                  v{definition?.version ?? declared.version}
                </span>
              ) : null}
              {dirty ? (
                <span className={styles.dirty} data-testid="definitions.dirty" title="Not saved yet">
                  {target.kind === 'draft' ? 'Not saved' : 'Unsaved changes'}
                </span>
              ) : null}
            </div>
            <div className={styles.fileMeta}>
              {target.kind === 'built-in' ? (
                <>
                  {authoring ? 'Built-in demo' : 'Deployed with the workers'} ·{' '}
                  {humanTitle(target.definition)} · read-only
                </>
              ) : target.kind === 'draft' ? (
                <>Draft in this tab · save it to run it in every tab</>
              ) : target.definition.savedAt !== null ? (
                <>
                  Saved <RelativeTime at={target.definition.savedAt} testId="definitions.saved-at" />
                  {savedBy ? ` by ${savedBy.label}${savedBy.thisTab ? ' (this tab)' : ''}` : ''}
                </>
              ) : (
                'Saved'
              )}
            </div>
          </div>
        </div>
        <div className={styles.actions}>
          {target.kind === 'built-in' && authoring ? (
            <Button variant="secondary" icon="copy" onClick={copyAsTemplate} testId="definitions.copy">
              Copy as template
            </Button>
          ) : null}
          {target.kind === 'draft' ? (
            <Button
              variant="ghost"
              icon="trash"
              onClick={() => {
                removeDraft(target.id);
                navigate(routes.definitions(), { replace: true });
              }}
              testId="definitions.discard"
            >
              Discard
            </Button>
          ) : null}
          {target.kind === 'saved' && authoring ? (
            <>
              <Button
                variant="ghost"
                icon="pencil"
                label="Rename…"
                onClick={() => setRenaming(true)}
                testId="definitions.rename"
              />
              <Button
                variant="ghost"
                icon="trash"
                label="Delete…"
                onClick={() => setDeleting(true)}
                testId="definitions.delete"
              />
            </>
          ) : null}
          {definition ? (
            <Button
              variant="secondary"
              icon="play"
              onClick={() => openStartDialog(definition.name)}
              disabled={runBlocked !== null}
              title={runBlocked ?? `Start a workflow of ${definition.name}`}
              testId="definitions.run"
            >
              Run
            </Button>
          ) : null}
          {!readOnly ? (
            <Button
              variant="primary"
              icon="save"
              onClick={saveNow}
              disabled={!dirty}
              busy={save.isPending}
              title="Save (Ctrl S)"
              testId="definitions.save"
            >
              Save
            </Button>
          ) : null}
        </div>
      </header>

      <div className={styles.notices}>
        {readOnly && authoring ? (
          <Notice tone="info" title="Built-in demos are read-only" testId="definitions.read-only">
            Copy it to make it your own: the copy imports from <code>&apos;shuttle&apos;</code> and gets a
            name of its own.
          </Notice>
        ) : null}
        {flash ? (
          <Notice tone="info" title="Renamed" testId="definitions.flash">
            {flash}
          </Notice>
        ) : null}
        {definition && !readOnly && definition.loadProblems && !dirty ? (
          <Notice
            tone="danger"
            title="This tab’s engine could not load this version"
            testId="definitions.load-error"
          >
            {definition.loadProblems[0]
              ? `Line ${definition.loadProblems[0].line}: ${definition.loadProblems[0].message}`
              : 'See the problems below.'}
          </Notice>
        ) : null}
        {pending ? (
          <PendingNotice
            pending={pending}
            busy={save.isPending}
            onBump={(version) => {
              const bumped = withVersion(pending.source, version);
              if (bumped === null) return;
              edit(key, bumped);
              submit(bumped);
            }}
            onForce={() => submit(pending.source, { force: true, replace: true })}
            onReplace={() => submit(pending.source, { replace: true })}
            onCancel={() => setPending(null)}
          />
        ) : null}
        {save.isError ? <InlineError error={save.error} testId="definitions.save-error" /> : null}
      </div>

      <div className={styles.editor}>
        <Suspense fallback={<div className={styles.editorLoading}>Loading the editor…</div>}>
          <SourceEditor
            docKey={key}
            value={text}
            readOnly={readOnly}
            diagnostics={readOnly ? null : diagnostics}
            typeDiagnostics={readOnly ? null : typeDiagnostics}
            typeChecker={typeCheck.client}
            label={`Source of ${fileName}`}
            onChange={(next) => {
              if (pending) setPending(null);
              // Typed back to the saved source: nothing is unsaved any more.
              if (target.kind !== 'draft' && next === base) discard(key);
              else edit(key, next);
            }}
            onReady={(handle) => {
              editor.current = handle;
            }}
          />
        </Suspense>
      </div>

      {!readOnly ? (
        <ProblemsPanel
          report={shownReport}
          checking={compile.checking || (!typeCheck.error && typeResult?.source !== text)}
          error={compile.error}
          typeCheckError={typeCheck.error}
          onReveal={(line, column) => editor.current?.reveal(line, column)}
        />
      ) : null}

      <RenameDialog
        definition={renaming ? definition : null}
        source={text}
        definitions={definitions}
        onClose={() => setRenaming(false)}
        onRenamed={onRenamed}
      />
      <DeleteDialog
        definition={deleting ? definition : null}
        onClose={() => setDeleting(false)}
        onDeleted={onDeleted}
      />
    </div>
  );
}

function PendingNotice({
  pending,
  busy,
  onBump,
  onForce,
  onReplace,
  onCancel,
}: {
  pending: Pending;
  busy: boolean;
  onBump: (version: number) => void;
  onForce: () => void;
  onReplace: () => void;
  onCancel: () => void;
}) {
  if (pending.kind === 'type-problems')
    return (
      <Notice tone="danger" title="Not saved: it has problems" testId="definitions.save-refused">
        Fix the {pending.count === 1 ? 'problem' : 'problems'} listed under the editor, then save again.
        Nothing was written.
      </Notice>
    );
  if (pending.kind === 'replace')
    return (
      <Notice
        tone="warning"
        title={`${pending.name} version ${pending.version} is saved already`}
        testId="definitions.replace-warning"
      >
        Saving replaces its source in every tab.
        <span className={styles.noticeActions}>
          <Button size="sm" variant="primary" onClick={onReplace} busy={busy} testId="definitions.replace">
            Replace it
          </Button>
          <Button size="sm" variant="secondary" onClick={onCancel}>
            Cancel
          </Button>
        </span>
      </Notice>
    );
  const { outcome } = pending;
  switch (outcome.reason) {
    case 'invalid':
      return (
        <Notice tone="danger" title="Not saved: it has problems" testId="definitions.save-refused">
          Fix the {outcome.diagnostics.length === 1 ? 'problem' : 'problems'} listed under the editor, then
          save again. Nothing was written.
        </Notice>
      );
    case 'reserved':
      return (
        <Notice tone="danger" title="Not saved: that name is taken" testId="definitions.save-refused">
          {outcome.message}
        </Notice>
      );
    case 'version-in-use':
      return (
        <Notice
          tone="warning"
          title={`${outcome.name} version ${outcome.version} is in use`}
          testId="definitions.version-warning"
        >
          {outcome.message}
          <span className={styles.noticeActions}>
            <Button
              size="sm"
              variant="primary"
              onClick={() => onBump(outcome.suggestedVersion)}
              busy={busy}
              testId="definitions.bump-and-save"
            >
              Bump to version {outcome.suggestedVersion} and save
            </Button>
            <Button
              size="sm"
              variant="danger"
              onClick={onForce}
              disabled={busy}
              testId="definitions.save-anyway"
            >
              Save anyway
            </Button>
            <Button size="sm" variant="ghost" onClick={onCancel}>
              Cancel
            </Button>
          </span>
        </Notice>
      );
  }
}
