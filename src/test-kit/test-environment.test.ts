/**
 * The test kit (`shuttle/testing`): time is skipped, not waited for — timers fire at their own times, in
 * order, and the work each starts settles before the next; `result()` skips from timer to timer and says so
 * when only the test can move the workflow on; mocks replace activities by name (their failures retried on
 * skipped time) and are recorded; real activities run.
 */
import { describe, expect, it } from 'vitest';
import { defineWorkflow, WorkflowFailedError } from '../engine';
import { createTestEnvironment, TestEnvironmentStalledError } from './index';

/** Reminds every day for a week unless cancelled by a `stop` signal; charges through a flaky gateway. */
const subscription = defineWorkflow({
  name: 'subscription',
  version: 1,
  *run(ctx, input: { days: number }) {
    const log: string[] = [];
    for (let day = 1; day <= input.days; day++) {
      const stop = yield* ctx.waitForSignal<string>('stop', { timeoutMs: 24 * 3_600_000 });
      if (stop !== undefined) return { stopped: day, log };
      log.push(yield* ctx.activity('remind', () => `real reminder ${day}`));
      ctx.state.day = day;
    }
    const receipt = yield* ctx.activity('charge', () => 'real charge', {
      retry: { maxAttempts: 5, initialIntervalMs: 60_000, maxIntervalMs: 600_000 },
    });
    return { receipt, log };
  },
});

const waitsForApproval = defineWorkflow({
  name: 'approval',
  version: 1,
  *run(ctx) {
    return yield* ctx.waitForSignal('approve');
  },
});

/** Asks a person (an external activity), then files the decision. */
const approvalByPerson = defineWorkflow({
  name: 'approval-by-person',
  version: 1,
  *run(ctx) {
    const decision = yield* ctx.activity('ask-person', () => undefined, {
      completion: 'external',
      retry: { maxAttempts: 2, initialIntervalMs: 1_000 },
    });
    return { filed: decision };
  },
});

/** Every run sleeps an hour and continues as new, three times. */
const chain = defineWorkflow({
  name: 'chain',
  version: 1,
  *run(ctx, input: { left: number }) {
    yield* ctx.sleep(3_600_000);
    if (input.left > 0) return yield* ctx.continueAsNew({ left: input.left - 1 });
    return 'done';
  },
});

describe('the test kit', () => {
  it('skips a week of timers in order, mocks an activity by name and retries its failures on skipped time', async () => {
    let charges = 0;
    const env = await createTestEnvironment({
      workflows: [subscription],
      activities: {
        charge: ({ attempt }) => {
          charges++;
          if (attempt < 3) throw new Error('gateway down');
          return `mock receipt #${attempt}`;
        },
      },
    });
    const startedAt = env.now();
    const handle = await env.engine.start(subscription, { days: 7 }, { id: 'sub' });
    await env.advanceTime(2.5 * 24 * 3_600_000);
    // Two days fired at their own times; the real activity ran for each.
    expect(await env.state('sub')).toEqual({ day: 2 });
    const result = await env.result(handle);
    expect(result).toEqual({
      receipt: 'mock receipt #3',
      log: Array.from({ length: 7 }, (_, i) => `real reminder ${i + 1}`),
    });
    expect(charges).toBe(3);
    expect(env.activityCalls.map(({ activity, attempt }) => `${activity}#${attempt}`)).toEqual([
      'charge#1',
      'charge#2',
      'charge#3',
    ]);
    // A week, then the retry waits (1 min, 2 min), and not a moment more.
    expect(env.now() - startedAt).toBe(7 * 24 * 3_600_000 + 60_000 + 120_000);
    await env.close();
  });

  it('keeps workflow interceptors given as engine options beside its mocks', async () => {
    const env = await createTestEnvironment({
      workflows: [waitsForApproval],
      engine: {
        interceptors: {
          workflows: [{ signal: (call, next) => next({ ...(call.payload as object), checked: true }) }],
        },
      },
    });
    await env.engine.start(waitsForApproval, undefined, { id: 'a' });
    await env.signal('a', 'approve', { by: 'ops' });
    expect(await env.result('a')).toEqual({ by: 'ops', checked: true });
    await env.close();
  });

  it('sends signals, and result() says what the workflow waits on when no timer can move it', async () => {
    const env = await createTestEnvironment({ workflows: [subscription, waitsForApproval] });
    await env.engine.start(waitsForApproval, undefined, { id: 'a' });
    const stalled = await env.result('a').then(
      () => null,
      (error: unknown) => error,
    );
    expect(stalled).toBeInstanceOf(TestEnvironmentStalledError);
    expect((stalled as Error).message).toContain(
      "Workflow 'a' is still running and no timer will move it on",
    );
    expect((stalled as Error).message).toContain("signal 'approve'");
    await env.signal('a', 'approve', { by: 'ops' });
    expect(await env.result('a')).toEqual({ by: 'ops' });

    await env.engine.start(subscription, { days: 7 }, { id: 'sub' });
    await env.advanceTime(24 * 3_600_000 + 1);
    await env.signal('sub', 'stop', 'enough');
    expect(await env.result('sub')).toEqual({ stopped: 2, log: ['real reminder 1'] });
    await env.close();
  });

  it('stops at the time limit; follows continue-as-new; rejects like result() for a failed workflow', async () => {
    const env = await createTestEnvironment({
      workflows: [subscription, chain],
      activities: {
        charge: () => {
          throw new Error('card declined');
        },
      },
    });
    const handle = await env.engine.start(chain, { left: 3 }, { id: 'c' });
    const limited = await env.result(handle, { timeLimitMs: 90 * 60_000 }).then(
      () => null,
      (error: unknown) => error,
    );
    expect((limited as Error).message).toMatch(/still running after 5400000 ms of skipped time/);
    expect(await env.result(handle)).toBe('done');
    expect((await env.engine.runs('c')).map((run) => run.status)).toEqual([
      'completed',
      'continued-as-new',
      'continued-as-new',
      'continued-as-new',
    ]);
    await env.engine.start(subscription, { days: 0 }, { id: 'declined' });
    await expect(env.result('declined')).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(env.activityCalls.filter((call) => call.workflowId === 'declined')).toHaveLength(5);
    await env.close();
  });

  it('a mock of an external activity completes it (or fails it) as the outside would', async () => {
    const env = await createTestEnvironment({
      workflows: [approvalByPerson],
      activities: {
        'ask-person': ({ attempt }) => {
          if (attempt === 1) throw new Error('nobody answered');
          return { approved: true, by: 'ada' };
        },
      },
    });
    const handle = await env.engine.start(approvalByPerson, undefined, { id: 'ext' });
    expect(await env.result(handle)).toEqual({ filed: { approved: true, by: 'ada' } });
    expect(env.activityCalls.map((call) => call.attempt)).toEqual([1, 2]);
    await env.close();
  });

  it('refuses bad options and bad time, saying what it needs', async () => {
    await expect(createTestEnvironment({} as never)).rejects.toThrow(/needs \{ workflows/);
    await expect(
      createTestEnvironment({ workflows: [], activities: { charge: 'free' as never } }),
    ).rejects.toThrow("The mock of activity 'charge' must be a function");
    const env = await createTestEnvironment({ workflows: [] });
    await expect(env.advanceTime(-1)).rejects.toThrow(/advanceTime takes a number of milliseconds ≥ 0/);
    await env.close();
  });
});
