/**
 * Continue-as-new (`ctx.continueAsNew(input)`): a run ends and the next run of the same id starts in the same
 * fenced commit, carrying its input, the buffered signals, the parent link and the execution deadline. Run
 * history shows the chain; result waiters follow it to the last run; a crash before the commit replays the
 * old run to the call and makes it again, a crash after it leaves the new run to be taken over, and a
 * deposed engine's late continue is refused by the fence (never two next runs). Over MemoryStorage,
 * PostgreSQL and IndexedDB (fake-indexeddb).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fencing, TestWorld } from './engine.test-support';
import { WorkflowFailedError, WorkflowTimedOutError } from './errors';
import { replay } from './replay-check';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow } from './workflow';

/** Activities that ran, in order, as `name:round`. */
let ran: string[] = [];
/** Attempts held until the test lets them finish (`gate`), oldest first, by `name:round`. */
let gates = new Map<string, (() => void)[]>();

function gate(key: string): Promise<string> {
  ran.push(key);
  return new Promise((resolve) => {
    const held = gates.get(key) ?? [];
    held.push(() => resolve(key));
    gates.set(key, held);
  });
}

/** Counts to `until`, `perRun` steps per run, continuing as new in between; returns the total. */
const counter = defineWorkflow({
  name: 'counter',
  version: 1,
  *run(ctx, input: { count: number; until: number; perRun: number }) {
    let { count } = input;
    for (let i = 0; i < input.perRun && count < input.until; i++) {
      count = yield* ctx.activity('add', () => {
        ran.push(`add:${count}`);
        return count + 1;
      });
    }
    if (count < input.until) return yield* ctx.continueAsNew({ ...input, count });
    return count;
  },
});

/** Takes one `item` signal per run and continues as new until it has `until` of them. */
const collector = defineWorkflow({
  name: 'collector',
  version: 1,
  *run(ctx, input: { items: string[]; until: number }) {
    const item = yield* ctx.waitForSignal<string>('item');
    const items = [...input.items, item ?? '?'];
    if (items.length < input.until) return yield* ctx.continueAsNew({ items, until: input.until });
    return items;
  },
});

/** Round 1 and 2 each run a gated activity, then continue; round 3 returns. */
const rounds = defineWorkflow({
  name: 'rounds',
  version: 1,
  *run(ctx, input: { round: number }) {
    yield* ctx.activity('work', () => gate(`work:${input.round}`));
    if (input.round < 3) return yield* ctx.continueAsNew({ round: input.round + 1 });
    return input.round;
  },
});

const upgradeV1 = defineWorkflow({
  name: 'upgrade',
  version: 1,
  *run(ctx, input: { next?: number }) {
    yield* ctx.sleep(10);
    return yield* ctx.continueAsNew({}, input.next === undefined ? {} : { version: input.next });
  },
});

const upgradeV2 = defineWorkflow({
  name: 'upgrade',
  version: 2,
  *run(ctx) {
    yield* ctx.sleep(10);
    return `v${ctx.version}`;
  },
});

/** Sleeps 1 s per run, for ever: only the execution deadline (kept across runs) stops it. */
const forever = defineWorkflow({
  name: 'forever',
  version: 1,
  *run(ctx, input: { round: number }) {
    yield* ctx.sleep(1_000);
    return yield* ctx.continueAsNew({ round: input.round + 1 });
  },
});

/** Catches the cancel of its wait and continues as new: it ends cancelled all the same. */
const stubborn = defineWorkflow({
  name: 'stubborn',
  version: 1,
  *run(ctx) {
    try {
      yield* ctx.waitForSignal('never');
    } catch {
      return yield* ctx.continueAsNew({});
    }
    return 'unreachable';
  },
});

const parent = defineWorkflow({
  name: 'parent',
  version: 1,
  *run(ctx) {
    return yield* ctx.startChild(counter, { count: 0, until: 5, perRun: 2 }, { id: 'child' });
  },
});

/** Starts an abandoned child (default id) and continues as new: each run's child has an id of its own. */
const spawner = defineWorkflow({
  name: 'spawner',
  version: 1,
  *run(ctx, input: { left: number }) {
    yield* ctx.startChild(forever, { round: 0 }, { parentClosePolicy: 'abandon' });
    if (input.left > 0) return yield* ctx.continueAsNew({ left: input.left - 1 });
    return 'spawned';
  },
});

const oversized = defineWorkflow({
  name: 'oversized',
  version: 1,
  *run(ctx) {
    yield* ctx.sleep(1);
    return yield* ctx.continueAsNew({ blob: 'x'.repeat(300_000) });
  },
});

const all = [counter, collector, rounds, upgradeV1, upgradeV2, forever, stubborn, parent, spawner, oversized];

const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

describe.each(stores)('continue-as-new on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  async function setup() {
    ran = [];
    gates = new Map();
    return new TestWorld({ storage: await store.open() });
  }

  /** Lets the gated activity `key` finish (waiting for it to start), then lets the engines settle. */
  async function release(world: TestWorld, key: string) {
    for (let i = 0; i < 200 && !gates.get(key)?.length; i++) await world.maintain();
    const open = gates.get(key)?.pop();
    if (!open) throw new Error(`activity ${key} never started (ran: ${ran.join(', ')})`);
    open();
    await world.maintain();
  }

  it('chains runs: each carries only its input, the chain ends in one result, run history shows it', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(counter, { count: 0, until: 7, perRun: 3 }, { id: 'c' });
    await world.idle();
    // The handle is pinned to run 1: it follows the chain to the run that ends it.
    expect(await handle.result()).toBe(7);
    expect(await engine.handle('c', { run: 2 }).result()).toBe(7);
    expect(ran).toEqual(['add:0', 'add:1', 'add:2', 'add:3', 'add:4', 'add:5', 'add:6']);
    const runs = await engine.runs('c');
    expect(runs.map(({ run, status, latest }) => ({ run, status, latest }))).toEqual([
      { run: 3, status: 'completed', latest: true },
      { run: 2, status: 'continued-as-new', latest: false },
      { run: 1, status: 'continued-as-new', latest: false },
    ]);
    // Each run's history is its own: three operations, two, and one.
    const last = await engine.describe('c');
    expect(last).toMatchObject({ run: 3, continuedFrom: 2, input: { count: 6, until: 7, perRun: 3 } });
    expect(last.position).toBe(1);
    expect((await engine.describe('c', { run: 2 })).position).toBe(3);
    expect((await engine.history('c', { run: 2 })).entries).toHaveLength(3);
    // The ended run says where it went; the next one where it came from.
    const ended = await engine.timeline('c', { run: 1 });
    expect(ended.at(-1)).toMatchObject({ kind: 'continued-as-new', detail: { nextRun: 2, version: 1 } });
    const started = await engine.timeline('c', { run: 2 });
    expect(started[0]).toMatchObject({ kind: 'started', detail: { continuedFrom: 1 } });
    // The claim goes on, at the same epoch: the new run's timeline says who holds it from its start.
    expect(started[1]).toMatchObject({
      kind: 'claim-acquired',
      engineId: engine.id,
      epoch: ended.at(-1)!.epoch,
      detail: { engineId: engine.id, epoch: ended.at(-1)!.epoch, how: 'continue-as-new' },
    });
    expect(engine.metrics().runsContinued).toBe(2);
    expect(engine.events.filter((event) => event.type === 'workflow.continued-as-new')).toEqual([
      { type: 'workflow.continued-as-new', workflowId: 'c', run: 2 },
      { type: 'workflow.continued-as-new', workflowId: 'c', run: 3 },
    ]);
    expect(engine.events.filter((event) => event.type === 'workflow.completed')).toHaveLength(1);
    // A continued run's recorded history replays against the code, which reaches continueAsNew at its end.
    expect(replay(all, await engine.history('c', { run: 1 }))).toMatchObject({ ok: true, operations: 3 });
    // Code that returns where the run continued diverged there.
    const returns = defineWorkflow({
      name: 'counter',
      version: 1,
      *run(ctx, input: { count: number }) {
        for (let i = 0; i < 3; i++) yield* ctx.activity('add', () => input.count + i + 1);
        return 3;
      },
    });
    expect(replay([returns], await engine.history('c', { run: 1 }))).toMatchObject({
      ok: false,
      problem: 'diverged',
      position: 3,
      recorded: 'continue-as-new',
      replayed: 'the end of the workflow',
    });
    await world.shutdownAll();
  });

  it('keeps buffered signals for the next run: each delivered once, in order', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(collector, { items: [], until: 4 }, { id: 'col' });
    await world.idle();
    for (const item of ['a', 'b', 'c', 'd']) await engine.signal('col', 'item', item);
    await world.idle();
    expect(await handle.result()).toEqual(['a', 'b', 'c', 'd']);
    expect((await engine.runs('col')).map((run) => run.status)).toEqual([
      'completed',
      'continued-as-new',
      'continued-as-new',
      'continued-as-new',
    ]);
    expect((await engine.describe('col')).bufferedSignals).toEqual([]);
    await world.shutdownAll();
  });

  it('a waiter on another engine pinned to the first run follows the chain to its end', async () => {
    const world = await setup();
    const owner = await world.engine(all, fencing);
    const watcher = await world.engine(all, { ...fencing, claimWorkflows: false });
    await owner.start(collector, { items: [], until: 3 }, { id: 'far' });
    await world.idle();
    const settled: unknown[] = [];
    const early = watcher
      .handle('far', { run: 1 })
      .result()
      .then((value) => settled.push(value));
    await owner.signal('far', 'item', 'a');
    await world.maintain();
    expect(settled).toEqual([]); // run 2 waits: the chain goes on
    await owner.signal('far', 'item', 'b');
    await owner.signal('far', 'item', 'c');
    await world.maintain();
    await early;
    expect(settled).toEqual([['a', 'b', 'c']]);
    // Asked afterwards, from any run of the chain: the same outcome, read from run history in one scan.
    expect(await watcher.handle('far', { run: 2 }).result()).toEqual(['a', 'b', 'c']);
    await world.shutdownAll();
  });

  it('a crash before the continue replays the run to it; a crash after it leaves the next run to a successor', async () => {
    const world = await setup();
    const first = await world.engine(all, fencing);
    await first.start(rounds, { round: 1 }, { id: 'r' });
    await world.maintain();
    expect(ran).toEqual(['work:1']);
    // Crash while round 1's activity runs: nothing of the continue is written.
    world.crash(first);
    const second = await world.engine(all, fencing);
    await world.advance(10_000, { stepMs: 1_000 });
    expect(ran).toEqual(['work:1', 'work:1']); // the attempt in flight runs again (at least once)
    await release(world, 'work:1');
    // Round 2 started in the continue's commit; crash while its activity runs.
    expect(await second.describe('r')).toMatchObject({ run: 2, status: 'running', continuedFrom: 1 });
    expect(ran.at(-1)).toBe('work:2');
    world.crash(second);
    const third = await world.engine(all, fencing);
    await world.advance(10_000, { stepMs: 1_000 });
    expect(await third.claimHolder('r')).toMatchObject({ engineId: third.id });
    await release(world, 'work:2');
    await release(world, 'work:3');
    expect(await third.handle('r', { run: 1 }).result()).toBe(3);
    expect((await third.runs('r')).map(({ run, status }) => `${run}:${status}`)).toEqual([
      '3:completed',
      '2:continued-as-new',
      '1:continued-as-new',
    ]);
    await world.shutdownAll();
  });

  it('a deposed engine cannot continue a run its successor continued: one next run, never two', async () => {
    const world = await setup();
    const zombie = await world.engine(all, fencing);
    await zombie.start(rounds, { round: 1 }, { id: 'z' });
    await world.maintain();
    world.freeze(zombie);
    const successor = await world.engine(all, fencing);
    await world.advance(10_000, { stepMs: 1_000, engines: [successor] });
    expect(await successor.claimHolder('z')).toMatchObject({ engineId: successor.id });
    // The successor's attempt finishes and continues; then the zombie's finishes and tries to.
    const zombieAttempt = gates.get('work:1')!.shift()!;
    await release(world, 'work:1');
    expect(await successor.describe('z')).toMatchObject({ run: 2, continuedFrom: 1 });
    world.thaw(zombie);
    zombieAttempt();
    await world.maintain();
    expect(zombie.events.some((event) => event.type === 'workflow.continued-as-new')).toBe(false);
    await release(world, 'work:2');
    await release(world, 'work:3');
    expect(await successor.handle('z').result()).toBe(3);
    expect((await successor.runs('z')).map((run) => run.run)).toEqual([3, 2, 1]);
    await world.shutdownAll();
  });

  it('the next run takes the newest version, or the one named; an unregistered one fails the workflow', async () => {
    const world = await setup();
    // Started by an engine that has version 1 only; a deploy adds version 2 before the runs continue.
    const before = await world.engine([upgradeV1], fencing);
    await before.start(upgradeV1, {}, { id: 'u-newest' });
    await before.start(upgradeV1, { next: 1 }, { id: 'u-pinned' });
    await before.start(upgradeV1, { next: 9 }, { id: 'u-missing' });
    await world.idle();
    await before.shutdown();
    const engine = await world.engine([upgradeV1, upgradeV2], fencing);
    await world.idle();
    for (let i = 0; i < 5; i++) await world.advance(10);
    await world.idle();
    expect(await engine.handle('u-newest').result()).toBe('v2');
    expect((await engine.runs('u-newest')).map((run) => run.version)).toEqual([2, 1]);
    // Named version 1: its next run is on version 1 (which then continues onto the newest).
    expect(await engine.handle('u-pinned').result()).toBe('v2');
    expect((await engine.runs('u-pinned')).map((run) => run.version)).toEqual([2, 1, 1]);
    const failure = await engine
      .handle('u-missing')
      .result()
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).failure).toMatchObject({
      name: 'WorkflowNotRegisteredError',
      message: expect.stringContaining("'upgrade' version 9 is not registered") as unknown,
    });
    expect((await engine.runs('u-missing')).map((run) => run.status)).toEqual(['failed']);
    await world.shutdownAll();
  });

  it('the execution deadline is the workflow’s: a chain that runs past it times out', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(forever, { round: 1 }, { id: 'f', executionTimeoutMs: 3_500 });
    await world.idle();
    for (let i = 0; i < 10; i++) {
      await world.advance(500);
      await world.idle();
    }
    await world.idle();
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowTimedOutError);
    const runs = await engine.runs('f');
    expect(runs[0]).toMatchObject({ status: 'timed-out', run: 4 });
    expect(runs.slice(1).every((run) => run.status === 'continued-as-new')).toBe(true);
    await world.shutdownAll();
  });

  it('after a delivered cancel, continuing as new ends the workflow cancelled', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(stubborn, undefined, { id: 's' });
    await world.idle();
    await engine.cancel('s', 'stop');
    await world.idle();
    await expect(handle.result()).rejects.toMatchObject({ name: 'WorkflowCancelledError' });
    expect((await engine.runs('s')).map((run) => run.status)).toEqual(['cancelled']);
    await world.shutdownAll();
  });

  it('a child that continues as new settles its parent with the last run’s result', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(parent, undefined, { id: 'p' });
    await world.idle();
    expect(await handle.result()).toBe(5);
    expect((await engine.runs('child')).map((run) => run.status)).toEqual([
      'completed',
      'continued-as-new',
      'continued-as-new',
    ]);
    expect(await engine.describe('child')).toMatchObject({ parentId: 'p', continuedFrom: 2 });
    await world.shutdownAll();
  });

  it('each run of a chain names its default child ids by its run: an abandoned child never blocks the next', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(spawner, { left: 2 }, { id: 'sp' });
    await world.idle();
    expect(await handle.result()).toBe('spawned');
    const children = await engine.list({ workflowType: 'forever' });
    expect(children.items.map((item) => item.workflowId).sort()).toEqual([
      'sp.child-0',
      'sp.r2.child-0',
      'sp.r3.child-0',
    ]);
    await world.shutdownAll();
  });

  it('an input too large to store fails the workflow, saying so; no next run', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(oversized, undefined, { id: 'o' });
    await world.idle();
    await world.advance(10);
    await world.idle();
    const failure = await handle.result().then(
      () => null,
      (error: unknown) => error,
    );
    expect((failure as WorkflowFailedError).failure).toMatchObject({ name: 'PayloadTooLargeError' });
    expect((failure as WorkflowFailedError).failure.message).toContain(
      "Input of the next run of workflow 'o' (ctx.continueAsNew)",
    );
    expect((await engine.runs('o')).map((run) => run.status)).toEqual(['failed']);
    await world.shutdownAll();
  });
});
