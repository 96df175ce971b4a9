import { checkOwnershipInvariants } from '../src/engine/invariants';
import { entriesOf } from './fixtures/console';
import { expect, FleetStudio, test } from './fixtures/fleet';
import {
  collectPageErrors,
  freshDatabaseName,
  StartDialog,
  StudioPage,
  WorkflowDetail,
} from './fixtures/studio';

/**
 * `held-step`, which the workers run besides the demos: a short activity, one that holds its result for
 * `ms` in a single wait (one timer, not slices: nothing of it runs between its start and its end), then a
 * short one. Frozen while `hold` waits, past the TTL, a worker has exactly one write pending when it is
 * thawed — `hold`'s result — and that write is refused by the epoch (see the freeze below for why it always
 * reaches storage).
 */
const heldStep = `import { defineWorkflow, delay } from 'shuttle';

export const heldStep = defineWorkflow({
  name: 'held-step',
  version: 1,
  description: 'A short step, one that holds its result for input.ms in one wait, and a short step.',
  *run(ctx, input) {
    yield* ctx.activity('warm-up', async ({ signal }) => {
      await delay(100, signal);
      return 'warm';
    });
    yield* ctx.activity('hold', async ({ signal }) => {
      await delay(input.ms, signal);
      return 'held';
    });
    yield* ctx.activity('after', () => 'after');
    return 'done';
  },
});
`;

test.use({ fleetDefinitions: heldStep });

/**
 * The studio in server mode, on a real fleet: `shuttle dev` with three worker processes over a throwaway
 * PostgreSQL. The page runs no engine; it shows the store and the server, three worker engines, and breaks
 * them from the Engines screen:
 *
 * - kill (SIGKILL): the worker's advisory lock goes with the process, so another worker takes each of its
 *   workflows over at the next epoch — before the claim TTL could have expired — and the detail page shows
 *   the handoff between the two processes; every workflow finishes and the ownership invariants hold over
 *   all 20 timelines (no recorded operation ran twice);
 * - freeze (SIGSTOP) past the TTL: another worker takes over after TTL + grace; after SIGCONT the frozen
 *   worker's late write is refused, and the detail page shows it as a red ring in its lane.
 *
 * The 20 workflows are started from the start dialog, one after another. Every budget comes from the claim
 * timings the server reports (`hello().claimTimings`).
 */

test('a fleet of three workers: the studio shows them, a killed worker’s workflows move at the next epoch, a frozen one is deposed and its late write refused', async ({
  studio,
  fleet,
}) => {
  // 20 starts through the start dialog, a kill, a freeze past the TTL and the re-run after it.
  test.setTimeout(480_000);
  const page = studio.page;
  const hello = await studio.hello();
  expect(hello.runtime.kind).toBe('server');
  const { ttlMs, graceMs, renewIntervalMs } = hello.claimTimings;

  // The header names the store and says the page is connected to a server and runs no engine.
  await expect(page.getByTestId('shell.store')).toContainText(fleet.store);
  await expect(page.getByTestId('shell.store')).toContainText('(schema shuttle)');
  await expect(page.getByTestId('shell.server')).toContainText(
    `pid ${hello.runtime.kind === 'server' ? hello.runtime.pid : ''}`,
  );
  await expect(page.getByTestId('shell.no-engine')).toBeVisible();

  // Three worker engines; the observer is not counted.
  await studio.openScreen('engines');
  await expect(studio.workerCards).toHaveCount(3);
  await expect(page.getByTestId('shell.engine-count-value')).toHaveAttribute('data-count', '3');
  for (const card of await studio.workerCards.all()) {
    await expect(card.getByTestId('engines.card-alive')).toHaveText('advisory lock held');
    await expect(card.getByTestId('engines.card-process')).toContainText('pid');
  }
  // No tab wording anywhere in server mode.
  for (const screen of ['workflows', 'engines', 'claims', 'waiters', 'chaos', 'definitions'] as const) {
    await studio.openScreen(screen);
    await expect(page.locator('body')).not.toContainText(/\btabs?\b(?! mode)|viewer mode|web lock/i);
  }

  // 20 countdowns, each started from the start dialog (it starts one at a time), opened from the command
  // palette on the page the last start opened. A tick every 4 s keeps the page's live updates light while
  // they start (the page redraws on every commit); 10 ticks keep the last ones running through the kill.
  const ticks = 10;
  const tickMs = 4_000;
  await studio.openScreen('workflows');
  const dialog = new StartDialog(page);
  const ids: string[] = [];
  for (let index = 0; index < 20; index++) {
    await page.keyboard.press('Control+k');
    await page.getByTestId('palette.input').fill('Start a workflow');
    await page.getByTestId('palette.item').filter({ hasText: 'Start a workflow…' }).click();
    await expect(dialog.root).toBeVisible();
    await dialog.choose('countdown');
    await dialog.setInput(JSON.stringify({ from: ticks, tickMs }));
    await dialog.submit();
    await expect(dialog.root).toBeHidden();
    // The new workflow's page opens.
    await expect(page.getByTestId('detail.workflow-id')).not.toHaveAttribute(
      'data-full-id',
      ids.at(-1) ?? '',
    );
    const id = await page.getByTestId('detail.workflow-id').getAttribute('data-full-id');
    expect(id).toBeTruthy();
    ids.push(id!);
  }
  expect(new Set(ids).size).toBe(20);
  const probe = ids.at(-1)!;
  await studio.openScreen('engines');

  // Every one claimed (or already done); the victim is the owner of the last one started.
  await expect
    .poll(
      async () =>
        (await Promise.all(ids.map((id) => studio.describe(id))))
          .filter((d) => d.owner === null && d.status !== 'completed')
          .map((d) => `${d.workflowId} ${d.status}`),
      { timeout: 15_000 },
    )
    .toEqual([]);
  const described = await studio.describe(probe);
  expect(described).toMatchObject({ status: 'running', input: { from: ticks } });
  const victim = described.owner!.engineId;
  const victimIds = (await Promise.all(ids.map((id) => studio.describe(id))))
    .filter((description) => description.owner?.engineId === victim)
    .map((description) => description.workflowId);

  // Kill it from its card: a confirmation says what will happen first, and nothing is done until it is confirmed.
  await studio.card(victim).getByTestId('engines.kill').click();
  await expect(studio.page.getByTestId('engines.kill-dialog')).toContainText(
    'SIGKILL ends the process at once',
  );
  expect((await studio.describe(probe)).owner?.engineId).toBe(victim);
  const killedAt = Date.now();
  await studio.page.getByTestId('engines.kill-confirm').click();
  await expect(studio.card(victim).getByTestId('engines.card-status')).toHaveAttribute('data-state', 'dead', {
    timeout: ttlMs,
  });
  await expect(studio.card(victim).getByTestId('engines.card-alive')).toHaveText('advisory lock released');
  await expect(studio.card(victim).getByTestId('engines.process-actions')).toHaveCount(0);

  // Its workflows move to the other processes at the next epoch, before the TTL could expire the claims.
  await studio.openWorkflow(probe);
  await expect(page.getByTestId('detail.owner-engine')).not.toHaveAttribute('data-engine-id', victim, {
    timeout: ttlMs,
  });
  const movedAfterMs = Date.now() - killedAt;
  expect(movedAfterMs, 'taken over through the advisory lock, not by expiry').toBeLessThan(ttlMs + graceMs);
  await expect(page.getByTestId('detail.epoch')).toHaveText('2');
  await expect(page.locator('[data-testid="detail.fence"][data-epoch="2"]')).toHaveCount(1);
  const heir = await page.getByTestId('detail.owner-engine').getAttribute('data-engine-id');
  await expect
    .poll(() =>
      page
        .getByTestId('detail.custody-lane')
        .evaluateAll((lanes) => lanes.map((lane) => lane.getAttribute('data-engine-id'))),
    )
    .toEqual([victim, heir]);
  await page.getByRole('group', { name: 'Show' }).getByRole('button', { name: 'Ownership' }).click();
  await expect(page.locator('[data-testid="detail.event"][data-kind="claim-taken-over"]')).toHaveCount(1);
  for (const id of victimIds) {
    const owner = (await studio.describe(id)).owner;
    expect(owner === null || owner.engineId !== victim).toBe(true);
  }

  // All 20 finish; the timelines show no operation twice and every invariant holds.
  await expect
    .poll(
      async () =>
        (await Promise.all(ids.map((id) => studio.describe(id)))).filter((d) => d.status === 'completed')
          .length,
      { timeout: ticks * tickMs + 30_000 },
    )
    .toBe(20);
  const evidence = await Promise.all(
    ids.map(async (id) => ({
      workflowId: id,
      status: (await studio.describe(id)).status,
      timeline: await studio.timeline(id),
    })),
  );
  const invariants = checkOwnershipInvariants(evidence, await studio.fenceRejections());
  expect(invariants.filter((result) => !result.ok)).toEqual([]);
  for (const id of victimIds) {
    const timeline = evidence.find((item) => item.workflowId === id)!.timeline;
    const takeovers = entriesOf(timeline, 'claim-taken-over');
    if (takeovers.length > 0)
      expect(takeovers[0]!.detail).toMatchObject({
        fromEngineId: victim,
        fromEpoch: 1,
        toEpoch: 2,
        reason: 'holder-dead',
      });
    expect(entriesOf(timeline, 'timer-fired')).toHaveLength(ticks);
  }

  // Freeze, past the TTL, the owner of a held-step while `hold` waits. After SIGCONT the frozen worker's
  // overdue timers fire in its first event-loop turn: `hold`'s wait ends, and its result is committed at
  // epoch 1 in that same turn (the committer flushes on setImmediate), while its session renewal, due too,
  // needs two round trips to PostgreSQL (the renewal, then re-reading its holders) before it can drop the
  // claim. The write therefore always reaches storage, which refuses it by the epoch: a red ring. (With
  // short steps the freeze could land between two steps, when nothing is pending: see git history.)
  const holdMs = ttlMs + graceMs;
  const freezeSeconds = Math.ceil((ttlMs + graceMs) / 1000) + 4;
  const held = await studio.start('held-step', { ms: holdMs });
  await expect
    .poll(
      async () =>
        entriesOf(await studio.timeline(held), 'activity-started').map((entry) => entry.detail.name),
      { timeout: 15_000 },
    )
    .toContain('hold');
  const frozen = (await studio.describe(held)).owner!.engineId;
  await studio.openScreen('engines');
  const card = studio.card(frozen);
  await card.getByTestId('engines.freeze-seconds').fill(String(freezeSeconds));
  const frozenAt = Date.now();
  await card.getByTestId('engines.freeze').click();
  await expect(card.getByTestId('engines.card-status')).toHaveAttribute('data-state', 'frozen');
  // The freeze landed while `hold` waited: its result is not in the store, and it ends (holdMs) before the
  // thaw (freezeSeconds, 4 s longer), so it is due the moment the worker runs again.
  expect(
    entriesOf(await studio.timeline(held), 'activity-completed').map((entry) => entry.detail.name),
    'the freeze came before hold ended',
  ).toEqual(['warm-up']);
  await expect(card.getByTestId('engines.thaw')).toBeVisible();

  await studio.openWorkflow(held);
  await expect(page.getByTestId('detail.owner-engine')).not.toHaveAttribute('data-engine-id', frozen, {
    timeout: ttlMs + graceMs + 3 * renewIntervalMs + 5_000,
  });
  expect(Date.now() - frozenAt, 'taken over only once the claim expired').toBeGreaterThanOrEqual(
    ttlMs - renewIntervalMs,
  );
  await expect(page.getByTestId('detail.epoch')).toHaveText('2');
  // After SIGCONT its write of hold's result at epoch 1 is refused: a red ring in its lane.
  await expect(
    page.locator(`[data-testid="detail.rejected-write"][data-engine-id=${JSON.stringify(frozen)}]`).first(),
  ).toBeAttached({ timeout: freezeSeconds * 1000 + 15_000 });
  const refused = (await studio.fenceRejections(held)).filter((rejection) => rejection.engineId === frozen);
  expect(refused.length).toBeGreaterThan(0);
  expect(refused.every((rejection) => rejection.heldEpoch === 1 && rejection.currentEpoch === 2)).toBe(true);
  await expect(page.getByTestId('detail.status')).toHaveText('completed', { timeout: holdMs + 30_000 });
  const finished = await studio.timeline(held);
  expect(entriesOf(finished, 'activity-completed').map((entry) => entry.detail.name)).toEqual([
    'warm-up',
    'hold',
    'after',
  ]);
  expect(
    checkOwnershipInvariants([{ workflowId: held, status: 'completed', timeline: finished }], refused).filter(
      (result) => !result.ok,
    ),
  ).toEqual([]);
  // Nothing the frozen worker did after the takeover reached the timeline.
  const takeover = finished.findIndex((entry) => entry.kind === 'claim-taken-over');
  expect(takeover).toBeGreaterThan(0);
  expect(finished.slice(takeover).filter((entry) => entry.engineId === frozen)).toEqual([]);
});

test('server mode: a signal and a cancel from a fleet workflow’s page, the Claims and Result waiters screens, the Definitions notice and the Storage card', async ({
  studio,
}) => {
  test.setTimeout(120_000);
  const page = studio.page;
  const detail = new WorkflowDetail(page);

  // Definitions: the server runs no studio-authored definitions, and says so.
  await studio.openScreen('definitions');
  await expect(page.getByTestId('definitions.server-read-only')).toContainText(
    'Authoring is off in server mode',
  );
  await expect(page.getByTestId('definitions.server-read-only')).toContainText('deployed with the workers');
  await expect(page.getByTestId('definitions.new')).toHaveCount(0);

  // Storage: the PostgreSQL tables of the store's schema, with their sizes.
  await studio.openScreen('engines');
  const storage = page.getByTestId('engines.storage');
  await expect(storage.getByTestId('engines.storage-source')).toHaveText('PostgreSQL schema "shuttle"');
  expect(
    Number(await storage.getByTestId('engines.storage-bytes').getAttribute('data-bytes')),
  ).toBeGreaterThan(0);
  const parts = storage.getByTestId('engines.storage-parts').locator('tbody tr');
  await expect(parts.first()).toBeVisible();
  const tables = await parts.locator('td:first-child').allTextContents();
  expect(tables).toEqual(expect.arrayContaining(['entries', 'changes', 'meta']));
  for (const size of await parts.locator('td:nth-child(2)').allTextContents())
    expect(size).toMatch(/^\d[\d.,]* (bytes|KB|MB|GB)$/);

  // A signal from the workflow's page: the order waiting for its approval goes on and is delivered.
  const order = await studio.start('order', {
    orderId: 'F-7',
    customer: 'ada@example.com',
    items: [{ sku: 'TEA-GREEN-250G', quantity: 1, unitPriceCents: 850 }],
    shippingAddress: '12 Analytical Row, London',
    paymentGatewayFailures: 0,
    approvalTimeoutMs: 120_000,
    packingMs: 50,
    transitMs: 50,
  });
  await studio.openWorkflow(order);
  await expect
    .poll(() => page.evaluate((id) => window.shuttle!.query(id, 'stage'), order), { timeout: 20_000 })
    .toBe('awaiting-approval');
  await detail.sendSignal('approve', JSON.stringify({ ok: true, by: 'ada' }));
  await detail.expectStatus('completed', 30_000);
  const delivered = await studio.timeline(order);
  expect(entriesOf(delivered, 'signal-received').map((entry) => entry.detail.name)).toEqual(['approve']);
  expect(await page.evaluate((id) => window.shuttle!.result(id), order)).toMatchObject({
    status: 'delivered',
    approvedBy: 'ada',
  });

  // Claims: a running workflow's claim is held by a worker process (its card carries the pid).
  const watched = await studio.start('countdown', { from: 600, tickMs: 500 });
  await expect.poll(async () => (await studio.describe(watched)).owner?.engineId ?? null).not.toBeNull();
  const holder = (await studio.describe(watched)).owner!.engineId;
  await studio.openScreen('engines');
  await expect(studio.card(holder)).toHaveAttribute('data-pid', /^\d+$/);
  await studio.openScreen('claims');
  const claim = page.locator(`[data-testid="claims.row"][data-workflow-id=${JSON.stringify(watched)}]`);
  await expect(claim.getByTestId('claims.row-engine').locator('[data-engine-id]')).toHaveAttribute(
    'data-engine-id',
    holder,
  );
  await expect(claim.getByTestId('claims.row-epoch')).toHaveText('1');

  // Result waiters: "Wait for result" on its page waits through the studio server; the screen lists it.
  await studio.openWorkflow(watched);
  await detail.waitForResult();
  await studio.openScreen('waiters');
  await expect(
    page.locator(`[data-testid="waiters.row"][data-workflow-id=${JSON.stringify(watched)}]`),
  ).toHaveAttribute('data-state', 'pending');

  // A cancel from its page, confirmed: the countdown ends cancelled, and the waiter settles.
  await studio.openWorkflow(watched);
  await page.getByTestId('detail.cancel-button').click();
  await page.getByTestId('detail.cancel-confirm').click();
  await detail.expectStatus('cancelled', 30_000);
  expect(entriesOf(await studio.timeline(watched), 'cancel-requested')).toHaveLength(1);
  await studio.openScreen('waiters');
  await expect(
    page.locator(`[data-testid="waiters.row"][data-workflow-id=${JSON.stringify(watched)}]`),
  ).toHaveAttribute('data-state', 'settled', { timeout: 15_000 });
});

test('Connect to server… from a tab-mode studio opens the fleet’s studio: the header names the server store and the fleet’s engines show', async ({
  page,
  fleet,
}, testInfo) => {
  const errors = collectPageErrors(page);
  const tab = await StudioPage.open(page, { databaseName: freshDatabaseName(testInfo) });
  await expect(page.getByTestId('shell.engine')).not.toHaveAttribute('data-mode', 'server');
  await tab.engineId(); // a tab engine runs here before the connect

  await page.keyboard.press('Control+k');
  await page.getByTestId('palette.input').fill('Connect to server');
  await page.getByTestId('palette.item').filter({ hasText: 'Connect to server…' }).click();
  await expect(page.getByTestId('connect.dialog')).toBeVisible();
  await page.getByTestId('connect.url').fill(fleet.url);
  await page.getByTestId('connect.submit').click();

  await expect(page.getByTestId('shell.engine')).toHaveAttribute('data-mode', 'server');
  await expect(page.getByTestId('shell.engine-status')).toHaveAttribute('data-state', 'running');
  await expect(page.getByTestId('shell.store')).toContainText(fleet.store);
  await expect(page.getByTestId('shell.no-engine')).toBeVisible();
  await expect(page).not.toHaveURL(/token=/);
  const studio = new FleetStudio(page);
  expect((await studio.hello()).runtime.kind).toBe('server');
  await studio.openScreen('engines');
  await expect(studio.workerCards).toHaveCount(3);
  const engineIds = (await studio.processes()).map((process) => process.engineId);
  for (const engineId of engineIds) await expect(studio.card(engineId!)).toBeVisible();
  expect(errors).toEqual([]);
});
