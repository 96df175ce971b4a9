/**
 * The definitions screen: write workflows of one's own in TypeScript, in the browser. A list of the
 * definitions (drafts and saved versions, then the built-in demos) beside an editor for the one in the URL
 * (`#/definitions/<name>?v=<version>`, or `?draft=<id>` for a draft of this tab). Saved definitions are
 * registered by every tab's engine at once, so what is written here runs, and is taken over, anywhere.
 */
import { blankDefinition, unusedName } from './source-edits';
import type { DefinitionInfo } from '../../../public/browser';
import { Button } from '../../components/Button';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PanelErrorBoundary } from '../../components/PanelErrorBoundary';
import { useDefinitions } from '../../data/workflow-queries';
import { useStudioMode } from '../../data/studio-mode';
import { Notice } from '../../components/Notice';
import { routes, type DefinitionSelection } from '../../routing/route';
import { navigate } from '../../routing/router';
import { findDefinition, takenNames } from '../../components/definition-catalog';
import { DefinitionEditor, keyOf, type EditorTarget } from './DefinitionEditor';
import { DefinitionList, type OpenKey } from './DefinitionList';
import { useEditorStore } from './editor-store';
import styles from './DefinitionsScreen.module.css';
import { ScreenHeader } from '../../components/ScreenHeader';

/** Starts a draft from the blank template, named so that it clashes with nothing, and opens it. */
export function startBlankDraft(definitions: readonly DefinitionInfo[]): void {
  const id = useEditorStore
    .getState()
    .createDraft(blankDefinition(unusedName('my-workflow', takenNames(definitions))));
  navigate(routes.definitions({ draft: id }));
}

type Resolved =
  | { kind: 'open'; target: EditorTarget }
  | { kind: 'missing'; what: string }
  | { kind: 'nothing' }
  | { kind: 'loading' };

function resolve(
  selection: DefinitionSelection,
  definitions: readonly DefinitionInfo[] | undefined,
  draftIds: ReadonlySet<string>,
): Resolved {
  if (selection.draft !== null)
    return draftIds.has(selection.draft)
      ? { kind: 'open', target: { kind: 'draft', id: selection.draft } }
      : {
          kind: 'missing',
          what: 'This draft is gone: drafts live only in the tab that made them, until saved.',
        };
  if (selection.name === null) return { kind: 'nothing' };
  if (!definitions) return { kind: 'loading' };
  const definition = findDefinition(definitions, selection.name, selection.version);
  if (!definition)
    return {
      kind: 'missing',
      what: `There is no definition “${selection.name}”${selection.version !== null ? ` version ${selection.version}` : ''}: it may have been deleted or renamed in another tab.`,
    };
  return { kind: 'open', target: { kind: definition.builtIn ? 'built-in' : 'saved', definition } };
}

export function DefinitionsScreen({ selection }: { selection: DefinitionSelection }) {
  const definitions = useDefinitions();
  const { authoring, server } = useStudioMode();
  const drafts = useEditorStore((state) => state.drafts);
  const draftIds = new Set(drafts.map((draft) => draft.id));
  const resolved = resolve(selection, definitions.data, draftIds);

  const startDraft = () => startBlankDraft(definitions.data ?? []);

  const open: OpenKey | null =
    resolved.kind !== 'open'
      ? null
      : resolved.target.kind === 'draft'
        ? { kind: 'draft', id: resolved.target.id }
        : {
            kind: 'definition',
            name: resolved.target.definition.name,
            version: resolved.target.definition.version,
          };

  return (
    <section className={styles.screen} aria-labelledby="definitions-title">
      <ScreenHeader
        titleId="definitions-title"
        title="Definitions"
        summary={
          authoring ? (
            <>
              Write workflows in TypeScript. A saved definition runs in every tab, and any tab can take it
              over.
            </>
          ) : (
            <>The workflows the server’s workers run, as deployed with them. Read-only here.</>
          )
        }
      >
        {authoring ? (
          <Button
            variant="primary"
            icon="plus"
            onClick={startDraft}
            disabled={!definitions.data}
            testId="definitions.new"
          >
            New definition
          </Button>
        ) : null}
      </ScreenHeader>
      {!authoring ? (
        <Notice tone="info" title="Authoring is off in server mode" testId="definitions.server-read-only">
          {server ? 'Definitions are deployed with the workers' : 'Definitions come from the engine'}: a
          worker runs the definition files it was started with (<code>shuttle worker --workflows …</code>),
          and the browser cannot make a server run code. The studio shows them here read-only; to change one,
          edit its file and restart the workers.
        </Notice>
      ) : null}
      {definitions.isError && !definitions.data ? (
        <ErrorNotice
          error={definitions.error}
          title="Could not read the definitions"
          onRetry={() => void definitions.refetch()}
        />
      ) : (
        <div className={styles.layout}>
          <div className={`${styles.card} ${styles.listCard}`}>
            <PanelErrorBoundary name="definition list">
              {definitions.data ? (
                <DefinitionList definitions={definitions.data} open={open} />
              ) : (
                <EmptyState compact title="Loading definitions…" />
              )}
            </PanelErrorBoundary>
          </div>
          <div className={`${styles.card} ${styles.editorCard}`}>
            <PanelErrorBoundary name="editor">
              {resolved.kind === 'open' ? (
                <DefinitionEditor
                  key={keyOf(resolved.target)}
                  target={resolved.target}
                  definitions={definitions.data ?? []}
                />
              ) : resolved.kind === 'loading' || (resolved.kind === 'nothing' && !definitions.data) ? (
                <EmptyState compact title="Loading…" />
              ) : !authoring && resolved.kind !== 'missing' ? (
                <EmptyState icon="code" title="Pick a definition" testId="definitions.empty">
                  Choose one on the left to read its source. The workers run these definitions.
                </EmptyState>
              ) : (
                <EmptyState
                  icon="code"
                  title={resolved.kind === 'missing' ? 'Not found' : 'Write a workflow of your own'}
                  testId="definitions.empty"
                  action={
                    <Button variant="primary" icon="plus" onClick={startDraft}>
                      New definition
                    </Button>
                  }
                >
                  {resolved.kind === 'missing' ? (
                    resolved.what
                  ) : (
                    <ol className={styles.steps}>
                      <li>
                        Start from a blank definition, or open a built-in demo and copy it. A definition is a
                        TypeScript module whose default export is <code>defineWorkflow(&#123; … &#125;)</code>
                        .
                      </li>
                      <li>Save it with Ctrl S: every open tab registers it at once.</li>
                      <li>
                        Run it from here or from Workflows. Close the tab that runs it: another takes it over.
                      </li>
                    </ol>
                  )}
                </EmptyState>
              )}
            </PanelErrorBoundary>
          </div>
        </div>
      )}
    </section>
  );
}
