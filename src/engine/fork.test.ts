/**
 * Fork (fork.ts): a run again from one of its operations. The operations before it are replayed from the
 * copied history (their activities do not run again, signals and updates they consumed are not needed
 * again), it and what follows run live; into the next run of the id or into a new id, from the latest or an
 * earlier run, on the source's definition version or another one; a handoff in the middle of a fork loses
 * nothing; bad requests are refused before anything is written. Over MemoryStorage, PostgreSQL and
 * IndexedDB (fake-indexeddb), under `none` and `workflow-lease`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Storage } from '../storage/types';
import { fencing, TestWorld, type TestEngine } from './engine.test-support';
import {
  InvalidArgumentError,
  InvalidOptionsError,
  InvalidWorkflowStateError,
  NonDeterminismError,
  WorkflowAlreadyExistsError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowNotRegisteredError,
} from './errors';
import { indexedDbStore, testStores } from './stores.test-support';
import type { TimelineEntry } from './records';
import { defineWorkflow } from './workflow';

/** What the activities of `order` did, in order, and whether `charge` works (a downstream outage when not). */
const world$ = { calls: [] as string[], chargeWorks: true, tag: 0 };

/**
 * reserve (#0) → charge (#1) → wait for `ship` (#2) → notify (#3). `reserve` returns a fresh tag each time it
 * runs, so a replayed reservation shows as the tag of the run it was recorded in.
 */
const order = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx, input: { sku: string }) {
    const reservation = yield* ctx.activity('reserve', () => {
      world$.calls.push('reserve');
      return `${input.sku}-r${++world$.tag}`;
    });
    const receipt = yield* ctx.activity(
      'charge',
      () => {
        world$.calls.push('charge');
        if (!world$.chargeWorks) throw new Error('payments are down');
        return `paid-${reservation}`;
      },
      { retry: { maxAttempts: 1 } },
    );
    const ship = yield* ctx.waitForSignal<{ carrier: string }>('ship');
    const note = yield* ctx.activity('notify', () => {
      world$.calls.push('notify');
      return `sent by ${ship?.carrier ?? 'nobody'}`;
    });
    return { reservation, receipt, note };
  },
});

/** Version 2 of `order`: the same operations, but `notify` says something else. */
const orderV2 = defineWorkflow({
  name: 'order',
  version: 2,
  *run(ctx, input: { sku: string }) {
    const reservation = yield* ctx.activity('reserve', () => `${input.sku}-v2`);
    const receipt = yield* ctx.activity('charge', () => `paid-${reservation}`);
    const ship = yield* ctx.waitForSignal<{ carrier: string }>('ship');
    const note = yield* ctx.activity('notify', () => `v2 sent by ${ship?.carrier ?? 'nobody'}`);
    return { reservation, receipt, note };
  },
});

/** Version 3 of `order`: yields something else at #1 (not deterministic against version 1's history). */
const orderV3 = defineWorkflow({
  name: 'order',
  version: 3,
  *run(ctx) {
    yield* ctx.activity('reserve', () => 'x');
    yield* ctx.sleep(5);
    return 'v3';
  },
});

/** Counts with an update (`add`), then waits for `done` and returns the count. */
const counter = defineWorkflow<undefined, number, { count?: number }>({
  name: 'counter',
  version: 1,
  updates: { add: { handle: (state, by) => (state.count = (state.count ?? 0) + Number(by)) } },
  *run(ctx) {
    yield* ctx.activity('open', () => 'open');
    yield* ctx.waitForSignal('done');
    yield* ctx.activity('close', () => 'closed');
    return ctx.state.count ?? 0;
  },
});

const positionOf = (timeline: TimelineEntry[], kind: TimelineEntry['kind'], name: string): number => {
  const entry = timeline.find(
    (candidate) => candidate.kind === kind && 'name' in candidate.detail && candidate.detail.name === name,
  );
  if (!entry || !('pos' in entry.detail)) throw new Error(`no ${kind} of ${name}`);
  return entry.detail.pos;
};

const activityRuns = (timeline: TimelineEntry[]) =>
  timeline.flatMap((entry) => (entry.kind === 'activity-started' ? [entry.detail.name] : []));

async function everyKey(storage: Storage): Promise<string[]> {
  return (await storage.scan('')).map(({ key, value }) => `${key}=${value}`);
}

const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

describe.each(stores)('fork on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  for (const mode of ['none', 'workflow-lease'] as const) {
    async function setup(): Promise<{ world: TestWorld; engine: TestEngine }> {
      world$.calls = [];
      world$.chargeWorks = true;
      world$.tag = 0;
      const world = new TestWorld({ storage: await store.open() });
      const engine = await world.engine([order, counter], mode === 'none' ? {} : fencing);
      return { world, engine };
    }

    /** Runs `order` 'o-1' until `charge` fails it (payments down). */
    async function failedOrder(world: TestWorld, engine: TestEngine): Promise<void> {
      world$.chargeWorks = false;
      const handle = await engine.start(order, { sku: 'sku' }, { id: 'o-1' });
      await world.idle();
      await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      world$.chargeWorks = true;
      world$.calls = [];
    }

    it(`${mode}: a failed run forked from its failed step runs that step again and replays the ones before`, async () => {
      const { world, engine } = await setup();
      await failedOrder(world, engine);
      const failedAt = positionOf(await engine.timeline('o-1'), 'activity-failed', 'charge');
      expect(failedAt).toBe(1);

      const fork = await engine.fork<{ reservation: string; receipt: string }>('o-1', {
        fromPosition: failedAt,
      });
      expect(fork).toMatchObject({ workflowId: 'o-1', run: 2 });
      await world.idle();
      await engine.signal('o-1', 'ship', { carrier: 'post' });
      await world.idle();
      // The reservation of run 1 is replayed (its tag, r1), not made again; charge and notify run.
      expect(await fork.result()).toEqual({
        reservation: 'sku-r1',
        receipt: 'paid-sku-r1',
        note: 'sent by post',
      });
      expect(world$.calls).toEqual(['charge', 'notify']);

      const forked = await engine.describe('o-1');
      expect(forked).toMatchObject({
        run: 2,
        status: 'completed',
        forkedFrom: { id: 'o-1', run: 1, position: 1 },
      });
      const timeline = await engine.timeline('o-1');
      expect(timeline[0]).toMatchObject({
        kind: 'started',
        detail: { workflowType: 'order', version: 1, forkedFrom: { id: 'o-1', run: 1, position: 1 } },
      });
      expect(activityRuns(timeline)).toEqual(['charge', 'notify']);
      // The copied outcome of #0 is readable in the fork's history, as the source's is.
      expect(await engine.operationOutcome('o-1', { pos: 0 })).toMatchObject({
        kind: 'activity',
        name: 'reserve',
        ok: true,
        value: 'sku-r1',
      });
      // The failed run is kept (run history), untouched.
      expect(await engine.describe('o-1', { run: 1 })).toMatchObject({ status: 'failed' });
      expect((await engine.runs('o-1')).map((run) => run.run)).toEqual([2, 1]);
      await world.shutdownAll();
    });

    it(`${mode}: without fromPosition, a run that ended badly is forked from where it stopped`, async () => {
      const { world, engine } = await setup();
      await failedOrder(world, engine);
      // Failed by charge (#1): the fork runs charge again.
      const retried = await engine.fork('o-1', {});
      expect(await retried.describe()).toMatchObject({ forkedFrom: { id: 'o-1', run: 1, position: 1 } });
      await world.idle();
      expect(world$.calls).toEqual(['charge']);
      // Terminated while it waited for `ship` (#2): the fork waits for it again.
      await engine.terminate('o-1', 'stuck');
      const waiting = await engine.fork('o-1', {});
      await world.idle();
      expect(await waiting.describe()).toMatchObject({
        status: 'running',
        position: 2,
        forkedFrom: { id: 'o-1', run: 2, position: 2 },
      });
      // A completed run, or one still running, has no place it stopped at: the position must be named.
      await waiting.signal('ship', { carrier: 'post' });
      await world.idle();
      await expect(engine.fork('o-1', {})).rejects.toThrow(/fork needs fromPosition .* it is completed/);
      await engine.start(order, { sku: 'r' }, { id: 'o-live' });
      await world.idle();
      await expect(engine.fork('o-live', { newId: 'x' })).rejects.toThrow(/it is running/);
      await world.shutdownAll();
    });

    it(`${mode}: from 0 everything runs again on the same input; from the end nothing runs`, async () => {
      const { world, engine } = await setup();
      const first = await engine.start(order, { sku: 'a' }, { id: 'o-2' });
      await world.idle();
      await first.signal('ship', { carrier: 'van' });
      await world.idle();
      expect(await first.result()).toMatchObject({ reservation: 'a-r1' });
      world$.calls = [];

      const again = await engine.fork('o-2', { fromPosition: 0 });
      await world.idle();
      await again.signal('ship', { carrier: 'bike' });
      await world.idle();
      expect(await again.result()).toEqual({
        reservation: 'a-r2',
        receipt: 'paid-a-r2',
        note: 'sent by bike',
      });
      expect(world$.calls).toEqual(['reserve', 'charge', 'notify']);

      // From the end of run 1 (it resolved 4 operations): every outcome is replayed, and it finishes at once.
      world$.calls = [];
      const end = (await engine.describe('o-2', { run: 1 })).position;
      expect(end).toBe(4);
      const replayed = await engine.fork('o-2', { fromPosition: end, run: 1 });
      await world.idle();
      expect(await replayed.result()).toEqual({
        reservation: 'a-r1',
        receipt: 'paid-a-r1',
        note: 'sent by van',
      });
      expect(world$.calls).toEqual([]);
      expect(replayed.run).toBe(3);
      await world.shutdownAll();
    });

    it(`${mode}: a running workflow forked into a new id: the consumed signal is replayed, the source goes on`, async () => {
      const { world, engine } = await setup();
      const source = await engine.start(order, { sku: 'b' }, { id: 'o-3' });
      await world.idle();
      await source.signal('ship', { carrier: 'ship' });
      await world.idle();
      // o-3 finished; its run 2 (a fork from #2) now waits for `ship` again — fork that into a new id from #3.
      const waiting = await engine.fork('o-3', { fromPosition: 2 });
      await world.idle();
      expect(await engine.describe('o-3')).toMatchObject({ run: 2, status: 'running', position: 2 });
      await waiting.signal('ship', { carrier: 'plane' });
      await world.idle();
      world$.calls = [];
      const copy = await engine.fork('o-3', { fromPosition: 3, run: 1, newId: 'o-3-copy' });
      await world.idle();
      expect(copy).toMatchObject({ workflowId: 'o-3-copy', run: 1 });
      expect(await copy.result()).toEqual({
        reservation: 'b-r1',
        receipt: 'paid-b-r1',
        note: 'sent by ship',
      });
      expect(world$.calls).toEqual(['notify']);
      expect(await engine.describe('o-3-copy')).toMatchObject({
        forkedFrom: { id: 'o-3', run: 1, position: 3 },
      });
      expect(await waiting.result()).toMatchObject({ note: 'sent by plane' });

      // A running source may be forked into another id: outcomes before its position are final.
      const live = await engine.start(order, { sku: 'c' }, { id: 'o-4' });
      await world.idle();
      const branch = await engine.fork('o-4', { fromPosition: 2, newId: 'o-4-branch' });
      await world.idle();
      await branch.signal('ship', { carrier: 'train' });
      await world.idle();
      expect(await branch.result()).toEqual({
        reservation: 'c-r2',
        receipt: 'paid-c-r2',
        note: 'sent by train',
      });
      expect(await live.describe()).toMatchObject({ status: 'running', position: 2 });
      await world.shutdownAll();
    });

    it(`${mode}: updates applied before the fork's position are replayed into its state`, async () => {
      const { world, engine } = await setup();
      const source = await engine.start(counter, undefined, { id: 'c-1' });
      await world.idle();
      await engine.update('c-1', 'add', 2);
      await engine.update('c-1', 'add', 3);
      await source.signal('done');
      await world.idle();
      expect(await source.result()).toBe(5);
      // #1 waited for `done` while both updates were applied: forked from #2, the fork starts with count 5.
      const fork = await engine.fork('c-1', { fromPosition: 2, newId: 'c-1-after' });
      await world.idle();
      expect(await fork.result()).toBe(5);
      // Forked from #1, the updates (applied at #1) are not copied: it waits for `done` with count 0.
      const before = await engine.fork('c-1', { fromPosition: 1, newId: 'c-1-before' });
      await world.idle();
      expect(await before.describe()).toMatchObject({ status: 'running', position: 1, state: {} });
      await engine.update('c-1-before', 'add', 10);
      await before.signal('done');
      await world.idle();
      expect(await before.result()).toBe(10);
      await world.shutdownAll();
    });

    it(`${mode}: on another version — the same operations take the new code; other ones fail the fork`, async () => {
      const { world, engine } = await setup();
      await failedOrder(world, engine);
      engine.register(orderV2);
      engine.register(orderV3);
      const onV2 = await engine.fork('o-1', { fromPosition: 1, version: 2 });
      await world.idle();
      await onV2.signal('ship', { carrier: 'post' });
      await world.idle();
      expect(await onV2.result()).toEqual({
        reservation: 'sku-r1',
        receipt: 'paid-sku-r1',
        note: 'v2 sent by post',
      });
      expect((await onV2.describe()).version).toBe(2);

      const onV3 = await engine.fork('o-1', { fromPosition: 2, run: 1, version: 3 });
      await world.idle();
      const failure = await onV3.result().then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect((failure as WorkflowFailedError).failure).toMatchObject({ name: NonDeterminismError.name });
      expect((failure as WorkflowFailedError).failure.message).toContain('at operation #1');
      await world.shutdownAll();
    });

    if (mode === 'workflow-lease')
      it('a fork whose engine dies is taken over and finished from the copied history: nothing runs twice', async () => {
        const { world, engine } = await setup();
        await failedOrder(world, engine);
        const fork = await engine.fork('o-1', { fromPosition: 1 });
        await world.idle();
        expect(world$.calls).toEqual(['charge']);
        world.crash(engine);
        const other = await world.engine([order, counter], fencing);
        await world.advance(60_000, { stepMs: 1_000 });
        expect(await other.claimHolder('o-1')).toMatchObject({ engineId: other.id });
        await other.signal('o-1', 'ship', { carrier: 'post' });
        await world.idle();
        expect(await other.handle('o-1', { run: fork.run }).result()).toEqual({
          reservation: 'sku-r1',
          receipt: 'paid-sku-r1',
          note: 'sent by post',
        });
        expect(world$.calls).toEqual(['charge', 'notify']);
        await world.shutdownAll();
      });

    it(`${mode}: a bad fork is refused with a typed error, and nothing is written`, async () => {
      const { world, engine } = await setup();
      await failedOrder(world, engine);
      const running = await engine.start(order, { sku: 'r' }, { id: 'o-running' });
      await world.idle();
      const before = await everyKey(world.storage);
      const refusals: [() => Promise<unknown>, new (...args: never[]) => Error, RegExp][] = [
        [
          () => engine.fork('o-running', { fromPosition: 1 }),
          InvalidWorkflowStateError,
          /fork into the same id.*running.*newId/,
        ],
        [
          () => engine.fork('o-1', { fromPosition: 3 }),
          InvalidOptionsError,
          /resolved only 2 operation\(s\): fork from 0 to 2/,
        ],
        [() => engine.fork('o-1', { fromPosition: -1 }), InvalidOptionsError, /fromPosition must be/],
        [() => engine.fork('o-1', { fromPosition: 1.5 }), InvalidOptionsError, /fromPosition must be/],
        [
          () => engine.fork('o-1', { fromPosition: '1' } as never),
          InvalidOptionsError,
          /fromPosition must be/,
        ],
        [
          () => engine.fork('o-1', { fromPosition: 1, from: 2 } as never),
          InvalidOptionsError,
          /Unknown fork option 'from'/,
        ],
        [() => engine.fork('o-1', null as never), InvalidOptionsError, /fork options must be an object/],
        [() => engine.fork('nope', { fromPosition: 0 }), WorkflowNotFoundError, /'nope' does not exist/],
        [
          () => engine.fork('o-1', { fromPosition: 0, run: 7 }),
          WorkflowNotFoundError,
          /Run 7 of workflow 'o-1'/,
        ],
        [() => engine.fork('o-1', { fromPosition: 0, run: 0 }), InvalidArgumentError, /run number/],
        [() => engine.fork('o-1', { fromPosition: 0, version: 9 }), WorkflowNotRegisteredError, /version 9/],
        [
          () => engine.fork('o-1', { fromPosition: 0, newId: '' }),
          InvalidArgumentError,
          /newId must not be empty/,
        ],
        [
          () => engine.fork('o-1', { fromPosition: 0, newId: 'o-running' }),
          WorkflowAlreadyExistsError,
          /'o-running' already exists/,
        ],
      ];
      for (const [attempt, type, message] of refusals) {
        const error = await attempt().then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(error, String(message)).toBeInstanceOf(type);
        expect((error as Error).message).toMatch(message);
      }
      expect(await everyKey(world.storage)).toEqual(before);
      expect(await running.describe()).toMatchObject({ status: 'running' });
      await world.shutdownAll();
    });
  }
});
