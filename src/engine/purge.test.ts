/**
 * Purge and retention: a finished workflow (or one earlier run) is deleted whole, a running one is refused
 * untouched, an interrupted purge is finished by the next sweep and blocks a restart of the id until then,
 * the retention sweep purges only runs older than their type's retention, and a late owner racing a purge
 * resurrects nothing. Over MemoryStorage and PostgreSQL, under `none` and `workflow-lease`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Storage } from '../storage/types';
import { fencing, TestWorld, type TestEngine } from './engine.test-support';
import { testStores } from './stores.test-support';
import { InvalidWorkflowStateError, WorkflowNotFoundError } from './errors';
import { keys } from './keys';
import type { EngineOptions } from './options';
import { defineWorkflow } from './workflow';

const hour = 3_600_000;

const order = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx, input: { n: number }) {
    yield* ctx.waitForSignal('finish');
    return { n: input.n };
  },
});

/** Kept one hour after it ends. */
const shortLived = defineWorkflow({
  name: 'short-lived',
  version: 1,
  retentionMs: hour,
  *run(_ctx, input: { n: number }) {
    return input.n;
  },
});

/** No retention of its own: the engine's default applies. */
const plain = defineWorkflow({
  name: 'plain',
  version: 1,
  *run(_ctx, input: { n: number }) {
    return input.n;
  },
});

/** Every key of the store that belongs to workflow `id` (its epoch aside: it is never deleted). */
async function keysOf(storage: Storage, id: string): Promise<string[]> {
  return (await storage.scan(''))
    .map(({ key }) => key)
    .filter((key) => key.includes(`:${id}`) && !key.startsWith(keys.ownerEpoch(id)));
}

async function everyKey(storage: Storage): Promise<string[]> {
  return (await storage.scan('')).map(({ key, value }) => `${key}=${value}`);
}

const stores = testStores({ maxConnections: 4 });

describe.each(stores)('purge and retention on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  for (const mode of ['none', 'workflow-lease'] as const) {
    async function setup(
      options: Partial<EngineOptions> = {},
    ): Promise<{ world: TestWorld; engine: TestEngine }> {
      const world = new TestWorld({ storage: await store.open() });
      const engine = await world.engine([order, shortLived, plain], {
        ...(mode === 'none' ? {} : fencing),
        ...options,
      });
      return { world, engine };
    }

    async function finishOrder(world: TestWorld, engine: TestEngine, id: string, n: number): Promise<void> {
      const handle = await engine.start(order, { n }, { id });
      await world.idle();
      await handle.signal('finish');
      await handle.result();
      await world.idle();
    }

    it(`${mode}: purges every run of a finished workflow; its id starts afresh at run 1`, async () => {
      const { world, engine } = await setup();
      await finishOrder(world, engine, 'o-1', 1);
      await finishOrder(world, engine, 'o-1', 2);
      await finishOrder(world, engine, 'keep', 3);
      expect((await keysOf(world.storage, 'o-1')).length).toBeGreaterThan(4);
      const keep = await keysOf(world.storage, 'keep');

      const report = await engine.purge('o-1');
      expect(report.runs).toEqual([1, 2]);
      expect(report.keysDeleted).toBeGreaterThan(4);
      expect(await keysOf(world.storage, 'o-1')).toEqual([]);
      expect(await keysOf(world.storage, 'keep')).toEqual(keep);
      await expect(engine.describe('o-1')).rejects.toBeInstanceOf(WorkflowNotFoundError);
      await expect(engine.purge('o-1')).rejects.toBeInstanceOf(WorkflowNotFoundError);
      expect((await engine.list({ idPrefix: 'o-' })).items).toEqual([]);
      expect(engine.metrics().runsPurged).toBe(2);

      const again = await engine.start(order, { n: 9 }, { id: 'o-1' });
      expect(again.run).toBe(1);
      await world.idle();
      const kinds = (await engine.timeline('o-1')).map((entry) => entry.kind);
      expect(kinds.filter((kind) => kind === 'started')).toHaveLength(1);
      expect(kinds).not.toContain('completed');
      await world.shutdownAll();
    });

    it(`${mode}: a running workflow is refused and left untouched; an earlier run is purged alone`, async () => {
      const { world, engine } = await setup();
      await finishOrder(world, engine, 'o-2', 1);
      const second = await engine.start(order, { n: 2 }, { id: 'o-2' });
      await world.idle();
      const before = await everyKey(world.storage);
      const refused = engine.purge('o-2');
      await expect(refused).rejects.toBeInstanceOf(InvalidWorkflowStateError);
      await expect(engine.purge('o-2')).rejects.toThrow(
        /Cannot purge workflow 'o-2': it is running\. .*cancel or terminate/,
      );
      expect(await everyKey(world.storage)).toEqual(before);

      expect((await engine.purge('o-2', { run: 1 })).runs).toEqual([1]);
      await expect(engine.describe('o-2', { run: 1 })).rejects.toBeInstanceOf(WorkflowNotFoundError);
      expect((await engine.runs('o-2')).map(({ run }) => run)).toEqual([2]);
      expect((await world.storage.scan(keys.timelinePrefix('o-2', 1))).length).toBe(0);
      expect((await world.storage.scan(keys.timelinePrefix('o-2', 2))).length).toBeGreaterThan(0);
      // The latest run goes on undisturbed.
      await second.signal('finish');
      expect(await second.result()).toEqual({ n: 2 });
      await world.shutdownAll();
    });

    it(`${mode}: an interrupted purge blocks a restart of the id until the next sweep finishes it`, async () => {
      const { world, engine } = await setup();
      await finishOrder(world, engine, 'o-3', 1);
      // What the first step of a purge commits, as if its engine stopped right after it.
      const recordRaw = (await world.storage.get(keys.record('o-3')))!;
      await world.storage.conditionalBatch(
        [{ key: keys.record('o-3'), expected: recordRaw }],
        [
          { type: 'delete', key: keys.record('o-3') },
          { type: 'delete', key: keys.checkpoint('o-3') },
          { type: 'delete', key: keys.statusIndex('completed', 'o-3') },
          { type: 'put', key: keys.purge('o-3'), value: JSON.stringify({ v: 1, runs: [1], all: true }) },
        ],
      );
      expect((await world.storage.scan(keys.timelinePrefix('o-3', 1))).length).toBeGreaterThan(0);
      await expect(engine.start(order, { n: 2 }, { id: 'o-3' })).rejects.toThrow(
        /Cannot start workflow 'o-3': it is being purged/,
      );
      await engine.runMaintenance();
      expect(await keysOf(world.storage, 'o-3')).toEqual([]);
      expect((await engine.start(order, { n: 2 }, { id: 'o-3' })).run).toBe(1);
      await world.shutdownAll();
    });

    it(`${mode}: retention purges only finished runs older than their type's retention, in bounded passes`, async () => {
      const { world, engine } = await setup({ retentionMs: 24 * hour });
      for (let n = 0; n < 3; n++) await engine.start(shortLived, { n }, { id: `s-${n}` });
      await engine.start(plain, { n: 0 }, { id: 'p-0' });
      const running = await engine.start(order, { n: 0 }, { id: 'r-0' });
      await world.idle();
      await engine.runMaintenance();
      expect((await engine.list()).items).toHaveLength(5);

      await world.clock.advance(hour + 1);
      await engine.runMaintenance();
      expect((await engine.list()).items.map(({ workflowId }) => workflowId).sort()).toEqual(['p-0', 'r-0']);
      expect(engine.metrics().runsPurged).toBe(3);

      // The engine default (24 h) applies to a type without its own; a running workflow is never purged.
      await world.clock.advance(24 * hour);
      await engine.runMaintenance();
      expect((await engine.list()).items.map(({ workflowId }) => workflowId)).toEqual(['r-0']);
      await running.signal('finish');
      await running.result();
      await world.shutdownAll();
    });

    it(`${mode}: an engine without a type's definition leaves its runs alone`, async () => {
      const { world, engine } = await setup();
      await engine.start(shortLived, { n: 1 }, { id: 's-1' });
      await world.idle();
      const stranger = await world.engine([order], { ...(mode === 'none' ? {} : fencing), retentionMs: 1 });
      await world.clock.advance(2 * hour);
      await stranger.runMaintenance();
      expect((await stranger.list()).items.map(({ workflowId }) => workflowId)).toEqual(['s-1']);
      await engine.runMaintenance();
      expect((await stranger.list()).items).toEqual([]);
      await world.shutdownAll();
    });
  }
});

describe('a purge racing a late owner', () => {
  it('a frozen owner that wakes after its workflow was taken over, finished and purged writes nothing back', async () => {
    const world = new TestWorld();
    let release: (() => void) | null = null;
    const gated = defineWorkflow({
      name: 'gated',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity(
          'slow',
          () => new Promise<string>((resolve) => (release = () => resolve('late'))),
        );
      },
    });
    const a = await world.engine([gated], fencing);
    await a.start(gated, undefined, { id: 'g' });
    await world.maintain([a]);
    expect(release).not.toBeNull();
    const lateRelease = release!;
    world.freeze(a);
    release = null;
    const b = await world.engine([gated], fencing);
    await world.advance(8000, { stepMs: 1000, engines: [b] });
    expect((await b.describe('g')).owner?.engineId).toBe(b.id);
    release!();
    expect(await b.handle('g').result()).toBe('late');
    await world.maintain([b]);
    await b.purge('g');
    expect(await keysOf(world.storage, 'g')).toEqual([]);

    world.thaw(a);
    lateRelease();
    await world.advance(3000, { stepMs: 1000 });
    // The late result reached A and was turned away (its wake discarded or its write fenced out).
    expect(a.metrics().wakesDiscarded + a.metrics().writesFencedOut).toBeGreaterThan(0);
    expect(a.metrics().operationsCommitted).toBe(0);
    expect(await keysOf(world.storage, 'g')).toEqual([]);
    await expect(b.describe('g')).rejects.toBeInstanceOf(WorkflowNotFoundError);
    await world.shutdownAll();
  });

  for (const restart of [false, true])
    it(`a frozen owner's commit already in flight lands on nothing after a takeover, finish and purge${restart ? ' and a restart of the id' : ''}`, async () => {
      const world = new TestWorld();
      const gates: (() => void)[] = [];
      const gated = defineWorkflow({
        name: 'gated',
        version: 1,
        *run(ctx) {
          return yield* ctx.activity(
            'slow',
            () => new Promise<string>((resolve) => gates.push(() => resolve('done'))),
          );
        },
      });
      const a = await world.engine([gated], fencing);
      await a.start(gated, undefined, { id: 'g' });
      await world.maintain([a]);
      expect(gates).toHaveLength(1);
      // A freezes with its activity about to finish: the activity's commit is issued, and hangs.
      world.freeze(a);
      gates[0]!();
      await world.clock.advance(0);
      const b = await world.engine([gated], fencing);
      await world.advance(8000, { stepMs: 1000, engines: [b] });
      expect((await b.describe('g')).owner?.engineId).toBe(b.id);
      gates[1]!();
      expect(await b.handle('g').result()).toBe('done');
      await world.maintain([b]);
      await b.purge('g');
      if (restart) {
        await b.start(gated, undefined, { id: 'g' });
        await world.maintain([b]);
      }
      const before = await keysOf(world.storage, 'g');
      world.thaw(a); // A's hung commit now meets the store as it is
      await world.advance(3000, { stepMs: 1000, engines: [b] });
      // Refused by the epoch (kept through the purge), and recorded as a refused write.
      const rejections = await world.storage.scan(keys.fenceRejectionPrefix('g'));
      expect(rejections.map(({ key }) => key)).toEqual([expect.stringContaining(a.id)]);
      const after = await keysOf(world.storage, 'g');
      expect(after.filter((key) => !key.startsWith(keys.fenceRejectionsPrefix))).toEqual(before);
      expect(a.metrics().operationsCommitted).toBe(0);
      if (restart) {
        const timeline = await b.timeline('g');
        expect(timeline.filter((entry) => entry.engineId === a.id)).toEqual([]);
      }
      await world.shutdownAll();
    });
});
