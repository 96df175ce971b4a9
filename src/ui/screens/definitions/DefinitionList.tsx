/**
 * The definitions, as a list of links: this tab's drafts and the saved definitions (every version, newest
 * first, with a dot when this tab has unsaved edits and a warning sign when this tab's engine could not load
 * it), then the built-in demos, marked read-only.
 */
import type { DefinitionInfo } from '../../../public/browser';
import { useStudioMode } from '../../data/studio-mode';
import { Icon } from '../../components/icons';
import { RelativeTime } from '../../components/RelativeTime';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { groupDefinitions } from '../../components/definition-catalog';
import { humanTitle, isChildOnly } from '../../components/definition-names';
import { readDeclaration } from './source-edits';
import { bufferKey, useEditorStore } from './editor-store';
import styles from './DefinitionList.module.css';

/** What is open: a saved or built-in definition by name and version, a draft by id, or nothing. */
export type OpenKey = { kind: 'definition'; name: string; version: number } | { kind: 'draft'; id: string };

export function DefinitionList({
  definitions,
  open,
}: {
  definitions: readonly DefinitionInfo[];
  open: OpenKey | null;
}) {
  const { saved, builtIns } = groupDefinitions(definitions);
  const drafts = useEditorStore((state) => state.drafts);
  const { authoring } = useStudioMode();
  const edits = useEditorStore((state) => state.edits);
  const isOpen = (name: string, version: number) =>
    open?.kind === 'definition' && open.name === name && open.version === version;
  return (
    <nav className={styles.list} aria-label="Definitions" data-testid="definitions.list">
      {!authoring && saved.length === 0 && drafts.length === 0 ? null : (
        <div className={styles.group}>
          <h2 className={styles.groupTitle}>
            {authoring ? 'Your definitions' : 'Saved in the studio'}
            {saved.length > 0 ? <span className={styles.count}>{saved.length}</span> : null}
          </h2>
          {drafts.map((draft) => {
            const text = edits[bufferKey.draft(draft.id)] ?? '';
            const name = readDeclaration(text).name || 'Untitled';
            return (
              <Link
                key={draft.id}
                to={routes.definitions({ draft: draft.id })}
                className={styles.item}
                aria-current={open?.kind === 'draft' && open.id === draft.id ? 'page' : undefined}
                testId="definitions.item"
                data={{ kind: 'draft', name }}
              >
                <Icon name="file" className={styles.icon} />
                <span className={styles.text}>
                  <span className={styles.title}>
                    <span className={styles.name}>{name}</span>
                    <span className={styles.dirty} title="Not saved yet" aria-label="not saved yet" />
                  </span>
                  <span className={styles.meta}>Draft · not saved yet</span>
                </span>
              </Link>
            );
          })}
          {saved.flatMap((group) =>
            group.versions.map((definition, index) => {
              const key = bufferKey.saved(definition.name, definition.version);
              const dirty = edits[key] !== undefined && edits[key] !== definition.source;
              const broken = definition.loadProblems !== null;
              return (
                <Link
                  key={key}
                  to={routes.definitions({ name: definition.name, version: definition.version })}
                  className={`${styles.item} ${index > 0 ? styles.older : ''}`}
                  aria-current={isOpen(definition.name, definition.version) ? 'page' : undefined}
                  testId="definitions.item"
                  data={{
                    kind: 'saved',
                    name: definition.name,
                    version: String(definition.version),
                    dirty: String(dirty),
                  }}
                >
                  <Icon
                    name={broken ? 'alert' : 'file'}
                    className={broken ? styles.iconBroken : styles.icon}
                  />
                  <span className={styles.text}>
                    <span className={styles.title}>
                      <span className={styles.name}>{definition.name}</span>
                      <span className={styles.version}>v{definition.version}</span>
                      {dirty ? (
                        <span className={styles.dirty} title="Unsaved changes" aria-label="unsaved changes" />
                      ) : null}
                    </span>
                    <span className={styles.meta}>
                      {broken ? (
                        'Does not load in this tab'
                      ) : definition.savedAt !== null ? (
                        <>
                          Saved <RelativeTime at={definition.savedAt} />
                        </>
                      ) : (
                        'Saved'
                      )}
                    </span>
                  </span>
                </Link>
              );
            }),
          )}
          {saved.length === 0 && drafts.length === 0 ? (
            <p className={styles.empty} data-testid="definitions.none">
              None yet. Start one with <strong>New definition</strong>, or open a demo below and copy it.
            </p>
          ) : null}
        </div>
      )}
      <div className={styles.group}>
        <h2 className={styles.groupTitle}>
          {authoring ? 'Built-in demos' : 'Deployed with the workers'}
          <Icon name="lock" size={12} className={styles.groupIcon} title="read-only" />
        </h2>
        {builtIns.map((definition) => (
          <Link
            key={definition.name}
            to={routes.definitions({ name: definition.name })}
            className={styles.item}
            aria-current={isOpen(definition.name, definition.version) ? 'page' : undefined}
            testId="definitions.item"
            data={{ kind: 'built-in', name: definition.name, version: String(definition.version) }}
          >
            <Icon name="file" className={styles.icon} />
            <span className={styles.text}>
              <span className={styles.title}>
                <span className={styles.name}>{humanTitle(definition)}</span>
              </span>
              <span className={styles.meta}>
                <code>{definition.name}</code>
                {isChildOnly(definition) ? ' · child workflow' : ''}
              </span>
            </span>
          </Link>
        ))}
      </div>
    </nav>
  );
}
