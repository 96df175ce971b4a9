/**
 * Replay testing (replay-check.ts): `engine.history(id)` gives a run's recorded history as JSON, and
 * `replay(definitions, history)` checks code against it — clean for the code that recorded it (finished,
 * waiting, with updates, inside `all`, with a patch), and for changed code the first divergence: the position,
 * what was recorded and what is yielded now; a patched change replays clean; a missing definition is said.
 * Over MemoryStorage, PostgreSQL and IndexedDB (fake-indexeddb); each history also goes through JSON, as a fixture file would.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fencing, TestWorld } from './engine.test-support';
import { WorkflowNotFoundError } from './errors';
import { replay, type RecordedHistory } from './replay-check';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow } from './workflow';

const order = defineWorkflow({
  name: 'order',
  version: 1,
  updates: { note: { handle: (state: { notes?: number }) => (state.notes = (state.notes ?? 0) + 1) } },
  *run(ctx, input: { sku: string }) {
    const [a, b] = yield* ctx.all([
      ctx.activity('reserve', () => input.sku),
      ctx.activity('price', () => 42),
    ]);
    const ship = yield* ctx.waitForSignal<string>('ship');
    yield* ctx.activity('notify', () => `${a} ${b} ${ship}`);
    return ctx.state;
  },
});

/** Another operation at #1: a sleep before the signal. */
const reordered = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx, input: { sku: string }) {
    yield* ctx.all([ctx.activity('reserve', () => input.sku), ctx.activity('price', () => 42)]);
    yield* ctx.sleep(10);
    yield* ctx.waitForSignal<string>('ship');
    yield* ctx.activity('notify', () => 'x');
  },
});

/** The same change behind a patch: replays clean. */
const patched = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx, input: { sku: string }) {
    yield* ctx.all([ctx.activity('reserve', () => input.sku), ctx.activity('price', () => 42)]);
    if (yield* ctx.patched('pause-first')) yield* ctx.sleep(10);
    yield* ctx.waitForSignal<string>('ship');
    yield* ctx.activity('notify', () => 'x');
  },
});

/** Goes on after the recorded end. */
const longer = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx, input: { sku: string }) {
    yield* ctx.all([ctx.activity('reserve', () => input.sku), ctx.activity('price', () => 42)]);
    yield* ctx.waitForSignal<string>('ship');
    yield* ctx.activity('notify', () => 'x');
    yield* ctx.activity('archive', () => 'y');
  },
});

describe.each([...testStores({ maxConnections: 4 }), indexedDbStore()])(
  'replay testing on $name',
  (store) => {
    afterAll(() => store.close(), 60_000);

    async function recorded(): Promise<{ waiting: RecordedHistory; finished: RecordedHistory }> {
      const world = new TestWorld({ storage: await store.open() });
      const engine = await world.engine([order], fencing);
      await engine.start(order, { sku: 'a' }, { id: 'waiting' });
      await engine.start(order, { sku: 'b' }, { id: 'finished' });
      await world.idle();
      await engine.update('finished', 'note');
      await engine.signal('finished', 'ship', 'van');
      await world.idle();
      expect((await engine.describe('finished')).status).toBe('completed');
      const waiting = JSON.parse(JSON.stringify(await engine.history('waiting'))) as RecordedHistory;
      const finished = JSON.parse(
        JSON.stringify(await engine.history('finished', { run: 1 })),
      ) as RecordedHistory;
      await expect(engine.history('nope')).rejects.toBeInstanceOf(WorkflowNotFoundError);
      await expect(engine.history('finished', { run: 2 })).rejects.toThrow(/Run 2 of workflow 'finished'/);
      await world.shutdownAll();
      return { waiting, finished };
    }

    it('a history replays clean against the code that recorded it, and records what replay needs', async () => {
      const { waiting, finished } = await recorded();
      expect(waiting).toMatchObject({
        format: 'shuttle-history/1',
        workflowId: 'waiting',
        run: 1,
        workflowType: 'order',
        version: 1,
        status: 'running',
        input: { sku: 'a' },
        position: 1,
        frontier: { pos: 1, kind: 'signal', name: 'ship' },
      });
      expect(finished).toMatchObject({ status: 'completed', position: 3, frontier: null });
      expect(finished.entries.map((entry) => entry.t)).toContain('update');
      for (const history of [waiting, finished])
        expect(replay([order], history)).toEqual({
          workflowId: history.workflowId,
          run: 1,
          workflowType: 'order',
          version: 1,
          ok: true,
          operations: history.position,
        });
    });

    it('changed code: the first divergence, with its position, what was recorded and what is yielded now', async () => {
      const { waiting, finished } = await recorded();
      // Waiting at the signal (#1): the code now yields a sleep there.
      expect(replay([reordered], waiting)).toMatchObject({
        ok: false,
        problem: 'diverged',
        position: 1,
        recorded: "signal 'ship'",
        replayed: 'sleep',
        error: { name: 'NonDeterminismError' },
      });
      expect(replay([reordered], finished)).toMatchObject({ ok: false, position: 1, replayed: 'sleep' });
      // The same change behind a patch replays both.
      expect(replay([patched], waiting)).toMatchObject({ ok: true });
      expect(replay([patched], finished)).toMatchObject({ ok: true });
      // A finished run whose code now goes on after its recorded end.
      expect(replay([longer], finished)).toMatchObject({
        ok: false,
        position: 3,
        recorded: 'the end of the workflow',
        replayed: "activity 'archive'",
      });
      expect(replay([longer], waiting)).toMatchObject({ ok: true });
    });

    it('a history whose type and version no definition has is reported, not thrown', async () => {
      const { waiting } = await recorded();
      expect(replay([], waiting)).toMatchObject({
        ok: false,
        problem: 'no-definition',
        error: { name: 'WorkflowNotRegisteredError', message: expect.stringContaining("'order' version 1") },
      });
      expect(replay([{ ...order, version: 2 }], waiting)).toMatchObject({
        ok: false,
        problem: 'no-definition',
        error: { message: expect.stringContaining('only version 2') },
      });
    });
  },
);
