import { expect, test, type StudioPage } from './fixtures/studio';

/**
 * Purge in the studio, across two tabs of one database: tab A purges a finished workflow from its page and
 * several by the list's filter, and tab B's list loses them live (no reload); the purge-by-filter
 * confirmation counts them first (a dry run) and is not offered for a filter naming unfinished statuses. A
 * workflow started again while its purge was being confirmed is refused in the engine's words, and an
 * earlier run is purged alone.
 *
 * Budgets: countdowns of zero ticks finish as soon as they start; every wait is the default 15 s
 * expectation (a worker's start-up and a claim, on a loaded 2-core machine).
 */

async function go(studio: StudioPage, hash: string): Promise<void> {
  await studio.page.evaluate((value) => {
    location.hash = value;
  }, hash);
}

test('purged workflows leave the other tab’s list live; unfinished ones are refused', async ({
  studio: tabA,
  openTab,
}) => {
  const { page } = tabA;
  for (const id of ['done-1', 'batch-1', 'batch-2', 'batch-3'])
    await tabA.startViaConsole('countdown', { from: 0 }, { id });
  await tabA.startViaConsole('countdown', { from: 300, tickMs: 1_000 }, { id: 'batch-running' });

  const tabB = await openTab();
  for (const id of ['done-1', 'batch-1', 'batch-2', 'batch-3'])
    await tabB.expectWorkflowStatus(id, 'completed');
  await tabB.expectWorkflowStatus('batch-running', 'running');

  // One finished workflow, from its page: the confirmation, then back to the list; gone in B too.
  const detail = await tabA.openWorkflow('done-1');
  await detail.expectStatus('completed');
  await page.getByTestId('detail.purge-button').click();
  await expect(page.getByTestId('detail.purge-dialog')).toContainText('This cannot be undone.');
  await page.getByTestId('detail.purge-confirm').click();
  await expect.poll(() => new URL(page.url()).hash).toBe('#/workflows');
  await expect(tabA.row('done-1')).toHaveCount(0);
  await expect(tabB.row('done-1')).toHaveCount(0);
  await expect(tabB.row('batch-1')).toBeVisible();

  // A filter that names a running status: not offered, and why.
  await go(tabA, '#/workflows?status=running');
  await expect(page.getByTestId('workflows.purge-finished')).toBeDisabled();
  await expect(page.getByTestId('workflows.purge-blocked')).toHaveText(
    'Only finished workflows can be purged; the filter names running.',
  );

  // Purge by filter (id starting "batch-"): counted first — three finished, not the running one — then purged.
  await go(tabA, '#/workflows?q=batch-');
  await expect(tabA.row('batch-running')).toBeVisible();
  await page.getByTestId('workflows.purge-finished').click();
  await expect(page.getByTestId('workflows.purge-count')).toHaveAttribute('data-count', '3');
  await expect(page.getByTestId('workflows.purge-count')).toContainText('3 finished workflows match');
  await expect(page.getByTestId('workflows.purge-confirm')).toHaveText('Purge 3 workflows');
  await page.getByTestId('workflows.purge-confirm').click();
  const result = page.getByTestId('workflows.purge-result');
  await expect(result).toHaveAttribute('data-purged', '3');
  await expect(result).toHaveAttribute('data-failed', '0');
  await page.getByTestId('workflows.purge-close').click();
  for (const id of ['batch-1', 'batch-2', 'batch-3']) {
    await expect(tabA.row(id)).toHaveCount(0);
    await expect(tabB.row(id)).toHaveCount(0);
  }
  await tabB.expectWorkflowStatus('batch-running', 'running');

  // Started again while its purge was being confirmed: the engine refuses, in its words; nothing is deleted.
  await tabA.startViaConsole('countdown', { from: 0 }, { id: 'again' });
  const again = await tabA.openWorkflow('again');
  await again.expectStatus('completed');
  await page.getByTestId('detail.purge-button').click();
  await expect(page.getByTestId('detail.purge-confirm')).toBeVisible();
  await tabB.startViaConsole('countdown', { from: 300, tickMs: 1_000 }, { id: 'again' });
  await again.expectStatus('running');
  await page.getByTestId('detail.purge-confirm').click();
  const refusal = page.getByTestId('detail.purge-error');
  await expect(refusal).toHaveAttribute('data-error-name', 'InvalidWorkflowStateError');
  await expect(refusal).toContainText("Cannot purge workflow 'again': it is running.");
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('detail.purge-dialog')).toBeHidden();

  // Its earlier run is finished: purged alone, the page goes to the latest run, which stays.
  await go(tabA, '#/workflows/again?run=1');
  await expect(page.getByTestId('detail.screen')).toHaveAttribute('data-run', '1');
  await page.getByTestId('detail.purge-run-button').click();
  await page.getByTestId('detail.purge-confirm').click();
  await expect.poll(() => new URL(page.url()).hash).toBe('#/workflows/again');
  await expect(page.getByTestId('detail.screen')).toHaveAttribute('data-run', '2');
  await expect(page.getByTestId('detail.run-switcher')).toBeHidden();
  expect((await tabB.page.evaluate(() => window.shuttle!.runs('again'))).map((run) => run.run)).toEqual([2]);
});
