/**
 * Workflow queues on one engine and across engines: concurrency (global, per key, per engine), FIFO within
 * a priority, priorities without starvation, rate limits, delayed and debounced starts, singletons, bad
 * input, and slots that follow their workflows through a crash. The randomised audit across many engines with
 * faults is queues-simulation.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../storage/memory';
import { SimulatedClock, settle } from '../clock';
import { createEngine, type Engine } from '../engine';
import { InvalidOptionsError, QueueNotFoundError, SingletonConflictError } from '../errors';
import { TestWorld, fencing, type TestEngine } from '../engine.test-support';
import { keys } from '../keys';
import { defineWorkflow } from '../workflow';

/** Runs until it is signalled `done`; its start order is kept in `started`. */
const started: string[] = [];
const job = defineWorkflow({
  name: 'job',
  version: 1,
  *run(ctx, input: { n: number }) {
    yield* ctx.activity('begin', () => {
      started.push(ctx.workflowId);
    });
    yield* ctx.waitForSignal('done');
    return input.n;
  },
});

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Lets the engine finish what it is doing, change-feed reactions included. */
async function calm(engine: Engine): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await settle();
    await engine.idle();
  }
}

async function running(engine: Engine, queue: string): Promise<string[]> {
  const view = await engine.describeQueue(queue);
  return view.slots.map((slot) => slot.workflowId).sort();
}

describe('a queue on one engine', () => {
  it('admits at most `concurrency` at once, in FIFO order, and the next when one ends', async () => {
    started.length = 0;
    const engine = await createEngine({
      storage: new MemoryStorage(),
      workflows: [job],
      queues: { work: { concurrency: 2 } },
    });
    for (let n = 1; n <= 5; n++) await engine.start(job, { n }, { id: `j${n}`, queue: 'work' });
    await until(() => started.length === 2, 'two admitted');
    await engine.idle();
    expect(started).toEqual(['j1', 'j2']);
    expect(await running(engine, 'work')).toEqual(['j1', 'j2']);
    const view = await engine.describeQueue('work');
    expect(view.waiting).toBe(3);
    expect(view.next.map((entry) => entry.workflowId)).toEqual(['j3', 'j4', 'j5']);
    expect(await engine.queuePosition('j4')).toMatchObject({ status: 'waiting', position: 2, queue: 'work' });
    expect((await engine.describe('j4')).status).toBe('pending');
    const rows = await engine.list({ status: 'pending' });
    expect(rows.items.map((row) => [row.workflowId, row.waitingOn])).toContainEqual(['j4', "queue 'work'"]);
    await engine.signal('j1', 'done');
    await engine.handle('j1').result();
    await until(() => started.length === 3, 'the third admitted');
    expect(started).toEqual(['j1', 'j2', 'j3']);
    expect(await running(engine, 'work')).toEqual(['j2', 'j3']);
    for (const id of ['j2', 'j3', 'j4', 'j5']) {
      await until(() => started.includes(id), `${id} admitted`);
      await engine.signal(id, 'done');
      await engine.handle(id).result();
    }
    expect(started).toEqual(['j1', 'j2', 'j3', 'j4', 'j5']);
    await until(async () => (await engine.describeQueue('work')).running === 0, 'every slot free');
    expect(await engine.queuePosition('j5')).toBeNull();
    await engine.shutdown();
  });

  it('admits a start at once, in its own create batch, when the queue has room and nobody waits', async () => {
    started.length = 0;
    const storage = new MemoryStorage();
    const engine = await createEngine({
      storage,
      workflows: [job],
      queues: { work: { concurrency: 1, rateLimit: { limit: 5, periodMs: 60_000 } } },
      ownership: 'workflow-lease',
      backgroundTasks: 'manual',
      clock: new SimulatedClock(),
    });
    let commits = 0;
    const commit = storage.conditionalBatch.bind(storage);
    storage.conditionalBatch = (conditions, operations) => {
      commits++;
      return commit(conditions, operations);
    };
    await engine.start(job, { n: 1 }, { id: 'direct', queue: 'work' });
    expect(commits).toBe(1); // no enqueue, no admission pass
    expect((await engine.describe('direct')).status).toBe('running');
    const [first, claim] = await engine.timeline('direct');
    expect(first).toMatchObject({
      kind: 'started',
      detail: { queue: { name: 'work', waitedMs: 0, slot: 0 } },
    });
    expect(claim).toMatchObject({ kind: 'claim-acquired', detail: { how: 'queue' } });
    // The slot is taken: the next start waits in the queue.
    await engine.start(job, { n: 2 }, { id: 'waits', queue: 'work' });
    expect((await engine.describe('waits')).status).toBe('pending');
    expect((await engine.timeline('waits'))[0]).toMatchObject({ kind: 'scheduled' });
    expect((await engine.describeQueue('work')).rate).toMatchObject({ usedInWindow: 1 });
    await engine.shutdown();
  });

  it('admits a workflow of a free key behind more than a page of workflows of a full key', async () => {
    const engine = await createEngine({
      storage: new MemoryStorage(),
      workflows: [job],
      queues: { work: { concurrency: 5, perKeyConcurrency: 1 } },
      backgroundTasks: 'manual',
      clock: new SimulatedClock(),
    });
    for (let n = 0; n < 250; n++)
      await engine.start(job, { n }, { id: `hot-${n}`, queue: 'work', concurrencyKey: 'hot' });
    await engine.start(job, { n: 999 }, { id: 'z-cold', queue: 'work', concurrencyKey: 'cold' });
    await engine.runMaintenance();
    await calm(engine);
    expect(await running(engine, 'work')).toEqual(['hot-0', 'z-cold']);
    await engine.shutdown();
  });

  it('frees a queue slot or key slot left by a workflow that ended outside the engine (the poll backstop)', async () => {
    const storage = new MemoryStorage();
    const warnings: string[] = [];
    const engine = await createEngine({
      storage,
      workflows: [job],
      queues: { work: { concurrency: 1, perKeyConcurrency: 1 } },
      backgroundTasks: 'manual',
      clock: new SimulatedClock(),
      onWarning: (warning) => warnings.push(warning.message),
    });
    // Slots named by workflows that no longer exist (as a record written outside the engine would leave).
    const ghost = JSON.stringify({ id: 'ghost', at: 0, by: 'elsewhere' });
    await storage.conditionalBatch(
      [],
      [
        { type: 'put', key: keys.queueSlot('work', 0), value: ghost },
        { type: 'put', key: keys.queueKeySlot('work', 'acme', 0), value: ghost },
      ],
    );
    await engine.start(job, { n: 1 }, { id: 'waiting', queue: 'work', concurrencyKey: 'acme' });
    await calm(engine);
    expect((await engine.describe('waiting')).status).toBe('pending');
    await engine.runMaintenance();
    await calm(engine);
    expect((await engine.describe('waiting')).status).toBe('running');
    expect(warnings.filter((message) => /ghost/.test(message))).toHaveLength(2);
    await engine.shutdown();
  });

  it('refuses bad queue options and starts before anything is written', async () => {
    const storage = new MemoryStorage();
    await expect(createEngine({ storage, queues: { 'bad name': {} } })).rejects.toThrow(InvalidOptionsError);
    await expect(createEngine({ storage, queues: { q: { concurrency: 0 } } })).rejects.toThrow(
      /concurrency must be a positive whole number; got 0/,
    );
    await expect(
      createEngine({ storage, queues: { q: { rateLimit: { limit: 5 } } } as never }),
    ).rejects.toThrow(/rateLimit.periodMs/);
    await expect(createEngine({ storage, queues: { q: { concurency: 3 } } as never })).rejects.toThrow(
      /Unknown queue 'q' option 'concurency'/,
    );
    const engine = await createEngine({ storage, workflows: [job], queues: { q: { concurrency: 1 } } });
    const before = await storage.scan('');
    await expect(engine.start(job, { n: 1 }, { queue: 'nope' })).rejects.toThrow(
      /Queue 'nope' is not declared/,
    );
    await expect(engine.start(job, { n: 1 }, { queue: 'q', priority: 0 })).rejects.toThrow(/priority/);
    await expect(engine.start(job, { n: 1 }, { priority: 2 })).rejects.toThrow(/needs a queue/);
    await expect(engine.start(job, { n: 1 }, { debounce: { key: 'k', windowMs: -1 } })).rejects.toThrow(
      /debounce.windowMs/,
    );
    await expect(
      engine.start(job, { n: 1 }, { singleton: { key: 'k' }, debounce: { key: 'k', windowMs: 5 } }),
    ).rejects.toThrow(/singleton or debounce/);
    expect(await storage.scan('')).toEqual(before);
    await expect(engine.describeQueue('nope')).rejects.toThrow(QueueNotFoundError);
    await engine.shutdown();
  });
});

describe('queues with a simulated clock', () => {
  it('orders by priority, FIFO within one, and lets no priority starve', async () => {
    started.length = 0;
    const clock = new SimulatedClock();
    const engine = await createEngine({
      storage: new MemoryStorage(),
      workflows: [job],
      clock,
      backgroundTasks: 'manual',
      queues: { work: { concurrency: 1, priorityStepMs: 10_000 } },
    });
    // blocker holds the only slot while the others queue up.
    await engine.start(job, { n: 0 }, { id: 'blocker', queue: 'work' });
    await calm(engine);
    await engine.start(job, { n: 1 }, { id: 'low-old', queue: 'work', priority: 9 });
    await clock.advance(1_000);
    await engine.start(job, { n: 2 }, { id: 'mid-a', queue: 'work', priority: 5 });
    await engine.start(job, { n: 3 }, { id: 'mid-b', queue: 'work', priority: 5 });
    await engine.start(job, { n: 4 }, { id: 'urgent', queue: 'work', priority: 1 });
    // 'low-old' (enqueued at 0 with priority 9: order 80 s) waits behind those of order ≤ 80 s only: a
    // priority-1 start 81 s later comes after it.
    await clock.advance(80_000);
    await engine.start(job, { n: 5 }, { id: 'urgent-late', queue: 'work', priority: 1 });
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      const id = started[started.length - 1]!;
      order.push(id);
      await engine.signal(id, 'done');
      await calm(engine);
    }
    expect(order).toEqual(['blocker', 'urgent', 'mid-a', 'mid-b', 'low-old', 'urgent-late']);
    await engine.shutdown();
  });

  it('admits at most `limit` per period across engines, and the rest as tokens free up', async () => {
    started.length = 0;
    const world = new TestWorld();
    const queues = { paced: { rateLimit: { limit: 3, periodMs: 60_000 } } };
    const a = await world.engine([job], { ...fencing, queues });
    const b = await world.engine([job], { ...fencing, queues });
    for (let n = 1; n <= 7; n++) await (n % 2 ? a : b).start(job, { n }, { id: `r${n}`, queue: 'paced' });
    await world.maintain();
    expect(started.length).toBe(3);
    await world.advance(30_000);
    expect(started.length).toBe(3);
    await world.advance(30_000);
    expect(started.length).toBe(6);
    await world.advance(60_000);
    expect(started.length).toBe(7);
    // Admitted in order (each window takes the first three waiting); two engines run them, so the activities
    // of one window may begin in any order.
    expect(started.slice(0, 3).sort()).toEqual(['r1', 'r2', 'r3']);
    expect(started.slice(3, 6).sort()).toEqual(['r4', 'r5', 'r6']);
    expect(started[6]).toBe('r7');
    await world.shutdownAll();
  });

  it('debounces: starts with one key while it waits make one workflow, with the last input', async () => {
    started.length = 0;
    const clock = new SimulatedClock();
    for (const queue of [undefined, 'work'] as const) {
      const engine = await createEngine({
        storage: new MemoryStorage(),
        workflows: [job],
        clock,
        backgroundTasks: 'manual',
        queues: { work: { concurrency: 5 } },
      });
      const debounce = { key: 'customer-1', windowMs: 5_000, maxWaitMs: 12_000 };
      const first = await engine.start(job, { n: 1 }, { id: 'd1', debounce, ...(queue ? { queue } : {}) });
      await clock.advance(4_000);
      await engine.runMaintenance();
      await calm(engine);
      const second = await engine.start(job, { n: 2 }, { id: 'd2', debounce, ...(queue ? { queue } : {}) });
      await clock.advance(4_000);
      await engine.runMaintenance();
      await calm(engine);
      const third = await engine.start(job, { n: 3 }, { debounce, ...(queue ? { queue } : {}) });
      expect([first.started, second.started, third.started]).toEqual([true, false, false]);
      expect([second.workflowId, third.workflowId]).toEqual(['d1', 'd1']);
      expect((await engine.describe('d1')).status).toBe('pending');
      // maxWaitMs: 12 s after the first start, although the last start was 4 s ago.
      await clock.advance(4_000);
      await engine.runMaintenance();
      await calm(engine);
      await calm(engine);
      expect((await engine.describe('d1')).status).toBe('running');
      await engine.signal('d1', 'done');
      expect(await engine.handle('d1').result()).toBe(3);
      // The key is free again: the next start makes a new workflow.
      const again = await engine.start(job, { n: 4 }, { id: 'd3', debounce, ...(queue ? { queue } : {}) });
      expect(again).toMatchObject({ workflowId: 'd3', started: true });
      await engine.shutdown();
    }
  });

  it('keeps one workflow per singleton key while it is active: joins, or refuses', async () => {
    const engine = await createEngine({
      storage: new MemoryStorage(),
      workflows: [job],
      backgroundTasks: 'manual',
      clock: new SimulatedClock(),
    });
    const first = await engine.start(job, { n: 1 }, { id: 's1', singleton: { key: 'nightly' } });
    await calm(engine);
    const joined = await engine.start(job, { n: 2 }, { id: 's2', singleton: { key: 'nightly' } });
    expect(joined).toMatchObject({ workflowId: 's1', started: false });
    await expect(
      engine.start(job, { n: 2 }, { id: 's2', singleton: { key: 'nightly', ifActive: 'refuse' } }),
    ).rejects.toThrow(SingletonConflictError);
    await expect(engine.describe('s2')).rejects.toThrow(/does not exist/);
    await engine.signal('s1', 'done');
    await calm(engine);
    expect(await first.result()).toBe(1);
    const next = await engine.start(job, { n: 3 }, { id: 's2', singleton: { key: 'nightly' } });
    expect(next).toMatchObject({ workflowId: 's2', started: true });
    await engine.shutdown();
  });
});

describe('queues across engines (workflow-lease)', () => {
  const queues = { work: { concurrency: 2, perKeyConcurrency: 1, perEngineConcurrency: 1 } };

  it('holds the global, per-key and per-engine limits, and frees slots when workflows end any way', async () => {
    started.length = 0;
    const world = new TestWorld();
    const a = await world.engine([job], { ...fencing, queues });
    const b = await world.engine([job], { ...fencing, queues });
    const c = await world.engine([job], { ...fencing, queues });
    // Keys: x, x, y, y, z (five workflows, two at a time, one per key, one per engine).
    const keyOf = ['x', 'x', 'y', 'y', 'z'];
    for (const [index, key] of keyOf.entries())
      await a.start(job, { n: index }, { id: `k${index}`, queue: 'work', concurrencyKey: key });
    await world.maintain();
    const first = await running(a, 'work');
    expect(first).toEqual(['k0', 'k2']); // k1 shares x with k0: the first of y goes instead
    const owners = await Promise.all(first.map(async (id) => (await a.describe(id)).owner?.engineId));
    expect(new Set(owners).size).toBe(2); // one per engine
    // Terminate one, cancel a waiting one: both free what they held.
    await b.handle('k0').terminate('not needed');
    await a.handle('k3').cancel();
    await world.maintain();
    expect(await running(a, 'work')).toEqual(['k1', 'k2']);
    expect((await a.describe('k3')).status).toBe('cancelled');
    for (const id of ['k1', 'k2']) await a.signal(id, 'done');
    await world.maintain();
    await world.maintain();
    expect(await running(a, 'work')).toEqual(['k4']);
    await a.signal('k4', 'done');
    await world.maintain();
    expect(await world.storage.scan('queue-slot:')).toEqual([]);
    expect(await world.storage.scan('queue-kslot:')).toEqual([]);
    expect(await world.storage.scan('queue-wait:')).toEqual([]);
    expect(c.warnings.filter((warning) => /slot/.test(warning.message))).toEqual([]);
    await world.shutdownAll();
  });

  it('keeps each slot with its workflow when its engine crashes; the taker stays within its per-engine limit', async () => {
    started.length = 0;
    const world = new TestWorld();
    const queues = { work: { concurrency: 3, perEngineConcurrency: 2 } };
    const a = await world.engine([job], { ...fencing, queues });
    const b = await world.engine([job], { ...fencing, queues });
    for (let n = 0; n < 5; n++) await a.start(job, { n }, { id: `c${n}`, queue: 'work' });
    await world.maintain();
    const before = await running(a, 'work');
    expect(before).toHaveLength(3);
    const holderOf = async (engine: Engine) =>
      new Map((await engine.claims()).map((claim) => [claim.workflowId, claim.holder?.engineId ?? null]));
    const held = await holderOf(a);
    // Two on one engine (its limit), one on the other: crash the one with two.
    const [full, survivor] = [a, b].sort(
      (x, y) =>
        before.filter((id) => held.get(id) === y.id).length -
        before.filter((id) => held.get(id) === x.id).length,
    ) as [TestEngine, TestEngine];
    expect(before.filter((id) => held.get(id) === full.id)).toHaveLength(2);
    world.crash(full);
    await world.advance(8_000, { stepMs: 500 }); // past the claim TTL and its grace
    // Still three slots, held by the same workflows; the survivor drives at most two of them: the third was
    // taken over and let go, before any of its code ran.
    expect(await running(survivor, 'work')).toEqual(before);
    const after = await holderOf(survivor);
    expect(before.filter((id) => after.get(id) === survivor.id)).toHaveLength(2);
    const letGo = before.find((id) => after.get(id) !== survivor.id)!;
    expect(after.get(letGo) ?? null).toBeNull();
    expect(
      (await survivor.timeline(letGo)).some(
        (entry) => entry.kind === 'claim-released' && entry.engineId === survivor.id,
      ),
    ).toBe(true);
    // A third engine, with room, takes it.
    const c = await world.engine([job], { ...fencing, queues });
    await world.advance(2_000, { stepMs: 500 });
    expect((await holderOf(c)).get(letGo)).toBe(c.id);
    for (let round = 0; round < 10; round++) {
      for (const id of ['c0', 'c1', 'c2', 'c3', 'c4'])
        if ((await c.describe(id)).status === 'running') await c.signal(id, 'done').catch(() => undefined);
      await world.advance(1_000, { stepMs: 500 });
    }
    for (const id of ['c0', 'c1', 'c2', 'c3', 'c4']) expect((await c.describe(id)).status).toBe('completed');
    expect(await world.storage.scan('queue-slot:')).toEqual([]);
    await world.shutdownAll();
  });

  it('engines at their per-engine limit leave a dead peer’s workflows alone until one has room (no claim ping-pong)', async () => {
    const world = new TestWorld();
    const queues = { d: { concurrency: 4, perEngineConcurrency: 1 } };
    const engines: TestEngine[] = [];
    for (let n = 0; n < 4; n++)
      engines.push(await world.engine([job], { ...fencing, liveness: world.liveness, queues }));
    for (const [n, engine] of engines.entries()) {
      await engine.start(job, { n }, { id: `d${n}`, queue: 'd' });
      await world.maintain();
    }
    const [a, b, c, e] = engines as [TestEngine, TestEngine, TestEngine, TestEngine];
    world.crash(b);
    world.crash(c);
    const epochs = async () =>
      Promise.all(['d1', 'd2'].map(async (id) => Number(await world.storage.get(keys.ownerEpoch(id)))));
    const before = await epochs();
    await world.advance(10_000, { stepMs: 1_000 });
    // The two live engines are full: neither took d1 or d2 (taking them only to let them go again would move
    // their epochs on every pass).
    expect(await epochs()).toEqual(before);
    // One ends: its engine has room and takes one of the dead peers' workflows, then the other.
    for (let round = 0; round < 8; round++) {
      for (const id of ['d0', 'd1', 'd2', 'd3'])
        if (
          (await a.describe(id)).status === 'running' &&
          (await a.describe(id)).owner?.engineId !== undefined
        )
          await a.signal(id, 'done').catch(() => undefined);
      await world.advance(1_000, { stepMs: 500 });
    }
    for (const id of ['d0', 'd1', 'd2', 'd3']) expect((await e.describe(id)).status).toBe('completed');
    for (const [index, epoch] of (await epochs()).entries())
      expect(epoch).toBeLessThanOrEqual(before[index]! + 2);
    await world.shutdownAll();
  });

  it('two engines racing singleton and debounced starts with one key create one workflow', async () => {
    const world = new TestWorld();
    const queues = { work: { concurrency: 5 } };
    const a = await world.engine([job], { ...fencing, queues });
    const b = await world.engine([job], { ...fencing, queues });
    const singles = await Promise.all(
      [a, b, a, b].map((engine, n) =>
        engine.start(job, { n }, { id: `s${n}`, queue: 'work', singleton: { key: 'nightly' } }),
      ),
    );
    expect(new Set(singles.map((handle) => handle.workflowId)).size).toBe(1);
    expect(singles.filter((handle) => handle.started)).toHaveLength(1);
    const debounced = await Promise.all(
      [a, b, a, b].map((engine, n) =>
        engine.start(job, { n }, { id: `d${n}`, queue: 'work', debounce: { key: 'acme', windowMs: 5_000 } }),
      ),
    );
    expect(new Set(debounced.map((handle) => handle.workflowId)).size).toBe(1);
    expect(debounced.filter((handle) => handle.started)).toHaveLength(1);
    const rows = await a.list({ status: 'pending' });
    expect(rows.items.map((row) => row.workflowId)).toEqual([debounced[0]!.workflowId]);
    await world.shutdownAll();
  });
});
