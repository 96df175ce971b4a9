import { expect, test } from './fixtures/studio';

/**
 * Buffered signals in the studio: a signal sent to a workflow that does not wait for it yet stays in the
 * store, and the Pending work screen and the workflow's Pending tab list it — name, payload (one line, with
 * "Show all"), when it was sent and by which engine — until the workflow consumes it; then it is gone.
 */

const laterSource = `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'later-signal',
  version: 1,
  *run(ctx, input: { sleepMs: number }) {
    yield* ctx.sleep(input.sleepMs);
    return yield* ctx.waitForSignal('go');
  },
});
`;

test('a signal the workflow does not wait for yet is listed as buffered until it consumes it', async ({
  studio,
}) => {
  const page = studio.page;
  expect(await page.evaluate((source) => window.shuttle!.saveDefinition(source), laterSource)).toMatchObject({
    ok: true,
  });
  // Long enough to look at the lists; then the workflow waits for `go` and takes the buffered one.
  const id = await studio.startViaConsole('later-signal', { sleepMs: 8_000 }, { id: 'buffered-later' });
  await expect.poll(async () => (await studio.describe(id)).pending?.kind).toBe('sleep');
  const payload = { note: 'n'.repeat(150), by: 'e2e' };
  await page.evaluate(([workflowId, value]) => window.shuttle!.signal(workflowId, 'go', value), [
    id,
    payload,
  ] as const);
  const label = await studio.engineLabel();

  await page.getByTestId('shell.nav-pending').click();
  await expect(page.getByRole('heading', { level: 1, name: 'Pending work' })).toBeVisible();
  const row = page.locator(`[data-testid="pending.buffered-row"][data-workflow-id="${id}"]`);
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('pending.buffered-name')).toHaveText('go');
  await expect(row.getByTestId('pending.buffered-payload')).toHaveText(/^\{"note":"n+…$/);
  await expect(row).toContainText(label);
  await expect(row.getByTestId('pending.buffered-sent')).toHaveAttribute('datetime', /^\d{4}-/);
  await row.getByTestId('pending.buffered-show-all').click();
  await expect(page.getByTestId('pending.buffered-full')).toContainText('n'.repeat(150));
  await expect(page.getByTestId('pending.buffered-full')).toContainText('"e2e"');

  // The workflow's own Pending tab: its timer, and the signal buffered.
  await studio.openWorkflow(id);
  await page.getByTestId('detail.tab-pending').click();
  await expect(page.locator('[data-testid="pending.row"][data-kind="timer"]')).toHaveCount(1);
  const own = page.getByTestId('pending.buffered-row');
  await expect(own).toHaveCount(1);
  await expect(own.getByTestId('pending.buffered-name')).toHaveText('go');

  // After the timer the workflow waits for `go`, takes the buffered signal and completes: nothing is left.
  await expect.poll(async () => (await studio.describe(id)).status, { timeout: 30_000 }).toBe('completed');
  expect((await studio.describe(id)).result).toEqual(payload);
  await expect(own).toHaveCount(0);
  await page.getByTestId('shell.nav-pending').click();
  await expect(page.getByTestId('pending.buffered-empty')).toBeVisible();
  await expect(page.getByTestId('pending.buffered-row')).toHaveCount(0);
});
