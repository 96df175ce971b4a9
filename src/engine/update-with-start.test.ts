/**
 * Update-with-start (`engine.updateWithStart`): the update goes to the running workflow of the id, or is
 * stored with the workflow it starts and applied by its first turn — exactly once, whichever engine runs it,
 * when engines race to start the same id. Validated at the caller before anything is written. Over
 * MemoryStorage, PostgreSQL and IndexedDB (fake-indexeddb).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fencing, TestWorld } from './engine.test-support';
import { UpdateRejectedError } from './errors';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow, type WorkflowContext } from './workflow';

type Cart = { items: string[] };

const cart = defineWorkflow({
  name: 'cart',
  version: 1,
  *run(ctx: WorkflowContext<Cart>) {
    ctx.state.items ??= [];
    yield* ctx.waitForSignal('checkout');
    return ctx.state.items;
  },
  updates: {
    add: {
      validate: (arg) => {
        if (typeof arg !== 'string' || arg.length === 0)
          throw new TypeError('add takes a non-empty item name');
      },
      handle: (state: Cart, arg) => {
        state.items = [...(state.items ?? []), arg as string];
        return state.items.length;
      },
    },
  },
});

const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

describe.each(stores)('update-with-start on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  it('starts the workflow with the update applied first; later calls update the running one', async () => {
    const world = new TestWorld({ storage: await store.open() });
    const engine = await world.engine([cart], fencing);
    const first = await engine.updateWithStart(cart, undefined, 'add', 'tea', { id: 'cart-1' });
    expect(first).toMatchObject({ result: 1, started: true });
    expect(first.handle.run).toBe(1);
    const second = await engine.updateWithStart(cart, undefined, 'add', 'mug', { id: 'cart-1' });
    expect(second).toMatchObject({ result: 2, started: false });
    await engine.signal('cart-1', 'checkout');
    await world.idle();
    expect(await first.handle.result()).toEqual(['tea', 'mug']);
    // The first update was applied by the run's first turn, before it waited on anything.
    const kinds = (await engine.timeline('cart-1')).map((entry) => entry.kind);
    expect(kinds.indexOf('update-applied')).toBeLessThan(kinds.indexOf('signal-consumed'));
    // A finished id starts a new run with the update.
    const again = await engine.updateWithStart(cart, undefined, 'add', 'pot', { id: 'cart-1' });
    expect(again).toMatchObject({ result: 1, started: true });
    expect(again.handle.run).toBe(2);
    await world.shutdownAll();
  });

  it('engines racing to start one id: one starts it, every update is applied once', async () => {
    const world = new TestWorld({ storage: await store.open() });
    const engines = [
      await world.engine([cart], fencing),
      await world.engine([cart], fencing),
      await world.engine([cart], fencing),
    ];
    const answers = await Promise.all(
      engines.map((engine, i) => engine.updateWithStart(cart, undefined, 'add', `item-${i}`, { id: 'race' })),
    );
    expect(answers.filter((answer) => answer.started)).toHaveLength(1);
    expect(answers.map((answer) => answer.result).sort()).toEqual([1, 2, 3]);
    await engines[0]!.signal('race', 'checkout');
    await world.idle();
    expect([...((await engines[0]!.handle('race').result()) as string[])].sort()).toEqual([
      'item-0',
      'item-1',
      'item-2',
    ]);
    expect(await engines[0]!.runs('race')).toHaveLength(1);
    await world.shutdownAll();
  });

  it('refuses an unknown update or an argument its validator rejects, before anything is written', async () => {
    const storage = await store.open();
    const world = new TestWorld({ storage });
    const engine = await world.engine([cart], fencing);
    const before = await storage.scan('wf');
    await expect(engine.updateWithStart(cart, undefined, 'remove', 'tea', { id: 'c' })).rejects.toThrow(
      /has no update named 'remove' \(it has: add\)/,
    );
    const rejected = await engine.updateWithStart(cart, undefined, 'add', '', { id: 'c' }).catch((e) => e);
    expect(rejected).toBeInstanceOf(UpdateRejectedError);
    expect((rejected as Error).message).toContain('add takes a non-empty item name');
    await expect(engine.updateWithStart(cart, undefined, 'add', 'tea', {} as never)).rejects.toThrow(
      /updateWithStart needs \{ id \}/,
    );
    expect(await storage.scan('wf')).toEqual(before);
    await world.shutdownAll();
  });
});
