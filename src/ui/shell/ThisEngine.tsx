/**
 * This tab's engine in the top bar: colour chip with its short label, label, status (starting, running,
 * frozen — with the time left —, stopped, crashed…), mode, its id (copyable), the claims it holds and its
 * database. In server mode the page runs no engine: the panel names the store and the server it is
 * connected to instead (`ServerPanel`).
 */
import { CopyableId } from '../components/CopyableId';
import { MiddleTruncate } from '../components/MiddleTruncate';
import { EngineChip } from '../components/EngineChip';
import { formatDuration } from '../components/time-format';
import { displayColorOf } from '../data/engine-colors';
import { useConnection, useEngineDirectory, useOwnedWorkflows, useThisEngine } from '../data/engine-queries';
import { useStudioMode } from '../data/studio-mode';
import { Icon } from '../components/icons';
import { useNow } from '../state/now';
import { engineDisplayStatus } from './engine-status';
import styles from './ThisEngine.module.css';

export function ThisEngine() {
  const mode = useStudioMode();
  return mode.server ? <ServerPanel /> : <TabEngine />;
}

/** Server mode: the store this page looks at, and the server it is connected to (it runs no engine here). */
function ServerPanel() {
  const { data: hello, error } = useThisEngine();
  const connection = useConnection();
  const mode = useStudioMode();
  const status = engineDisplayStatus(connection, hello);
  const connected = status.state === 'running';
  const state = error
    ? 'unreachable'
    : !hello
      ? 'connecting'
      : connected
        ? 'connected'
        : status.state === 'crashed' || status.state === 'unresponsive'
          ? 'disconnected'
          : status.state;
  return (
    <div
      className={`${styles.panel} ${styles.server}`}
      data-testid="shell.engine"
      data-mode="server"
      aria-label="The store this page shows, through the studio server"
    >
      <span className={styles.serverIcon} aria-hidden>
        <Icon name="engines" size={18} />
      </span>
      <div className={styles.lines}>
        <div className={styles.first}>
          <span className={styles.store} data-testid="shell.store" title={mode.store ?? undefined}>
            {mode.store ?? 'connecting to the studio server…'}
          </span>
        </div>
        <div className={styles.second}>
          <span
            className={`${styles.status} ${styles[connected ? 'success' : error ? 'danger' : status.tone]}`}
            title={status.message}
          >
            <span className={`${styles.dot} ${connected ? styles.live : ''}`} aria-hidden />
            <span data-testid="shell.engine-status" data-state={connected ? 'running' : state}>
              {state}
            </span>
          </span>
          <span className={styles.sep} aria-hidden>
            ·
          </span>
          <span
            data-testid="shell.server"
            title="The studio server this page is connected to (shuttle serve)"
          >
            to server {mode.host ? `${mode.host.hostName} (pid ${mode.host.pid})` : ''}
          </span>
          <span className={styles.sep} aria-hidden>
            ·
          </span>
          <span
            data-testid="shell.no-engine"
            title="Workflows run in the server's worker processes, not in this page"
          >
            no engine here
          </span>
        </div>
      </div>
    </div>
  );
}

function TabEngine() {
  const { data: engine, error } = useThisEngine();
  const connection = useConnection();
  const owned = useOwnedWorkflows();
  const directory = useEngineDirectory();
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
  // A stopped, crashed or silent engine renews nothing: what it last reported holding has moved on.
  const holdsNothing = ['stopped', 'failed', 'crashed', 'unresponsive'].includes(status.state);
  const claims = holdsNothing ? 0 : (owned.data?.length ?? 0);
  return (
    <div
      className={styles.panel}
      data-testid="shell.engine"
      aria-label="This tab's engine"
      data-engine-id={engine.engineId}
    >
      <EngineChip
        color={directory.get(engine.engineId)?.color ?? displayColorOf(engine)}
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
            <span className={`${styles.dot} ${status.state === 'running' ? styles.live : ''}`} aria-hidden />
            <span data-testid="shell.engine-status" data-state={status.state}>
              {status.state}
            </span>
            {status.state === 'frozen' && engine.status.frozenUntil ? (
              <FrozenFor until={engine.status.frozenUntil} />
            ) : null}
          </span>
          {engine.mode === 'viewer' ? (
            <span
              className={`${styles.mode} ${styles.viewer}`}
              data-testid="shell.engine-mode"
              title="Observes only: never claims or runs a workflow"
            >
              viewer
            </span>
          ) : (
            <span className="visually-hidden" data-testid="shell.engine-mode">
              engine
            </span>
          )}
        </div>
        <div className={styles.second}>
          <span className={styles.keep}>
            <CopyableId id={engine.engineId} visibleChars={8} label="engine id" testId="shell.engine-id" />
          </span>
          <span className={styles.sep} aria-hidden>
            ·
          </span>
          <span data-testid="shell.claims-held" title="Workflows this tab's engine owns right now">
            {claims} {claims === 1 ? 'claim' : 'claims'}
          </span>
          <span className={styles.sep} aria-hidden>
            ·
          </span>
          <span
            className={styles.db}
            title={engine.store ?? `IndexedDB database ${engine.databaseName}`}
            data-testid="shell.database"
          >
            <MiddleTruncate text={engine.databaseName} tail={8} />
          </span>
        </div>
      </div>
    </div>
  );
}

function FrozenFor({ until }: { until: number }) {
  const now = useNow();
  return (
    <span className={styles.until}>{until > now ? formatDuration(until - now, { coarse: true }) : ''}</span>
  );
}
