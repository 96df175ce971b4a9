/**
 * Failure stacks in the durable record: an activity attempt's error and a workflow body's error keep their
 * stack, passed through the host's `mapStack` once, when the failure is recorded, and bounded to
 * `recordedStackLimits`; replay never compares a recorded stack.
 */
import { describe, expect, it } from 'vitest';
import { TestWorld } from './engine.test-support';
import {
  boundStack,
  recordedFailure,
  recordedStackLimits,
  UpdateRejectedError,
  WorkflowFailedError,
  type SerializedError,
} from './errors';
import { Turn, turnStackBudget } from './run/turn';
import { defineWorkflow } from './workflow';

function chargeCard(): never {
  throw new Error('card declined');
}

function failingCheckout(maxAttempts: number) {
  return defineWorkflow({
    name: 'checkout',
    version: 1,
    *run(ctx) {
      yield* ctx.activity('charge', () => chargeCard(), { retry: { maxAttempts, initialIntervalMs: 10 } });
      return 'charged';
    },
  });
}

const frames = (stack: string) => stack.split('\n').filter((line) => /^\s*at\s/.test(line));

describe('boundStack', () => {
  it('keeps a short stack as it is', () => {
    const stack = 'Error: x\n    at a (a.ts:1:1)\n    at b (b.ts:2:2)';
    expect(boundStack(stack)).toBe(stack);
  });

  it('keeps the first 30 frames and says how many lines it left out', () => {
    const stack = [
      'Error: deep',
      ...Array.from({ length: 100 }, (_, i) => `    at f${i} (f.ts:${i}:1)`),
    ].join('\n');
    const bounded = boundStack(stack);
    expect(frames(bounded)).toHaveLength(recordedStackLimits.frames);
    expect(frames(bounded)[0]).toContain('f0 ');
    expect(bounded.split('\n').at(-1)).toBe('    … 70 more lines not kept');
  });

  it('keeps at most 4,096 characters, in whole lines', () => {
    const long = `    at ${'x'.repeat(1000)} (f.ts:1:1)`;
    const stack = ['Error: wide', ...Array.from({ length: 20 }, () => long)].join('\n');
    const bounded = boundStack(stack);
    expect(bounded.length).toBeLessThanOrEqual(recordedStackLimits.characters);
    expect(
      bounded
        .split('\n')
        .slice(1, -1)
        .every((line) => line === long),
    ).toBe(true);
    expect(bounded).toMatch(/more lines not kept$/);
    // A message longer than the limit is cut too.
    expect(boundStack(`Error: ${'m'.repeat(10_000)}`).length).toBeLessThanOrEqual(
      recordedStackLimits.characters,
    );
  });

  it('recordedFailure maps, then bounds; a mapper that throws leaves the stack unmapped', () => {
    const error = new Error('boom');
    error.stack = 'Error: boom\n    at here (compiled.js:1:1)';
    expect(recordedFailure(error, (stack) => stack.replace('compiled.js', 'source.ts')).stack).toBe(
      'Error: boom\n    at here (source.ts:1:1)',
    );
    expect(
      recordedFailure(error, () => {
        throw new Error('mapper broke');
      }).stack,
    ).toBe(error.stack);
  });
});

describe('recorded failure stacks', () => {
  it("an activity attempt's failure keeps its stack on the timeline and in the ActivityFailedError", async () => {
    const world = new TestWorld();
    const engine = await world.engine([failingCheckout(2)]);
    await engine.start('checkout', undefined, { id: 'c1' });
    await world.advance(100, { stepMs: 10 });
    const timeline = await engine.timeline('c1');
    const failed = timeline.filter((entry) => entry.kind === 'activity-failed');
    expect(failed).toHaveLength(2);
    for (const entry of failed) {
      const error = (entry.detail as { error: SerializedError }).error;
      expect(error.message).toBe('card declined');
      expect(error.stack).toMatch(/at chargeCard \(.*failure-stacks\.test\.ts:\d+:\d+\)/);
    }
    const result = await engine
      .handle('c1')
      .result()
      .catch((error: unknown) => error);
    expect(result).toBeInstanceOf(WorkflowFailedError);
    const failure = (result as WorkflowFailedError).failure;
    expect(failure.name).toBe('ActivityFailedError');
    // The activity's own error, with its stack, is the cause the workflow's error carries.
    const cause = failure.details?.failure as SerializedError;
    expect(cause.stack).toMatch(/at chargeCard \(/);
    // The history entry of the operation keeps it too.
    const outcome = await engine.operationOutcome('c1', { pos: 0 });
    expect(outcome?.ok === false && (outcome.error.details?.failure as SerializedError).stack).toMatch(
      /at chargeCard \(/,
    );
  });

  it("keeps a retrying attempt's lastError in the checkpoint without its stack (checkpoints stay small)", async () => {
    const world = new TestWorld();
    const wf = defineWorkflow({
      name: 'slow-retry',
      version: 1,
      *run(ctx) {
        yield* ctx.activity('charge', () => chargeCard(), {
          retry: { maxAttempts: 2, initialIntervalMs: 60_000 },
        });
      },
    });
    const engine = await world.engine([wf]);
    await engine.start('slow-retry', undefined, { id: 's1' });
    await world.idle();
    const leaf = (await engine.describe('s1')).pending?.leaves[0];
    expect(leaf?.lastError).toEqual({ name: 'Error', message: 'card declined' });
    const failed = (await engine.timeline('s1')).find((entry) => entry.kind === 'activity-failed');
    expect((failed?.detail as { error: SerializedError }).error.stack).toMatch(/at chargeCard \(/);
  });

  it("a workflow body's error keeps its stack, naming the body's line", async () => {
    const world = new TestWorld();
    const wf = defineWorkflow({
      name: 'body-throws',
      version: 1,
      *run(ctx) {
        yield* ctx.sleep(10);
        throw new TypeError('no shipping address');
      },
    });
    const engine = await world.engine([wf]);
    await engine.start('body-throws', undefined, { id: 'b1' });
    await world.advance(20, { stepMs: 10 });
    const described = await engine.describe('b1');
    expect(described.error?.name).toBe('TypeError');
    expect(described.error?.stack).toMatch(/failure-stacks\.test\.ts:\d+:\d+/);
  });

  it('a waitUntil predicate that throws is recorded like any failure of workflow code: mapped and bounded', async () => {
    const world = new TestWorld();
    const wf = defineWorkflow({
      name: 'predicate-throws',
      version: 1,
      *run(ctx) {
        const deep = (n: number): boolean => (n === 0 ? chargeCard() : deep(n - 1));
        try {
          yield* ctx.waitUntil(() => deep(50));
          return 'unreachable';
        } catch (error) {
          return (error as Error).stack ?? ''; // the body sees the failure as it was recorded
        }
      },
    });
    const engine = await world.engine([wf], {
      mapStack: (stack) => stack.replaceAll('failure-stacks.test.ts', 'predicate.ts'),
    });
    await engine.start('predicate-throws', undefined, { id: 'p1' });
    await world.advance(20, { stepMs: 10 });
    const recorded = (await engine.describe('p1')).result as string;
    expect(recorded).toMatch(/^Error: card declined\n/);
    expect(recorded).toContain('predicate.ts:');
    expect(recorded).not.toContain('failure-stacks.test.ts');
    expect(frames(recorded).length).toBeGreaterThan(0);
    expect(frames(recorded).length).toBeLessThanOrEqual(recordedStackLimits.frames);
  });

  it("maps the stack through the host's mapStack once, when the failure is recorded, and bounds it", async () => {
    const world = new TestWorld();
    const seen: string[] = [];
    const engine = await world.engine([failingCheckout(1)], {
      mapStack: (stack) => {
        seen.push(stack);
        // 200 frames: more than the record keeps.
        return `${stack.replace('chargeCard', 'mappedCharge')}\n${'    at padding (p.ts:1:1)\n'.repeat(200)}`;
      },
    });
    await engine.start('checkout', undefined, { id: 'm1' });
    await world.advance(100, { stepMs: 10 });
    const failed = (await engine.timeline('m1')).find((entry) => entry.kind === 'activity-failed');
    const stack = (failed?.detail as { error: SerializedError }).error.stack!;
    expect(stack).toContain('at mappedCharge (');
    expect(stack).not.toContain('at chargeCard (');
    expect(frames(stack).length).toBeLessThanOrEqual(recordedStackLimits.frames);
    expect(stack.length).toBeLessThanOrEqual(recordedStackLimits.characters);
    const record = await engine.describe('m1');
    expect((record.error?.details?.failure as SerializedError).stack).toContain('at mappedCharge (');
    expect(record.error?.stack?.length).toBeLessThanOrEqual(recordedStackLimits.characters);
    expect(seen.some((input) => input.includes('chargeCard'))).toBe(true);
  });

  it('records at most turnStackBudget characters of stacks in one turn, then failures without them', () => {
    const turn = new Turn();
    const stack = `Error: x\n${'    at f (f.ts:1:1)\n'.repeat(100)}`.slice(0, 4000);
    const kept: (string | undefined)[] = [];
    for (let i = 0; i < 20; i++) kept.push(turn.keepStack({ name: 'Error', message: 'x', stack }, 2).stack);
    const spent = kept.reduce((sum, one) => sum + 2 * (one?.length ?? 0), 0);
    expect(spent).toBeLessThanOrEqual(turnStackBudget);
    expect(kept.filter((one) => one === stack)).toHaveLength(
      Math.floor(turnStackBudget / (2 * stack.length)),
    );
    expect(kept.at(-1)).toBeUndefined();
    // A new turn starts with the whole budget.
    expect(new Turn().keepStack({ name: 'Error', message: 'x', stack }).stack).toBe(stack);
  });

  it("an update's rejection reaches its caller with the validator's or the handler's stack, mapped", async () => {
    function refuseAmount(): never {
      throw new RangeError('amount must be positive');
    }
    function failToApply(): never {
      throw new Error('ledger closed');
    }
    const wf = defineWorkflow({
      name: 'ledger',
      version: 1,
      updates: {
        add: { validate: () => refuseAmount(), handle: () => 0 },
        close: { handle: () => failToApply() },
      },
      *run(ctx) {
        yield* ctx.sleep(60_000);
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([wf], {
      mapStack: (stack) => stack.replaceAll('failure-stacks', 'mapped'),
    });
    await engine.start('ledger', undefined, { id: 'l1' });
    await world.idle();
    const rejectedAt = async (update: Promise<unknown>) => {
      const error = await update.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpdateRejectedError);
      return (error as UpdateRejectedError).failure.stack;
    };
    expect(await rejectedAt(engine.update('l1', 'add', 1))).toMatch(
      /at refuseAmount \(.*mapped\.test\.ts:\d+:\d+\)/,
    );
    const closing = engine.update('l1', 'close');
    await world.idle();
    expect(await rejectedAt(closing)).toMatch(/at failToApply \(.*mapped\.test\.ts:\d+:\d+\)/);
  });

  it('replays a recorded failure whose stack differs from anything this engine would record', async () => {
    const world = new TestWorld();
    const wf = defineWorkflow({
      name: 'catches',
      version: 1,
      *run(ctx) {
        let caught = '';
        try {
          yield* ctx.activity('charge', () => chargeCard(), { retry: { maxAttempts: 1 } });
        } catch (error) {
          caught = String((error as Error & { failure: SerializedError }).failure.stack);
        }
        yield* ctx.sleep(1000);
        return caught.split('\n')[1]?.trim();
      },
    });
    const a = await world.engine([wf], { mapStack: (stack) => stack.replace('chargeCard', 'fromEngineA') });
    await a.start('catches', undefined, { id: 'r1' });
    await world.idle();
    expect((await a.describe('r1')).status).toBe('running');
    world.crash(a);
    // Rewrite the recorded stack in the store: replay must neither compare it nor re-derive it.
    let rewritten = 0;
    for (const { key, value } of await world.storage.scan('')) {
      if (!value.includes('fromEngineA')) continue;
      await world.storage.batch([
        { type: 'put', key, value: value.replaceAll('fromEngineA', 'rewrittenInTheStore') },
      ]);
      rewritten++;
    }
    expect(rewritten).toBeGreaterThan(0);
    const b = await world.engine([wf], { mapStack: (stack) => stack.replace('chargeCard', 'fromEngineB') });
    await world.advance(1500, { stepMs: 100, engines: [b] });
    expect(await b.handle('r1').result()).toMatch(/^at rewrittenInTheStore \(/);
    expect((await b.timeline('r1')).some((entry) => entry.kind === 'failed')).toBe(false);
  });
});
