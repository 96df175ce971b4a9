/**
 * The engines of the store: one card per engine, live or recently dead — label and colour, whether it is
 * this tab's, whether it is alive (its Web Lock in tab mode, its PostgreSQL advisory lock for a server
 * process), its status, last heartbeat, claims held (counted from the claims table, the store's truth),
 * result waiters and workflows completed — a chart of claims per engine over time, and chaos actions.
 *
 * Tab mode: each card's actions go through the control channel to the tab that hosts the engine — freeze
 * for N seconds, crash, graceful shutdown, and restart (for a live, crashed or stopped engine whose page is
 * still open and hosts it). A card whose tab is closed says so ("tab closed") instead of offering Restart,
 * and one whose tab restarted into a newer engine says that: the page's Web Lock `shuttle-tab:<engineId>`
 * (`tabOpen`) tells them apart from a stopped engine of an open tab (engine-cards.ts).
 * Server mode: engines are processes (host, pid). On a fleet the server controls (`shuttle dev`), each
 * worker's card offers kill (SIGKILL), freeze (SIGSTOP for N seconds, then SIGCONT), thaw and graceful stop
 * (SIGTERM), and the screen offers to start one more worker; a server that controls no fleet offers none.
 * Below the engines, how much room the store they share takes (StorageCard.tsx).
 */
import { useState, type ReactNode } from 'react';
import type { ClaimInfo } from '../../../public';
import type { EngineRecord, FleetProcess } from '../../../public/browser';
import { Button } from '../../components/Button';
import { ConfirmButton } from '../../components/ConfirmButton';
import { CopyableId } from '../../components/CopyableId';
import { EmptyState } from '../../components/EmptyState';
import { EngineChip } from '../../components/EngineChip';
import { ErrorNotice, InlineError } from '../../components/ErrorNotice';
import { PanelErrorBoundary } from '../../components/PanelErrorBoundary';
import { RelativeTime } from '../../components/RelativeTime';
import { formatDuration } from '../../components/time-format';
import { useChaos } from '../../data/chaos';
import { isEngineLive, useClaims, useEngineDirectory, useEngines } from '../../data/engine-queries';
import { useEngineSamples } from '../../data/engine-samples';
import {
  fleetActionsFor,
  livenessText,
  processOf,
  useFleet,
  useFleetAction,
  useStudioMode,
} from '../../data/studio-mode';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { openEngineTab, StartWorkerButton } from '../../components/AddEngine';
import { useNow } from '../../state/now';
import { ClaimsChart } from './ClaimsChart';
import { StorageCard } from './StorageCard';
import { claimsHeldBy, canRestart, tabStateOf, type TabState } from './engine-cards';
import styles from './EnginesScreen.module.css';
import { ScreenHeader } from '../../components/ScreenHeader';

export function EnginesScreen() {
  const engines = useEngines();
  const mode = useStudioMode();
  const fleet = useFleet();
  const claims = useClaims().data;
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
          mode.server
            ? engines.data
              ? `${live.length} live · ${gone.length} recently gone · processes sharing ${mode.store ?? 'the store'}${fleet.data?.controlled ? ' · the studio server controls the workers it started' : ''}`
              : 'Every process on this store runs an engine.'
            : engines.data
              ? `${live.length} live · ${gone.length} recently gone · one engine per open tab, all sharing this database`
              : 'Every tab of this database runs an engine.'
        }
        summaryTestId="engines.summary"
      >
        {mode.server ? (
          <StartWorkerButton size="md" variant="primary" testId="engines.start-worker" />
        ) : (
          <Button icon="plus" variant="primary" onClick={openEngineTab} testId="engines.open-tab">
            Open engine tab
          </Button>
        )}
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
                <EngineCard
                  engine={engine}
                  tab={tabStateOf(engine, list)}
                  claims={claims}
                  server={mode.server}
                  process={processOf(engine, fleet.data?.processes)}
                  controlled={fleet.data?.controlled ?? false}
                />
              </PanelErrorBoundary>
            ))}
          </div>
          {mode.server ? (
            live.filter((engine) => engine.mode === 'engine').length < 2 ? (
              <div className={styles.hintCard}>
                <EmptyState
                  icon="engines"
                  title={
                    live.some((engine) => engine.mode === 'engine')
                      ? 'Only one worker runs'
                      : 'No worker process runs'
                  }
                  action={
                    <StartWorkerButton size="md" variant="secondary" testId="engines.hint-start-worker" />
                  }
                  compact
                >
                  Handoffs need a second worker. Start one with <code>shuttle worker --database-url …</code>
                  {fleet.data?.controlled ? ', or here' : ''}.
                </EmptyState>
              </div>
            ) : null
          ) : live.length < 2 ? (
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
      <PanelErrorBoundary name="storage">
        <StorageCard />
      </PanelErrorBoundary>
    </section>
  );
}

function ChartCard() {
  const samples = useEngineSamples();
  const engines = useEngineDirectory();
  const now = useNow();
  const { server } = useStudioMode();
  return (
    <div className={styles.card}>
      <div className={styles.cardHead}>
        <h2 className={styles.cardTitle}>Claims per engine</h2>
        <span className={styles.cardHint}>
          Sampled by this {server ? 'page' : 'tab'} every second or two · last 5 minutes
        </span>
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

type EngineCardProps = {
  engine: EngineRecord;
  /** What became of the engine's page (tab mode). */
  tab: TabState;
  claims: readonly ClaimInfo[] | undefined;
  server: boolean;
  /** Server mode: the worker process of the controlled fleet that runs this engine. */
  process: FleetProcess | undefined;
  controlled: boolean;
};

function EngineCard({ engine, tab, claims, server, process, controlled }: EngineCardProps) {
  const chaos = useChaos();
  const fleetAction = useFleetAction();
  const [seconds, setSeconds] = useState('10');
  const now = useNow();
  const live = isEngineLive(engine);
  const pending = (engine.resultWaiters ?? []).filter((waiter) => !waiter.settled).length;
  const settled = (engine.resultWaiters ?? []).length - pending;
  const counters = engine.counters;
  const freezeSeconds = Number(seconds);
  const validFreeze = Number.isFinite(freezeSeconds) && freezeSeconds > 0 && freezeSeconds <= 600;
  const frozenProcess = process?.state === 'frozen';
  const status = frozenProcess && isEngineLive(engine) ? 'frozen' : engine.status;
  const tone = statusTone[status] ?? 'neutral';
  const runtime = engine.runtime?.kind === 'server' ? engine.runtime : null;
  const self = engine.thisTab ? (server ? 'this server' : 'this tab') : null;
  /** A chaos button's busy state and click: this engine, by this tab. */
  const chaosAction = (type: 'crash' | 'shutdown' | 'restart') => ({
    busy: chaos.isPending && chaos.variables?.type === type,
    onClick: () => chaos.mutate({ type, engineId: engine.engineId }),
  });
  return (
    <article
      className={`${styles.card} ${styles.engine} ${live ? '' : styles.gone} ${engine.thisTab ? styles.self : ''}`}
      id={`engine-${engine.engineId}`}
      data-testid="engines.card"
      data-engine-id={engine.engineId}
      data-status={status}
      data-tab={tab}
      data-pid={runtime?.pid}
      aria-label={`${engine.label}${self ? ` (${self})` : ''}`}
    >
      <header className={styles.engineHead}>
        <EngineChip
          color={engine.color}
          shortLabel={engine.shortLabel}
          size="lg"
          testId="engines.card-chip"
        />
        <div className={styles.engineName}>
          <div className={styles.nameLine}>
            <strong data-testid="engines.card-label">{engine.label}</strong>
            {self ? <span className={styles.badge}>{self}</span> : null}
            {!server && tab === 'closed' ? (
              <span className={styles.badge} data-testid="engines.card-tab-closed">
                tab closed
              </span>
            ) : null}
            {engine.mode === 'viewer' ? (
              <span
                className={`${styles.badge} ${styles.viewer}`}
                title={server ? 'Observes the store for the studio; never claims a workflow' : undefined}
              >
                {server ? 'observer' : 'viewer'}
              </span>
            ) : null}
          </div>
          {runtime ? (
            <span className={styles.process} data-testid="engines.card-process">
              {runtime.hostName} · pid {runtime.pid}
              {process?.exit ? ` · exited (${process.exit})` : ''}
            </span>
          ) : null}
          <CopyableId id={engine.engineId} visibleChars={13} label="engine id" />
        </div>
        <span
          className={`${styles.status} ${styles[tone]}`}
          data-testid="engines.card-status"
          data-state={status}
        >
          <span className={styles.dot} aria-hidden />
          {status}
          {status === 'frozen' && engine.frozenUntil && engine.frozenUntil > now
            ? ` · ${formatDuration(engine.frozenUntil - now, { coarse: true })}`
            : ''}
        </span>
      </header>
      <dl className={styles.facts}>
        <Fact term="Claims held" className={styles.big} testId="engines.card-claims">
          {claimsHeldBy(engine, claims)}
        </Fact>
        <Fact term="Completed" className={styles.big} testId="engines.card-completed">
          {counters?.workflowsCompleted ?? '—'}
        </Fact>
        <Fact term="Result waiters" className={styles.big}>
          <Link to={routes.waiters()} className={styles.plainLink} testId="engines.card-waiters">
            {pending}
            <span className={styles.small}> pending · {settled} settled</span>
          </Link>
        </Fact>
        <Fact
          term="Alive"
          className={engine.alive === false ? styles.bad : engine.alive ? styles.good : undefined}
          testId="engines.card-alive"
        >
          {livenessText(engine)}
        </Fact>
        <Fact term="Last heartbeat">
          <RelativeTime at={engine.lastSeenAt} />
        </Fact>
        <Fact term="Started">
          <RelativeTime at={engine.startedAt} />
        </Fact>
      </dl>
      {counters ? (
        <p className={styles.counters}>
          {counters.takeovers} takeover{counters.takeovers === 1 ? '' : 's'} · {counters.claimsLost} claim
          {counters.claimsLost === 1 ? '' : 's'} lost · {counters.writesFencedOut} write
          {counters.writesFencedOut === 1 ? '' : 's'} fenced out · {counters.wakesDiscarded} wake
          {counters.wakesDiscarded === 1 ? '' : 's'} discarded
        </p>
      ) : null}
      {!server && engine.mode === 'engine' ? (
        <footer className={styles.actions}>
          {live ? (
            <>
              <FreezeControl
                engineId={engine.engineId}
                label="Freeze for how many seconds"
                seconds={seconds}
                setSeconds={setSeconds}
                valid={validFreeze}
                disabled={engine.status === 'frozen'}
                busy={chaos.isPending && chaos.variables?.type === 'freeze'}
                onFreeze={() =>
                  chaos.mutate({ type: 'freeze', engineId: engine.engineId, seconds: freezeSeconds })
                }
                title="Stall the engine's worker: it renews no claims, so after the TTL other engines take its workflows over"
              />
              <ConfirmButton
                size="sm"
                variant="danger"
                icon="bolt"
                busy={chaosAction('crash').busy}
                onConfirm={chaosAction('crash').onClick}
                title="Terminate its worker: others take over at once (Web Locks)"
                testId="engines.crash"
                confirm={{
                  title: `Crash ${engine.label}?`,
                  body: 'Its worker is terminated at once, in the middle of whatever it runs. The other engines take its workflows over; an activity it was running runs again there. Its tab stays open and can restart an engine.',
                  submit: 'Crash',
                }}
              >
                Crash
              </ConfirmButton>
              <Button
                size="sm"
                icon="power"
                {...chaosAction('shutdown')}
                title="Shut down gracefully: release every claim"
                testId="engines.shutdown"
              >
                Shut down
              </Button>
            </>
          ) : null}
          {!live && (tab === 'closed' || tab === 'replaced') ? (
            <p className={styles.tabGone} data-testid="engines.tab-gone" data-tab={tab}>
              {tab === 'closed'
                ? 'Its tab is closed: nothing can restart this engine. Open another engine tab to run one more.'
                : `Its tab runs a newer engine of ${engine.label} now: this one cannot be restarted.`}
            </p>
          ) : null}
          {canRestart(engine) ? (
            <Button
              size="sm"
              variant="ghost"
              icon="refresh"
              {...chaosAction('restart')}
              title="Start a new engine in the same tab"
              testId="engines.restart"
            >
              Restart
            </Button>
          ) : null}
        </footer>
      ) : null}
      {server && controlled && engine.mode === 'engine' && process && process.state !== 'exited' ? (
        <ProcessActions
          engine={engine}
          process={process}
          seconds={seconds}
          setSeconds={setSeconds}
          validFreeze={validFreeze}
          freezeSeconds={freezeSeconds}
          action={fleetAction}
        />
      ) : null}
      {fleetAction.isError ? <InlineError error={fleetAction.error} testId="engines.action-error" /> : null}
      {chaos.isError ? <InlineError error={chaos.error} testId="engines.action-error" /> : null}
    </article>
  );
}

/** One fact of an engine's card: a term and its value. */
function Fact({
  term,
  className,
  testId,
  children,
}: {
  term: string;
  className?: string;
  testId?: string;
  children: ReactNode;
}) {
  return (
    <div>
      <dt>{term}</dt>
      <dd className={className} data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/** How many seconds to freeze an engine for, and the button that does it (a tab's worker, or a process). */
function FreezeControl({
  engineId,
  label,
  seconds,
  setSeconds,
  valid,
  disabled,
  busy,
  onFreeze,
  title,
}: {
  engineId: string;
  /** The input's label, for screen readers. */
  label: string;
  seconds: string;
  setSeconds: (value: string) => void;
  valid: boolean;
  disabled: boolean;
  busy: boolean;
  onFreeze: () => void;
  title: string;
}) {
  return (
    <div className={styles.freeze}>
      <label className="visually-hidden" htmlFor={`freeze-${engineId}`}>
        {label}
      </label>
      <input
        id={`freeze-${engineId}`}
        className={styles.seconds}
        inputMode="decimal"
        value={seconds}
        onChange={(event) => setSeconds(event.target.value)}
        aria-invalid={!valid}
        data-testid="engines.freeze-seconds"
      />
      <span className={styles.unit}>s</span>
      <Button
        size="sm"
        icon="snowflake"
        disabled={!valid || disabled}
        busy={busy}
        onClick={onFreeze}
        title={title}
        testId="engines.freeze"
      >
        Freeze
      </Button>
    </div>
  );
}

function ProcessActions({
  engine,
  process,
  seconds,
  setSeconds,
  validFreeze,
  freezeSeconds,
  action,
}: {
  engine: EngineRecord;
  process: FleetProcess;
  seconds: string;
  setSeconds: (value: string) => void;
  validFreeze: boolean;
  freezeSeconds: number;
  action: ReturnType<typeof useFleetAction>;
}) {
  const can = fleetActionsFor(process);
  const busy = (kind: string) =>
    action.isPending && action.variables?.action === kind && 'engineId' in action.variables
      ? action.variables.engineId === engine.engineId
      : false;
  /** A button's busy state and click: a signal to this engine's process. */
  const processAction = (kind: 'thaw' | 'kill' | 'stop') => ({
    busy: busy(kind),
    onClick: () => action.mutate({ action: kind, engineId: engine.engineId }),
  });
  return (
    <footer className={styles.actions} data-testid="engines.process-actions">
      {can.thaw ? (
        <Button
          size="sm"
          icon="snowflake"
          {...processAction('thaw')}
          title="Send SIGCONT now: the process carries on; its claims may be gone, and its next write at a lost epoch is refused"
          testId="engines.thaw"
        >
          Thaw
        </Button>
      ) : (
        <FreezeControl
          engineId={engine.engineId}
          label={`Freeze ${engine.label} for how many seconds`}
          seconds={seconds}
          setSeconds={setSeconds}
          valid={validFreeze}
          disabled={!can.freeze}
          busy={busy('freeze')}
          onFreeze={() =>
            action.mutate({ action: 'freeze', engineId: engine.engineId, seconds: freezeSeconds })
          }
          title="Send SIGSTOP, then SIGCONT after the seconds given: it renews nothing meanwhile, so after the claim TTL other workers take its workflows over"
        />
      )}
      <ConfirmButton
        size="sm"
        variant="danger"
        icon="bolt"
        disabled={!can.kill}
        busy={processAction('kill').busy}
        onConfirm={processAction('kill').onClick}
        title="Send SIGKILL: its advisory lock goes with the process, so other workers take over at once"
        testId="engines.kill"
        confirm={{
          title: `Kill ${engine.label} (pid ${process.pid})?`,
          body: 'SIGKILL ends the process at once, in the middle of whatever it runs. Its advisory lock goes with it, so the other workers take its workflows over; an activity it was running runs again there.',
          submit: 'Kill',
        }}
      >
        Kill
      </ConfirmButton>
      <Button
        size="sm"
        icon="power"
        disabled={!can.stop}
        {...processAction('stop')}
        title="Send SIGTERM: it shuts down gracefully, releasing every claim"
        testId="engines.stop"
      >
        Stop
      </Button>
    </footer>
  );
}
