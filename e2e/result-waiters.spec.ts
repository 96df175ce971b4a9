import { expect, test } from './fixtures/studio';

/**
 * End-to-end scenario 6 (docs/quality.md), cross-tab result waiter: tab C waits (from the workflow's page) on
 * a workflow running in tab A; C's Result waiters screen shows the waiter pending with A as where it runs,
 * then settled — through the change feed or a poll, since the workflow finished in another tab — with how
 * long that took.
 */

test('a result waiter in one tab on a workflow running in another shows pending, then settled and how', async ({
  studio: tabA,
  openTab,
}) => {
  const engineA = await tabA.engineId();
  const workflowId = await tabA.startViaConsole(
    'countdown',
    { from: 1_000, tickMs: 1_000 },
    { id: 'awaited-1' },
  );
  const tabC = await openTab();
  const engineC = await tabC.engineId();

  const detail = await tabC.openWorkflow(workflowId);
  await expect(detail.ownerEngine).toHaveAttribute('data-engine-id', engineA);
  await detail.waitForResult();

  await tabC.openScreen('waiters');
  const row = tabC.waiters.row(workflowId, engineC);
  await expect(row).toHaveAttribute('data-state', 'pending');
  await expect(row.getByTestId('waiters.row-owner').locator('[data-engine-id]')).toHaveAttribute(
    'data-engine-id',
    engineA,
  );
  await expect(row.getByTestId('waiters.row-outcome')).toContainText('waiting');

  // A finishes the workflow (terminating it is a terminal write by A, seen by C through the store).
  await tabA.page.evaluate((id) => window.shuttle!.terminate(id, 'enough waiting'), workflowId);

  await expect(row).toHaveAttribute('data-state', 'settled');
  await expect(row).toHaveAttribute('data-via', /^(change-feed|poll)$/);
  await expect(row.getByTestId('waiters.row-via')).toHaveText(/change feed|poll/);
  await expect(row.getByTestId('waiters.row-outcome')).toContainText('terminated');
  await expect(row.getByTestId('waiters.row-latency')).toHaveText(/\d+(\.\d+)? (ms|s)/);
});
