import { expect, test } from '@playwright/test';
import { countByOperation, crashTab, entriesOf, expectNoPageErrors, openTabs } from './fixtures/console';
import { freshDatabaseName } from './fixtures/studio';

/**
 * Crash handoff (end-to-end scenario 3, docs/quality.md): the tab that owns a running countdown crashes;
 * another tab learns it from the Web Lock the dead engine held (its death watch) and takes the workflow over
 * at once — long before the claim would expire (TTL 6 s + grace 2 s) — and the countdown finishes with every
 * tick fired exactly once.
 */

test('a crashed owner’s countdown moves to another tab well before the claim TTL and fires every tick once', async ({
  context,
}, testInfo) => {
  const [a, b] = await openTabs(context, freshDatabaseName(testInfo), 2);
  const [aId, bId] = await Promise.all([a!.api.engineId(), b!.api.engineId()]);
  const ticks = 24;
  const workflowId = await a!.api.start('countdown', { from: ticks, tickMs: 150 });
  await expect.poll(() => b!.api.owner(workflowId)).toEqual({ engineId: aId, epoch: 1 });
  await expect.poll(() => b!.api.query<number>(workflowId, 'remaining')).toBeLessThanOrEqual(ticks - 3);
  await b!.api.expectSeesAlive(aId);

  await crashTab(context, a!.page);

  // Far below TTL + grace (8 s): only the liveness oracle can explain a takeover this early.
  await expect
    .poll(() => b!.api.owner(workflowId), { timeout: 3_000, intervals: [50] })
    .toEqual({ engineId: bId, epoch: 2 });

  await b!.api.waitFor(workflowId, 'completed');
  const timeline = await b!.api.timeline(workflowId);
  const takeovers = entriesOf(timeline, 'claim-taken-over');
  expect(takeovers).toHaveLength(1);
  expect(takeovers[0]!.detail).toMatchObject({
    fromEngineId: aId,
    fromEpoch: 1,
    toEngineId: bId,
    toEpoch: 2,
    reason: 'holder-dead',
  });
  expect(entriesOf(timeline, 'started')).toHaveLength(1);
  const fired = countByOperation(timeline, 'timer-fired');
  expect(fired.size).toBe(ticks);
  expect([...fired.values()].every((count) => count === 1)).toBe(true);
  expect(entriesOf(timeline, 'completed')).toHaveLength(1);
  // A fired the first ticks, B the rest.
  expect(new Set(entriesOf(timeline, 'timer-fired').map((entry) => entry.engineId))).toEqual(
    new Set([aId, bId]),
  );
  expect(await b!.api.describe(workflowId)).toMatchObject({
    status: 'completed',
    result: { counted: ticks },
  });
  // The crashed engine is listed dead: its lock is gone and it never recorded a stop.
  await expect.poll(async () => (await b!.api.engine(aId))?.status).toBe('dead');
  expectNoPageErrors([a!, b!]);
});
