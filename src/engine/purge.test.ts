/**
 * Purge and retention: a finished workflow (or one earlier run) is deleted whole, a running one is refused
 * untouched, an interrupted purge is finished by the next sweep and blocks a restart of the id until then,
 * the retention sweep purges only runs older than their type's retention, and a late owner racing a purge
 * resurrects nothing. Over MemoryStorage, PostgreSQL and IndexedDB (fake-indexeddb), under `none` and
 * `workflow-lease`. Retention's bounds are reached: a sweep purges at most `sweepMaxPurges` runs and reads at
 * most `sweepScanKeys` index entries (later sweeps finish the rest), and a run with more keys than
 * `purgeBatchKeys` is deleted in several batches of at most that many.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { CommitGroup, Condition, Operation, ScanOptions, Storage } from '../storage/types';
import { fencing, TestWorld, type TestEngine } from './engine.test-support';
import { indexedDbStore, testStores } from './stores.test-support';
import { InvalidWorkflowStateError, WorkflowNotFoundError } from './errors';
import { keys } from './keys';
import type { EngineOptions } from './options';
import { purgeBatchKeys, sweepMaxPurges, sweepScanKeys } from './purge';
import { terminalStatuses } from './vocabulary';
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

const isTombstone = (value: string) => value.startsWith('{"purged":');

/**
 * Every key of the store that belongs to workflow `id`, but for what a purge keeps: its epoch and the
 * tombstones of the log records that opened an epoch (`tombstonesOf`).
 */
async function keysOf(storage: Storage, id: string): Promise<string[]> {
  return (await storage.scan(''))
    .filter(
      ({ key, value }) =>
        key.includes(`:${id}`) && !key.startsWith(keys.ownerEpoch(id)) && !isTombstone(value),
    )
    .map(({ key }) => key);
}

/** The tombstones purges left in `id`'s logs, as `key=value`. */
async function tombstonesOf(storage: Storage, id: string): Promise<string[]> {
  return (await storage.scan(keys.logsOf(id)))
    .filter(({ value }) => isTombstone(value))
    .map(({ key, value }) => `${key}=${value}`);
}

async function everyKey(storage: Storage): Promise<string[]> {
  return (await storage.scan('')).map(({ key, value }) => `${key}=${value}`);
}

/** Many steps: its run has more keys than one purge batch deletes. */
const chatty = defineWorkflow({
  name: 'chatty',
  version: 1,
  *run(ctx, input: { steps: number }) {
    let sum = 0;
    for (let step = 0; step < input.steps; step++) sum += yield* ctx.activity('step', () => step);
    return sum;
  },
});

/** What a store was asked: every key a write deleted, batch by batch, and every scan's prefix and size. */
type StoreLog = { deletes: string[][]; scans: { prefix: string; options?: ScanOptions; found: number }[] };

/** `storage`, recording into `log` (each call goes to the store itself). */
function recorded(storage: Storage, log: StoreLog): Storage {
  const deletes = (operations: readonly Operation[]) => {
    const deleted = operations.flatMap((operation) => (operation.type === 'delete' ? [operation.key] : []));
    if (deleted.length > 0) log.deletes.push(deleted);
  };
  const calls: Partial<Storage> = {
    batch: (operations: readonly Operation[]) => {
      deletes(operations);
      return storage.batch(operations);
    },
    conditionalBatch: (conditions: readonly Condition[], operations: readonly Operation[]) => {
      deletes(operations);
      return storage.conditionalBatch(conditions, operations);
    },
    scan: async (prefix: string, options?: ScanOptions) => {
      const found = await storage.scan(prefix, options);
      log.scans.push({ prefix, ...(options ? { options } : {}), found: found.length });
      return found;
    },
  };
  if (storage.commitGroups) {
    const commitGroups = storage.commitGroups.bind(storage);
    calls.commitGroups = (groups: readonly CommitGroup[]) => {
      for (const group of groups) deletes(group.operations);
      return commitGroups(groups);
    };
  }
  return new Proxy(storage, {
    get(target, property) {
      if (Object.hasOwn(calls, property)) return calls[property as keyof Storage];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

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

    it(`${mode}: purges every run of a finished workflow; its id starts again ${mode === 'workflow-lease' ? 'after its old runs' : 'at run 1'}`, async () => {
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
      // With per-workflow claims, each run's first record (it opened the run's epoch) stays as a tombstone,
      // and a new run of the id continues the numbering past it: no late write of an old run can reach it.
      expect(await tombstonesOf(world.storage, 'o-1')).toEqual(
        mode === 'workflow-lease'
          ? [`${keys.timeline('o-1', 1, 1)}={"purged":1}`, `${keys.timeline('o-1', 2, 1)}={"purged":2}`]
          : [],
      );

      const again = await engine.start(order, { n: 9 }, { id: 'o-1' });
      expect(again.run).toBe(mode === 'workflow-lease' ? 3 : 1);
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
      expect((await world.storage.scan(keys.timelinePrefix('o-2', 1))).map(({ value }) => value)).toEqual(
        mode === 'workflow-lease' ? ['{"purged":1}'] : [],
      );
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
      expect((await engine.start(order, { n: 2 }, { id: 'o-3' })).run).toBe(
        mode === 'workflow-lease' ? 2 : 1,
      );
      await world.shutdownAll();
    });

    it(`${mode}: a purge that stopped after deleting its logs is finished again without touching what it kept`, async () => {
      const { world, engine } = await setup();
      await finishOrder(world, engine, 'o-4', 1);
      await engine.purge('o-4');
      const kept = await tombstonesOf(world.storage, 'o-4');
      expect(kept).toHaveLength(mode === 'workflow-lease' ? 1 : 0);
      // As if the engine had stopped right before deleting the marker: the next sweep goes over the logs again.
      await world.storage.batch([
        { type: 'put', key: keys.purge('o-4'), value: JSON.stringify({ v: 1, runs: [1], all: true }) },
      ]);
      await engine.runMaintenance();
      expect(await world.storage.get(keys.purge('o-4'))).toBeNull();
      expect(await tombstonesOf(world.storage, 'o-4')).toEqual(kept);
      expect(await keysOf(world.storage, 'o-4')).toEqual([]);
      expect((await engine.start(order, { n: 2 }, { id: 'o-4' })).run).toBe(
        mode === 'workflow-lease' ? 2 : 1,
      );
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

  describe('retention bounds', () => {
    async function boundedWorld(
      options: Partial<EngineOptions> = {},
    ): Promise<{ world: TestWorld; engine: TestEngine; log: StoreLog }> {
      const log: StoreLog = { deletes: [], scans: [] };
      const world = new TestWorld({ storage: recorded(await store.open(), log) });
      const engine = await world.engine([order, shortLived, plain, chatty], options);
      return { world, engine, log };
    }

    async function ids(engine: TestEngine, idPrefix: string): Promise<string[]> {
      return (await engine.list({ idPrefix, limit: 1000 })).items.map(({ workflowId }) => workflowId).sort();
    }

    it(`a sweep purges at most ${sweepMaxPurges} expired runs; the next sweeps purge the rest`, async () => {
      const { world, engine } = await boundedWorld();
      const count = sweepMaxPurges + 12;
      for (let n = 0; n < count; n++)
        await engine.start(shortLived, { n }, { id: `s-${String(n).padStart(3, '0')}` });
      await world.idle();
      expect(await ids(engine, 's-')).toHaveLength(count);

      await world.clock.advance(hour + 1);
      await engine.runMaintenance();
      expect(engine.metrics().runsPurged).toBe(sweepMaxPurges);
      expect(await ids(engine, 's-')).toHaveLength(count - sweepMaxPurges);
      // The next sweep goes on where this one stopped, without waiting for the next round.
      await engine.runMaintenance();
      expect(engine.metrics().runsPurged).toBe(count);
      expect(await ids(engine, 's-')).toEqual([]);
      expect(await world.storage.scan('wf-tl:')).toEqual([]);
      expect(engine.warnings).toEqual([]);
      await world.shutdownAll();
    });

    it(`a run with more keys than one purge batch (${purgeBatchKeys}) is purged across batches, nothing else touched`, async () => {
      const { world, engine, log } = await boundedWorld();
      const first = await engine.start(chatty, { steps: purgeBatchKeys }, { id: 'big' });
      await world.idle();
      await first.result();
      const runOne = (await world.storage.scan(keys.timelinePrefix('big', 1))).length;
      expect(runOne).toBeGreaterThan(purgeBatchKeys);
      const second = await engine.start(chatty, { steps: 3 }, { id: 'big' });
      expect(second.run).toBe(2);
      await engine.start(chatty, { steps: 3 }, { id: 'other' });
      await world.idle();
      const before = (await everyKey(world.storage)).filter(
        (entry) => !entry.startsWith('wf-tl:big:000001:'),
      );

      log.deletes.length = 0;
      const report = await engine.purge('big', { run: 1 });
      expect(report.runs).toEqual([1]);
      const batches = log.deletes.filter((batch) =>
        batch.every((key) => key.startsWith('wf-tl:big:000001:')),
      );
      expect(batches.length).toBeGreaterThan(1);
      expect(Math.max(...batches.map((batch) => batch.length))).toBe(purgeBatchKeys);
      expect(batches.flat()).toHaveLength(runOne);
      // Every delete was of run 1 of 'big' (its log, its run entry) or the purge marker.
      expect(
        log.deletes
          .flat()
          .filter((key) => !key.startsWith('wf-tl:big:000001:') && !key.startsWith('wf-hist:big:000001:'))
          .sort(),
      ).toEqual([keys.purge('big'), keys.pastRun('big', 1)].sort());
      expect(await world.storage.scan(keys.timelinePrefix('big', 1))).toEqual([]);
      expect(await world.storage.scan(keys.pastRun('big', 1))).toEqual([]);
      expect(await world.storage.get(keys.purge('big'))).toBeNull();
      // Run 2 of 'big' and the workflow 'other' are as they were.
      expect(await everyKey(world.storage)).toEqual(
        before.filter((entry) => !entry.startsWith(`${keys.pastRun('big', 1)}=`)),
      );
      expect((await engine.runs('big')).map(({ run }) => run)).toEqual([2]);
      expect(await second.result()).toBe(3);
      await world.shutdownAll();
    });

    it(`a sweep reads at most ${sweepScanKeys} index entries; the next sweeps go on from there`, async () => {
      // No engine default: 'plain' is kept forever, its index entries are read and passed over.
      const { world, engine, log } = await boundedWorld();
      const kept = sweepScanKeys + 30;
      for (let n = 0; n < kept; n++)
        await engine.start(plain, { n }, { id: `k-${String(n).padStart(4, '0')}` });
      // Expired runs whose index entries sort after all the kept ones.
      for (let n = 0; n < 3; n++) await engine.start(shortLived, { n }, { id: `z-${n}` });
      await world.idle();
      await world.clock.advance(hour + 1);
      const sweepPrefixes = [
        ...terminalStatuses.map((status) => keys.statusIndexPrefix(status)),
        keys.pastRunsPrefix,
      ];
      const sweepRead = () =>
        log.scans
          .filter(({ prefix, options }) => sweepPrefixes.includes(prefix) && options?.limit === 100)
          .reduce((sum, { found }) => sum + found, 0);

      log.scans.length = 0;
      await engine.runMaintenance();
      expect(sweepRead()).toBe(sweepScanKeys);
      expect(await ids(engine, 'z-')).toEqual(['z-0', 'z-1', 'z-2']);
      expect(engine.metrics().runsPurged).toBe(0);

      log.scans.length = 0;
      await engine.runMaintenance();
      expect(sweepRead()).toBeLessThanOrEqual(sweepScanKeys);
      expect(await ids(engine, 'z-')).toEqual([]);
      expect(engine.metrics().runsPurged).toBe(3);
      expect(await ids(engine, 'k-')).toHaveLength(kept);
      expect(engine.warnings).toEqual([]);
      await world.shutdownAll();
    });
  });
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
    // Only B's notice to A of its takeover is left, for A to read when it thaws (ownership/notices.ts)
    expect(await keysOf(world.storage, 'g')).toEqual([keys.ownerNotice(a.id, 'g')]);

    world.thaw(a);
    lateRelease();
    await world.advance(3000, { stepMs: 1000 });
    // The late result reached A and was turned away: its wake discarded, its write fenced out, or refused by
    // A itself once the notice had told it it lost the workflow.
    expect(a.metrics().wakesDiscarded + a.metrics().writesFencedOut + a.metrics().claimsLost).toBeGreaterThan(
      0,
    );
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
        expect((await b.start(gated, undefined, { id: 'g' })).run).toBe(2);
        await world.maintain([b]);
      }
      // What opened epochs 1 (the start) and 2 (B's takeover, at the key A's commit names) stays.
      const tombstones = [
        `${keys.timeline('g', 1, 1)}={"purged":1}`,
        `${keys.commitRecord('g', 1, 3, 1)}={"purged":2}`,
      ];
      expect(await tombstonesOf(world.storage, 'g')).toEqual(tombstones);
      const before = await keysOf(world.storage, 'g');
      world.thaw(a); // A's hung commit now meets the store as it is
      await world.advance(3000, { stepMs: 1000, engines: [b] });
      // Refused by the takeover's tombstone (its anchor), classified by the epoch (kept through the purge),
      // and recorded as a refused write.
      expect(await tombstonesOf(world.storage, 'g')).toEqual(tombstones);
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
