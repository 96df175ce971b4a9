/**
 * Activity concurrency limits (`activityLimits`, activity-limits.ts): real engines on one store (memory,
 * PostgreSQL, IndexedDB), a simulated clock and manual background tasks. Activity functions record when they
 * enter and leave, per engine, and wait on gates the test opens one at a time, so the test sees how many run
 * at once across the fleet — and that the limit is reached, not only respected.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import type { Condition, Operation, Storage } from '../storage/types';
import { SimulatedClock } from './clock';
import { createEngine } from './engine';
import { fencing, TestWorld, type TestEngine } from './engine.test-support';
import { InvalidOptionsError } from './errors';
import { keys } from './keys';
import { withMutation } from './mutations';
import type { EngineOptions } from './options';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow, type ActivityInterceptor, type ActivityOptions } from './workflow';

/** Records every call of the gated activities: who runs, where, and the most that ran at once. */
function recorder() {
  const running = new Map<string, string>(); // call → engine
  const entered: string[] = [];
  const gates = new Map<string, () => void>();
  let max = 0;
  const maxHere = new Map<string, number>();
  const here = (engine: string) => [...running.values()].filter((e) => e === engine).length;
  const dead = new Set<string>();
  /** Counts calls of live engines (a crashed engine's calls are gone with it). */
  const live = () => [...running.values()].filter((engine) => !dead.has(engine)).length;
  const intercept =
    (engine: string): ActivityInterceptor =>
    async (call, next) => {
      const id = `${call.workflowId}#${call.context.attempt}`;
      running.set(id, engine);
      entered.push(call.workflowId);
      max = Math.max(max, live());
      maxHere.set(engine, Math.max(maxHere.get(engine) ?? 0, here(engine)));
      try {
        return await next(call.context);
      } finally {
        running.delete(id);
      }
    };
  const gated = (options: ActivityOptions = {}, name = 'call-api') =>
    defineWorkflow({
      name: `gated-${name}`,
      version: 1,
      *run(ctx) {
        const id = ctx.workflowId;
        return yield* ctx.activity(
          name,
          (context) =>
            new Promise<string>((resolve) =>
              gates.set(`${id}#${context.attempt}`, () => resolve(`${id} done`)),
            ),
          { retry: { maxAttempts: 1 }, ...options },
        );
      },
    });
  return {
    running,
    entered,
    dead,
    live,
    intercept,
    gated,
    get max() {
      return max;
    },
    maxHere,
    here,
    openAll(): void {
      for (const id of running.keys()) gates.get(id)!();
    },
    /** Opens the gate of the oldest call still running on a live engine. */
    openOldest(): string {
      const [id] = [...running].find(([, engine]) => !dead.has(engine))!;
      gates.get(id)!();
      return id;
    },
  };
}

/** Runs maintenance passes until `condition` holds (each pass polls the slots and takes changes in). */
async function until(
  world: TestWorld,
  condition: () => boolean | Promise<boolean>,
  what: string,
): Promise<void> {
  for (let pass = 0; pass < 100; pass++) {
    if (await condition()) return;
    await world.maintain();
  }
  throw new Error(`Never came to pass: ${what}`);
}

/** Lets the oldest running call return, and waits until it has. */
async function returnOldest(world: TestWorld, record: ReturnType<typeof recorder>): Promise<void> {
  const opened = record.openOldest();
  await until(world, () => !record.running.has(opened), `${opened} returned`);
}

const stores = [...testStores(), indexedDbStore()];
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
});

describe.each(stores)('activity limits across the fleet on $name', (store) => {
  async function fleet(
    count: number,
    limits: EngineOptions['activityLimits'],
    options: Partial<EngineOptions> = {},
  ) {
    const world = new TestWorld({ storage: await store.open() });
    const record = recorder();
    const workflow = record.gated();
    const engines: TestEngine[] = [];
    for (let i = 0; i < count; i++) {
      const name = `engine-${String.fromCharCode(65 + i)}`;
      engines.push(
        await world.engine([workflow], {
          ...fencing,
          liveness: world.liveness,
          activityLimits: limits,
          interceptors: { activities: [record.intercept(name)] },
          ...options,
        }),
      );
    }
    return { world, record, workflow, engines };
  }

  it('30 workflows on 3 engines: exactly `concurrency` run at once across the fleet, at most `perEngine` on each, and all finish', async () => {
    const { world, record, workflow, engines } = await fleet(3, {
      'call-api': { concurrency: 5, perEngine: 2 },
    });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const id = `w${String(i).padStart(2, '0')}`;
      await engines[i % 3]!.start(workflow, undefined, { id });
      ids.push(id);
    }
    // Each engine drives the workflows it started: with perEngine 2, the fleet runs 5 at once while the
    // workflows left are spread enough for it.
    const left = new Map(engines.map((engine) => [engine.id, 10]));
    let finished = 0;
    while (finished < 30) {
      const expected = Math.min(
        5,
        [...left.values()].reduce((sum, n) => sum + Math.min(2, n), 0),
      );
      await until(
        world,
        () => {
          // never more than the limit, on the way there too
          expect(record.running.size).toBeLessThanOrEqual(5);
          return record.running.size === expected;
        },
        `${expected} calls running`,
      );
      // The fleet's view agrees: every live slot holder, each on the engine that runs it.
      const [view] = await engines[0]!.activityLimits();
      expect(view).toMatchObject({ name: 'call-api', concurrency: 5, perEngine: 2 });
      expect(view!.running.map((h) => `${h.workflowId}#${h.attempt}`).sort()).toEqual(
        [...record.running.keys()].sort(),
      );
      for (const holder of view!.running)
        expect(record.running.get(`${holder.workflowId}#${holder.attempt}`)).toBe(holder.engineId);
      const [, engine] = [...record.running][0]!;
      await returnOldest(world, record);
      left.set(engine, left.get(engine)! - 1);
      finished++;
    }
    await until(world, () => record.running.size === 0, 'the last call returned');
    await world.idle();
    for (const id of ids) expect(await engines[0]!.handle(id).result()).toBe(`${id} done`);
    expect(record.max).toBe(5);
    for (const engine of engines) expect(record.maxHere.get(engine.id)).toBe(2);
    expect(record.entered).toHaveLength(30); // each ran once
    expect(engines.reduce((sum, engine) => sum + engine.metrics().activityWaits, 0)).toBeGreaterThan(0);
    expect(engines.some((e) => e.events.some((event) => event.type === 'activity.waiting'))).toBe(true);
    // Every slot was given back.
    expect(await world.storage.scan(keys.activitySlotsPrefix)).toEqual([]);
    await world.shutdownAll();
  });

  it("a crashed engine's slots are free once the oracle reports it dead, and the others proceed", async () => {
    const { world, record, workflow, engines } = await fleet(2, { 'call-api': { concurrency: 2 } });
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(workflow, undefined, { id: 'a1' });
    await a.start(workflow, undefined, { id: 'a2' });
    await until(world, () => record.here(a.id) === 2, 'A holds both slots');
    await b.start(workflow, undefined, { id: 'b1' });
    await b.start(workflow, undefined, { id: 'b2' });
    await world.maintain();
    await world.maintain();
    expect(record.here(b.id)).toBe(0); // A is alive: its slots are held
    world.crash(a);
    record.dead.add(a.id);
    await until(world, () => record.here(b.id) === 2, "B runs in A's slots");
    // B took A's workflows over too; their activities run again, but only as slots free up.
    expect(b.ownedWorkflows().sort()).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(record.live()).toBe(2);
    for (let done = 0; done < 4; done++) {
      await until(world, () => record.here(b.id) === Math.min(2, 4 - done), 'the next calls run');
      await returnOldest(world, record);
    }
    await until(world, () => record.here(b.id) === 0, 'all returned');
    await world.idle();
    for (const id of ['a1', 'a2', 'b1', 'b2']) expect(await b.handle(id).result()).toBe(`${id} done`);
    expect(record.max).toBe(2);
    await world.shutdownAll();
  });

  it("without an oracle, a crashed engine's slots are free only once its session is past expiresAt + grace", async () => {
    const { world, record, workflow, engines } = await fleet(
      2,
      { 'call-api': { concurrency: 1 } },
      {
        liveness: undefined,
      },
    );
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(workflow, undefined, { id: 'a1' });
    await until(world, () => record.here(a.id) === 1, 'A holds the slot');
    await b.start(workflow, undefined, { id: 'b1' });
    const session = JSON.parse((await world.storage.get(keys.session(a.id)))!) as { expiresAt: number };
    world.crash(a);
    record.dead.add(a.id);
    world.clock.set(session.expiresAt + 2000);
    await world.maintain();
    await world.maintain();
    expect(record.here(b.id)).toBe(0); // still live: grace is two renew intervals
    world.clock.set(session.expiresAt + 2001);
    await until(world, () => record.here(b.id) === 1, "B takes A's slot");
    expect(record.running.has('b1#1') || record.running.has('a1#2')).toBe(true);
    await world.shutdownAll();
  });

  it('an attempt cancelled while it waits for a slot never runs; the next waiter gets the slot', async () => {
    const { world, record, workflow, engines } = await fleet(1, { 'call-api': { concurrency: 1 } });
    const [a] = engines as [TestEngine];
    // One at a time, so that they join the line in this order.
    for (const [waiting, id] of ['first', 'second', 'third'].entries()) {
      await a.start(workflow, undefined, { id });
      await until(world, () => record.running.size === 1, `${id} in line`);
      await until(
        world,
        async () => (await a.activityLimits())[0]!.waitingHere === waiting,
        `${waiting} waiting`,
      );
      expect((await a.activityLimits())[0]).toMatchObject({ runningHere: 1, waitingHere: waiting });
    }
    expect([...record.running.keys()]).toEqual(['first#1']);
    await a.cancel('second');
    await until(
      world,
      async () => (await a.handle('second').describe()).status === 'cancelled',
      'second cancelled',
    );
    expect((await a.activityLimits())[0]).toMatchObject({ runningHere: 1, waitingHere: 1 });
    record.openOldest();
    await until(world, () => record.running.has('third#1'), 'the third runs');
    record.openOldest();
    await world.idle();
    expect(record.entered).toEqual(['first', 'third']);
    expect(await a.handle('third').result()).toBe('third done');
    await world.shutdownAll();
  });

  it('shutdown aborts a waiting attempt (it never runs) and gives back the slots of running ones', async () => {
    const { world, record, workflow, engines } = await fleet(2, { 'call-api': { concurrency: 1 } });
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(workflow, undefined, { id: 'running' });
    await until(world, () => record.running.size === 1, 'one runs');
    await a.start(workflow, undefined, { id: 'waiting' });
    await until(world, async () => (await a.activityLimits())[0]!.waitingHere === 1, 'one waits');
    await a.shutdown();
    // The running function ignores its AbortSignal: its slot is given back anyway.
    expect(record.running.has('running#1')).toBe(true);
    expect(await world.storage.scan(keys.activitySlotsPrefix)).toEqual([]);
    record.openAll();
    await until(world, () => !record.running.has('running#1'), "A's function returned");
    // B takes both over (A's session ended); each attempt runs again, one at a time.
    await until(world, () => record.here(b.id) === 1, 'B runs one');
    expect(b.ownedWorkflows().sort()).toEqual(['running', 'waiting']);
    await returnOldest(world, record);
    await until(world, () => record.here(b.id) === 1, 'B runs the other');
    await returnOldest(world, record);
    expect(record.entered.filter((id) => id === 'waiting')).toHaveLength(1); // only on B
    expect(record.max).toBe(1);
    for (const id of ['running', 'waiting']) expect(await b.handle(id).result()).toBe(`${id} done`);
    await world.shutdownAll();
  });

  it('a storage error while taking a slot runs nothing: the waiter tries again on the next poll', async () => {
    const world = new TestWorld({ storage: await store.open() });
    const record = recorder();
    const workflow = record.gated();
    // The store refuses this engine's slot reads and writes while `failing` (everything else works).
    let failing = false;
    const refuse = () => Promise.reject(new Error('injected: the store is unreachable'));
    const slotsOnly = (key: string) => key.startsWith(keys.activitySlotsPrefix);
    const inner = world.storage;
    const flaky = new Proxy(inner, {
      get(target, property) {
        if (property === 'scan')
          return (prefix: string, options?: Parameters<Storage['scan']>[1]) =>
            failing && slotsOnly(prefix) ? refuse() : target.scan(prefix, options);
        if (property === 'conditionalBatch')
          return (conditions: Condition[], operations: Operation[]) =>
            failing && operations.some((op) => slotsOnly(op.key))
              ? refuse()
              : target.conditionalBatch(conditions, operations);
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const a = await world.engine([workflow], {
      ...fencing,
      storage: flaky,
      activityLimits: { 'call-api': { concurrency: 1 } },
      interceptors: { activities: [record.intercept('engine-A')] },
    });
    await a.start(workflow, undefined, { id: 'holder' });
    await until(world, () => record.running.size === 1, 'the holder runs');
    await a.start(workflow, undefined, { id: 'waiter' });
    await until(world, async () => (await a.activityLimits())[0]!.waitingHere === 1, 'the waiter waits');
    // The holder returns; its release does not land, and the waiter cannot read the slots.
    failing = true;
    await returnOldest(world, record);
    await world.maintain();
    await world.maintain();
    expect(record.entered).toEqual(['holder']);
    expect(a.warnings.some((w) => w.message.includes("slot of activity limit group 'call-api'"))).toBe(true);
    expect((await inner.scan(keys.activitySlotsPrefix)).map((e) => JSON.parse(e.value) as unknown)).toEqual([
      expect.objectContaining({ engineId: a.id, workflowId: 'holder' }),
    ]);
    // The store answers again: the next poll reads the holder's slot as this engine's leaked one and reuses it.
    failing = false;
    await until(world, () => record.running.has('waiter#1'), 'the waiter runs in the leaked slot');
    const [slot] = await inner.scan(keys.activitySlotsPrefix);
    expect(JSON.parse(slot!.value)).toMatchObject({ engineId: a.id, workflowId: 'waiter' });
    await returnOldest(world, record);
    await world.idle();
    expect(await a.handle('waiter').result()).toBe('waiter done');
    await world.shutdownAll();
  });

  it('timeoutMs counts from when the attempt holds its slot, not while it waits', async () => {
    const world = new TestWorld({ storage: await store.open() });
    const record = recorder();
    const timed = record.gated({ timeoutMs: 1000 });
    const a = await world.engine([timed], {
      ...fencing,
      activityLimits: { 'call-api': { concurrency: 1 } },
      interceptors: { activities: [record.intercept('engine-A')] },
    });
    await a.start(timed, undefined, { id: 'holder' });
    await until(world, () => record.running.size === 1, 'the holder runs');
    await a.start(timed, undefined, { id: 'waiter' });
    await world.maintain();
    // The holder times out after 1 s and gives the slot back; the waiter, a second into its wait, then runs
    // with a whole second of its own.
    await world.advance(900, { stepMs: 100 });
    expect(record.entered).toEqual(['holder']);
    await world.advance(100);
    await until(world, () => record.entered.includes('waiter'), 'the waiter runs');
    await world.advance(900, { stepMs: 100 });
    expect(await a.handle('waiter').describe()).toMatchObject({ status: 'running' });
    await world.advance(100);
    await expect(a.handle('holder').result()).rejects.toThrow(/exceeded its timeout of 1000 ms/);
    await expect(a.handle('waiter').result()).rejects.toThrow(/exceeded its timeout of 1000 ms/);
    await world.shutdownAll();
  });
});

describe('activity limits on one engine', () => {
  it("ownership 'none': an in-memory semaphore serves waiters in order; the group defaults to the activity's name and `limit` joins another group", async () => {
    const world = new TestWorld();
    const record = recorder();
    const direct = record.gated();
    const joined = record.gated({ limit: 'call-api' }, 'other-call');
    const a = await world.engine([direct, joined], {
      ownership: 'none',
      activityLimits: { 'call-api': { concurrency: 2 } },
      interceptors: { activities: [record.intercept('engine-A')] },
    });
    const written: string[] = [];
    world.storage.watch!('', (changed) => written.push(...changed));
    const ids = ['w1', 'w2', 'w3', 'w4', 'w5'];
    for (const [i, id] of ids.entries()) await a.start(i % 2 === 0 ? direct : joined, undefined, { id });
    await world.maintain();
    expect(record.running.size).toBe(2);
    while (record.running.size > 0) {
      record.openOldest();
      await world.maintain();
      expect(record.running.size).toBeLessThanOrEqual(2);
    }
    expect(record.entered).toEqual(ids);
    expect(record.max).toBe(2);
    expect(a.metrics().activityWaits).toBe(3);
    expect(written.filter((key) => key.startsWith('act-slot:'))).toEqual([]); // no store involved
    await world.shutdownAll();
  });

  it('an activity whose group has no declared limit runs at once and touches no slot', async () => {
    const world = new TestWorld();
    const record = recorder();
    const free = record.gated({}, 'unlimited');
    const a = await world.engine([free], {
      ...fencing,
      activityLimits: { 'call-api': { concurrency: 1 } },
      interceptors: { activities: [record.intercept('engine-A')] },
    });
    const written: string[] = [];
    world.storage.watch!('', (changed) => written.push(...changed));
    for (const id of ['u1', 'u2', 'u3']) await a.start(free, undefined, { id });
    await world.maintain();
    expect(record.running.size).toBe(3);
    expect(a.metrics().activityWaits).toBe(0);
    expect(written.filter((key) => key.startsWith('act-slot:'))).toEqual([]);
    record.openAll();
    await world.idle();
    await world.shutdownAll();
  });

  it('perEngine alone under workflow-lease is an in-memory limit of this engine', async () => {
    const world = new TestWorld();
    const record = recorder();
    const workflow = record.gated();
    const options = (name: string) => ({
      ...fencing,
      activityLimits: { 'call-api': { perEngine: 1 } },
      interceptors: { activities: [record.intercept(name)] },
    });
    const a = await world.engine([workflow], options('engine-A'));
    const b = await world.engine([workflow], options('engine-B'));
    for (const id of ['a1', 'a2']) await a.start(workflow, undefined, { id });
    for (const id of ['b1', 'b2']) await b.start(workflow, undefined, { id });
    await world.maintain();
    expect(record.here(a.id)).toBe(1);
    expect(record.here(b.id)).toBe(1);
    expect((await a.activityLimits())[0]).toMatchObject({
      concurrency: null,
      perEngine: 1,
      runningHere: 1,
      waitingHere: 1,
    });
    while (record.running.size > 0) {
      record.openOldest();
      await world.maintain();
    }
    expect(record.entered.sort()).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(record.max).toBe(2);
    await world.shutdownAll();
  });

  it('an external activity holds its slot until its function returns, not while it waits for completion', async () => {
    const world = new TestWorld();
    let token = '';
    let calls = 0;
    const approval = defineWorkflow({
      name: 'approval',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity(
          'approve',
          (context) => {
            calls++;
            token = context.completionToken!;
          },
          { completion: 'external' },
        );
      },
    });
    const a = await world.engine([approval], {
      ...fencing,
      activityLimits: { approve: { concurrency: 1 } },
    });
    await a.start(approval, undefined, { id: 'x1' });
    await a.start(approval, undefined, { id: 'x2' });
    await until(world, () => calls === 2, 'both functions ran, one after the other');
    expect((await a.activityLimits())[0]!.running).toEqual([]);
    await a.completeActivity(token, 'yes');
    await world.maintain();
    expect(await a.handle('x2').result()).toBe('yes');
    await world.shutdownAll();
  });

  it('a bad limit fails createEngine with InvalidOptionsError quoting it, before anything is written', async () => {
    const bad: [unknown, RegExp][] = [
      [[], /must be an object of groups/],
      [{ 'has space': { concurrency: 1 } }, /"has space" must be 1–100 characters/],
      [{ ['x'.repeat(101)]: { concurrency: 1 } }, /must be 1–100 characters/],
      [{ api: 5 }, /\['api'\] must be an object like/],
      [{ api: {} }, /sets no limit/],
      [{ api: { concurrency: 0 } }, /concurrency must be a positive integer; got 0/],
      [{ api: { perEngine: 1.5 } }, /perEngine must be a positive integer; got 1.5/],
      [{ api: { concurrency: '3' } }, /concurrency must be a positive integer; got "3"/],
      [{ api: { concurrency: 2, rate: 3 } }, /has 'rate'/],
    ];
    for (const [activityLimits, message] of bad) {
      const storage = new MemoryStorage();
      const attempt = createEngine({
        storage,
        clock: new SimulatedClock(),
        activityLimits: activityLimits as EngineOptions['activityLimits'],
      });
      await expect(attempt).rejects.toBeInstanceOf(InvalidOptionsError);
      await expect(attempt).rejects.toThrow(message);
      expect(await storage.scan('')).toEqual([]);
    }
  });

  it('a bad `limit` option fails the workflow with a TypeError naming the activity', async () => {
    const world = new TestWorld();
    const wrong = defineWorkflow({
      name: 'wrong-limit',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity('call', () => 1, { limit: 'no spaces allowed' });
      },
    });
    const a = await world.engine([wrong], { activityLimits: { call: { concurrency: 1 } } });
    await a.start(wrong, undefined, { id: 'w' });
    await world.idle();
    await expect(a.handle('w').result()).rejects.toThrow(
      /Activity 'call': limit must be a group name of 1–100 characters/,
    );
    await world.shutdownAll();
  });
});

describe('the fleet-wide limit is shown to fail on a broken engine', () => {
  // M6 (src/engine/mutations.ts): every other engine's slot judged free. Intact, B waits for A's slot; broken,
  // B runs beside A and the limit of 1 is passed.
  for (const broken of [false, true])
    it(broken ? 'broken (activity-slot-holders-dead): 2 run at once' : 'intact: 1 runs at once', async () => {
      const scenario = async () => {
        const world = new TestWorld();
        const record = recorder();
        const workflow = record.gated();
        const options = (name: string) => ({
          ...fencing,
          liveness: world.liveness,
          activityLimits: { 'call-api': { concurrency: 1 } },
          interceptors: { activities: [record.intercept(name)] },
        });
        const a = await world.engine([workflow], options('engine-A'));
        const b = await world.engine([workflow], options('engine-B'));
        await a.start(workflow, undefined, { id: 'a1' });
        await until(world, () => record.running.size === 1, 'A runs');
        await b.start(workflow, undefined, { id: 'b1' });
        for (let pass = 0; pass < 3; pass++) await world.maintain();
        const max = record.max;
        record.openAll();
        await world.shutdownAll();
        return max;
      };
      const max = broken ? await withMutation('activity-slot-holders-dead', scenario) : await scenario();
      expect(max).toBe(broken ? 2 : 1);
    });
});
