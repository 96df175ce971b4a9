/**
 * The context operations of docs/engine.md, one describe block per row of its operations table.
 */
import { describe, expect, it } from 'vitest';
import { TestWorld } from './engine.test-support';
import { ActivityFailedError, CancelledError, ChildWorkflowFailedError } from './errors';
import { defineWorkflow } from './workflow';

describe('ctx.activity', () => {
  it('records the result before the generator continues and never runs a completed activity again', async () => {
    let runs = 0;
    const wf = defineWorkflow({
      name: 'act',
      version: 1,
      *run(ctx) {
        const a = yield* ctx.activity('one', () => ++runs);
        yield* ctx.sleep(10);
        return a;
      },
    });
    const world = new TestWorld();
    const a = await world.engine([wf]);
    await a.start(wf, undefined, { id: 'x' });
    await world.idle();
    world.crash(a);
    const b = await world.engine([wf]);
    await world.advance(10);
    expect(await b.handle('x').result()).toBe(1);
    expect(runs).toBe(1);
  });

  it('retries with exponential backoff capped at maxIntervalMs, as durable timers', async () => {
    const attempts: { attempt: number; at: number }[] = [];
    const world = new TestWorld();
    const wf = defineWorkflow({
      name: 'retry',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity(
          'flaky',
          ({ attempt }) => {
            attempts.push({ attempt, at: world.clock.now() });
            if (attempt < 4) throw new Error(`boom ${attempt}`);
            return 'ok';
          },
          { retry: { maxAttempts: 5, initialIntervalMs: 100, backoffCoefficient: 3, maxIntervalMs: 500 } },
        );
      },
    });
    const engine = await world.engine([wf]);
    const start = world.clock.now();
    await engine.start(wf, undefined, { id: 'r' });
    await world.idle();
    await world.advance(2000, { stepMs: 50 });
    expect(await engine.handle('r').result()).toBe('ok');
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    // waits: 100, 300, 500 (capped from 900)
    expect(attempts.map((a) => a.at - start)).toEqual([0, 100, 400, 900]);
    const kinds = (await engine.timeline('r')).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'activity-retry-scheduled')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'activity-failed')).toHaveLength(3);
  });

  it('fails with ActivityFailedError after the last attempt, and at once for a non-retryable error name', async () => {
    let calls = 0;
    const wf = defineWorkflow({
      name: 'nonretry',
      version: 1,
      *run(ctx, input: { nonRetryable: boolean }) {
        try {
          yield* ctx.activity(
            'bad',
            () => {
              calls++;
              const error = new Error('card declined');
              error.name = 'DeclinedError';
              throw error;
            },
            {
              retry: {
                maxAttempts: 3,
                initialIntervalMs: 10,
                nonRetryable: input.nonRetryable ? ['DeclinedError'] : [],
              },
            },
          );
        } catch (error) {
          if (!(error instanceof ActivityFailedError)) throw new Error('expected ActivityFailedError');
          return { attempts: error.attempts, cause: (error.cause as Error).name, message: error.message };
        }
        return null;
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, { nonRetryable: true }, { id: 'n1' });
    await world.advance(100, { stepMs: 10 });
    expect(await engine.handle('n1').result()).toMatchObject({ attempts: 1, cause: 'DeclinedError' });
    expect(calls).toBe(1);
    await engine.start(wf, { nonRetryable: false }, { id: 'n2' });
    await world.advance(200, { stepMs: 10 });
    expect(await engine.handle('n2').result()).toMatchObject({ attempts: 3, cause: 'DeclinedError' });
    expect(calls).toBe(4);
  });

  it('aborts an attempt that exceeds timeoutMs through its AbortSignal and retries', async () => {
    const world = new TestWorld();
    const aborted: number[] = [];
    const wf = defineWorkflow({
      name: 'timeout',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity(
          'slow',
          ({ attempt, signal }) =>
            new Promise<string>((resolve) => {
              if (attempt >= 2) return resolve(`done on ${attempt}`);
              signal.addEventListener('abort', () => aborted.push(attempt));
            }),
          { timeoutMs: 1000, retry: { maxAttempts: 3, initialIntervalMs: 10 } },
        );
      },
    });
    const engine = await world.engine([wf]);
    await engine.start(wf, undefined, { id: 't' });
    await world.advance(1200, { stepMs: 100 });
    expect(aborted).toEqual([1]);
    expect(await engine.handle('t').result()).toBe('done on 2');
    const failed = (await engine.timeline('t')).find((e) => e.kind === 'activity-failed');
    expect(JSON.stringify(failed?.detail)).toContain('ActivityTimeoutError');
  });

  it('treats an unstorable result as a non-retryable failure', async () => {
    const wf = defineWorkflow({
      name: 'unstorable',
      version: 1,
      *run(ctx) {
        yield* ctx.activity('fn', () => () => 1);
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, undefined, { id: 'u' });
    await world.idle();
    await expect(engine.handle('u').result()).rejects.toThrow(/cannot be stored/);
  });
});

describe('ctx.sleep', () => {
  it('fires only when the simulated time reaches it, and survives a crash', async () => {
    const wf = defineWorkflow({
      name: 'sleeper',
      version: 1,
      *run(ctx) {
        const before = yield* ctx.now();
        yield* ctx.sleep(5000);
        const after = yield* ctx.now();
        return after - before;
      },
    });
    const world = new TestWorld();
    const a = await world.engine([wf]);
    await a.start(wf, undefined, { id: 's' });
    await world.advance(4999);
    expect((await a.describe('s')).status).toBe('running');
    world.crash(a);
    const b = await world.engine([wf]);
    await world.advance(1);
    expect(await b.handle('s').result()).toBe(5000);
  });
});

describe('ctx.waitForSignal', () => {
  const wf = defineWorkflow({
    name: 'signals',
    version: 1,
    *run(ctx, input: { count: number; timeoutMs?: number }) {
      const got: unknown[] = [];
      for (let i = 0; i < input.count; i++)
        got.push(
          yield* ctx.waitForSignal(
            'item',
            input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs },
          ),
        );
      return got;
    },
  });

  it('buffers signals sent before the wait and consumes each once, in send order', async () => {
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, { count: 3 }, { id: 'sg', startDelayMs: 1000 });
    await engine.signal('sg', 'item', 'a');
    await engine.signal('sg', 'item', 'b');
    await engine.signal('sg', 'other', 'x');
    await world.advance(1000);
    await engine.signal('sg', 'item', 'c');
    await world.idle();
    expect(await engine.handle('sg').result()).toEqual(['a', 'b', 'c']);
  });

  it('returns undefined on timeout', async () => {
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, { count: 1, timeoutMs: 2000 }, { id: 'to' });
    await world.advance(1999);
    expect((await engine.describe('to')).status).toBe('running');
    await world.advance(1);
    expect(await engine.handle('to').result()).toEqual([null]);
  });
});

describe('ctx.waitUntil', () => {
  const wf = defineWorkflow({
    name: 'until',
    version: 1,
    *run(ctx) {
      ctx.state.approved = false;
      const ok = yield* ctx.waitUntil(() => ctx.state.approved === true, { timeoutMs: 10_000 });
      return ok;
    },
    updates: {
      approve: {
        handle: (state) => {
          state.approved = true;
          return 'approved';
        },
      },
    },
  });

  it('re-checks after an update that changes state', async () => {
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, undefined, { id: 'u1' });
    await world.idle();
    expect((await engine.describe('u1')).pending?.kind).toBe('until');
    expect(await engine.update('u1', 'approve')).toBe('approved');
    await world.idle();
    expect(await engine.handle('u1').result()).toBe(true);
  });

  it('resolves false on timeout', async () => {
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, undefined, { id: 'u2' });
    await world.advance(10_000);
    expect(await engine.handle('u2').result()).toBe(false);
  });
});

describe('ctx.startChild', () => {
  const child = defineWorkflow({
    name: 'child',
    version: 1,
    *run(ctx, input: { fail?: boolean; sleepMs?: number }) {
      if (input.sleepMs) yield* ctx.sleep(input.sleepMs);
      if (input.fail) throw new Error('child exploded');
      return `child of ${ctx.workflowId}`;
    },
  });
  const parent = defineWorkflow({
    name: 'parent',
    version: 1,
    *run(ctx, input: { policy: 'await' | 'abandon' | 'terminate'; fail?: boolean }) {
      try {
        const value = yield* ctx.startChild(
          child,
          { fail: input.fail, sleepMs: input.policy === 'await' ? 0 : 5000 },
          { parentClosePolicy: input.policy, id: `${ctx.workflowId}-kid` },
        );
        return value;
      } catch (error) {
        if (error instanceof ChildWorkflowFailedError) return `caught: ${error.childStatus}`;
        throw error;
      }
    },
  });

  it("'await' returns the child's result", async () => {
    const world = new TestWorld();
    const engine = await world.engine([parent, child]);
    await engine.start(parent, { policy: 'await' }, { id: 'p1' });
    await world.idle();
    expect(await engine.handle('p1').result()).toBe('child of p1-kid');
    expect((await engine.describe('p1-kid')).parentId).toBe('p1');
  });

  it("'await' throws the child's failure in the parent", async () => {
    const world = new TestWorld();
    const engine = await world.engine([parent, child]);
    await engine.start(parent, { policy: 'await', fail: true }, { id: 'p2' });
    await world.idle();
    expect(await engine.handle('p2').result()).toBe('caught: failed');
  });

  it("'abandon' returns the child id at once and the child lives on", async () => {
    const world = new TestWorld();
    const engine = await world.engine([parent, child]);
    await engine.start(parent, { policy: 'abandon' }, { id: 'p3' });
    await world.idle();
    expect(await engine.handle('p3').result()).toBe('p3-kid');
    expect((await engine.describe('p3-kid')).status).toBe('running');
    await world.advance(5000);
    expect((await engine.describe('p3-kid')).status).toBe('completed');
  });

  it("'terminate' terminates the child when the parent ends", async () => {
    const world = new TestWorld();
    const engine = await world.engine([parent, child]);
    await engine.start(parent, { policy: 'terminate' }, { id: 'p4' });
    await world.idle();
    expect(await engine.handle('p4').result()).toBe('p4-kid');
    await world.idle();
    expect((await engine.describe('p4-kid')).status).toBe('terminated');
  });
});

describe('ctx.all and ctx.race', () => {
  it('all returns every result in member order, recording members as they complete', async () => {
    let runs = 0;
    const wf = defineWorkflow({
      name: 'all',
      version: 1,
      *run(ctx) {
        return yield* ctx.all([
          ctx.activity('a', () => (runs++, 'A')),
          ctx.sleep(1000),
          ctx.waitForSignal<string>('go'),
        ]);
      },
    });
    const world = new TestWorld();
    const a = await world.engine([wf]);
    await a.start(wf, undefined, { id: 'all' });
    await world.advance(1000);
    world.crash(a);
    const b = await world.engine([wf]);
    await world.idle();
    await b.signal('all', 'go', 'G');
    await world.idle();
    expect(await b.handle('all').result()).toEqual(['A', null, 'G']);
    expect(runs).toBe(1);
  });

  it('all throws the first failure', async () => {
    const wf = defineWorkflow({
      name: 'all-fail',
      version: 1,
      *run(ctx) {
        try {
          yield* ctx.all([
            ctx.sleep(1000),
            ctx.activity('x', () => Promise.reject(new Error('nope')), { retry: { maxAttempts: 1 } }),
          ]);
        } catch (error) {
          return (error as Error).message;
        }
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, undefined, { id: 'af' });
    await world.idle();
    expect(await engine.handle('af').result()).toMatch(/Activity 'x' failed after 1 attempt: Error: nope/);
  });

  it('race returns the first member to finish and abandons the others', async () => {
    const wf = defineWorkflow({
      name: 'race',
      version: 1,
      *run(ctx) {
        return yield* ctx.race([ctx.waitForSignal('left'), ctx.waitForSignal('right'), ctx.sleep(60_000)]);
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, undefined, { id: 'race' });
    await world.idle();
    await engine.signal('race', 'right', 'R');
    await world.idle();
    expect(await engine.handle('race').result()).toEqual({ index: 1, value: 'R' });
    // the sleep's timer was deleted with the winning commit
    expect(await world.storage.scan('timer:')).toEqual([]);
  });
});

describe('deterministic now, random, uuid and ctx.state', () => {
  it('replay sees the recorded values, and state is saved with each checkpoint', async () => {
    const seen: unknown[] = [];
    const wf = defineWorkflow({
      name: 'values',
      version: 1,
      *run(ctx) {
        const values = { now: yield* ctx.now(), random: yield* ctx.random(), uuid: yield* ctx.uuid() };
        ctx.state.values = values;
        if (!ctx.isReplaying) seen.push(values);
        yield* ctx.sleep(100);
        seen.push(values);
        return values;
      },
      queries: { values: (state) => state.values },
    });
    const world = new TestWorld();
    const a = await world.engine([wf]);
    await a.start(wf, undefined, { id: 'v' });
    await world.idle();
    const stored = await a.query('v', 'values');
    world.crash(a);
    await world.clock.advance(50);
    const b = await world.engine([wf]);
    await world.advance(100);
    const result = await b.handle('v').result();
    expect(result).toEqual(seen[0]);
    expect(stored).toEqual(seen[0]);
    expect(seen[1]).toEqual(seen[0]);
    expect(typeof (result as { uuid: string }).uuid).toBe('string');
  });
});

describe('cancellation', () => {
  it('throws CancelledError at the wait point, allows cleanup operations, and ends cancelled', async () => {
    const cleanup: string[] = [];
    const wf = defineWorkflow({
      name: 'cancellable',
      version: 1,
      *run(ctx) {
        try {
          yield* ctx.sleep(60_000);
        } catch (error) {
          if (!(error instanceof CancelledError)) throw error;
          yield* ctx.activity('cleanup', () => {
            cleanup.push('cleaned');
          });
          yield* ctx.sleep(10);
          return 'cleaned up';
        }
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, undefined, { id: 'c' });
    await world.idle();
    await engine.cancel('c', 'user asked');
    await engine.cancel('c', 'twice');
    await world.idle();
    await world.advance(10);
    expect(cleanup).toEqual(['cleaned']);
    const description = await engine.describe('c');
    expect(description.status).toBe('cancelled');
    await expect(engine.handle('c').result()).rejects.toThrow(/was cancelled: user asked/);
  });
});

describe('activity attempts and heartbeats', () => {
  it('an attempt in flight when its engine dies shows in the timeline, and the re-run is the next attempt', async () => {
    const attempts: number[] = [];
    const wf = defineWorkflow({
      name: 'one-slow-step',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity('work', ({ attempt }) => {
          attempts.push(attempt);
          return attempt === 1 ? new Promise<string>(() => undefined) : 'done';
        });
      },
    });
    const world = new TestWorld();
    const a = await world.engine([wf]);
    await a.start(wf, undefined, { id: 'w' });
    await world.maintain([a]);
    world.crash(a);
    const b = await world.engine([wf]);
    await world.idle([b]);
    expect(await b.handle('w').result()).toBe('done');
    expect(attempts).toEqual([1, 2]);
    const started = (await b.timeline('w')).filter((e) => e.kind === 'activity-started');
    expect(started.map((e) => [e.engineId, e.detail.attempt, e.detail.rerun ?? false])).toEqual([
      [a.id, 1, false],
      [b.id, 2, true],
    ]);
  });

  it('heartbeats reach subscribers as activity.heartbeat events', async () => {
    const wf = defineWorkflow({
      name: 'beating',
      version: 1,
      *run(ctx) {
        yield* ctx.activity('work', ({ heartbeat }) => {
          heartbeat({ doneMs: 1, totalMs: 2 });
          return 'done';
        });
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    await engine.start(wf, undefined, { id: 'w' });
    await world.idle();
    expect(engine.events).toContainEqual({
      type: 'activity.heartbeat',
      workflowId: 'w',
      name: 'work',
      attempt: 1,
      details: { doneMs: 1, totalMs: 2 },
    });
  });
});
