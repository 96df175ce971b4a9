import type { Page } from '@playwright/test';
import { hoverWord, typeAfterLine } from './fixtures/editor';
import { agePresence } from './fixtures/presence';
import { expect, test, type StudioPage } from './fixtures/studio';

/**
 * Takes the screenshots in docs/screenshots: every screen at 1280×800, light and dark, with realistic
 * content — three engine tabs, a dozen workflows of every demo, a freeze handoff with a refused write, a
 * graceful handoff, result waiters in two tabs, pending work, the tree of parents and children, a running
 * workflow's claim liveness, the start dialog's options, and two drill reports; then (tests of their own) the
 * run switcher, Schedules, an external activity, an event's details, the bulk terminate and purge
 * confirmations, buffered signals, the definitions editor, stacks mapped to the authored lines, a closed
 * tab's engine in history and on the Engines screen, and the editor's type checker. Not part of `npm test`
 * (it takes a few minutes and asserts nothing new); run it with
 *
 *     SHUTTLE_SCREENSHOTS=1 npx playwright test e2e/screenshots.spec.ts
 */

test.skip(
  !process.env.SHUTTLE_SCREENSHOTS,
  'set SHUTTLE_SCREENSHOTS=1 to take the documentation screenshots',
);

const dir = 'docs/screenshots';

/** Screenshots the page in both themes; `show` opens a dialog first and `hide` closes it after each shot. */
async function shoot(
  page: Page,
  name: string,
  overlay: { show: () => Promise<void>; hide: () => Promise<void> } | null = null,
): Promise<void> {
  await page.mouse.move(0, 799);
  for (const theme of ['light', 'dark']) {
    await page.getByTestId(`shell.theme-${theme}`).click();
    if (overlay) await overlay.show();
    await page.evaluate(() => document.fonts.ready);
    await page.waitForTimeout(350);
    await page.screenshot({ path: `${dir}/${name}-${theme}.png` });
    if (overlay) await overlay.hide();
  }
  await page.getByTestId('shell.theme-light').click();
}

/** Starts a demo with its own sample input (as the start dialog would). */
function startSample(tab: StudioPage, workflowType: string, workflowId: string): Promise<string> {
  return tab.page.evaluate(
    async ({ type, id }) => {
      const definition = (await window.shuttle!.definitions()).find((candidate) => candidate.name === type);
      return window.shuttle!.start(type, definition?.sampleInput ?? undefined, { id });
    },
    { type: workflowType, id: workflowId },
  );
}

async function go(studio: StudioPage, hash: string): Promise<void> {
  await studio.page.evaluate((value) => {
    location.hash = value;
  }, hash);
  await studio.page.waitForTimeout(600);
}

test('documentation screenshots', async ({ studio: tabA, openTab }) => {
  test.setTimeout(300_000);
  const tabB = await openTab();
  const tabC = await openTab();
  const engineB = await tabB.engineId();
  await tabA.page.bringToFront();

  const order = {
    orderId: 'A-1001',
    customer: 'ada@example.com',
    items: [
      { sku: 'TEA-GREEN-250G', quantity: 2, unitPriceCents: 850 },
      { sku: 'MUG-STONEWARE', quantity: 1, unitPriceCents: 1_800 },
    ],
    shippingAddress: '12 Analytical Row, London',
    paymentGatewayFailures: 1,
    approvalTimeoutMs: 600_000,
  };
  // A realistic mix, owned by three tabs.
  await tabA.startViaConsole('order', order, { id: 'order-A-1001' });
  await tabA.startViaConsole(
    'order',
    {
      ...order,
      orderId: 'A-1002',
      customer: 'grace@example.com',
      paymentGatewayFailures: 0,
      approvalTimeoutMs: 600,
    },
    { id: 'order-A-1002' },
  );
  await tabB.startViaConsole('countdown', { from: 600, tickMs: 500 }, { id: 'countdown-launch' });
  await startSample(tabC, 'fan-out', 'quotes-tea-q3');
  await startSample(tabC, 'saga', 'trip-lisbon');
  await tabA.startViaConsole(
    'flaky',
    { failures: 2, maxAttempts: 5, initialIntervalMs: 400 },
    { id: 'flaky-webhook' },
  );
  await tabB.startViaConsole(
    'flaky',
    { failures: 6, maxAttempts: 3, initialIntervalMs: 200 },
    { id: 'flaky-ledger-sync' },
  );
  await startSample(tabC, 'approval', 'expense-EXP-311');
  await tabA.startViaConsole('countdown', { from: 6, tickMs: 200 }, { id: 'countdown-warmup' });
  await tabC.startViaConsole('countdown', { from: 900, tickMs: 400 }, { id: 'countdown-relay' });
  await tabC.startViaConsole('countdown', { from: 900, tickMs: 700 }, { id: 'heartbeat-eu-west' });

  // A freeze handoff with a refused write: B owns a pipeline of short steps and freezes past the TTL. Whether
  // B's activity completes (and its commit is refused) before its renewal is refused depends on timing, so
  // this is tried until a refused write was recorded.
  const etlSteps = [
    'extract',
    'clean',
    'dedupe',
    'enrich',
    'validate',
    'aggregate',
    'index',
    'load',
    'verify',
    'publish',
  ];
  let etl = '';
  for (let attempt = 1; attempt <= 4 && !etl; attempt++) {
    const id = `etl-nightly-2025-06-${String(13 + attempt)}`;
    await tabB.startViaConsole(
      'slow-steps',
      { steps: [...etlSteps, ...etlSteps.map((name) => `${name}-eu`)].map((name) => ({ name, ms: 220 })) },
      { id },
    );
    await expect
      .poll(
        async () => (await tabA.timeline(id)).filter((entry) => entry.kind === 'activity-completed').length,
        {
          timeout: 20_000,
        },
      )
      .toBeGreaterThanOrEqual(3);
    await tabA.page.evaluate((engineId) => window.shuttle!.chaos.freeze(engineId, 11), engineB);
    await expect.poll(async () => (await tabA.describe(id)).status, { timeout: 60_000 }).toBe('completed');
    await expect.poll(async () => (await tabB.hello()).status.state, { timeout: 20_000 }).toBe('running');
    if ((await tabA.fenceRejections(id)).length > 0) etl = id;
  }
  expect(etl, 'a freeze handoff with a refused write').not.toBe('');

  // Result waiters: C waits on an order awaiting approval in A (pending); B on A's warm-up (settled through
  // the change feed); A on its own warm-up (settled locally).
  await tabC.page.evaluate(() => void window.shuttle!.result('order-A-1001').catch(() => null));
  await tabB.page.evaluate(() => window.shuttle!.result('countdown-warmup').catch(() => null));
  await tabA.page.evaluate(() => window.shuttle!.result('countdown-warmup').catch(() => null));
  const short = await tabA.startViaConsole(
    'countdown',
    { from: 3, tickMs: 300 },
    { id: 'countdown-smoke-check' },
  );
  await Promise.all([
    tabA.page.evaluate((id) => window.shuttle!.result(id).catch(() => null), short),
    tabB.page.evaluate((id) => window.shuttle!.result(id).catch(() => null), short),
  ]);
  const detailA = await tabA.openWorkflow('order-A-1001');
  await detailA.waitForResult();

  // The freeze handoff, in detail.
  await go(tabA, `#/workflows/${encodeURIComponent(etl)}`);
  await expect(tabA.detail.fence(2)).toHaveCount(1);
  await tabA.page.getByTestId('shell.theme-light').click();
  await tabA.page.waitForTimeout(400);
  // Select the step that was in flight during the freeze: the chart and the event list highlight it.
  await tabA.page.locator('[data-testid="detail.span"][data-status="interrupted"]').first().click();
  await tabA.page.mouse.move(0, 799);
  await tabA.page.screenshot({ path: `${dir}/handoff.png` });
  await shoot(tabA.page, 'workflow');

  // A graceful handoff: C restarts, its long countdowns move to A and B at epoch 2 (contested claims).
  await tabA.page.evaluate((engineId) => window.shuttle!.chaos.restart(engineId), await tabC.engineId());
  await expect.poll(async () => (await tabA.describe('countdown-relay')).epoch, { timeout: 15_000 }).toBe(2);
  // Tab C now runs a new engine: give it and B work of their own, and a waiter in C on A's order.
  await tabB.startViaConsole('countdown', { from: 900, tickMs: 600 }, { id: 'sync-inventory-eu' });
  await startSample(tabC, 'approval', 'expense-EXP-312');
  await tabC.startViaConsole('countdown', { from: 900, tickMs: 800 }, { id: 'report-weekly-kpis' });
  await tabC.page.evaluate(() => void window.shuttle!.result('order-A-1001').catch(() => null));
  await tabA.page.waitForTimeout(4_000);

  await go(tabA, '#/workflows');
  await shoot(tabA.page, 'workflows');
  await go(tabA, '#/claims');
  await shoot(tabA.page, 'claims');
  await go(tabA, '#/waiters');
  await shoot(tabA.page, 'waiters');
  await go(tabA, '#/engines');
  await shoot(tabA.page, 'engines');
  await go(tabA, '#/pending');
  await expect(tabA.page.getByTestId('pending.row').first()).toBeVisible();
  await shoot(tabA.page, 'pending');
  await go(tabA, '#/workflows?text=quotes&since=1h&view=tree');
  await expect(tabA.page.locator('[data-testid="workflows.row"][data-depth="1"]').first()).toBeVisible();
  await shoot(tabA.page, 'workflows-tree');
  // A running workflow another tab owns: its claim's liveness, and Take over (enabled only for a lapsed one).
  await go(tabA, `#/workflows/${encodeURIComponent('sync-inventory-eu')}`);
  await expect(tabA.page.getByTestId('detail.claim-liveness')).toBeVisible();
  await shoot(tabA.page, 'workflow-running');
  // A parent's family: its children, one opened.
  await go(tabA, `#/workflows/${encodeURIComponent('quotes-tea-q3')}`);
  await tabA.page.getByTestId('detail.tab-children').click();
  await tabA.page.getByTestId('detail.family-toggle').first().click();
  await tabA.page.getByTestId('detail.family').scrollIntoViewIfNeeded();
  await shoot(tabA.page, 'workflow-family');

  // Drill reports.
  await go(tabA, '#/chaos');
  await tabA.page.locator('[data-drill="race"]').getByTestId('chaos.run').click();
  await expect(tabA.page.locator('[data-drill="race"]').getByTestId('chaos.report')).toBeVisible({
    timeout: 30_000,
  });
  await tabA.page.locator('[data-drill="handoff"]').getByTestId('chaos.run').click();
  await expect(tabA.page.locator('[data-drill="handoff"]').getByTestId('chaos.report')).toBeVisible({
    timeout: 90_000,
  });
  await tabA.page.waitForTimeout(1_000);
  await shoot(tabA.page, 'chaos');

  await go(tabA, '#/workflows');
  await shoot(tabA.page, 'start-dialog', {
    show: async () => {
      await tabA.startDialog.open();
      await tabA.startDialog.choose('order');
    },
    hide: () => tabA.startDialog.close(),
  });
  await shoot(tabA.page, 'start-options', {
    show: async () => {
      await tabA.startDialog.open();
      await tabA.startDialog.choose('countdown');
      await tabA.page.getByTestId('start.more-options').click();
      await tabA.page.getByTestId('start.idempotency-key').fill('launch-2025-06-14');
    },
    hide: () => tabA.startDialog.close(),
  });
  await shoot(tabA.page, 'palette', {
    show: async () => {
      await tabA.page.keyboard.press('Control+k');
      await tabA.page.getByTestId('palette.input').fill('or');
      await tabA.page.waitForTimeout(500);
    },
    hide: async () => {
      await tabA.page.keyboard.press('Escape');
      await expect(tabA.page.getByTestId('palette.dialog')).toBeHidden();
    },
  });
});

const invoiceReminder = (
  version: number,
  rounds: number,
) => `import { defineWorkflow, delay, type WorkflowContext } from 'shuttle';

type Input = { invoiceId: string; customer: string; amountCents: number; reminderEveryMs?: number };
type State = { stage: 'waiting' | 'reminding' | 'paid' | 'escalated'; reminders: number };

export default defineWorkflow({
  name: 'invoice-reminder',
  version: ${version},
  description: 'Reminds a customer of an unpaid invoice until the "paid" signal comes, then escalates.',
  sampleInput: { invoiceId: 'INV-2041', customer: 'ada@example.com', amountCents: 12_900 },
  *run(ctx: WorkflowContext<State>, input: Input) {
    const state = ctx.state;
    state.reminders = 0;
    for (let round = 1; round <= ${rounds}; round++) {
      state.stage = 'waiting';
      const paid = yield* ctx.waitForSignal<{ reference: string }>('paid', {
        timeoutMs: input.reminderEveryMs ?? 86_400_000,
      });
      if (paid) {
        state.stage = 'paid';
        return { status: 'paid', reference: paid.reference, reminders: state.reminders };
      }
      state.stage = 'reminding';
      yield* ctx.activity('send-reminder', async ({ signal }) => {
        await delay(250, signal); // the mail service
        return { to: input.customer, round };
      });
      state.reminders = round;
    }
    state.stage = 'escalated';
    const ticket = yield* ctx.activity('open-collections-ticket', () => \`COLL-\${input.invoiceId}\`);
    return { status: 'escalated', ticket, reminders: state.reminders };
  },
  queries: {
    stage: (state) => state.stage,
  },
});
`;

const nightlyExport = `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'nightly-export',
  version: 1,
  description: 'Exports the day of orders in pages, one activity per page.',
  sampleInput: { pages: 5 },
  *run(ctx, input: { pages: number }) {
    for (let page = 1; page <= input.pages; page++)
      yield* ctx.activity(\`export-page-\${page}\`, () => ({ page, rows: 500 }));
    return { pages: input.pages };
  },
});
`;

test('definitions screenshots', async ({ studio }) => {
  test.setTimeout(120_000);
  const page = studio.page;
  for (const source of [
    invoiceReminder(1, 3),
    invoiceReminder(2, 3),
    nightlyExport,
    nightlyExport.replaceAll('nightly-export', 'weekly-export'),
  ])
    expect(await page.evaluate((text) => window.shuttle!.saveDefinition(text), source)).toMatchObject({
      ok: true,
    });
  // Version 2 is in use: changing its body asks for a new version.
  await studio.startViaConsole(
    'invoice-reminder',
    { invoiceId: 'INV-2041', customer: 'ada@example.com', amountCents: 12_900 },
    { id: 'invoice-INV-2041' },
  );
  await studio.openScreen('definitions');
  const editor = studio.definitions;
  await editor.newDefinition();
  await editor.select('invoice-reminder', 2);
  await editor.setSource(
    invoiceReminder(2, 4).replace(
      "      state.stage = 'reminding';",
      "      state.stage = 'reminding'; // one more round before collections",
    ),
  );
  await editor.expectCompiles('invoice-reminder', 2);
  await editor.editor.press('Control+Home');
  await editor.saveWithKeyboard();
  await expect(editor.versionWarning).toContainText('Bump to version 3 and save');
  await studio.page.getByTestId('definitions.editor-content').blur();
  await shoot(page, 'definitions');
});

/**
 * The screens of studio depth, light and dark: the run switcher (an id that ran three times, run 2 open),
 * Schedules, a manual approval's external activity, the purge confirmation, an event's details, the bulk
 * terminate confirmation, and Pending work with buffered signals.
 */
test('studio depth screenshots', async ({ studio, openTab }) => {
  test.setTimeout(240_000);
  const page = studio.page;
  await openTab();
  await page.bringToFront();

  // The run switcher: run 1 failed (a flaky call out of attempts), run 2 completed, run 3 runs.
  const sync = 'ledger-sync-2025-06';
  await page.evaluate(async (workflowId) => {
    const shuttle = window.shuttle!;
    await shuttle.start('flaky', { failures: 3, maxAttempts: 2, initialIntervalMs: 100 }, { id: workflowId });
    await shuttle.result(workflowId).catch(() => null);
    await shuttle.start('flaky', { failures: 1, maxAttempts: 3, initialIntervalMs: 200 }, { id: workflowId });
    await shuttle.result(workflowId);
    await shuttle.start(
      'flaky',
      { failures: 4, maxAttempts: 8, initialIntervalMs: 1_500 },
      { id: workflowId },
    );
  }, sync);
  await go(studio, `#/workflows/${sync}?run=2`);
  await expect(page.getByTestId('detail.screen')).toHaveAttribute('data-run', '2');
  await expect(page.getByTestId('detail.run-switcher')).toHaveText(/Run 2 of 3/);
  await page.getByTestId('detail.tab-result').click();
  await shoot(page, 'run-switcher', {
    show: async () => {
      await page.getByTestId('detail.run-switcher').click();
      await expect(page.getByTestId('detail.run-option')).toHaveCount(3);
    },
    hide: async () => {
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('detail.run-option')).toHaveCount(0);
    },
  });

  // Workflows to act on: orders (one with a buffered note), countdowns, a manual approval, finished ones.
  await startSample(studio, 'order', 'order-B-2001');
  await startSample(studio, 'order', 'order-B-2002');
  for (const [id, from] of [
    ['sync-inventory-eu', 900],
    ['sync-inventory-us', 900],
    ['report-weekly-kpis', 600],
  ] as const)
    await studio.startViaConsole('countdown', { from, tickMs: 700 }, { id });
  for (const id of ['warmup-cache-1', 'warmup-cache-2', 'warmup-cache-3'])
    await studio.startViaConsole('countdown', { from: 1, tickMs: 50 }, { id });
  await studio.startViaConsole(
    'flaky',
    { failures: 5, maxAttempts: 2, initialIntervalMs: 50 },
    { id: 'import-legacy-csv' },
  );
  const po = await startSample(studio, 'manual-approval', 'purchase-PO-1042');
  await expect.poll(async () => (await studio.describe('order-B-2001')).pending?.name).toBe('approve');
  await page.evaluate(() => {
    const shuttle = window.shuttle!;
    return Promise.all([
      shuttle.signal('order-B-2001', 'gift-note', {
        message: 'Happy birthday, Ada! Enjoy the tea — and the mug is for the office, not for the cat.',
        wrap: 'kraft paper',
      }),
      shuttle.signal('order-B-2002', 'priority', { level: 'express', requestedBy: 'support' }),
      shuttle.signal('sync-inventory-eu', 'pause'),
    ]);
  });
  await expect
    .poll(async () => (await studio.describe('warmup-cache-3')).status, { timeout: 15_000 })
    .toBe('completed');

  // Pending work: open operations, and the buffered signals below.
  await go(studio, '#/pending');
  await expect(page.getByTestId('pending.buffered-row')).toHaveCount(3);
  await expect(
    page.locator('[data-testid="pending.row"][data-workflow-id="purchase-PO-1042"]'),
  ).toBeVisible();
  await page.getByTestId('pending.buffered').evaluate((table) => table.scrollIntoView({ block: 'end' }));
  await shoot(page, 'pending-buffered');

  // A manual approval's external activity: its token, Complete… and Fail….
  await go(studio, `#/workflows/${po}`);
  await expect(page.getByTestId('detail.external-activity')).toBeVisible();
  await page.getByTestId('detail.external-activity').scrollIntoViewIfNeeded();
  await shoot(page, 'external-activity');

  // An event's details: the order's reservation, with the result it recorded.
  await go(studio, '#/workflows/order-B-2001');
  const completed = page.locator('[data-testid="detail.event"][data-kind="activity-completed"]').first();
  await expect(completed).toBeVisible();
  await shoot(page, 'event-detail', {
    show: async () => {
      await completed.getByTestId('detail.event-open').click();
      await expect(page.getByTestId('detail.event-dialog')).toBeVisible();
    },
    hide: async () => {
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('detail.event-dialog')).toBeHidden();
    },
  });

  // Bulk terminate of the running countdowns, and purge of the finished workflows.
  await go(studio, '#/workflows?status=running&type=countdown');
  await expect(studio.row('sync-inventory-eu')).toBeVisible();
  await shoot(page, 'bulk-confirm', {
    show: async () => {
      await page.getByTestId('workflows.bulk-terminate').click();
      await expect(page.getByTestId('workflows.bulk-count')).toHaveAttribute('data-count', '3');
    },
    hide: async () => {
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('workflows.bulk-dialog')).toBeHidden();
    },
  });
  // A fresh page, so the list is read whole with every workflow started above.
  await studio.reload();
  await go(studio, '#/workflows');
  await expect(studio.row('purchase-PO-1042')).toBeVisible();
  await expect(studio.row('warmup-cache-1')).toBeVisible();
  await shoot(page, 'purge-confirm', {
    show: async () => {
      await page.getByTestId('workflows.purge-finished').click();
      await expect(page.getByTestId('workflows.purge-count')).toHaveAttribute('data-count', /[1-9]/);
    },
    hide: async () => {
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('workflows.purge-dialog')).toBeHidden();
    },
  });
});

/**
 * The Schedules screen with a realistic mix — a nightly report in Paris, a paused weekday digest in New
 * York, a heartbeat every ten seconds, an import every two seconds whose runs take longer (overlap 'skip':
 * skipped slots), and a ledger sync paused for a few seconds and resumed (catch-up 'latest': missed slots) —
 * the import's row open; 1280×900, so every row and one row's details fit.
 */
test('schedules screenshots', async ({ studio, openTab }) => {
  test.setTimeout(120_000);
  await openTab();
  const { page } = studio;
  await page.bringToFront();
  const slots = (name: string) =>
    page.evaluate(async (value) => (await window.shuttle!.describeSchedule(value)).lastSlots, name);
  await page.evaluate(async () => {
    const shuttle = window.shuttle!;
    await shuttle.schedule('nightly-report', {
      cron: '0 2 * * *',
      timezone: 'Europe/Paris',
      workflow: 'order',
      input: { orderId: 'REPORT', customer: 'ops@example.com', items: [], shippingAddress: '—' },
    });
    await shuttle.schedule('weekday-digest', {
      cron: '0 9 * * 1-5',
      timezone: 'America/New_York',
      workflow: 'countdown',
      input: { from: 3 },
    });
    await shuttle.pauseSchedule('weekday-digest');
    await shuttle.schedule('heartbeat', {
      cron: '*/10 * * * * *',
      workflow: 'countdown',
      input: { from: 1, tickMs: 100 },
      overlap: 'allow',
    });
    await shuttle.schedule('catalog-import', {
      cron: '*/2 * * * * *',
      workflow: 'slow-steps',
      input: {
        steps: [
          { name: 'fetch', ms: 1_500 },
          { name: 'load', ms: 1_500 },
        ],
      },
      overlap: 'skip',
    });
    await shuttle.schedule('ledger-sync', { cron: '* * * * * *', workflow: 'countdown', input: { from: 0 } });
  });
  await expect.poll(async () => (await slots('ledger-sync')).length).toBeGreaterThanOrEqual(2);
  await page.evaluate(() => window.shuttle!.pauseSchedule('ledger-sync'));
  const pausedAt = Date.now();
  await expect.poll(() => Date.now() - pausedAt, { intervals: [500] }).toBeGreaterThan(3_500);
  await page.evaluate(() => window.shuttle!.resumeSchedule('ledger-sync'));
  await expect
    .poll(async () => (await slots('catalog-import')).filter((slot) => slot.outcome === 'skipped').length, {
      timeout: 30_000,
    })
    .toBeGreaterThanOrEqual(3);
  await expect
    .poll(async () => (await slots('heartbeat')).length, { timeout: 30_000 })
    .toBeGreaterThanOrEqual(1);
  await page.evaluate(() => window.shuttle!.pauseSchedule('ledger-sync'));
  await go(studio, '#/schedules/catalog-import');
  await expect(page.getByTestId('schedules.details')).toBeVisible();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.mouse.move(0, 899);
  for (const theme of ['light', 'dark']) {
    await page.getByTestId(`shell.theme-${theme}`).click();
    await page.evaluate(() => document.fonts.ready);
    await page.waitForTimeout(400);
    await page.screenshot({ path: `${dir}/schedules-${theme}.png` });
  }
  await page.getByTestId('shell.theme-light').click();
});

/** A studio-authored definition that fails at known lines (as in e2e/stack-lines.spec.ts, named `checkout`). */
const checkoutSource = [
  "import { defineWorkflow } from 'shuttle';",
  '',
  'export default defineWorkflow({',
  "  name: 'checkout',",
  '  version: 1,',
  '  *run(ctx, input: { failBody?: boolean }) {',
  "    const charged = yield* ctx.activity('charge', ({ attempt }) => {",
  '      const cents: number = 1250;',
  "      if ((attempt as number) === 1) throw new Error('card declined');",
  '      return { cents };',
  '    }, { retry: { maxAttempts: 2, initialIntervalMs: 100 } });',
  "    if (input.failBody as boolean) throw new TypeError('no shipping address');",
  '    return charged;',
  '  },',
  '});',
  '',
].join('\n');

/**
 * Stacks that point at the author's code: a saved definition's workflow failed in its body at line 12 — the
 * Error tab with `checkout.ts:12:42`, the engine's frames hidden behind "Show engine frames" — and the event
 * of its activity's first attempt, which failed at line 9 and was retried: its stack, and "Result of
 * attempt 2" instead of a result of its own.
 */
test('stack screenshots', async ({ studio }) => {
  test.setTimeout(120_000);
  const page = studio.page;
  const saved = await page.evaluate((text) => window.shuttle!.saveDefinition(text), checkoutSource);
  expect(saved).toMatchObject({ ok: true, name: 'checkout' });
  const workflowId = await studio.startViaConsole('checkout', { failBody: true }, { id: 'checkout-A-1044' });
  const detail = await studio.openWorkflow(workflowId);
  await detail.expectStatus('failed');

  const errorStack = page.getByTestId('detail.error-stack-lines');
  await expect(errorStack).toContainText('checkout.ts:12:42');
  await expect(errorStack).not.toContainText('engine.worker');
  await expect(page.getByTestId('detail.error-stack').getByLabel('Show engine frames')).toBeVisible();
  // The Error tab in the middle of the page, the custody chart above it.
  await page.getByTestId('detail.error').evaluate((error) => error.scrollIntoView({ block: 'center' }));
  await shoot(page, 'stack-error');

  const failed = detail.event('activity-failed').first();
  await failed.scrollIntoViewIfNeeded();
  const dialog = page.getByTestId('detail.event-dialog');
  await shoot(page, 'stack-event', {
    show: async () => {
      await failed.getByTestId('detail.event-open').click();
      await expect(dialog.getByTestId('detail.event-stack-lines')).toContainText('checkout.ts:9:44');
      await expect(dialog.getByTestId('detail.event-outcome-heading')).toHaveText('Result of attempt 2');
    },
    hide: async () => {
      await page.keyboard.press('Escape');
      await expect(dialog).toBeHidden();
    },
  });
});

/**
 * History keeps who held it: a workflow Tab B ran until its tab closed, then another tab, shown after B's presence
 * record aged out (its custody lane still says Tab B, in B's colour); and the Engines screen with a closed
 * tab's card (stopped, "tab closed", no Restart).
 */
test('engine history screenshots', async ({ studio: tabA, openTab, databaseName }) => {
  test.setTimeout(180_000);
  const tabB = await openTab();
  const engineB = await tabB.engineId();
  const tabC = await openTab();
  const engineC = await tabC.engineId();
  const tabD = await openTab();
  const engineD = await tabD.engineId();
  await tabA.page.bringToFront();

  // B runs a countdown; its tab closes mid-way, another tab takes it over and finishes it.
  const workflowId = await tabB.startViaConsole(
    'countdown',
    { from: 12, tickMs: 300 },
    { id: 'countdown-handover' },
  );
  await expect
    .poll(
      async () => (await tabA.timeline(workflowId)).filter((entry) => entry.kind === 'timer-fired').length,
      {
        timeout: 20_000,
      },
    )
    .toBeGreaterThanOrEqual(4);
  await tabB.page.close();
  await expect
    .poll(async () => (await tabA.describe(workflowId)).status, { timeout: 60_000 })
    .toBe('completed');
  await tabA.startViaConsole('countdown', { from: 900, tickMs: 700 }, { id: 'heartbeat-eu-west' });
  await tabC.startViaConsole('countdown', { from: 900, tickMs: 500 }, { id: 'sync-inventory-eu' });

  // 11 minutes pass for B's record: the host prunes it, the Engines screen no longer lists B.
  await tabA.openScreen('engines');
  await expect(tabA.engines.card(engineB).getByTestId('engines.card-alive')).toHaveText(/released/);
  await agePresence(tabA.page, databaseName, engineB, 11 * 60_000);
  await expect(tabA.engines.card(engineB)).toHaveCount(0, { timeout: 30_000 });

  // The workflow's custody lanes still name Tab B, in its colour.
  await tabA.openWorkflow(workflowId);
  const lane = tabA.page.locator(
    `[data-testid="detail.custody-lane"][data-engine-id=${JSON.stringify(engineB)}]`,
  );
  await expect(lane).toHaveAttribute('data-label', 'Tab B');
  expect(await lane.locator('rect').first().getAttribute('fill')).not.toBe('#8a93a1');
  await shoot(tabA.page, 'engine-history');

  // D's engine is shut down from A, then D's tab closes: its card says "tab closed" and offers no Restart.
  await tabA.openScreen('engines');
  const card = tabA.engines.card(engineD);
  await card.getByTestId('engines.shutdown').click();
  await expect(card.getByTestId('engines.card-status')).toHaveAttribute('data-state', 'stopped');
  await tabD.page.close();
  await expect(card).toHaveAttribute('data-tab', 'closed');
  await expect(card.getByTestId('engines.restart')).toHaveCount(0);
  await expect(card.getByTestId('engines.card-tab-closed')).toHaveText('tab closed');
  await expect(tabA.engines.card(engineC)).toHaveAttribute('data-tab', 'open');
  await shoot(tabA.page, 'engine-closed-tab');
});

/**
 * The editor's type checker: a type error typed into a new definition, underlined where TypeScript says and
 * listed in the Problems panel at its line; and the type of `ctx` on hover.
 */
test('editor types screenshots', async ({ studio }) => {
  test.setTimeout(120_000);
  const page = studio.page;
  const definitions = studio.definitions;
  await studio.openScreen('definitions');
  await definitions.newDefinition();
  await expect(definitions.compileStatus).toHaveAttribute('data-state', 'ok');
  await typeAfterLine(page, "ctx.state.stage = 'composing';", "const x: number = 'a';");
  await expect(
    definitions.problems.filter({ hasText: "Type 'string' is not assignable to type 'number'." }),
  ).toHaveCount(1);
  await expect(definitions.inlineErrors).toHaveText('x');
  await page.getByTestId('definitions.editor-content').blur();
  await shoot(page, 'editor-types');

  const info = page.getByTestId('definitions.type-info');
  await shoot(page, 'editor-hover', {
    show: async () => {
      await hoverWord(page, "ctx.state.stage = 'composing';", 'ctx');
      await expect(info).toContainText('ctx: WorkflowContext');
    },
    hide: async () => {
      await page.mouse.move(0, 799);
      await expect(info).toBeHidden();
    },
  });
});
