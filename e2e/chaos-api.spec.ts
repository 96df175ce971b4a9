import { expect, test } from '@playwright/test';
import { hostClaimTimings } from '../src/protocol';
import { countByOperation, entriesOf, expectNoPageErrors, openTabs } from './fixtures/console';
import { outlastingMs, slowdown } from './fixtures/load';
import { freshDatabaseName } from './fixtures/studio';

/**
 * Chaos through the control channel (`shuttle.chaos`), driven from another tab than the one it acts on:
 * freeze (the frozen owner keeps its Web Lock, so the other tab takes over only after TTL + grace, and the
 * owner's write after it wakes up is refused by the epoch fence), crash (the worker is terminated: takeover
 * at once; the tab can then only be restarted) and restart (a new engine, with a new id, in the same tab).
 */

/** A handoff after expiry: TTL + grace. */
const handoffMs = hostClaimTimings.ttlMs + hostClaimTimings.graceMs;

/**
 * Short steps, so an activity is in flight nearly all the time and each one is a single timer, lasting
 * `totalMs` in all (slow-steps takes at most 50 steps).
 */
function shortSteps(totalMs: number): { name: string; ms: number }[] {
  const ms = Math.max(200, Math.ceil(totalMs / 50));
  return Array.from({ length: Math.ceil(totalMs / ms) }, (_, index) => ({ name: `step-${index + 1}`, ms }));
}

test('a frozen owner is taken over after the TTL, and its write after waking up is refused', async ({
  context,
}, testInfo) => {
  test.setTimeout(90_000 * slowdown());
  const [a, b] = await openTabs(context, freshDatabaseName(testInfo), 2);
  const [aId, bId] = await Promise.all([a!.api.engineId(), b!.api.engineId()]);
  // Still running when the freeze lands (24 × 200 ms ended before it on a loaded machine): `outlastingMs`.
  const steps = shortSteps(outlastingMs());
  const workflowId = await a!.api.start('slow-steps', { steps });
  await expect.poll(() => b!.api.owner(workflowId)).toEqual({ engineId: aId, epoch: 1 });
  await expect
    .poll(async () => (await b!.api.query<{ completed: string[] }>(workflowId, 'progress')).completed.length)
    .toBeGreaterThanOrEqual(2);

  // The freeze lasts 11 s from when it began, which is no earlier than when it was asked for (the answer can
  // take seconds to come back on a loaded machine, so it is not judged against the time it arrived).
  const askedAt = Date.now();
  const { frozenUntil } = await b!.api.chaos.freeze(aId, 11);
  expect(frozenUntil).toBeGreaterThanOrEqual(askedAt + 11_000);
  expect(await b!.api.engine(aId)).toMatchObject({ status: 'frozen', frozenUntil, alive: true });

  // A keeps its Web Lock: B may take over only once the claim expired (TTL 6 s + grace 2 s).
  await expect.poll(() => b!.api.owner(workflowId), { timeout: 15_000 }).toEqual({ engineId: bId, epoch: 2 });
  const timeline = await b!.api.timeline(workflowId);
  expect(entriesOf(timeline, 'claim-taken-over')[0]!.detail).toMatchObject({
    fromEngineId: aId,
    toEngineId: bId,
    reason: 'expired',
  });

  // When A wakes up, the activity it was running completes and its commit is refused.
  await expect
    .poll(() => b!.api.fenceRejections(workflowId), { timeout: 20_000 })
    .toContainEqual(expect.objectContaining({ engineId: aId, heldEpoch: 1, currentEpoch: 2 }));
  // A carries on, and counts what happened to it.
  await expect
    .poll(async () => {
      const engine = await b!.api.engine(aId);
      return { status: engine?.status, fencedOut: (engine?.counters.writesFencedOut ?? 0) > 0 };
    })
    .toEqual({ status: 'running', fencedOut: true });

  const done = await b!.api.waitFor(workflowId, 'completed', outlastingMs() + handoffMs);
  expect(done.result).toMatchObject({ completed: steps.map((step) => step.name) });
  const finished = await b!.api.timeline(workflowId);
  // Every step was recorded once, whoever ran it; the one in flight during the freeze ran again on B.
  const completed = countByOperation(finished, 'activity-completed');
  expect(completed.size).toBe(steps.length);
  expect([...completed.values()].every((count) => count === 1)).toBe(true);
  expect(entriesOf(finished, 'activity-started').some((entry) => entry.detail.rerun === true)).toBe(true);
  expect(entriesOf(finished, 'completed')[0]!.engineId).toBe(bId);
  expectNoPageErrors([a!, b!]);
});

test('a crash from another tab terminates the owner’s worker, and the workflow moves at once', async ({
  context,
}, testInfo) => {
  const [a, b] = await openTabs(context, freshDatabaseName(testInfo), 2);
  const [aId, bId] = await Promise.all([a!.api.engineId(), b!.api.engineId()]);
  // Still running when the crash lands (16 × 150 ms ended before B's first look at its owner on a loaded
  // machine): `outlastingMs`.
  const ticks = 16;
  const tickMs = Math.ceil(outlastingMs(1) / ticks);
  const workflowId = await a!.api.start('countdown', { from: ticks, tickMs });
  await expect.poll(() => b!.api.owner(workflowId)).toEqual({ engineId: aId, epoch: 1 });
  await b!.api.expectSeesAlive(aId);

  const outcome = await b!.api.chaos.crash(aId);
  expect(outcome).toMatchObject({ engineId: aId, crashedAt: expect.any(Number) as unknown });

  await expect.poll(() => b!.api.owner(workflowId), { timeout: 3_000 }).toEqual({ engineId: bId, epoch: 2 });
  await expect.poll(async () => (await b!.api.engine(aId))?.status).toBe('crashed');
  expect((await b!.api.engine(aId))?.alive).toBe(false);
  // A's page knows its worker is gone; its console API says so instead of hanging.
  await expect(a!.api.hello()).rejects.toThrow(/crashed on purpose/);
  // Nobody runs that engine any more.
  await expect(b!.api.chaos.crash(aId)).rejects.toThrow(/No open tab of this studio hosts engine/);

  await b!.api.waitFor(workflowId, 'completed', outlastingMs(1) + handoffMs);
  const timeline = await b!.api.timeline(workflowId);
  expect(entriesOf(timeline, 'claim-taken-over')[0]!.detail).toMatchObject({ reason: 'holder-dead' });
  const fired = countByOperation(timeline, 'timer-fired');
  expect(fired.size).toBe(ticks);
  expect([...fired.values()].every((count) => count === 1)).toBe(true);

  // The crashed engine's tab can still be told to restart: it then runs a new engine.
  const { newEngineId } = await b!.api.chaos.restart(aId);
  expect(await a!.api.engineId()).toBe(newEngineId);
  await a!.studio.expectEngineRunning();
  expectNoPageErrors([a!, b!]);
});

test('a restart from another tab gives that tab a new engine, which takes its workflow back', async ({
  context,
}, testInfo) => {
  const [a, b] = await openTabs(context, freshDatabaseName(testInfo), 2);
  const aId = await a!.api.engineId();
  // Still running when the restart lands (16 × 150 ms ended at epoch 1 before it on a loaded machine):
  // `outlastingMs`.
  const ticks = 16;
  const tickMs = Math.ceil(outlastingMs(1) / ticks);
  const workflowId = await a!.api.start('countdown', { from: ticks, tickMs });
  await expect.poll(() => b!.api.owner(workflowId)).toEqual({ engineId: aId, epoch: 1 });

  const { engineId, newEngineId } = await b!.api.chaos.restart(aId);
  expect(engineId).toBe(aId);
  expect(newEngineId).not.toBe(aId);
  expect(await a!.api.engineId()).toBe(newEngineId);
  await expect.poll(() => a!.studio.engineId()).toBe(newEngineId);
  await a!.studio.expectEngineRunning();

  const done = await b!.api.waitFor(workflowId, 'completed', outlastingMs(1) + handoffMs);
  expect(done.epoch).toBe(2);
  const timeline = await b!.api.timeline(workflowId);
  const fired = countByOperation(timeline, 'timer-fired');
  expect(fired.size).toBe(ticks);
  expect([...fired.values()].every((count) => count === 1)).toBe(true);
  const newOwner = entriesOf(timeline, 'claim-taken-over')[0]!.engineId;
  expect([newEngineId, await b!.api.engineId()]).toContain(newOwner);
  await expect.poll(async () => (await b!.api.engine(aId))?.status).toBe('crashed');
  expectNoPageErrors([a!, b!]);
});
