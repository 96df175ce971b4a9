import { checkOwnershipInvariants } from '../src/engine/invariants';
import { entriesOf } from './fixtures/console';
import { expect, test } from './fixtures/fleet';

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
 * Every budget comes from the claim timings the server reports (`hello().claimTimings`).
 */

test('a fleet of three workers: the studio shows them, a killed worker’s workflows move at the next epoch, a frozen one is deposed and its late write refused', async ({
  studio,
  fleet,
}) => {
  test.setTimeout(240_000);
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

  // 20 countdowns of 20 s: one from the start dialog, 19 through the console API.
  const ticks = 40;
  await studio.openScreen('workflows');
  await page.getByTestId('workflows.start-button').click();
  await page.locator('[data-testid="start.definition"][data-definition="countdown"]').click();
  await page.getByTestId('start.input').fill(JSON.stringify({ from: ticks, tickMs: 500 }));
  await page.getByTestId('start.submit').click();
  await expect(page.getByTestId('start.dialog')).toBeHidden();
  const first = await page.getByTestId('detail.workflow-id').getAttribute('data-full-id');
  expect(first).toBeTruthy();
  await studio.openScreen('engines');
  const ids = [
    first!,
    ...(await Promise.all(
      Array.from({ length: 19 }, () => studio.start('countdown', { from: ticks, tickMs: 500 })),
    )),
  ];

  // Every one claimed; the victim is the owner of the first.
  await expect
    .poll(
      async () =>
        (await Promise.all(ids.map((id) => studio.describe(id))))
          .filter((d) => d.owner === null)
          .map((d) => `${d.workflowId} ${d.status}`),
      { timeout: 15_000 },
    )
    .toEqual([]);
  const described = await studio.describe(first!);
  expect(described).toMatchObject({ status: 'running', input: { from: ticks } });
  const victim = described.owner!.engineId;
  const victimIds = (await Promise.all(ids.map((id) => studio.describe(id))))
    .filter((description) => description.owner?.engineId === victim)
    .map((description) => description.workflowId);

  // Kill it from its card.
  const killedAt = Date.now();
  await studio.card(victim).getByTestId('engines.kill').click();
  await expect(studio.card(victim).getByTestId('engines.card-status')).toHaveAttribute('data-state', 'dead', {
    timeout: ttlMs,
  });
  await expect(studio.card(victim).getByTestId('engines.card-alive')).toHaveText('advisory lock released');
  await expect(studio.card(victim).getByTestId('engines.process-actions')).toHaveCount(0);

  // Its workflows move to the other processes at the next epoch, before the TTL could expire the claims.
  await studio.openWorkflow(first!);
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
      { timeout: ticks * 500 + 30_000 },
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

  // Freeze the owner of a pipeline of short steps past the TTL, from its card.
  const steps = Array.from({ length: 40 }, (_, index) => ({ name: `step-${index + 1}`, ms: 250 }));
  const pipeline = await studio.start('slow-steps', { steps });
  await expect
    .poll(async () => entriesOf(await studio.timeline(pipeline), 'activity-completed').length, {
      timeout: 15_000,
    })
    .toBeGreaterThanOrEqual(2);
  const frozen = (await studio.describe(pipeline)).owner!.engineId;
  const freezeSeconds = Math.ceil((ttlMs + graceMs) / 1000) + 4;
  await studio.openScreen('engines');
  const card = studio.card(frozen);
  await card.getByTestId('engines.freeze-seconds').fill(String(freezeSeconds));
  const frozenAt = Date.now();
  await card.getByTestId('engines.freeze').click();
  await expect(card.getByTestId('engines.card-status')).toHaveAttribute('data-state', 'frozen');
  await expect(card.getByTestId('engines.thaw')).toBeVisible();

  await studio.openWorkflow(pipeline);
  await expect(page.getByTestId('detail.owner-engine')).not.toHaveAttribute('data-engine-id', frozen, {
    timeout: ttlMs + graceMs + 3 * renewIntervalMs + 5_000,
  });
  expect(Date.now() - frozenAt, 'taken over only once the claim expired').toBeGreaterThanOrEqual(
    ttlMs - renewIntervalMs,
  );
  await expect(page.getByTestId('detail.epoch')).toHaveText('2');
  // After SIGCONT the frozen worker learns it lost the workflow in one of two ways, both correct: its
  // activity in flight finishes and that commit at epoch 1 is refused by the epoch (a red ring in its lane),
  // or its session renewal runs first, finds the session lapsed, and drops the result unwritten. Which comes
  // first depends on which of its overdue timers Node fires first. Either way nothing of epoch 1 lands.
  await expect
    .poll(async () => (await studio.processes()).find((process) => process.engineId === frozen)?.state, {
      timeout: freezeSeconds * 1000 + 15_000,
    })
    .not.toBe('frozen');
  await expect(page.getByTestId('detail.status')).toHaveText('completed', { timeout: 30_000 });
  const refused = (await studio.fenceRejections(pipeline)).filter(
    (rejection) => rejection.engineId === frozen,
  );
  expect(refused.every((rejection) => rejection.heldEpoch === 1 && rejection.currentEpoch === 2)).toBe(true);
  if (refused.length > 0)
    await expect(
      page.locator(`[data-testid="detail.rejected-write"][data-engine-id=${JSON.stringify(frozen)}]`).first(),
    ).toBeAttached();
  const finished = await studio.timeline(pipeline);
  expect(entriesOf(finished, 'activity-completed').map((entry) => entry.detail.name)).toEqual(
    steps.map((step) => step.name),
  );
  expect(
    checkOwnershipInvariants(
      [{ workflowId: pipeline, status: 'completed', timeline: finished }],
      refused,
    ).filter((result) => !result.ok),
  ).toEqual([]);
  // Nothing the frozen worker did after the takeover reached the timeline.
  const takeover = finished.findIndex((entry) => entry.kind === 'claim-taken-over');
  expect(takeover).toBeGreaterThan(0);
  expect(finished.slice(takeover).filter((entry) => entry.engineId === frozen)).toEqual([]);
});
