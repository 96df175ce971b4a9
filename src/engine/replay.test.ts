/**
 * Replay safety: non-determinism detection, version mismatch, and state restored by replay.
 */
import { describe, expect, it } from 'vitest';
import { TestWorld } from './engine.test-support';
import { NonDeterminismError, WorkflowFailedError, WorkflowVersionMismatchError } from './errors';
import { defineWorkflow } from './workflow';

function orderV1(activityName: string, version = 1) {
  return defineWorkflow({
    name: 'evolving',
    version,
    *run(ctx) {
      yield* ctx.activity('reserve', () => 'reserved');
      yield* ctx.sleep(1000);
      yield* ctx.activity(activityName, () => 'done');
      return 'ok';
    },
  });
}

describe('replay', () => {
  it('fails with NonDeterminismError naming the position and both operations when the code changed', async () => {
    const world = new TestWorld();
    const a = await world.engine([orderV1('charge')]);
    await a.start('evolving', undefined, { id: 'nd' });
    await world.idle();
    world.crash(a);
    const changed = defineWorkflow({
      name: 'evolving',
      version: 1,
      *run(ctx) {
        yield* ctx.activity('reserve-v2', () => 'reserved');
        return 'never';
      },
    });
    const b = await world.engine([changed]);
    await world.idle();
    const error = await b
      .handle('nd')
      .result()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const failure = (error as WorkflowFailedError).failure;
    expect(failure.name).toBe('NonDeterminismError');
    expect(failure.details).toMatchObject({
      position: 0,
      recorded: "activity 'reserve'",
      replayed: "activity 'reserve-v2'",
    });
    expect(new NonDeterminismError('x', 0, 'a', 'b').message).toMatch(
      /at operation #0 the history recorded a, but the code now yields b/,
    );
  });

  it('detects a changed operation at the frontier too', async () => {
    const world = new TestWorld();
    const a = await world.engine([orderV1('charge')]);
    await a.start('evolving', undefined, { id: 'nd2' });
    await world.idle();
    world.crash(a);
    const changed = defineWorkflow({
      name: 'evolving',
      version: 1,
      *run(ctx) {
        yield* ctx.activity('reserve', () => 'reserved');
        yield* ctx.waitForSignal('instead-of-sleep');
      },
    });
    const b = await world.engine([changed]);
    await world.idle();
    const error = (await b
      .handle('nd2')
      .result()
      .catch((e: unknown) => e)) as WorkflowFailedError;
    expect(error.failure.details).toMatchObject({
      position: 1,
      recorded: 'sleep',
      replayed: "signal 'instead-of-sleep'",
    });
  });

  it('fails with WorkflowVersionMismatchError when only another version is registered', async () => {
    const world = new TestWorld();
    const a = await world.engine([orderV1('charge', 1)]);
    await a.start('evolving', undefined, { id: 'vm' });
    await world.idle();
    world.crash(a);
    const b = await world.engine([orderV1('charge', 2)]);
    await world.idle();
    const description = await b.describe('vm');
    expect(description.status).toBe('failed');
    expect(description.error?.name).toBe('WorkflowVersionMismatchError');
    expect(description.error?.message).toMatch(/version 1, but this engine has only version\(s\) 2/);
    expect(new WorkflowVersionMismatchError('vm', 'evolving', 1, [2]).storedVersion).toBe(1);
  });

  it('a workflow keeps running on the version it started with when both are registered', async () => {
    const world = new TestWorld();
    const a = await world.engine([orderV1('charge', 1)]);
    await a.start('evolving', undefined, { id: 'v1' });
    await world.idle();
    world.crash(a);
    const b = await world.engine([orderV1('charge', 1), orderV1('bill', 2)]);
    await world.advance(1000);
    expect(await b.handle('v1').result()).toBe('ok');
    expect(
      (await b.timeline('v1')).some((e) => e.kind === 'activity-completed' && e.detail.name === 'charge'),
    ).toBe(true);
    await b.start('evolving', undefined, { id: 'v2' });
    expect((await b.describe('v2')).version).toBe(2);
  });

  it('replay restores the state update handlers produced, at the position they were applied', async () => {
    const seen: unknown[] = [];
    const wf = defineWorkflow({
      name: 'cart',
      version: 1,
      *run(ctx) {
        ctx.state.items = [] as string[];
        const items = ctx.state.items as string[];
        yield* ctx.waitForSignal('checkout');
        // `items` is the same array the update handlers pushed into, live and on replay
        seen.push([...items]);
        yield* ctx.sleep(100);
        return items;
      },
      updates: {
        add: {
          handle: (state, arg) => {
            (state.items as string[]).push(arg as string);
            return (state.items as string[]).length;
          },
        },
      },
    });
    const world = new TestWorld();
    const a = await world.engine([wf]);
    await a.start(wf, undefined, { id: 'cart' });
    await world.idle();
    expect(await a.update('cart', 'add', 'apple')).toBe(1);
    expect(await a.update('cart', 'add', 'pear')).toBe(2);
    await a.signal('cart', 'checkout');
    await world.idle();
    const committed = (await a.describe('cart')).state;
    world.crash(a);
    const b = await world.engine([wf]);
    await world.idle();
    expect((await b.describe('cart')).state).toEqual(committed);
    await world.advance(100);
    expect(await b.handle('cart').result()).toEqual(['apple', 'pear']);
    expect(seen).toEqual([
      ['apple', 'pear'],
      ['apple', 'pear'],
    ]);
  });
});
