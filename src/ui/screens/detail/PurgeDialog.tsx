/**
 * Purging from a workflow's page, after a confirmation: a finished workflow with every one of its runs (then
 * the page goes back to the list), or one earlier run (then it goes to the latest run). What the engine
 * refuses — a workflow that is not finished, say, because it was started again meanwhile — is shown in its
 * own words and nothing is deleted.
 */
import type { FormEvent } from 'react';
import type { WorkflowDescription } from '../../../public';
import { Button } from '../../components/Button';
import { Dialog } from '../../components/Dialog';
import { InlineError } from '../../components/ErrorNotice';
import { usePurgeWorkflow } from '../../data/storage-queries';
import { routes } from '../../routing/route';
import { navigate } from '../../routing/router';
import styles from './WorkflowActions.module.css';

export function PurgeDialog({
  workflow,
  earlierRun,
  runs,
  onClose,
}: {
  workflow: Pick<WorkflowDescription, 'workflowId' | 'run' | 'status'>;
  /** Purge only this earlier run (the run shown); otherwise the whole workflow. */
  earlierRun: boolean;
  /** How many runs the id has stored (1 when unknown). */
  runs: number;
  onClose: () => void;
}) {
  const purge = usePurgeWorkflow(workflow.workflowId);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // The page may show "no such workflow" before the answer comes (the change feed is quick): navigate
    // on the promise, which settles even once this dialog is gone.
    purge.mutateAsync(earlierRun ? { run: workflow.run } : {}).then(
      () =>
        navigate(earlierRun ? routes.workflow(workflow.workflowId) : routes.workflows(), { replace: true }),
      () => undefined, // shown by purge.error
    );
  };
  const testId = earlierRun ? 'detail.purge-run-dialog' : 'detail.purge-dialog';
  return (
    <Dialog
      open
      onClose={onClose}
      title={earlierRun ? `Purge run ${workflow.run}?` : 'Purge this workflow?'}
      width={500}
      testId={testId}
      footer={
        <>
          <Button onClick={onClose}>Keep it</Button>
          <Button
            type="submit"
            form="purge-form"
            variant="danger"
            icon="trash"
            busy={purge.isPending}
            testId="detail.purge-confirm"
          >
            {earlierRun ? `Purge run ${workflow.run}` : runs > 1 ? `Purge all ${runs} runs` : 'Purge'}
          </Button>
        </>
      }
    >
      <form id="purge-form" className={styles.form} onSubmit={submit}>
        <p className={styles.body}>
          {earlierRun ? (
            <>
              Deletes run {workflow.run} of <code>{workflow.workflowId}</code> (finished {workflow.status})
              from the database: its record, timeline and result. The other runs stay.
            </>
          ) : (
            <>
              Deletes <code>{workflow.workflowId}</code> from the database:{' '}
              {runs > 1 ? `all ${runs} of its runs, with their` : 'its record,'} timeline
              {runs > 1 ? 's' : ''}, input and result. The id can be started again afterwards.
            </>
          )}{' '}
          <strong>This cannot be undone.</strong>
        </p>
        {purge.isError ? <InlineError error={purge.error} testId="detail.purge-error" /> : null}
      </form>
    </Dialog>
  );
}
