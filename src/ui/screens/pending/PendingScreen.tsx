/**
 * Pending work across the store: every open operation of the running workflows — activities with their
 * attempt and when a backed-off one tries again, timers with their due time, signals and conditions with
 * their timeouts, children awaited — soonest due first, filterable by kind; and below, the signals buffered
 * for them: sent, not consumed yet (the workflow does not wait for them, or not yet), oldest first. Read from
 * each running workflow's description (at most `maxWorkflows` of them, the most recently changed first),
 * live.
 */
import { useMemo, useState } from 'react';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { ScreenHeader } from '../../components/ScreenHeader';
import { useWorkflowDescriptions, useWorkflowList } from '../../data/workflow-queries';
import { BufferedSignalsTable } from '../../components/pending/BufferedSignals';
import { PendingTable } from '../../components/pending/PendingTable';
import {
  bufferedOf,
  byDue,
  bySent,
  pendingKindLabels,
  pendingKinds,
  pendingOf,
  type PendingKind,
} from '../../components/pending/pending-work';
import styles from './PendingScreen.module.css';

/** How many running workflows the screen describes. */
export const maxWorkflows = 200;

export function PendingScreen() {
  const list = useWorkflowList({ status: 'running' });
  const running = list.data?.items;
  const ids = useMemo(
    () =>
      [...(running ?? [])]
        .sort((a, b) => b.updatedAt - a.updatedAt)
        .slice(0, maxWorkflows)
        .map((row) => row.workflowId),
    [running],
  );
  const descriptions = useWorkflowDescriptions(ids);
  const [kind, setKind] = useState<PendingKind | null>(null);
  const all = useMemo(
    () =>
      ids
        .flatMap((id) => {
          const description = descriptions.get(id);
          return description && description.status === 'running' ? pendingOf(description) : [];
        })
        .sort(byDue),
    [ids, descriptions],
  );
  const buffered = useMemo(
    () =>
      ids
        .flatMap((id) => {
          const description = descriptions.get(id);
          return description && description.status === 'running' ? bufferedOf(description) : [];
        })
        .sort(bySent),
    [ids, descriptions],
  );
  const bufferedMore = ids.some((id) => descriptions.get(id)?.bufferedSignalsMore === true);
  const shown = kind ? all.filter((item) => item.kind === kind) : all;
  const counted = running?.length ?? 0;
  return (
    <section className={styles.screen} aria-labelledby="pending-title">
      <ScreenHeader
        titleId="pending-title"
        title="Pending work"
        summary={
          running
            ? `${all.length} open operation${all.length === 1 ? '' : 's'} in ${counted.toLocaleString()}${list.data?.hasMore ? '+' : ''} running workflow${counted === 1 ? '' : 's'}${counted > maxWorkflows ? ` (the ${maxWorkflows} changed last)` : ''}, soonest due first`
            : 'What every running workflow waits on: activities, timers, signals, conditions, children.'
        }
        summaryTestId="pending.summary"
      />
      <div className={styles.kinds} role="group" aria-label="Kind of operation">
        <button
          type="button"
          className={styles.kind}
          aria-pressed={kind === null}
          onClick={() => setKind(null)}
          data-testid="pending.kind-all"
        >
          All <span className={styles.count}>{all.length}</span>
        </button>
        {pendingKinds.map((value) => (
          <button
            key={value}
            type="button"
            className={styles.kind}
            aria-pressed={kind === value}
            onClick={() => setKind(kind === value ? null : value)}
            data-testid={`pending.kind-${value}`}
          >
            {pendingKindLabels[value]}{' '}
            <span className={styles.count}>{all.filter((item) => item.kind === value).length}</span>
          </button>
        ))}
      </div>
      <div className={styles.card}>
        {list.isError && !list.data ? (
          <ErrorNotice error={list.error} title="Could not list the running workflows" />
        ) : !running ? (
          <EmptyState compact title="Loading the running workflows…" />
        ) : shown.length === 0 ? (
          <EmptyState icon="hourglass" title="Nothing pending" testId="pending.empty">
            {all.length === 0
              ? 'No running workflow waits on anything right now.'
              : 'No open operation of this kind. Pick another kind, or All.'}
          </EmptyState>
        ) : (
          <PendingTable items={shown} showWorkflow label="Open operations of running workflows" />
        )}
      </div>
      <h2 className={styles.heading} id="pending-buffered-title">
        Buffered signals <span className={styles.count}>{buffered.length}</span>
      </h2>
      <p className={styles.note}>
        Signals sent to a workflow that does not wait for them (or not yet) stay buffered in the store until
        it waits for a signal of that name; then it takes the oldest. Oldest first.
        {bufferedMore ? ' Some workflows have more than 100 buffered: their first 100 are listed.' : ''}
      </p>
      <div className={styles.card}>
        {!running ? null : buffered.length === 0 ? (
          <EmptyState compact title="No buffered signals" testId="pending.buffered-empty">
            Every signal sent to a running workflow has been consumed.
          </EmptyState>
        ) : (
          <BufferedSignalsTable items={buffered} showWorkflow label="Buffered signals of running workflows" />
        )}
      </div>
    </section>
  );
}
