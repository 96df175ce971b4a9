/**
 * Result waiters: for every engine of the database, the `result()` calls waiting on workflows — which
 * workflow, since when, and where that workflow runs right now — and, once settled, how the waiter learnt
 * the outcome (the workflow finished on the same engine; the change feed reported another tab's write; or a
 * poll found it) and how long that took. Waiters of other tabs come from their presence records; this tab's
 * from its own engine, live.
 */
import { MiddleTruncate } from '../../components/MiddleTruncate';
import type { ResultWaiterInfo, WorkflowDescription } from '../../../public';
import type { EngineRecord } from '../../../public/browser';
import { EmptyState } from '../../components/EmptyState';
import { EngineChip } from '../../components/EngineChip';
import { EngineTag } from '../../components/EngineTag';
import { ErrorNotice } from '../../components/ErrorNotice';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { formatDuration } from '../../components/time-format';
import { isEngineLive, useEngineDirectory, useEngines, useResultWaiters } from '../../data/engine-queries';
import { selfWord } from '../../data/studio-mode';
import { useWorkflowDescriptions } from '../../data/workflow-queries';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { useNow } from '../../state/now';
import styles from './WaitersScreen.module.css';
import { ScreenHeader } from '../../components/ScreenHeader';

const viaText: Record<string, { label: string; hint: string }> = {
  local: {
    label: 'same engine',
    hint: 'The workflow finished on the waiter’s own engine, which settled it at once.',
  },
  'change-feed': {
    label: 'change feed',
    hint: 'Another engine finished it; the change feed reported the write to this engine.',
  },
  poll: {
    label: 'poll',
    hint: 'Found finished by the periodic poll (the change feed missed it, or was not available).',
  },
};

type EngineWaiters = { engine: EngineRecord; waiters: ResultWaiterInfo[] };

export function WaitersScreen() {
  const engines = useEngines();
  const mine = useResultWaiters();
  const directory = useEngineDirectory();
  const groups: EngineWaiters[] = (engines.data ?? [])
    .map((engine) => ({
      engine,
      waiters: engine.thisTab && mine.data ? mine.data : (engine.resultWaiters ?? []),
    }))
    .filter((group) => group.waiters.length > 0)
    .sort(
      (a, b) =>
        Number(b.engine.thisTab) - Number(a.engine.thisTab) ||
        a.engine.label.localeCompare(b.engine.label, undefined, { numeric: true }),
    );
  const all = groups.flatMap((group) => group.waiters);
  // A waiter of an engine that is gone waits no more: its call died with the engine.
  const pending = groups
    .filter((group) => isEngineLive(group.engine))
    .flatMap((group) => group.waiters.filter((waiter) => !waiter.settled));
  const workflowIds = [...new Set(all.map((waiter) => waiter.workflowId))].slice(0, 200);
  const owners = useWorkflowDescriptions(workflowIds);
  const byVia = new Map<string, number[]>();
  for (const waiter of all)
    if (waiter.settled)
      byVia.set(waiter.settled.via, [...(byVia.get(waiter.settled.via) ?? []), waiter.settled.latencyMs]);

  return (
    <section className={styles.screen} aria-labelledby="waiters-title">
      <ScreenHeader
        titleId="waiters-title"
        title="Result waiters"
        summary={
          engines.data
            ? `${pending.length} pending · ${all.filter((waiter) => waiter.settled).length} recently settled, across ${groups.length} engine${groups.length === 1 ? '' : 's'}`
            : 'result() calls waiting on workflows, on every engine.'
        }
        summaryTestId="waiters.summary"
      >
        {byVia.size > 0 ? (
          <dl className={styles.stats} aria-label="Median time to settle">
            {[...byVia.entries()].map(([via, latencies]) => (
              <div key={via} title={viaText[via]?.hint}>
                <dt>Settled via {viaText[via]?.label ?? via}</dt>
                <dd>
                  {formatDuration(median(latencies))}{' '}
                  <span className={styles.muted}>
                    median lag · {latencies.length} waiter{latencies.length === 1 ? '' : 's'}
                  </span>
                </dd>
              </div>
            ))}
          </dl>
        ) : null}
      </ScreenHeader>
      {engines.isError && !engines.data ? (
        <ErrorNotice
          error={engines.error}
          title="Could not list the engines"
          onRetry={() => void engines.refetch()}
        />
      ) : groups.length === 0 ? (
        <div className={styles.card}>
          <EmptyState
            icon="waiters"
            title={engines.data ? 'Nobody is waiting for a result' : 'Loading…'}
            testId="waiters.empty"
          >
            A result waiter is a <code>result(id)</code> call waiting for a workflow to finish — perhaps one
            running on another engine. Open a workflow and click <strong>Wait for result</strong>, or run{' '}
            <code>await shuttle.result(id)</code> in the console.
          </EmptyState>
        </div>
      ) : (
        groups.map((group) => (
          <EngineGroup key={group.engine.engineId} group={group} owners={owners} directory={directory} />
        ))
      )}
    </section>
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function EngineGroup({
  group,
  owners,
  directory,
}: {
  group: EngineWaiters;
  owners: ReadonlyMap<string, WorkflowDescription>;
  directory: ReadonlyMap<string, EngineRecord>;
}) {
  const { engine, waiters } = group;
  const ordered = [...waiters].sort(
    (a, b) =>
      Number(!!a.settled) - Number(!!b.settled) || (b.settled?.at ?? b.since) - (a.settled?.at ?? a.since),
  );
  return (
    <div className={styles.card} data-testid="waiters.engine" data-engine-id={engine.engineId}>
      <div className={styles.groupHead}>
        <EngineChip color={engine.color} shortLabel={engine.shortLabel} size="md" />
        <strong>{engine.label}</strong>
        {selfWord(engine) ? <span className={styles.badge}>{selfWord(engine)}</span> : null}
        {!isEngineLive(engine) ? <span className={styles.gone}>{engine.status}</span> : null}
        <span className={styles.muted}>
          {waiters.filter((waiter) => !waiter.settled).length}{' '}
          {isEngineLive(engine) ? 'pending' : 'abandoned'} ·{' '}
          {waiters.filter((waiter) => waiter.settled).length} settled
        </span>
      </div>
      <div role="table" aria-label={`Result waiters of ${engine.label}`}>
        <div role="row" className={`${styles.row} ${styles.head}`}>
          <div role="columnheader">Workflow</div>
          <div role="columnheader">Waiting since</div>
          <div role="columnheader">Runs on</div>
          <div role="columnheader">Outcome</div>
          <div role="columnheader">Settled via</div>
          <div role="columnheader" className={styles.numeric} title="From the call to the outcome">
            Waited
          </div>
          <div
            role="columnheader"
            className={styles.numeric}
            title="From the workflow’s end to this waiter hearing of it"
          >
            Lag
          </div>
        </div>
        {ordered.map((waiter) => (
          <WaiterRow
            key={waiter.waiterId}
            waiter={waiter}
            workflow={owners.get(waiter.workflowId)}
            directory={directory}
            abandoned={!isEngineLive(engine) && !waiter.settled}
          />
        ))}
      </div>
    </div>
  );
}

function WaiterRow({
  waiter,
  workflow,
  directory,
  abandoned,
}: {
  waiter: ResultWaiterInfo;
  workflow: WorkflowDescription | undefined;
  directory: ReadonlyMap<string, EngineRecord>;
  /** Its engine is gone, so nobody waits any more. */
  abandoned: boolean;
}) {
  const now = useNow();
  const settled = waiter.settled;
  return (
    <div
      role="row"
      className={`${styles.row} ${settled || abandoned ? '' : styles.pending}`}
      data-testid="waiters.row"
      data-workflow-id={waiter.workflowId}
      data-state={settled ? 'settled' : abandoned ? 'abandoned' : 'pending'}
      data-via={settled?.via}
    >
      <div role="cell" className={styles.cell}>
        <Link to={routes.workflow(waiter.workflowId)} className={styles.id} title={waiter.workflowId}>
          <MiddleTruncate text={waiter.workflowId} />
        </Link>
      </div>
      <div role="cell" className={styles.cell}>
        <RelativeTime at={waiter.since} />
      </div>
      <div role="cell" className={styles.cell} data-testid="waiters.row-owner">
        {workflow?.owner ? (
          <EngineTag engineId={workflow.owner.engineId} engine={directory.get(workflow.owner.engineId)} />
        ) : (
          <span className={styles.muted}>
            {workflow ? (settled ? '— finished' : 'nobody right now') : '…'}
          </span>
        )}
      </div>
      <div role="cell" className={styles.cell} data-testid="waiters.row-outcome">
        {settled ? (
          workflow && workflow.status === settled.status ? (
            <StatusBadge status={workflow.status} />
          ) : (
            <span>{settled.status}</span>
          )
        ) : abandoned ? (
          <span className={styles.muted} title="Its engine is gone, and the result() call with it">
            abandoned
          </span>
        ) : (
          <span className={styles.waiting}>
            <span className={styles.pulse} aria-hidden /> waiting ·{' '}
            {formatDuration(Math.max(0, now - waiter.since), { coarse: true })}
          </span>
        )}
      </div>
      <div
        role="cell"
        className={styles.cell}
        data-testid="waiters.row-via"
        title={settled ? viaText[settled.via]?.hint : undefined}
      >
        {settled ? (
          <span className={`${styles.via} ${styles[`via-${settled.via}`] ?? ''}`}>
            {viaText[settled.via]?.label ?? settled.via}
          </span>
        ) : (
          <span className={styles.muted}>—</span>
        )}
      </div>
      <div role="cell" className={`${styles.cell} ${styles.numeric}`} data-testid="waiters.row-waited">
        {settled ? formatDuration(Math.max(0, settled.at - waiter.since)) : '—'}
      </div>
      <div
        role="cell"
        className={`${styles.cell} ${styles.numeric}`}
        data-testid="waiters.row-latency"
        title={settled ? 'From the workflow’s end to this waiter hearing of it' : undefined}
      >
        {settled ? formatDuration(settled.latencyMs) : '—'}
      </div>
    </div>
  );
}
