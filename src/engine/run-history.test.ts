/**
 * Run history: starting a finished workflow id again keeps the finished run (record, checkpoint, timeline)
 * readable under its run number; handles pinned to a run read that run; `idReuse` decides whether an id may
 * be reused, and a refused start writes nothing. Over MemoryStorage and PostgreSQL, with and without claims.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Storage } from '../storage/types';
import { fencing, TestWorld, type TestEngine } from './engine.test-support';
import { testStores } from './stores.test-support';
import {
  InvalidArgumentError,
  InvalidOptionsError,
  WorkflowAlreadyExistsError,
  WorkflowFailedError,
  WorkflowIdReuseError,
  WorkflowNotFoundError,
} from './errors';
import { defineWorkflow } from './workflow';

/** Waits for `finish`, then returns what it was started with and what the signal carried. */
const order = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx, input: { n: number }) {
    const payload = yield* ctx.waitForSignal<{ ok: boolean }>('finish');
    if (!payload?.ok) throw new Error(`order ${input.n} refused`);
    return { n: input.n };
  },
});

const refund = defineWorkflow({
  name: 'refund',
  version: 1,
  *run(_ctx, input: { n: number }) {
    return { refunded: input.n };
  },
});

async function everyKey(storage: Storage): Promise<string[]> {
  return (await storage.scan('')).map(({ key, value }) => `${key}=${value}`);
}

const stores = testStores({ maxConnections: 4 });

describe.each(stores)('run history on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  for (const mode of ['none', 'workflow-lease'] as const) {
    async function setup(): Promise<{ world: TestWorld; engine: TestEngine }> {
      const world = new TestWorld({ storage: await store.open() });
      const engine = await world.engine([order, refund], mode === 'none' ? {} : fencing);
      return { world, engine };
    }

    it(`${mode}: a finished id started again keeps run 1 readable: describe, timeline, result, runs, list`, async () => {
      const { world, engine } = await setup();
      const first = await engine.start(order, { n: 1 }, { id: 'order-7' });
      expect(first.run).toBe(1);
      await world.idle();
      await first.signal('finish', { ok: true });
      expect(await first.result()).toEqual({ n: 1 });

      const second = await engine.start(order, { n: 2 }, { id: 'order-7' });
      expect(second.run).toBe(2);
      await world.idle();
      const latest = await engine.describe('order-7');
      expect(latest).toMatchObject({ run: 2, status: 'running', input: { n: 2 } });
      const past = await engine.describe('order-7', { run: 1 });
      expect(past).toMatchObject({ run: 1, status: 'completed', input: { n: 1 }, result: { n: 1 } });
      expect(past.owner).toBeNull();
      // The pinned handle of run 1 still reads run 1; an unpinned handle reads the latest run.
      expect(await first.result()).toEqual({ n: 1 });
      expect((await first.describe()).run).toBe(1);
      expect((await engine.handle('order-7').describe()).run).toBe(2);

      const pastTimeline = await engine.timeline('order-7', { run: 1 });
      expect(pastTimeline.map((entry) => entry.kind)).toContain('completed');
      expect(pastTimeline.map((entry) => entry.kind)).toContain('signal-received');
      const latestTimeline = await engine.timeline('order-7');
      expect(latestTimeline.map((entry) => entry.kind)).not.toContain('completed');
      expect(await first.timeline()).toEqual(pastTimeline);

      expect(
        (await engine.runs('order-7')).map(({ run, status, latest }) => ({ run, status, latest })),
      ).toEqual([
        { run: 2, status: 'running', latest: true },
        { run: 1, status: 'completed', latest: false },
      ]);
      const listed = await engine.list({ allRuns: true, idPrefix: 'order-7' });
      expect(listed.items.map(({ run, status }) => `${run}:${status}`)).toEqual(['2:running', '1:completed']);
      expect((await engine.list({ idPrefix: 'order-7' })).items.map(({ run }) => run)).toEqual([2]);
      // Filters apply to every run.
      const completed = await engine.list({ allRuns: true, status: 'completed' });
      expect(completed.items.map(({ workflowId, run }) => `${workflowId}#${run}`)).toEqual(['order-7#1']);

      // The second run finishes on its own: its pinned handle reads it, run 1 is unchanged.
      await second.signal('finish', { ok: false });
      await expect(second.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      expect(await first.result()).toEqual({ n: 1 });
      await world.shutdownAll();
    });

    it(`${mode}: a waiter pinned to a run gets that run's outcome, even when the id is started again at once`, async () => {
      const { world, engine } = await setup();
      const first = await engine.start(order, { n: 1 }, { id: 'order-8' });
      await world.idle();
      const waiting = first.result();
      await first.signal('finish', { ok: true });
      await world.idle();
      const third = engine.start(order, { n: 3 }, { id: 'order-8' });
      await expect(waiting).resolves.toEqual({ n: 1 });
      expect((await third).run).toBe(2);
      await world.shutdownAll();
    });

    it(`${mode}: reuse rules refuse with typed errors and write nothing`, async () => {
      const { world, engine } = await setup();
      const running = await engine.start(order, { n: 1 }, { id: 'order-9' });
      await world.idle();
      let before = await everyKey(world.storage);
      await expect(engine.start(order, { n: 2 }, { id: 'order-9' })).rejects.toBeInstanceOf(
        WorkflowAlreadyExistsError,
      );
      expect(await everyKey(world.storage)).toEqual(before);

      await running.signal('finish', { ok: true });
      await running.result();
      await world.idle();
      before = await everyKey(world.storage);
      await expect(engine.start(order, { n: 2 }, { id: 'order-9', idReuse: 'never' })).rejects.toBeInstanceOf(
        WorkflowIdReuseError,
      );
      const otherType = engine.start(refund, { n: 2 }, { id: 'order-9' });
      await expect(otherType).rejects.toBeInstanceOf(WorkflowIdReuseError);
      await expect(otherType).rejects.toThrow(/last ran as 'order', not 'refund'.*idReuse: 'any-type'/);
      await expect(
        engine.start(order, { n: 2 }, { id: 'order-9', idReuse: 'sometimes' as never }),
      ).rejects.toBeInstanceOf(InvalidOptionsError);
      expect(await everyKey(world.storage)).toEqual(before);

      const refunded = await engine.start(refund, { n: 2 }, { id: 'order-9', idReuse: 'any-type' });
      expect(refunded.run).toBe(2);
      expect(await refunded.result()).toEqual({ refunded: 2 });
      expect((await engine.runs('order-9')).map(({ run, workflowType }) => `${run}:${workflowType}`)).toEqual(
        ['2:refund', '1:order'],
      );
      await world.shutdownAll();
    });

    it(`${mode}: runs that are not stored are named in a typed error`, async () => {
      const { world, engine } = await setup();
      const handle = await engine.start(refund, { n: 1 }, { id: 'refund-1' });
      await handle.result();
      await expect(engine.describe('refund-1', { run: 2 })).rejects.toBeInstanceOf(WorkflowNotFoundError);
      await expect(engine.timeline('refund-1', { run: 5 })).rejects.toThrow(/Run 5 of workflow 'refund-1'/);
      await expect(engine.handle('refund-1', { run: 3 }).result()).rejects.toBeInstanceOf(
        WorkflowNotFoundError,
      );
      expect(() => engine.handle('refund-1', { run: 0 })).toThrow(InvalidArgumentError);
      await expect(engine.describe('refund-1', { run: 1.5 })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(engine.runs('nobody')).rejects.toBeInstanceOf(WorkflowNotFoundError);
      await world.shutdownAll();
    });
  }
});
