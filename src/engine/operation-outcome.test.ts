/**
 * `operationOutcome`: the value or error a run's history recorded for one operation, read from the run's log
 * (the timeline entries name the operation; the history entries beside them hold its value). A real engine
 * runs real workflows on MemoryStorage: an activity's result, a consumed signal's payload, an activity's
 * failure after its last attempt, a member of `all`, a child's result, the state after an update, earlier
 * runs, a store of the earlier layout (history under `wf-hist:` keys), and the read stopping early.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Entry, Storage } from '../storage/types';
import { TestWorld } from './engine.test-support';
import { InvalidArgumentError, WorkflowNotFoundError } from './errors';
import { readOperationOutcome } from './inspect';
import type { TimelineEntry } from './records';
import { legacyWorkflows } from './run/legacy-layout.test-support';
import { defineWorkflow } from './workflow';

const doubler = defineWorkflow({
  name: 'doubler',
  version: 1,
  *run(_ctx, input: { n: number }) {
    return { doubled: input.n * 2 };
  },
});

/** Every kind of operation whose outcome carries something, in order: positions 0 to 5. */
const checkout = defineWorkflow({
  name: 'checkout',
  version: 1,
  *run(ctx, input: { amount: number }) {
    const charge = yield* ctx.activity('charge', () => ({
      chargeId: `ch_${input.amount}`,
      amount: input.amount,
    }));
    const approval = yield* ctx.waitForSignal<{ ok: boolean; by: string }>('approve');
    let shipError: string | null = null;
    try {
      yield* ctx.activity(
        'ship',
        ({ attempt }) => {
          throw new Error(`carrier down (attempt ${attempt})`);
        },
        { retry: { maxAttempts: 2, initialIntervalMs: 100 } },
      );
    } catch (error) {
      shipError = (error as Error).message;
    }
    const [left, right] = yield* ctx.all([
      ctx.activity('left', () => 'L'),
      ctx.activity('right', () => ({ side: 'R' })),
    ]);
    const shipped = yield* ctx.startChild(doubler, { n: input.amount });
    yield* ctx.sleep(1_000);
    return { charge, approval, shipError, left, right, shipped };
  },
  updates: {
    note: {
      handle: (state, arg) => {
        state.note = arg as string;
        return `noted ${String(arg)}`;
      },
    },
  },
});

/** The position and member a timeline entry names (what the studio passes for an entry it shows). */
function at(timeline: readonly TimelineEntry[], kind: TimelineEntry['kind'], name?: string) {
  const entry = timeline.find(
    (candidate) =>
      candidate.kind === kind &&
      (name === undefined || (candidate.detail as { name?: string }).name === name),
  );
  if (!entry) throw new Error(`no ${kind} entry${name ? ` for '${name}'` : ''}`);
  const { pos, member } = entry.detail as { pos: number; member: number };
  return { pos, member };
}

describe('operationOutcome', () => {
  it('reads the result, payload or error recorded for an operation, and null before there is one', async () => {
    const world = new TestWorld();
    const engine = await world.engine([checkout, doubler]);
    await engine.start(checkout, { amount: 42 }, { id: 'checkout-1' });
    await world.idle();

    // The activity's result; the signal wait has no outcome yet.
    let timeline = await engine.timeline('checkout-1');
    expect(await engine.operationOutcome('checkout-1', at(timeline, 'activity-completed', 'charge'))).toEqual(
      {
        kind: 'activity',
        name: 'charge',
        pos: 0,
        ok: true,
        value: { chargeId: 'ch_42', amount: 42 },
      },
    );
    expect(await engine.operationOutcome('checkout-1', { pos: 1 })).toBeNull();
    expect(await engine.operationOutcome('checkout-1', { pos: 7 })).toBeNull();

    // An update applied while the workflow waits: the argument it was sent with, and the state after it.
    expect(await engine.update('checkout-1', 'note', 'fragile')).toBe('noted fragile');
    await world.idle();
    timeline = await engine.timeline('checkout-1');
    const applied = timeline.find((entry) => entry.kind === 'update-applied')!;
    const updateId = applied.kind === 'update-applied' ? applied.detail.updateId : '';
    expect(await engine.operationOutcome('checkout-1', { updateId })).toEqual({
      kind: 'update',
      name: 'note',
      pos: 1,
      updateId,
      ok: true,
      arg: 'fragile',
      stateAfter: { note: 'fragile' },
    });
    expect(await engine.operationOutcome('checkout-1', { updateId: 'no-such-update' })).toBeNull();

    await engine.signal('checkout-1', 'approve', { ok: true, by: 'ada' });
    await world.idle();
    await world.advance(100); // the failed attempt's back-off
    await world.idle();
    await world.advance(1_000); // the sleep
    await world.idle();
    const result = await engine.handle('checkout-1').result();
    expect(result).toMatchObject({
      shipError: expect.stringContaining('carrier down (attempt 2)') as string,
    });

    timeline = await engine.timeline('checkout-1');
    // The consumed signal's payload.
    expect(await engine.operationOutcome('checkout-1', at(timeline, 'signal-consumed', 'approve'))).toEqual({
      kind: 'signal',
      name: 'approve',
      pos: 1,
      ok: true,
      value: { ok: true, by: 'ada' },
    });
    // The failure after the last attempt (the timeline's activity-failed entries name the operation).
    const failed = await engine.operationOutcome('checkout-1', at(timeline, 'activity-failed', 'ship'));
    expect(failed).toMatchObject({ kind: 'activity', name: 'ship', pos: 2, ok: false });
    expect(failed?.ok === false && failed.error).toMatchObject({
      name: 'ActivityFailedError',
      message: expect.stringContaining('carrier down (attempt 2)') as string,
    });
    // A member of all, the child's result, a sleep (no value).
    expect(await engine.operationOutcome('checkout-1', at(timeline, 'activity-completed', 'right'))).toEqual({
      kind: 'activity',
      name: 'right',
      pos: 3,
      member: 1,
      ok: true,
      value: { side: 'R' },
    });
    expect(await engine.operationOutcome('checkout-1', { pos: 3, member: 0 })).toMatchObject({ value: 'L' });
    expect(await engine.operationOutcome('checkout-1', at(timeline, 'child-completed'))).toMatchObject({
      kind: 'child',
      pos: 4,
      value: { doubled: 84 },
    });
    // Every entry of an operation leads to its outcome: the first timer to fire was the ship's back-off.
    expect(await engine.operationOutcome('checkout-1', at(timeline, 'timer-fired'))).toMatchObject({
      name: 'ship',
      ok: false,
    });
    expect(await engine.operationOutcome('checkout-1', { pos: 5 })).toEqual({
      kind: 'sleep',
      name: 'sleep',
      pos: 5,
      ok: true,
    });
    // A simple operation has only member 0.
    expect(await engine.operationOutcome('checkout-1', { pos: 0, member: 1 })).toBeNull();

    // Run history: a run started again reads its own outcomes; the earlier run's stay readable.
    const second = await engine.start(checkout, { amount: 7 }, { id: 'checkout-1' });
    expect(second.run).toBe(2);
    await world.idle();
    expect(await engine.operationOutcome('checkout-1', { pos: 0 })).toMatchObject({
      value: { chargeId: 'ch_7', amount: 7 },
    });
    expect(await engine.operationOutcome('checkout-1', { pos: 1 })).toBeNull();
    expect(await engine.operationOutcome('checkout-1', { run: 1, pos: 1 })).toMatchObject({
      value: { ok: true, by: 'ada' },
    });
    await world.shutdownAll();
  });

  it('gives a member of all without an outcome of its own the cancellation of the whole operation', async () => {
    const pair = defineWorkflow({
      name: 'pair',
      version: 1,
      *run(ctx) {
        return yield* ctx.all([ctx.waitForSignal('a'), ctx.waitForSignal('b')]);
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([pair]);
    await engine.start(pair, undefined, { id: 'pair' });
    await world.idle();
    await engine.signal('pair', 'a', 'first');
    await world.idle();
    expect(await engine.operationOutcome('pair', { pos: 0, member: 0 })).toMatchObject({ value: 'first' });
    expect(await engine.operationOutcome('pair', { pos: 0, member: 1 })).toBeNull();
    await engine.cancel('pair', 'no longer needed');
    await world.maintain();
    expect((await engine.describe('pair')).status).toBe('cancelled');
    expect(await engine.operationOutcome('pair', { pos: 0, member: 0 })).toMatchObject({ value: 'first' });
    const whole = await engine.operationOutcome('pair', { pos: 0, member: 1 });
    expect(whole).toMatchObject({ kind: 'all', pos: 0, ok: false, cancelled: true });
    expect(whole).not.toHaveProperty('member');
    expect(whole?.ok === false && whole.error.name).toBe('CancelledError');
    await world.shutdownAll();
  });

  it('refuses what the timeline refuses, and malformed positions, before reading anything', async () => {
    const world = new TestWorld();
    const engine = await world.engine([checkout, doubler]);
    await engine.start(checkout, { amount: 1 }, { id: 'checkout-2' });
    await world.idle();
    await expect(engine.operationOutcome('no-such-workflow', { pos: 0 })).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
    await expect(engine.operationOutcome('checkout-2', { run: 2, pos: 0 })).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
    for (const of of [
      { pos: -1 },
      { pos: 1.5 },
      { pos: '0' },
      { pos: 0, member: -2 },
      { run: 0, pos: 0 },
      {},
      { pos: 0, updateId: 'u' },
      { updateId: '' },
    ])
      await expect(engine.operationOutcome('checkout-2', of as never)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    await expect(engine.operationOutcome('', { pos: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await world.shutdownAll();
  });

  it('stops reading the log at the outcome it looks for', async () => {
    const steps = defineWorkflow({
      name: 'steps',
      version: 1,
      *run(ctx) {
        let sum = 0;
        for (let step = 0; step < 300; step++) sum += yield* ctx.activity('step', () => step);
        return sum;
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([steps]);
    await engine.start(steps, undefined, { id: 'steps' });
    await world.idle();
    expect(await engine.handle('steps').result()).toBe((299 * 300) / 2);

    let scans = 0;
    const counting = new Proxy(world.storage, {
      get(target, property, receiver) {
        if (property === 'scan') scans++;
        return Reflect.get(target, property, receiver) as unknown;
      },
    }) as Storage;
    expect(await readOperationOutcome(counting, 'steps', { pos: 1 })).toMatchObject({ value: 1 });
    // One empty scan of the earlier layout's history, and the first page of the log.
    expect(scans).toBe(2);
    scans = 0;
    expect(await readOperationOutcome(counting, 'steps', { pos: 299 })).toMatchObject({ value: 299 });
    expect(scans).toBeGreaterThan(2); // some 300 records, in pages of 200
    await world.shutdownAll();
  });

  it('reads the history a store of the earlier layout kept under wf-hist: keys, and the commits after it', async () => {
    const fixture = JSON.parse(
      readFileSync(new URL('./run/fixtures/layout-1.json', import.meta.url), 'utf8'),
    ) as { now: number; entries: Entry[] };
    const world = new TestWorld();
    await world.storage.batch(
      fixture.entries.map(({ key, value }) => ({ type: 'put' as const, key, value })),
    );
    await world.clock.advance(fixture.now - world.clock.now() + 10_000);
    const engine = await world.engine(legacyWorkflows, {
      ownership: 'workflow-lease',
      workflowClaimTtlMs: 3000,
      workflowClaimRenewIntervalMs: 1000,
    });
    await world.maintain([engine]);

    expect(await engine.operationOutcome('mixed', { pos: 0 })).toEqual({
      kind: 'activity',
      name: 'first',
      pos: 0,
      ok: true,
      value: 1,
    });
    expect(await engine.operationOutcome('mixed', { pos: 3, member: 1 })).toMatchObject({ value: 'R' });
    // An update of the earlier layout: the state after it.
    expect(
      await engine.operationOutcome('mixed', { updateId: 'b007d9ac-9915-48d6-b79c-da5bb7febafc' }),
    ).toEqual({
      kind: 'update',
      name: 'increment',
      pos: 5,
      updateId: 'b007d9ac-9915-48d6-b79c-da5bb7febafc',
      ok: true,
      stateAfter: { label: 'old', count: 5 },
    });
    expect(await engine.operationOutcome('mixed', { pos: 5 })).toBeNull();

    // The signal is consumed by this engine: its payload is in a commit record, after the earlier layout.
    await engine.signal('mixed', 'go', 'now');
    await world.idle([engine]);
    expect(await engine.operationOutcome('mixed', { pos: 5 })).toMatchObject({
      kind: 'signal',
      ok: true,
      value: 'now',
    });
    expect(await engine.operationOutcome('mixed', { pos: 6 })).toMatchObject({ kind: 'activity', value: 10 });
    await world.shutdownAll();
  });
});
