/**
 * The protocol's `activityLimits` as the host serves it: the engine's own groups, and the slots other engines
 * hold in the store for groups it does not declare (activity limits are not written to the store). Real
 * engines on one store; the stale-session cases write their records as an engine would.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, defineWorkflow, type Engine } from '../engine';
import { keys } from '../engine/keys';
import { encodeSession, sessionKey } from '../engine/ownership/session';
import { hostClaimTimings } from '../protocol';
import { MemoryStorage } from '../storage/memory';
import type { Storage } from '../storage/types';
import { mergeActivityLimits, readHeldActivitySlots, slotGroup } from './activity-slots';
import { queueHandlers } from './handlers/queues';
import type { HandlerContext, HostPort } from './handlers/types';

const noPort: HostPort = { post: () => undefined, listen: () => () => undefined };

function served(engine: Engine, storage: Storage | null) {
  const context: HandlerContext = {
    engine: async () => engine,
    storage: () => storage,
    config: () => null,
    now: () => Date.now(),
    authoring: false,
    runtime: 'server',
  };
  return () => queueHandlers(context).activityLimits({}, noPort);
}

let release: () => void = () => undefined;
const engines: Engine[] = [];
afterEach(async () => {
  release();
  await Promise.all(engines.splice(0).map((engine) => engine.shutdown()));
});

async function until<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const lease = {
  ownership: 'workflow-lease',
  workflowClaimTtlMs: 3000,
  workflowClaimRenewIntervalMs: 1000,
} as const;

describe('activityLimits over the protocol', () => {
  it("shows the declaring engine's limits, and an engine that does not declare the group sees its held slot and holder from the store", async () => {
    const storage = new MemoryStorage();
    const gate = new Promise<void>((resolve) => (release = resolve));
    const charge = defineWorkflow({
      name: 'charge',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity('charge-card', () => gate.then(() => 'charged'));
      },
    });
    const worker = await createEngine({
      storage,
      workflows: [charge],
      ...lease,
      activityLimits: { 'charge-card': { concurrency: 1, perEngine: 1 } },
    });
    const observer = await createEngine({ storage, ...lease, claimWorkflows: false, recover: false });
    engines.push(worker, observer);
    const fromWorker = served(worker, storage);
    const fromObserver = served(observer, storage);
    const fromObserverWithoutStore = served(observer, null);

    expect(await fromObserver()).toEqual([]);
    expect(await fromWorker()).toEqual([
      {
        name: 'charge-card',
        concurrency: 1,
        perEngine: 1,
        running: [],
        runningHere: 0,
        waitingHere: 0,
        declared: true,
      },
    ]);
    const first = await worker.start(charge, undefined, { id: 'pay-1' });
    await worker.start(charge, undefined, { id: 'pay-2' });
    const seen = await until(async () => {
      const [group] = await fromObserver();
      return group?.running.length === 1 ? group : undefined;
    }, 'the slot of pay-1 or pay-2 seen by the observer');
    expect(seen).toMatchObject({
      name: 'charge-card',
      declared: false,
      concurrency: null,
      perEngine: null,
      runningHere: 0,
      waitingHere: 0,
      running: [{ engineId: worker.id, position: expect.any(Number), attempt: 1 }],
    });
    const holder = seen.running[0]!.workflowId;
    expect(['pay-1', 'pay-2']).toContain(holder);
    // The declaring engine: the same holder, and the other payment waiting there for the one slot.
    const own = await until(async () => {
      const [group] = await fromWorker();
      return group?.waitingHere === 1 ? group : undefined;
    }, 'the second payment waiting on the worker');
    expect(own).toMatchObject({ declared: true, concurrency: 1, runningHere: 1 });
    expect(own.running.map((slot) => slot.workflowId)).toEqual([holder]);
    // Without the store, a host can show only what its engine declares.
    expect(await fromObserverWithoutStore()).toEqual([]);

    release();
    await first.result();
    await until(async () => ((await fromObserver()).length === 0 ? true : undefined), 'every slot released');
  });

  it('counts a stored slot while its engine session is live: not an ended or expired one, nor a slot that does not decode', async () => {
    const storage = new MemoryStorage();
    const now = Date.UTC(2026, 0, 1);
    const slot = (engineId: string, workflowId: string, at: number) =>
      JSON.stringify({ engineId, workflowId, position: 3, member: 0, attempt: 2, at, seq: 1 });
    const session = (engineId: string, expiresAt: number, endedAt?: number) =>
      encodeSession({
        engineId,
        startedAt: now - 60_000,
        renewedAt: expiresAt - 3000,
        expiresAt,
        ...(endedAt ? { endedAt } : {}),
      });
    await storage.batch([
      { type: 'put', key: sessionKey('live'), value: session('live', now + 1000) },
      { type: 'put', key: sessionKey('in-grace'), value: session('in-grace', now - 1000) },
      { type: 'put', key: sessionKey('expired'), value: session('expired', now - 5000) },
      { type: 'put', key: sessionKey('ended'), value: session('ended', now + 1000, now - 10) },
      { type: 'put', key: keys.activitySlot('api:v2', 0), value: slot('live', 'w-b', now - 50) },
      { type: 'put', key: keys.activitySlot('api:v2', 1), value: slot('in-grace', 'w-a', now - 90) },
      { type: 'put', key: keys.activitySlot('api:v2', 2), value: slot('expired', 'w-c', now - 10) },
      { type: 'put', key: keys.activitySlot('api:v2', 3), value: slot('ended', 'w-d', now - 10) },
      { type: 'put', key: keys.activitySlot('api:v2', 4), value: '{"engineId":"live"}' },
      { type: 'put', key: keys.activitySlot('other', 0), value: slot('no-session', 'w-e', now) },
    ]);
    const held = await readHeldActivitySlots(storage, now, 2000);
    expect([...held.keys()]).toEqual(['api:v2']);
    expect(held.get('api:v2')).toEqual([
      { engineId: 'in-grace', workflowId: 'w-a', position: 3, member: 0, attempt: 2, since: now - 90 },
      { engineId: 'live', workflowId: 'w-b', position: 3, member: 0, attempt: 2, since: now - 50 },
    ]);
    // Past the grace, the engine whose session expired a second ago no longer holds its slot.
    expect(
      (await readHeldActivitySlots(storage, now + 1500, 2000)).get('api:v2')?.map((h) => h.engineId),
    ).toEqual(['live']);
    expect(hostClaimTimings.graceMs).toBe(2000);
  });

  it('merges by name: a declared group is not listed twice, the store-only ones follow with no limits', () => {
    const holder = { engineId: 'e', workflowId: 'w', position: 1, member: 0, attempt: 1, since: 5 };
    const declared = {
      name: 'b',
      concurrency: 2,
      perEngine: null,
      running: [holder],
      runningHere: 0,
      waitingHere: 0,
    };
    expect(
      mergeActivityLimits(
        [declared],
        new Map([
          ['b', [holder]],
          ['a', [holder]],
        ]),
      ),
    ).toEqual([
      {
        name: 'a',
        concurrency: null,
        perEngine: null,
        running: [holder],
        runningHere: 0,
        waitingHere: 0,
        declared: false,
      },
      { ...declared, declared: true },
    ]);
    expect(slotGroup(keys.activitySlot('a:b%c', 12))).toBe('a:b%c');
    expect(slotGroup('wf-session:x')).toBeNull();
  });
});
