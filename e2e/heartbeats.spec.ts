import { expect, test } from './fixtures/studio';

/**
 * Activity heartbeats in the studio: a slow step reports its progress with `heartbeat` every 250 ms; the
 * engine records the latest at most once a second, and Pending work shows it beside the attempt — when it
 * was recorded and its details — on the store-wide screen and on the workflow's Pending tab, moving on as
 * the step works.
 *
 * Budgets: the step works for 30 s of real time, far longer than the test; every wait is the default 15 s.
 */
test('pending work shows the last heartbeat of a running activity, and it moves on', async ({ studio }) => {
  const { page } = studio;
  const id = await studio.startViaConsole(
    'slow-steps',
    { steps: [{ name: 'copy', ms: 30_000 }] },
    { id: 'heartbeat-copy' },
  );
  await page.getByTestId('shell.nav-pending').click();
  const row = page.locator(`[data-testid="pending.row"][data-workflow-id="${id}"]`);
  await expect(row).toHaveAttribute('data-kind', 'activity');
  const heartbeat = row.getByTestId('pending.heartbeat');
  await expect(heartbeat).toContainText(/heartbeat .* · \{"doneMs":\d+,"totalMs":30000\}/);
  const doneMs = async () =>
    Number(/"doneMs":(\d+)/.exec((await heartbeat.textContent()) ?? '')?.[1] ?? Number.NaN);
  const first = await doneMs();
  await expect.poll(doneMs).toBeGreaterThan(first);

  // The same on the workflow's own Pending tab, from describe.
  await studio.openWorkflow(id);
  await page.getByTestId('detail.tab-pending').click();
  await expect(page.getByTestId('pending.heartbeat')).toContainText('"totalMs":30000');
  const described = await studio.describe(id);
  expect(described.pending?.leaves[0]?.heartbeat).toMatchObject({ attempt: 1 });
});
