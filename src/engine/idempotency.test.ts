/**
 * Idempotent start (`idempotencyKey`) and signal-with-start, alone and with engines racing, over
 * MemoryStorage and PostgreSQL, under `none` and `workflow-lease`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Storage } from '../storage/types';
import { fencing, TestWorld } from './engine.test-support';
import { testStores } from './stores.test-support';
import { InvalidOptionsError } from './errors';
import { keys } from './keys';
import { defineWorkflow } from './workflow';

/** Collects `count` signals named `item`, then returns their payloads. */
const collector = defineWorkflow({
  name: 'collector',
  version: 1,
  *run(ctx, input: { count: number }) {
    const items: unknown[] = [];
    while (items.length < input.count) items.push(yield* ctx.waitForSignal('item'));
    return items;
  },
});

async function everyKey(storage: Storage): Promise<string[]> {
  return (await storage.scan('')).map(({ key, value }) => `${key}=${value}`);
}

const stores = testStores({ maxConnections: 6 });

describe.each(stores)('idempotent start and signal-with-start on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  for (const mode of ['none', 'workflow-lease'] as const) {
    const options = mode === 'none' ? {} : fencing;

    it(`${mode}: a repeated idempotency key returns the first run until its window ends`, async () => {
      const world = new TestWorld({ storage: await store.open() });
      const engine = await world.engine([collector], { ...options, idempotencyWindowMs: 60_000 });
      const first = await engine.start(collector, { count: 1 }, { idempotencyKey: 'order-42' });
      const again = await engine.start(collector, { count: 9 }, { idempotencyKey: 'order-42' });
      expect(again.workflowId).toBe(first.workflowId);
      expect(again.run).toBe(first.run);
      // `started` tells the caller which start created the run; the metric counts only that one.
      expect([first.started, again.started]).toEqual([true, false]);
      expect(engine.metrics().workflowsStarted).toBe(1);
      expect((await engine.list()).items).toHaveLength(1);
      // Bad keys are refused before anything is written.
      await world.idle();
      const before = await everyKey(world.storage);
      for (const bad of ['', 'x'.repeat(201), 42])
        await expect(
          engine.start(collector, { count: 1 }, { idempotencyKey: bad as string }),
        ).rejects.toBeInstanceOf(InvalidOptionsError);
      expect(await everyKey(world.storage)).toEqual(before);

      await world.clock.advance(60_001);
      await engine.runMaintenance();
      expect(await world.storage.scan(keys.idempotencyPrefix)).toEqual([]);
      const later = await engine.start(collector, { count: 1 }, { idempotencyKey: 'order-42' });
      expect(later.workflowId).not.toBe(first.workflowId);
      expect((await engine.list()).items).toHaveLength(2);
      await world.shutdownAll();
    });

    for (const count of [2, 3])
      it(`${mode}: ${count} engines racing one idempotency key start exactly one workflow`, async () => {
        const world = new TestWorld({ storage: await store.open() });
        const engines = [];
        for (let i = 0; i < count; i++) engines.push(await world.engine([collector], options));
        for (let round = 0; round < 5; round++) {
          const handles = await Promise.all(
            engines.map((engine) =>
              engine.start(collector, { count: 1 }, { idempotencyKey: `key-${round}` }),
            ),
          );
          expect(new Set(handles.map((handle) => handle.workflowId)).size).toBe(1);
          expect(handles.filter((handle) => handle.started)).toHaveLength(1);
        }
        await world.idle();
        expect((await engines[0]!.list()).items).toHaveLength(5);
        await world.shutdownAll();
      });

    it(`${mode}: signal-with-start starts an absent workflow with its signal, signals a running one, restarts a finished one`, async () => {
      const world = new TestWorld({ storage: await store.open() });
      const engine = await world.engine([collector], options);
      const first = await engine.signalWithStart(collector, { count: 2 }, 'item', 'a', { id: 'c-1' });
      expect(first.started).toBe(true);
      expect(first.run).toBe(1);
      await world.idle();
      expect((await engine.describe('c-1')).status).toBe('running');
      const second = await engine.signalWithStart(collector, { count: 2 }, 'item', 'b', { id: 'c-1' });
      expect(second.started).toBe(false);
      expect(await first.result()).toEqual(['a', 'b']);
      const third = await engine.signalWithStart(collector, { count: 1 }, 'item', 'c', { id: 'c-1' });
      expect(third).toMatchObject({ started: true, run: 2 });
      expect(await third.result()).toEqual(['c']);
      await expect(
        engine.signalWithStart(collector, { count: 1 }, 'item', 'x', {} as { id: string }),
      ).rejects.toBeInstanceOf(InvalidOptionsError);
      await world.shutdownAll();
    });

    it(`${mode}: engines racing signal-with-start on one id start it once and every signal arrives once`, async () => {
      const world = new TestWorld({ storage: await store.open() });
      const engines = [];
      for (let i = 0; i < 3; i++) engines.push(await world.engine([collector], options));
      const handles = await Promise.all(
        engines.map((engine, i) =>
          engine.signalWithStart(collector, { count: 3 }, 'item', i, { id: 'race' }),
        ),
      );
      expect(handles.filter((handle) => handle.started)).toHaveLength(1);
      await world.idle();
      const result = (await engines[0]!.handle('race').result()) as number[];
      expect([...result].sort()).toEqual([0, 1, 2]);
      expect((await engines[0]!.runs('race')).map(({ run }) => run)).toEqual([1]);
      await world.shutdownAll();
    });

    it(`${mode}: a new run of an id never receives the signals its finished run left unconsumed`, async () => {
      const world = new TestWorld({ storage: await store.open() });
      const engine = await world.engine([collector], options);
      const first = await engine.start(collector, { count: 1 }, { id: 'c-2' });
      await world.idle();
      await engine.signal('c-2', 'item', 'one');
      expect(await first.result()).toEqual(['one']);
      // The finishing commit deletes the signals its run knew of; one sent in the moment between its read
      // and its commit stays behind (a finished run refuses signals, so it is written here directly), first
      // in send order.
      await world.storage.batch([
        {
          type: 'put',
          key: keys.signal('c-2', 0),
          value: JSON.stringify({
            name: 'item',
            payload: 'left over',
            sentAt: world.clock.now(),
            sentBy: 'e',
          }),
        },
      ]);
      const second = await engine.start(collector, { count: 1 }, { id: 'c-2' });
      await world.idle();
      expect((await second.describe()).status).toBe('running');
      await engine.signal('c-2', 'item', 'fresh');
      expect(await second.result()).toEqual(['fresh']);
      await world.shutdownAll();
    });
  }
});
