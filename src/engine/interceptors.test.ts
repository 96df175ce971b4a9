/**
 * Activity interceptors (`createEngine({ interceptors: { activities } })`): middleware around every activity
 * attempt, outermost first. Each is told which activity of which run it wraps; it may run the activity
 * (`next`), change the context it gets, return without running it (a mock), or throw (a failed attempt,
 * retried by its policy). What it returns is recorded as the activity's result; a replay never calls it.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import { createEngine } from './engine';
import { TestWorld } from './engine.test-support';
import { InvalidOptionsError } from './errors';
import { defineWorkflow, type ActivityCall, type ActivityInterceptor } from './workflow';

let ran: string[] = [];

const pipeline = defineWorkflow({
  name: 'pipeline',
  version: 1,
  *run(ctx) {
    const fetched = yield* ctx.activity('fetch', () => {
      ran.push('fetch');
      return 'real data';
    });
    const [a, b] = yield* ctx.all([
      ctx.activity('left', ({ attempt }) => `left#${attempt}`),
      ctx.activity('right', ({ attempt }) => `right#${attempt}`, { retry: { initialIntervalMs: 10 } }),
    ]);
    return { fetched, a, b };
  },
});

describe('activity interceptors', () => {
  it('wrap every attempt outermost first; may mock, fail or pass through; results are recorded', async () => {
    ran = [];
    const seen: string[] = [];
    const calls: Omit<ActivityCall, 'context'>[] = [];
    const outer: ActivityInterceptor = async (call, next) => {
      const { context: _context, ...rest } = call;
      calls.push(rest);
      seen.push(`outer>${call.activity}#${call.context.attempt}`);
      const value = await next(call.context);
      seen.push(`outer<${call.activity}`);
      return value;
    };
    const inner: ActivityInterceptor = (call, next) => {
      seen.push(`inner>${call.activity}`);
      if (call.activity === 'fetch') return 'mocked data'; // never runs the activity
      if (call.activity === 'right' && call.context.attempt === 1) throw new Error('flaky downstream');
      return next(call.context);
    };
    const world = new TestWorld();
    const engine = await world.engine([pipeline], { interceptors: { activities: [outer, inner] } });
    const handle = await engine.start(pipeline, undefined, { id: 'p' });
    await world.idle();
    await world.advance(10);
    await world.idle();
    expect(await handle.result()).toEqual({ fetched: 'mocked data', a: 'left#1', b: 'right#2' });
    expect(ran).toEqual([]);
    expect(seen.slice(0, 3)).toEqual(['outer>fetch#1', 'inner>fetch', 'outer<fetch']);
    expect(seen).toContain('outer>right#2');
    expect(calls[0]).toEqual({
      workflowId: 'p',
      workflowType: 'pipeline',
      run: 1,
      activity: 'fetch',
      position: 0,
      member: 0,
    });
    expect(calls.filter((call) => call.activity === 'right').map((call) => call.member)).toEqual([1, 1]);
    // The mock's value is the recorded result: a replay (another engine, without interceptors) keeps it.
    expect(await engine.operationOutcome('p', { pos: 0 })).toMatchObject({ ok: true, value: 'mocked data' });
    const timeline = await engine.timeline('p');
    expect(timeline.filter((entry) => entry.kind === 'activity-failed')).toHaveLength(1);
    await world.shutdownAll();
  });

  it('are refused at construction unless an array of functions, saying so', async () => {
    for (const [interceptors, message] of [
      [[], /must be an object like \{ activities/],
      [{ signals: [] }, /Unknown interceptor kind 'signals'.*the kinds are: activities, workflows/],
      [{ activities: 'log' }, /must be an array of functions/],
      [{ activities: [() => 1, 2] }, /must be an array of functions/],
    ] as const) {
      const failure = await createEngine({
        storage: new MemoryStorage(),
        interceptors: interceptors as never,
      }).then(
        async (engine) => {
          await engine.shutdown();
          return null;
        },
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(InvalidOptionsError);
      expect((failure as Error).message).toMatch(message);
    }
  });
});
