/**
 * This tab's engine in the shell: colour chip, label, status, mode, id and the number of claims it holds.
 */
import { CopyableId } from '../components/CopyableId';
import { EngineChip } from '../components/EngineChip';
import { useConnection, useOwnedWorkflows, useThisEngine } from '../data/engine-queries';
import { engineDisplayStatus } from './engine-status';
import styles from './ThisEngine.module.css';

export function ThisEngine() {
  const { data: engine, error } = useThisEngine();
  const connection = useConnection();
  const owned = useOwnedWorkflows();
  const status = engineDisplayStatus(connection, engine);
  if (!engine)
    return (
      <div className={styles.panel} data-testid="shell.engine">
        <span
          className={styles.placeholder}
          data-testid="shell.engine-status"
          data-state={error ? 'failed' : status.state}
        >
          {error ? 'engine unavailable' : 'connecting to engine…'}
        </span>
      </div>
    );
  const claims = owned.data?.length ?? 0;
  return (
    <div className={styles.panel} data-testid="shell.engine" aria-label="This tab's engine">
      <EngineChip
        color={engine.color}
        shortLabel={engine.shortLabel}
        size="lg"
        title={`${engine.label} (this tab)`}
        testId="shell.engine-chip"
      />
      <div className={styles.lines}>
        <div className={styles.first}>
          <span className={styles.label} data-testid="shell.engine-label">
            {engine.label}
          </span>
          <span className={`${styles.status} ${styles[status.tone]}`} title={status.message}>
            <span className={styles.dot} aria-hidden />
            <span data-testid="shell.engine-status" data-state={status.state}>
              {status.state}
            </span>
          </span>
          <span
            className={`${styles.mode} ${engine.mode === 'viewer' ? styles.viewer : ''}`}
            data-testid="shell.engine-mode"
            title={
              engine.mode === 'viewer' ? 'Observes only: never claims or runs a workflow' : 'Runs workflows'
            }
          >
            {engine.mode}
          </span>
        </div>
        <div className={styles.second}>
          <CopyableId id={engine.engineId} visibleChars={8} label="engine id" testId="shell.engine-id" />
          <span className={styles.sep} aria-hidden>
            ·
          </span>
          <span data-testid="shell.claims-held">
            {claims} {claims === 1 ? 'claim' : 'claims'}
          </span>
          <span className={styles.sep} aria-hidden>
            ·
          </span>
          <span className={styles.db} title="IndexedDB database" data-testid="shell.database">
            db {engine.databaseName}
          </span>
        </div>
      </div>
    </div>
  );
}
