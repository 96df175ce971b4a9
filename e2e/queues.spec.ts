import type { QueueView } from '../src/engine';
import { dialogSelector, scansInTheme } from './fixtures/axe';
import { slowdown } from './fixtures/load';
import { expect, test, type StudioPage } from './fixtures/studio';

/**
 * Workflow queues across tabs: the demos' `payments` queue admits two payments at once across every tab of a
 * database. Three tabs open the Queues screen; six payments (each with its own concurrency key, so the
 * queue's limit of two is what binds) are started from one tab. Every tab's screen shows two running and the
 * rest waiting, and never more than two running — read from each tab's DOM and, at the store, through the
 * console API's `describeQueue` — while they run. The tab that holds running payments closes (within about
 * two seconds of their admission, well before they finish): another tab takes them over, their slots with
 * them (still never more than two), and every payment completes. A waiting payment's page shows its
 * position.
 *
 * Budgets: each payment works 6 s of real time, so six at two at once take about 18 s, plus the handoff
 * (tens of milliseconds for a closed tab); the wait for completion allows 45 s.
 */

const limit = 2;
const count = 6;
const workMs = 6_000;

function runningCell(tab: StudioPage) {
  return tab.page.locator(
    '[data-testid="queues.row"][data-name="payments"] [data-testid="queues.row-running"]',
  );
}

async function shownRunning(tab: StudioPage): Promise<number> {
  return Number(await runningCell(tab).getAttribute('data-running'));
}

function describeQueue(tab: StudioPage): Promise<QueueView> {
  return tab.page.evaluate(() => window.shuttle!.api.describeQueue({ name: 'payments' }));
}

/** Reads the queue at the store and on every tab's screen; none may show more running than the limit. */
async function sample(tabs: StudioPage[], seen: { store: number[]; shown: number[] }): Promise<void> {
  const view = await describeQueue(tabs[0]!);
  expect(view.running, 'running at the store').toBeLessThanOrEqual(limit);
  expect(view.slots.length, 'slots held at the store').toBeLessThanOrEqual(limit);
  seen.store.push(view.running ?? -1);
  for (const tab of tabs) {
    const shown = await shownRunning(tab);
    expect(shown, 'running on a tab’s Queues screen').toBeLessThanOrEqual(limit);
    seen.shown.push(shown);
  }
}

test('three tabs admit from one queue: the same count on every Queues screen, never above the limit, through a tab closing', async ({
  studio: tabA,
  openTab,
}) => {
  const tabB = await openTab();
  const tabC = await openTab();
  const tabs = [tabA, tabB, tabC];
  for (const tab of tabs) {
    await tab.page.getByTestId('shell.nav-queues').click();
    await expect(tab.page.getByTestId('shell.nav-queues')).toHaveAttribute('aria-current', 'page');
    await expect(tab.page.locator('[data-testid="queues.row"][data-name="payments"]')).toBeVisible();
    await expect(
      tab.page.locator('[data-testid="queues.row"][data-name="payments"] [data-testid="queues.row-limits"]'),
    ).toHaveText('2 at once · 1 per key · 30 per minute');
  }

  const ids = Array.from({ length: count }, (_, index) => `pay-${index}`);
  for (const [index, id] of ids.entries())
    await tabA.startViaConsole(
      'payment',
      { customer: `customer-${index}`, amount: 10 + index, workMs },
      { id, concurrencyKey: `customer-${index}` },
    );

  // Every tab shows the queue full, and the others waiting.
  for (const tab of tabs) {
    await expect(runningCell(tab)).toHaveAttribute('data-running', String(limit));
    await expect(runningCell(tab)).toHaveText(/2 \/ 2/);
    await expect
      .poll(async () =>
        Number(
          await tab.page
            .locator('[data-testid="queues.row"][data-name="payments"] [data-testid="queues.row-waiting"]')
            .getAttribute('data-waiting'),
        ),
      )
      .toBeGreaterThan(0);
  }
  const seen = { store: [] as number[], shown: [] as number[] };
  for (let round = 0; round < 5; round++) await sample(tabs, seen);
  expect(Math.max(...seen.store), 'the queue was seen full at the store').toBe(limit);

  // Close the tab that drives a running payment: its payments are taken over, their slots with them.
  const view = await describeQueue(tabA);
  const holders = await Promise.all(
    view.slots.map(async (slot) => (await tabA.describe(slot.workflowId)).owner?.engineId ?? null),
  );
  const engineIds = await Promise.all(tabs.map((tab) => tab.engineId()));
  const closing = tabs.find((_, index) => holders.includes(engineIds[index]!));
  expect(closing, 'a tab holds a running payment').toBeTruthy();
  const closedEngine = engineIds[tabs.indexOf(closing!)]!;
  const heldByClosing = view.slots
    .filter((_, index) => holders[index] === closedEngine)
    .map((slot) => slot.workflowId);
  expect(heldByClosing.length).toBeGreaterThan(0);
  const survivors = tabs.filter((tab) => tab !== closing);
  await closing!.page.close();

  // A waiting payment's page shows its place in the queue, with a link to the queue.
  const last = ids[count - 1]!;
  const viewer = survivors[0]!;
  const detail = await viewer.openWorkflow(last);
  await expect(viewer.page.getByTestId('detail.queue')).toHaveAttribute('data-state', 'waiting');
  await expect(viewer.page.getByTestId('detail.queue-position')).toHaveText(
    new RegExp(`— position \\d+ of \\d+ \\(key customer-${count - 1}, priority 5\\)`),
  );
  const position = Number(
    await viewer.page.getByTestId('detail.queue-position').getAttribute('data-position'),
  );
  expect(position).toBeGreaterThanOrEqual(1);
  expect(position).toBeLessThanOrEqual(count - limit);
  await expect(detail.workflowId).toHaveAttribute('data-full-id', last);
  await viewer.page.getByTestId('shell.nav-queues').click();

  // Until every payment has completed, the survivors never show (nor the store hold) more than two running.
  await expect
    .poll(
      async () => {
        await sample(survivors, seen);
        const described = await Promise.all(ids.map((id) => survivors[0]!.describe(id)));
        return described.filter((workflow) => workflow.status === 'completed').length;
      },
      { timeout: 45_000, intervals: [200] },
    )
    .toBe(count);

  // The closed tab's payments finished on another engine, in the slot they were admitted to.
  for (const id of heldByClosing) {
    const timeline = await survivors[0]!.timeline(id);
    const takenOver = timeline.find(
      (entry) =>
        (entry.kind === 'claim-acquired' || entry.kind === 'claim-taken-over') &&
        entry.engineId !== closedEngine,
    );
    expect(takenOver, `${id} was claimed by a surviving tab`).toBeTruthy();
    const completed = timeline.find((entry) => entry.kind === 'completed');
    expect(completed?.engineId, `${id} completed after a takeover`).not.toBe(closedEngine);
    const started = timeline.find((entry) => entry.kind === 'started');
    expect(started?.detail, `${id} was admitted from the queue`).toMatchObject({
      queue: { name: 'payments' },
    });
  }
  // The queue is empty, at the store and on every surviving screen.
  for (const tab of survivors) {
    await expect(runningCell(tab)).toHaveAttribute('data-running', '0');
    expect(await describeQueue(tab)).toMatchObject({ running: 0, waiting: 0, slots: [] });
  }
  expect(Math.max(...seen.shown)).toBeLessThanOrEqual(limit);
});

/**
 * The start dialog starts onto a queue with a concurrency key and a priority, and the page says where the
 * workflow waits; the Queues screen, a queue's page, that workflow's page and the dialog's queue fields have
 * no serious or critical axe violation, in both themes. Two long payments hold both slots, so what the dialog
 * starts waits (priority 1 goes ahead of a priority-5 payment enqueued before it).
 */
for (const theme of ['light', 'dark'] as const)
  test(`the start dialog's queue options, and the queue screens, ${theme} theme: no serious or critical axe violation`, async ({
    studio,
  }) => {
    test.setTimeout((60_000 + 6 * 15_000) * slowdown());
    const page = studio.page;
    const { scan, found } = await scansInTheme(page, theme);
    for (const [id, key] of [
      ['long-1', 'k1'],
      ['long-2', 'k2'],
      ['behind', 'k3'],
    ] as const)
      await studio.startViaConsole(
        'payment',
        { customer: key, amount: 5, workMs: 60_000 },
        { id, concurrencyKey: key },
      );

    const dialog = await studio.startDialog.open();
    await dialog.choose('payment');
    await dialog.setWorkflowId('from-dialog');
    await page.getByTestId('start.more-options').click();
    await expect(page.getByTestId('start.queue-fields')).toBeVisible();
    await page.getByTestId('start.queue').selectOption('payments');
    await page.getByTestId('start.concurrency-key').fill('dialog-key');
    await page.getByTestId('start.priority').selectOption('1');
    await scan('start dialog with the queue options', dialogSelector('start.dialog'));
    await page.getByTestId('start.priority').selectOption('');
    await page.getByTestId('start.concurrency-key').fill('   ');
    await expect(page.getByTestId('start.field-error')).toContainText(
      'concurrency key cannot be only spaces',
    );
    await expect(dialog.submitButton).toBeDisabled();
    await page.getByTestId('start.concurrency-key').fill('dialog-key');
    await page.getByTestId('start.priority').selectOption('1');
    await dialog.submit();
    await expect(dialog.root).toBeHidden();
    await expect(studio.detail.workflowId).toHaveAttribute('data-full-id', 'from-dialog');
    await expect(page.getByTestId('detail.queue-position')).toHaveText(
      '— position 1 of 2 (key dialog-key, priority 1)',
    );
    await expect(page.getByTestId('detail.custody-gap')).toHaveAttribute('data-kind', 'queued');
    await scan('#/workflows/from-dialog (waiting in a queue)');
    expect((await studio.describe('from-dialog')).queue).toMatchObject({
      name: 'payments',
      key: 'dialog-key',
      priority: 1,
    });

    await page.getByTestId('detail.queue-link').click();
    await expect(page.getByTestId('queue.page')).toHaveAttribute('data-name', 'payments');
    await expect(page.getByTestId('queue.slot')).toHaveCount(2);
    await expect(page.getByTestId('queue.waiting-row')).toHaveCount(2);
    await expect(page.getByTestId('queue.waiting-row').first()).toHaveAttribute(
      'data-workflow-id',
      'from-dialog',
    );
    await expect(page.locator('[data-testid="queue.key"][data-key="dialog-key"]')).toBeVisible();
    await scan('#/queues/payments');

    await page.getByTestId('queue.back').click();
    await expect(page.getByTestId('queues.table')).toBeVisible();
    await expect(page.getByTestId('queues.summary')).toHaveText('1 queue · 2 running · 2 waiting');
    await scan('#/queues');

    await page.evaluate(() => {
      location.hash = '#/queues/no-such-queue';
    });
    await expect(page.getByTestId('queue.not-found')).toBeVisible();
    await scan('#/queues/no-such-queue');
    expect(found).toEqual([]);
  });
