/**
 * The engines of the database: one card per engine, live or recently dead — label and colour, whether it is
 * this tab's, whether it is alive according to Web Locks, its status, last heartbeat, claims held, result
 * waiters and workflows completed — a chart of claims per engine over time, and per-engine chaos actions
 * sent through the control channel to the tab that hosts the engine: freeze for N seconds, crash, graceful
 * shutdown, restart.
 */
import { useState } from 'react';
import type { EngineRecord } from '../../../host/protocol';
import { Button } from '../../components/Button';
import { CopyableId } from '../../components/CopyableId';
import { EmptyState } from '../../components/EmptyState';
import { EngineChip } from '../../components/EngineChip';
import { ErrorNotice, InlineError } from '../../components/ErrorNotice';
import { PanelErrorBoundary } from '../../components/PanelErrorBoundary';
import { RelativeTime } from '../../components/RelativeTime';
import { formatDuration } from '../../components/time-format';
import { useChaos } from '../../data/chaos';
import { isEngineLive, useEngineDirectory, useEngines } from '../../data/engine-queries';
import { useEngineSamples } from '../../data/engine-samples';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { openEngineTab } from '../../shell/EnginesOverview';
import { useNow } from '../../state/now';
import { ClaimsChart } from './ClaimsChart';
import styles from './EnginesScreen.module.css';
import { ScreenHeader } from '../../components/ScreenHeader';

export function EnginesScreen() {
  const engines = useEngines();
  const list = engines.data ?? [];
  const live = list.filter(isEngineLive);
  const gone = list.filter((engine) => !isEngineLive(engine));
  const ordered = [
    ...live.sort((a, b) => Number(b.thisTab) - Number(a.thisTab) || a.startedAt - b.startedAt),
    ...gone.sort((a, b) => b.lastSeenAt - a.lastSeenAt),
  ];
  return (
    <section className={styles.screen} aria-labelledby="engines-title">
      <ScreenHeader
        titleId="engines-title"
        title="Engines"
        summary={
          engines.data
            ? `${live.length} live · ${gone.length} recently gone · one engine per open tab, all sharing this database`
            : 'Every tab of this database runs an engine.'
        }
        summaryTestId="engines.summary"
      >
        <Button icon="plus" variant="primary" onClick={openEngineTab} testId="engines.open-tab">
          Open engine tab
        </Button>
      </ScreenHeader>
      <PanelErrorBoundary name="claims chart">
        <ChartCard />
      </PanelErrorBoundary>
      {engines.isError && !engines.data ? (
        <ErrorNotice
          error={engines.error}
          title="Could not list the engines"
          onRetry={() => void engines.refetch()}
        />
      ) : !engines.data ? (
        <EmptyState compact title="Loading engines…" />
      ) : (
        <>
          <div className={styles.grid} data-testid="engines.cards">
            {ordered.map((engine) => (
              <PanelErrorBoundary key={engine.engineId} name={`${engine.label} card`}>
                <EngineCard engine={engine} />
              </PanelErrorBoundary>
            ))}
          </div>
          {live.length < 2 ? (
            <div className={styles.hintCard}>
              <EmptyState
                icon="engines"
                title={live.length === 0 ? 'No live engine' : 'Only this tab runs an engine'}
                action={
                  <Button icon="plus" onClick={openEngineTab}>
                    Open another engine tab
                  </Button>
                }
                compact
              >
                Handoffs need a second engine: open the studio in another tab, then freeze, crash or shut this
                one down and watch the other take its workflows over.
              </EmptyState>
            </div>
          ) : null}
        </>
      )}
    </section>
  );
}

function ChartCard() {
  const samples = useEngineSamples();
  const engines = useEngineDirectory();
  const now = useNow();
  return (
    <div className={styles.card}>
      <div className={styles.cardHead}>
        <h2 className={styles.cardTitle}>Claims per engine</h2>
        <span className={styles.cardHint}>Sampled in this tab every second or two · last 5 minutes</span>
      </div>
      <ClaimsChart samples={samples} engines={engines} now={now} />
    </div>
  );
}

const statusTone: Record<string, string> = {
  running: 'success',
  starting: 'info',
  frozen: 'warning',
  stopped: 'neutral',
  crashed: 'danger',
  dead: 'danger',
};

function aliveText(engine: EngineRecord): string {
  if (engine.alive === true) return 'Web Lock held';
  if (engine.alive === false) return 'Web Lock released';
  return 'liveness unknown';
}

function EngineCard({ engine }: { engine: EngineRecord }) {
  const chaos = useChaos();
  const [seconds, setSeconds] = useState('10');
  const now = useNow();
  const live = isEngineLive(engine);
  const pending = (engine.resultWaiters ?? []).filter((waiter) => !waiter.settled).length;
  const settled = (engine.resultWaiters ?? []).length - pending;
  const counters = engine.counters;
  const freezeSeconds = Number(seconds);
  const validFreeze = Number.isFinite(freezeSeconds) && freezeSeconds > 0 && freezeSeconds <= 600;
  const tone = statusTone[engine.status] ?? 'neutral';
  return (
    <article
      className={`${styles.card} ${styles.engine} ${live ? '' : styles.gone} ${engine.thisTab ? styles.self : ''}`}
      id={`engine-${engine.engineId}`}
      data-testid="engines.card"
      data-engine-id={engine.engineId}
      data-status={engine.status}
      aria-label={`${engine.label}${engine.thisTab ? ' (this tab)' : ''}`}
    >
      <header className={styles.engineHead}>
        <EngineChip color={engine.color} shortLabel={engine.shortLabel} size="lg" />
        <div className={styles.engineName}>
          <div className={styles.nameLine}>
            <strong data-testid="engines.card-label">{engine.label}</strong>
            {engine.thisTab ? <span className={styles.badge}>this tab</span> : null}
            {engine.mode === 'viewer' ? (
              <span className={`${styles.badge} ${styles.viewer}`}>viewer</span>
            ) : null}
          </div>
          <CopyableId id={engine.engineId} visibleChars={13} label="engine id" />
        </div>
        <span
          className={`${styles.status} ${styles[tone]}`}
          data-testid="engines.card-status"
          data-state={engine.status}
        >
          <span className={styles.dot} aria-hidden />
          {engine.status}
          {engine.status === 'frozen' && engine.frozenUntil && engine.frozenUntil > now
            ? ` · ${formatDuration(engine.frozenUntil - now, { coarse: true })}`
            : ''}
        </span>
      </header>
      <dl className={styles.facts}>
        <div>
          <dt>Claims held</dt>
          <dd className={styles.big} data-testid="engines.card-claims">
            {live ? engine.claimsHeld : 0}
          </dd>
        </div>
        <div>
          <dt>Completed</dt>
          <dd className={styles.big} data-testid="engines.card-completed">
            {counters?.workflowsCompleted ?? '—'}
          </dd>
        </div>
        <div>
          <dt>Result waiters</dt>
          <dd className={styles.big}>
            <Link to={routes.waiters()} className={styles.plainLink} testId="engines.card-waiters">
              {pending}
              <span className={styles.small}> pending · {settled} settled</span>
            </Link>
          </dd>
        </div>
        <div>
          <dt>Alive</dt>
          <dd
            className={engine.alive === false ? styles.bad : engine.alive ? styles.good : undefined}
            data-testid="engines.card-alive"
          >
            {aliveText(engine)}
          </dd>
        </div>
        <div>
          <dt>Last heartbeat</dt>
          <dd>
            <RelativeTime at={engine.lastSeenAt} />
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <RelativeTime at={engine.startedAt} />
          </dd>
        </div>
      </dl>
      {counters ? (
        <p className={styles.counters}>
          {counters.takeovers} takeover{counters.takeovers === 1 ? '' : 's'} · {counters.claimsLost} claim
          {counters.claimsLost === 1 ? '' : 's'} lost · {counters.writesFencedOut} write
          {counters.writesFencedOut === 1 ? '' : 's'} fenced out · {counters.wakesDiscarded} wake
          {counters.wakesDiscarded === 1 ? '' : 's'} discarded
        </p>
      ) : null}
      {engine.mode === 'engine' ? (
        <footer className={styles.actions}>
          {live ? (
            <>
              <div className={styles.freeze}>
                <label className="visually-hidden" htmlFor={`freeze-${engine.engineId}`}>
                  Freeze for how many seconds
                </label>
                <input
                  id={`freeze-${engine.engineId}`}
                  className={styles.seconds}
                  inputMode="decimal"
                  value={seconds}
                  onChange={(event) => setSeconds(event.target.value)}
                  aria-invalid={!validFreeze}
                  data-testid="engines.freeze-seconds"
                />
                <span className={styles.unit}>s</span>
                <Button
                  size="sm"
                  icon="snowflake"
                  disabled={!validFreeze || engine.status === 'frozen'}
                  busy={chaos.isPending && chaos.variables?.type === 'freeze'}
                  onClick={() =>
                    chaos.mutate({ type: 'freeze', engineId: engine.engineId, seconds: freezeSeconds })
                  }
                  title="Stall the engine's worker: it renews no claims, so after the TTL other engines take its workflows over"
                  testId="engines.freeze"
                >
                  Freeze
                </Button>
              </div>
              <Button
                size="sm"
                variant="danger"
                icon="bolt"
                busy={chaos.isPending && chaos.variables?.type === 'crash'}
                onClick={() => chaos.mutate({ type: 'crash', engineId: engine.engineId })}
                title="Terminate its worker: others take over at once (Web Locks)"
                testId="engines.crash"
              >
                Crash
              </Button>
              <Button
                size="sm"
                icon="power"
                busy={chaos.isPending && chaos.variables?.type === 'shutdown'}
                onClick={() => chaos.mutate({ type: 'shutdown', engineId: engine.engineId })}
                title="Shut down gracefully: release every claim"
                testId="engines.shutdown"
              >
                Shut down
              </Button>
            </>
          ) : null}
          <Button
            size="sm"
            variant="ghost"
            icon="refresh"
            busy={chaos.isPending && chaos.variables?.type === 'restart'}
            onClick={() => chaos.mutate({ type: 'restart', engineId: engine.engineId })}
            title="Start a new engine in the same tab"
            testId="engines.restart"
          >
            Restart
          </Button>
        </footer>
      ) : null}
      {chaos.isError ? <InlineError error={chaos.error} testId="engines.action-error" /> : null}
    </article>
  );
}
