/**
 * Bulk cancel / terminate / retry by the current filter of the Workflows list, and purge of the finished ones
 * (PurgeFinished.tsx). The confirmation counts what the filter matches now and says how many workflows it
 * will act on (cancel asks running and pending ones; terminate ends every unfinished one; retry forks every
 * one that failed, was cancelled, terminated or timed out from where it stopped) — at most
 * `maxBulkTargets` (10,000) per confirmation, and it says so when more match —, and after acting says how
 * many it reached and which refused.
 */
import { useState, type FormEvent } from 'react';
import type { ListFilter } from '../../../public';
import { Button } from '../../components/Button';
import { Dialog } from '../../components/Dialog';
import { InlineError } from '../../components/ErrorNotice';
import { maxBulkTargets, useBulkAction, useBulkTargets, type BulkKind } from '../../data/workflow-actions';
import { bulkCountWords } from './describe-filters';
import styles from './BulkActions.module.css';
import type { ClientFilters } from '../../data/list-filters';
import { PurgeFinishedButton } from './PurgeFinished';

const words: Record<BulkKind, { verb: string; title: string; applies: string; effect: string }> = {
  cancel: {
    verb: 'Cancel',
    title: 'Cancel the matching workflows?',
    applies: 'running or pending',
    effect:
      'Each is asked to stop: its current operation is interrupted, it may run cleanup code, and it ends cancelled.',
  },
  terminate: {
    verb: 'Terminate',
    title: 'Terminate the matching workflows?',
    applies: 'unfinished',
    effect:
      'Each ends terminated at once, whichever engine owns it: no more of its code runs, and no cleanup. This cannot be undone.',
  },
  retry: {
    verb: 'Retry',
    title: 'Retry the matching workflows from where they stopped?',
    applies: 'failed, cancelled, terminated or timed-out',
    effect:
      'Each starts its next run with the same input: the operations before the one it stopped at are replayed from its history (their activities do not run again); that operation and the rest run anew. The runs that ended are kept.',
  },
};

/** What the result says was done, per kind. */
const doneWords: Record<BulkKind, string> = {
  cancel: 'Cancel requested for',
  terminate: 'Terminated',
  retry: 'Retried',
};

export function BulkActions({
  filter,
  describeFilter,
  rows,
}: {
  filter: Omit<ListFilter, 'limit' | 'cursor'>;
  /** The filter in words, e.g. `status running · type countdown`, or `every workflow`. */
  describeFilter: string;
  /** The filters the list applies to its rows itself (owned by nobody, text, time range). */
  rows: ClientFilters;
}) {
  const [kind, setKind] = useState<BulkKind | null>(null);
  return (
    <div className={styles.bar} role="group" aria-label="Act on every matching workflow">
      <Button size="sm" variant="secondary" onClick={() => setKind('cancel')} testId="workflows.bulk-cancel">
        Cancel matching…
      </Button>
      <Button
        size="sm"
        variant="danger"
        onClick={() => setKind('terminate')}
        testId="workflows.bulk-terminate"
      >
        Terminate matching…
      </Button>
      <Button size="sm" variant="secondary" onClick={() => setKind('retry')} testId="workflows.bulk-retry">
        Retry matching…
      </Button>
      <span className={styles.divider} aria-hidden />
      <PurgeFinishedButton filter={filter} describeFilter={describeFilter} rows={rows} />
      {kind ? (
        <BulkDialog
          kind={kind}
          filter={filter}
          describeFilter={describeFilter}
          rows={rows}
          onClose={() => setKind(null)}
        />
      ) : null}
    </div>
  );
}

function BulkDialog({
  kind,
  filter,
  describeFilter,
  rows,
  onClose,
}: {
  kind: BulkKind;
  filter: Omit<ListFilter, 'limit' | 'cursor'>;
  describeFilter: string;
  rows: ClientFilters;
  onClose: () => void;
}) {
  const targets = useBulkTargets(filter, kind, rows);
  const action = useBulkAction();
  const [reason, setReason] = useState('');
  const text = words[kind];
  // One beyond the most one confirmation acts on says that more match: it acts on the first ones.
  const more = (targets.data?.length ?? 0) > maxBulkTargets;
  const ids = targets.data?.slice(0, maxBulkTargets);
  const count = ids?.length ?? null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!ids || ids.length === 0) return;
    action.mutate({ kind, workflowIds: ids, ...(reason.trim() ? { reason: reason.trim() } : {}) });
  };
  return (
    <Dialog
      open
      onClose={onClose}
      title={text.title}
      width={520}
      testId="workflows.bulk-dialog"
      footer={
        <>
          <Button onClick={onClose}>{action.isSuccess ? 'Close' : 'Keep them'}</Button>
          {!action.isSuccess ? (
            <Button
              type="submit"
              form="bulk-form"
              variant={kind === 'terminate' ? 'danger' : 'primary'}
              disabled={!count}
              busy={action.isPending || targets.isFetching}
              testId="workflows.bulk-confirm"
            >
              {count === null ? text.verb : `${text.verb} ${count} workflow${count === 1 ? '' : 's'}`}
            </Button>
          ) : null}
        </>
      }
    >
      <form id="bulk-form" className={styles.form} onSubmit={submit}>
        <p
          className={styles.count}
          data-testid="workflows.bulk-count"
          data-count={count ?? undefined}
          data-more={more || undefined}
        >
          {targets.isError
            ? 'Could not count the matching workflows.'
            : targets.data === undefined
              ? 'Counting the matching workflows…'
              : bulkCountWords(targets.data.length, maxBulkTargets, text.applies, describeFilter)}
        </p>
        <p className={styles.body}>{text.effect}</p>
        {kind !== 'retry' ? (
          <label className={styles.field}>
            <span className={styles.label}>
              Reason <span className={styles.muted}>optional, recorded on each timeline</span>
            </span>
            <input
              className={styles.input}
              value={reason}
              onChange={(event) => setReason(event.target.value)}
              data-testid="workflows.bulk-reason"
            />
          </label>
        ) : null}
        {targets.isError ? <InlineError error={targets.error} /> : null}
        {action.isSuccess ? (
          <div className={styles.result} role="status" data-testid="workflows.bulk-result">
            {doneWords[kind]} {action.data.done.length} of{' '}
            {action.data.done.length + action.data.failed.length}.
            {action.data.failed.length > 0 ? (
              <ul>
                {action.data.failed.slice(0, 10).map(({ workflowId, error }) => (
                  <li key={workflowId}>
                    <code>{workflowId}</code>: {error.name}: {error.message}
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : null}
      </form>
    </Dialog>
  );
}
