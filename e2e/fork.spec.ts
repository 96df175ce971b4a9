import { expect, test, type StudioPage } from './fixtures/studio';

/**
 * Fork in the studio: a failed run is retried from where it stopped (Retry on its page: the next run of
 * the id, which says what it was forked from); an event's "Run again from #N" forks the run from that
 * operation — into an id of its own while the id still runs; and "Retry matching…" retries every workflow
 * the list's filter matches that ended badly, after a confirmation that counts them.
 *
 * The manual-approval demo asks once for an external decision; failing that activity fails the workflow at
 * operation #0, and a fork from there waits for a decision again.
 */

/** Starts manual-approval `id` and fails its external activity, so the workflow fails at #0. */
async function failedApproval(studio: StudioPage, id: string): Promise<void> {
  await studio.startViaConsole('manual-approval', { requestId: id, summary: 'A desk' }, { id });
  await studio.page.evaluate(async (workflowId) => {
    const shuttle = window.shuttle!;
    for (;;) {
      const description = await shuttle.describe(workflowId);
      const token = description.pending?.leaves.find((leaf) => leaf.completionToken)?.completionToken;
      if (token) return shuttle.failActivity(token, { message: 'over budget' });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, id);
  await studio.expectWorkflowStatus(id, 'failed');
}

test('Retry forks a failed run from where it stopped; an event forks its run from its operation', async ({
  studio,
}) => {
  await failedApproval(studio, 'fork-po-1');
  const detail = await studio.openWorkflow('fork-po-1');
  await detail.expectStatus('failed');
  await studio.page.getByTestId('detail.retry-button').click();
  await expect(studio.page.getByTestId('detail.retry-button-dialog')).toContainText(
    'the operations before the one this run stopped at are replayed',
  );
  await studio.page.getByTestId('detail.retry-button-confirm').click();

  // Run 2 of the same id waits for a decision again, and says what it was forked from.
  await detail.expectStatus('running');
  await expect(studio.page.getByTestId('detail.run-switcher')).toHaveAttribute('data-run', '2');
  await expect(studio.page.getByTestId('detail.forked-from')).toHaveText('run 1 · from #0');
  expect(await studio.describe('fork-po-1')).toMatchObject({
    run: 2,
    status: 'running',
    forkedFrom: { id: 'fork-po-1', run: 1, position: 0 },
  });
  await expect(studio.page.getByTestId('detail.external-activity')).toContainText(
    'Waiting for an external completion',
  );

  // An event of run 2's operation #0: "Run again from #0". The id runs, so the fork gets an id of its own.
  const started = detail.event('activity-started').first();
  await started.getByTestId('detail.event-open').click();
  const dialog = studio.page.getByTestId('detail.event-dialog');
  await dialog.getByTestId('detail.event-fork').click();
  await expect(dialog.getByTestId('detail.event-fork')).toHaveCount(0);
  await expect(studio.page.getByTestId('detail.event-fork-confirm')).toHaveText('Fork from #0');
  await studio.page.getByTestId('detail.event-fork-confirm').click();
  await expect(dialog).toBeHidden();
  await expect(detail.workflowId).toHaveAttribute('data-full-id', 'fork-po-1-fork-1');
  await expect(studio.page.getByTestId('detail.forked-from')).toHaveText('fork-po-1 · run 2 · from #0');
  expect(await studio.describe('fork-po-1-fork-1')).toMatchObject({
    run: 1,
    forkedFrom: { id: 'fork-po-1', run: 2, position: 0 },
  });
  // The link goes back to the run it was forked from.
  await studio.page.getByTestId('detail.forked-from-link').click();
  await expect(detail.workflowId).toHaveAttribute('data-full-id', 'fork-po-1');
});

test('Retry matching… retries every workflow of the filter that ended badly, and says how many', async ({
  studio,
}) => {
  await failedApproval(studio, 'retry-po-1');
  await failedApproval(studio, 'retry-po-2');
  await studio.startViaConsole(
    'manual-approval',
    { requestId: 'r3', summary: 'A chair' },
    { id: 'retry-po-3' },
  );
  await studio.page.evaluate(() => {
    location.hash = '#/workflows?q=retry-po-';
  });
  await expect(studio.row('retry-po-3')).toBeVisible();
  await studio.page.getByTestId('workflows.bulk-retry').click();
  const dialog = studio.page.getByTestId('workflows.bulk-dialog');
  await expect(dialog.getByTestId('workflows.bulk-count')).toHaveAttribute('data-count', '2');
  await expect(dialog).toContainText('failed, cancelled, terminated or timed-out');
  await expect(dialog.getByTestId('workflows.bulk-reason')).toHaveCount(0);
  await dialog.getByTestId('workflows.bulk-confirm').click();
  await expect(dialog.getByTestId('workflows.bulk-result')).toContainText('Retried 2 of 2');
  for (const id of ['retry-po-1', 'retry-po-2'])
    expect(await studio.describe(id)).toMatchObject({
      run: 2,
      forkedFrom: { id, run: 1, position: 0 },
    });
  expect(await studio.describe('retry-po-3')).toMatchObject({ run: 1, status: 'running' });
});
