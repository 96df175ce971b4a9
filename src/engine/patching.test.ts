/**
 * Patching (`ctx.patched`, `ctx.deprecatePatch`): changing the code of running workflows without a new
 * definition version. A run recorded before the patch keeps the old branch on replay; a run that reaches the
 * patch live takes the new one, and its replays (a handoff, a crash) do too; once the old runs are gone the
 * patch is deprecated, and runs recorded with it still replay; code that drops a patch such runs took fails
 * them with a NonDeterminismError that names the patch. Over MemoryStorage, PostgreSQL and IndexedDB
 * (fake-indexeddb); every change of code is a deploy — the engine running the old code shuts down (or
 * crashes) and an engine with the new code takes its workflows over.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fencing, TestWorld } from './engine.test-support';
import { WorkflowFailedError } from './errors';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow, type WorkflowContext } from './workflow';

/** Which activities ran, in order. */
let ran: string[] = [];

const step = (ctx: WorkflowContext, name: string) =>
  ctx.activity(name, () => {
    ran.push(name);
    return name;
  });

/** The code before the patch: reserve (#0), charge (#1), wait for `ship` (#2), notify (#3). */
const before = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx) {
    yield* step(ctx, 'reserve');
    const charged = yield* step(ctx, 'charge');
    yield* ctx.waitForSignal('ship');
    yield* step(ctx, 'notify');
    return charged;
  },
});

/** The same version with the patch: charging with tax instead. */
const patched = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx) {
    yield* step(ctx, 'reserve');
    const charged = (yield* ctx.patched('charge-with-tax'))
      ? yield* step(ctx, 'charge-with-tax')
      : yield* step(ctx, 'charge');
    yield* ctx.waitForSignal('ship');
    yield* step(ctx, 'notify');
    return charged;
  },
});

/** The patch deprecated: the old branch is gone, histories recorded with the patch still replay. */
const deprecated = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx) {
    yield* step(ctx, 'reserve');
    yield* ctx.deprecatePatch('charge-with-tax');
    const charged = yield* step(ctx, 'charge-with-tax');
    yield* ctx.waitForSignal('ship');
    yield* step(ctx, 'notify');
    return charged;
  },
});

/** The patch dropped too early: a run that took it cannot replay. */
const dropped = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx) {
    yield* step(ctx, 'reserve');
    const charged = yield* step(ctx, 'charge-with-tax');
    yield* ctx.waitForSignal('ship');
    yield* step(ctx, 'notify');
    return charged;
  },
});

const badPatch = defineWorkflow({
  name: 'bad-patch',
  version: 1,
  *run(ctx) {
    return yield* ctx.patched('');
  },
});

const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

describe.each(stores)('patching on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  async function setup() {
    ran = [];
    const world = new TestWorld({ storage: await store.open() });
    return world;
  }

  it('a run recorded before the patch keeps the old branch; a new run takes the new one', async () => {
    const world = await setup();
    const old = await world.engine([before], fencing);
    await old.start(before, undefined, { id: 'old' });
    await world.idle();
    expect(ran).toEqual(['reserve', 'charge']);
    await old.shutdown();

    // The deploy: an engine with the patched code takes 'old' over and replays it past the patch point.
    const engine = await world.engine([patched], fencing);
    await world.idle();
    await engine.start(patched, undefined, { id: 'new' });
    await world.idle();
    await engine.signal('old', 'ship');
    await engine.signal('new', 'ship');
    await world.idle();
    expect(await engine.handle('old').result()).toBe('charge');
    expect(await engine.handle('new').result()).toBe('charge-with-tax');
    // Nothing ran twice: 'old' replayed its charge; 'new' charged with tax once.
    expect([...ran].sort()).toEqual(['charge', 'charge-with-tax', 'notify', 'notify', 'reserve', 'reserve']);
    // The patch is an operation of the new run's history: reserve #0, the patch #1, its charge #2.
    expect(await engine.operationOutcome('new', { pos: 1 })).toMatchObject({
      kind: 'patch',
      name: 'charge-with-tax',
      ok: true,
      value: true,
    });
    expect((await engine.describe('old')).position).toBe(4);
    expect((await engine.describe('new')).position).toBe(5);

    // A fork of 'old' from its charge (#1) runs on from there live, so it takes the patch.
    ran = [];
    const fork = await engine.fork('old', { fromPosition: 1 });
    await world.idle();
    await fork.signal('ship');
    await world.idle();
    expect(await fork.result()).toBe('charge-with-tax');
    expect(ran).toEqual(['charge-with-tax', 'notify']);
    await world.shutdownAll();
  });

  it('a run that reaches the patch live takes it, and a handoff after it replays the new branch', async () => {
    const world = await setup();
    const engine = await world.engine([patched], fencing);
    await engine.start(patched, undefined, { id: 'live' });
    await world.idle();
    expect(ran).toEqual(['reserve', 'charge-with-tax']);
    world.crash(engine);
    const next = await world.engine([patched], fencing);
    await world.advance(60_000, { stepMs: 1_000 });
    expect(await next.claimHolder('live')).toMatchObject({ engineId: next.id });
    await next.signal('live', 'ship');
    await world.idle();
    expect(await next.handle('live').result()).toBe('charge-with-tax');
    expect(ran).toEqual(['reserve', 'charge-with-tax', 'notify']);
    await world.shutdownAll();
  });

  it('a deprecated patch replays the runs that took it; new runs record no marker', async () => {
    const world = await setup();
    const engine = await world.engine([patched], fencing);
    await engine.start(patched, undefined, { id: 'took-it' });
    await world.idle();
    await engine.shutdown();

    const later = await world.engine([deprecated], fencing);
    await world.idle();
    await later.start(deprecated, undefined, { id: 'after' });
    await world.idle();
    await later.signal('took-it', 'ship');
    await later.signal('after', 'ship');
    await world.idle();
    expect(await later.handle('took-it').result()).toBe('charge-with-tax');
    expect(await later.handle('after').result()).toBe('charge-with-tax');
    expect(ran.filter((name) => name === 'charge-with-tax')).toHaveLength(2);
    expect((await later.describe('took-it')).position).toBe(5);
    expect((await later.describe('after')).position).toBe(4);
    expect(await later.operationOutcome('after', { pos: 1 })).toMatchObject({
      kind: 'activity',
      name: 'charge-with-tax',
    });
    await world.shutdownAll();
  });

  it('code that drops a patch a run took fails that run with an error naming the patch', async () => {
    const world = await setup();
    const engine = await world.engine([patched], fencing);
    await engine.start(patched, undefined, { id: 'took-it' });
    await world.idle();
    await engine.shutdown();

    const broken = await world.engine([dropped], fencing);
    await world.idle();
    const failure = await broken
      .handle('took-it')
      .result()
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).failure).toMatchObject({ name: 'NonDeterminismError' });
    expect((failure as WorkflowFailedError).failure.message).toContain(
      "at operation #1 the history recorded patch 'charge-with-tax' (this run took it: keep ctx.patched('charge-with-tax'), or ctx.deprecatePatch('charge-with-tax'), where it was until no such run is left), but the code now yields activity 'charge-with-tax'",
    );
    await world.shutdownAll();
  });

  it('a patch id must be a name: an empty one fails the workflow, saying so', async () => {
    const world = await setup();
    const engine = await world.engine([badPatch], fencing);
    const handle = await engine.start(badPatch, undefined, { id: 'bad' });
    await world.idle();
    await expect(handle.result()).rejects.toThrow(/ctx.patched: patch name must be a non-empty string/);
    await world.shutdownAll();
  });
});
