import { expect, test, type StudioPage } from './fixtures/studio';

/**
 * Activity limits across tabs: the demos' payment captures through the `payment-gateway` activity limit, one
 * capture at a time across every tab. Two payments with their own keys are admitted at once by the payments
 * queue; while one captures, the other's capture waits. Both tabs' Queues screens show the gateway's row: one
 * of one running, the holder linked to its workflow with the engine that runs it, and — on the tab whose
 * engine runs the waiting capture — one waiting there. The holder's engine is read from the store through the
 * console API (`activityLimits()`), the same on both tabs.
 *
 * Budgets: each payment works 8 s of real time (authorize 4 s, capture 4 s), so one capture holds the slot for
 * 4 s while the other waits; the checks allow 15 s.
 */

function row(tab: StudioPage) {
  return tab.page.locator('[data-testid="activity-limits.row"][data-name="payment-gateway"]');
}

test('two tabs show who holds the payment gateway, on which engine, and who waits', async ({
  studio: tabA,
  openTab,
}) => {
  const tabB = await openTab();
  for (const tab of [tabA, tabB]) {
    await tab.page.getByTestId('shell.nav-queues').click();
    await expect(row(tab)).toBeVisible();
    await expect(row(tab)).toHaveAttribute('data-declared', 'true');
    await expect(row(tab)).toContainText('1 at once');
    await expect(row(tab).getByTestId('activity-limits.running')).toHaveAttribute('data-running', '0');
  }

  for (const [index, id] of ['gw-1', 'gw-2'].entries())
    await tabA.startViaConsole(
      'payment',
      { customer: `gw-customer-${index}`, amount: 10, workMs: 8_000 },
      { id, concurrencyKey: `gw-customer-${index}` },
    );

  // One capture holds the gateway; the other waits on the engine that runs it.
  const gateway = () => tabA.page.evaluate(() => window.shuttle!.activityLimits());
  await expect
    .poll(async () => (await gateway()).find((group) => group.name === 'payment-gateway')?.running.length, {
      timeout: 15_000,
    })
    .toBe(1);
  const holder = (await gateway()).find((group) => group.name === 'payment-gateway')!.running[0]!;
  for (const tab of [tabA, tabB]) {
    await expect(row(tab).getByTestId('activity-limits.running')).toHaveText('1 / 1');
    const shown = row(tab).getByTestId('activity-limits.holder');
    await expect(shown).toHaveCount(1);
    await expect(shown).toHaveAttribute('data-workflow-id', holder.workflowId);
    await expect(shown).toHaveAttribute('data-engine-id', holder.engineId);
    await expect(shown.getByRole('link', { name: holder.workflowId })).toBeVisible();
  }
  await expect
    .poll(
      async () => {
        const counts = await Promise.all(
          [tabA, tabB].map(async (tab) =>
            Number(await row(tab).getByTestId('activity-limits.waiting').textContent()),
          ),
        );
        return counts.reduce((sum, count) => sum + count, 0);
      },
      { message: 'the other capture waits on one tab' },
    )
    .toBe(1);

  // Both payments complete, and the gateway is free again on both screens.
  for (const id of ['gw-1', 'gw-2'])
    await expect.poll(async () => (await tabA.describe(id)).status, { timeout: 30_000 }).toBe('completed');
  for (const tab of [tabA, tabB])
    await expect(row(tab).getByTestId('activity-limits.running')).toHaveAttribute('data-running', '0');
});
