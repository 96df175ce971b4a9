/**
 * Purge by the current filter of the Workflows list: deletes every finished workflow the filter matches, all
 * of its runs. The confirmation first asks the engine for a dry run and says exactly how many it will delete
 * and that it cannot be undone; after purging it says how many were purged and which could not be, with the
 * engine's reason. Not offered (disabled, with the reason beside it) when the filter names unfinished
 * statuses: running work is never purged.
 */
import { useState, type FormEvent } from 'react';
import type { ListFilter } from '../../../public';
import { Button } from '../../components/Button';
import { Dialog } from '../../components/Dialog';
import { InlineError } from '../../components/ErrorNotice';
import { usePurgeFinished, usePurgePreview } from '../../data/storage-queries';
import { purgeBlockedReason, workflowCount } from './purge-filter';
import styles from './BulkActions.module.css';
import type { ClientFilters } from '../../data/list-filters';

export function PurgeFinishedButton({
  filter,
  describeFilter,
  rows,
}: {
  filter: Omit<ListFilter, 'limit' | 'cursor'>;
  describeFilter: string;
  /** The filters the list applies itself: a purge cannot (the engine purges by its own filter). */
  rows?: ClientFilters;
}) {
  const [open, setOpen] = useState(false);
  const blocked = purgeBlockedReason(filter, rows);
  return (
    <>
      {blocked ? (
        <span className={styles.blocked} id="purge-blocked" data-testid="workflows.purge-blocked">
          {blocked}
        </span>
      ) : null}
      <Button
        size="sm"
        variant="danger"
        icon="trash"
        onClick={() => setOpen(true)}
        disabled={blocked !== null}
        aria-describedby={blocked ? 'purge-blocked' : undefined}
        testId="workflows.purge-finished"
        title={
          blocked ??
          'Delete every finished workflow the filter matches, all of its runs, from the database for good'
        }
      >
        Purge finished…
      </Button>
      {open ? (
        <PurgeFinishedDialog filter={filter} describeFilter={describeFilter} onClose={() => setOpen(false)} />
      ) : null}
    </>
  );
}

function PurgeFinishedDialog({
  filter,
  describeFilter,
  onClose,
}: {
  filter: Omit<ListFilter, 'limit' | 'cursor'>;
  describeFilter: string;
  onClose: () => void;
}) {
  const purge = usePurgeFinished();
  // Counted once when the dialog opens (and not again after purging: the report says what happened).
  const preview = usePurgePreview(filter, !purge.isSuccess && !purge.isPending);
  const count = purge.isSuccess ? null : (preview.data?.matched ?? null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!count) return;
    purge.mutate(filter);
  };
  return (
    <Dialog
      open
      onClose={onClose}
      title="Purge the finished workflows that match?"
      width={540}
      testId="workflows.purge-dialog"
      footer={
        <>
          <Button onClick={onClose} testId="workflows.purge-close">
            {purge.isSuccess ? 'Close' : 'Keep them'}
          </Button>
          {!purge.isSuccess ? (
            <Button
              type="submit"
              form="purge-finished-form"
              variant="danger"
              icon="trash"
              disabled={!count}
              busy={purge.isPending || (preview.isFetching && !preview.data)}
              testId="workflows.purge-confirm"
            >
              {count ? `Purge ${workflowCount(count)}` : 'Purge'}
            </Button>
          ) : null}
        </>
      }
    >
      <form id="purge-finished-form" className={styles.form} onSubmit={submit}>
        {!purge.isSuccess ? (
          <p className={styles.count} data-testid="workflows.purge-count" data-count={count ?? undefined}>
            {preview.isError
              ? 'The engine would not count them.'
              : count === null
                ? 'Counting the finished workflows that match…'
                : count === 0
                  ? `No finished workflow matches ${describeFilter}: nothing to purge.`
                  : `${count.toLocaleString()} finished workflow${count === 1 ? '' : 's'} match${count === 1 ? 'es' : ''} ${describeFilter}. Each will be deleted with all of its runs.`}
          </p>
        ) : null}
        <p className={styles.body}>
          Purging deletes their records, timelines and earlier runs from the database. It cannot be undone.
          Workflows still running, pending or suspended are never purged.
        </p>
        {preview.isError ? <InlineError error={preview.error} testId="workflows.purge-error" /> : null}
        {purge.isError ? <InlineError error={purge.error} testId="workflows.purge-error" /> : null}
        {purge.isSuccess ? (
          <div
            className={purge.data.failed.length > 0 ? styles.resultWarn : styles.result}
            role="status"
            data-testid="workflows.purge-result"
            data-purged={purge.data.purged}
            data-failed={purge.data.failed.length}
          >
            Purged {purge.data.purged} of {workflowCount(purge.data.matched)}.
            {purge.data.failed.length > 0 ? (
              <>
                {' '}
                {purge.data.failed.length} could not be purged:
                <ul>
                  {purge.data.failed.slice(0, 10).map(({ workflowId, message }) => (
                    <li key={workflowId} data-testid="workflows.purge-failed">
                      <code>{workflowId}</code>: {message}
                    </li>
                  ))}
                  {purge.data.failed.length > 10 ? <li>and {purge.data.failed.length - 10} more</li> : null}
                </ul>
              </>
            ) : null}
          </div>
        ) : null}
      </form>
    </Dialog>
  );
}
