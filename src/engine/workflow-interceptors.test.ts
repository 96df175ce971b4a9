/**
 * Workflow interceptors (`createEngine({ interceptors: { workflows } })`): middleware around what a workflow
 * receives — its execution, signals, updates and queries — outermost first. `execute` runs on every replay
 * (here: again on the engine that takes the workflow over, seeing the same input); `signal` and `update` run
 * live only, and what they produce is recorded; a throwing interceptor fails what it wraps, saying so.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import { createEngine } from './engine';
import { TestWorld, fencing } from './engine.test-support';
import { InvalidOptionsError, QueryFailedError, UpdateRejectedError } from './errors';
import { defineWorkflow, type WorkflowInterceptor } from './workflow';

type State = { approvedBy: string | null };

const approval = defineWorkflow<{ amount: number }, unknown, State>({
  name: 'approval',
  version: 1,
  *run(ctx, input) {
    ctx.state.approvedBy = null;
    const quote = yield* ctx.activity('quote', () => input.amount * 2);
    const note = yield* ctx.waitForSignal<string>('note');
    yield* ctx.waitUntil(() => ctx.state.approvedBy !== null);
    return { amount: input.amount, quote, note, approvedBy: ctx.state.approvedBy };
  },
  queries: { approver: (state) => state.approvedBy ?? 'nobody' },
  updates: {
    approve: {
      handle: (state, by) => {
        state.approvedBy = String(by);
        return `approved by ${String(by)}`;
      },
    },
  },
});

/** An interceptor that logs every call it wraps as `<label><kind>:<value>` and may rewrite values. */
function logging(label: string, log: string[], rewrite = false): WorkflowInterceptor {
  return {
    *execute(call, next) {
      log.push(`${label}execute:${JSON.stringify(call.input)}:${call.isReplaying ? 'replay' : 'new'}`);
      const input = rewrite ? { amount: (call.input as { amount: number }).amount + 1 } : call.input;
      const result = yield* next(input);
      log.push(`${label}executed`);
      return result;
    },
    signal(call, next) {
      log.push(`${label}signal:${call.name}:${String(call.payload)}@${call.position}`);
      return next(rewrite ? `${String(call.payload)}!` : call.payload);
    },
    update(call, next) {
      log.push(`${label}update:${call.name}:${String(call.arg)}`);
      return next(rewrite ? String(call.arg).toUpperCase() : call.arg);
    },
    query(call, next) {
      log.push(`${label}query:${call.name}:${JSON.stringify(call.state)}`);
      const value = next(call.arg);
      return rewrite ? `<${String(value)}>` : value;
    },
  };
}

describe('workflow interceptors', () => {
  it('wrap execution, signals, updates and queries, outermost first; what they pass on is what runs', async () => {
    const log: string[] = [];
    const world = new TestWorld();
    const engine = await world.engine([approval], {
      interceptors: { workflows: [logging('outer/', log, true), logging('inner/', log)] },
    });
    await engine.start(approval, { amount: 10 }, { id: 'w' });
    await world.idle();
    expect(log).toEqual([
      'outer/execute:{"amount":10}:new',
      'inner/execute:{"amount":11}:new', // the outer one's input
    ]);
    await engine.signal('w', 'note', 'rush');
    await world.idle();
    expect(log.slice(2)).toEqual(['outer/signal:note:rush@1', 'inner/signal:note:rush!@1']);
    expect(await engine.update('w', 'approve', 'ann')).toBe('approved by ANN');
    await world.idle();
    expect(await engine.handle('w').result()).toEqual({
      amount: 11,
      quote: 22,
      note: 'rush!',
      approvedBy: 'ANN',
    });
    // The update let the workflow end: its generator returned through both.
    expect(log.slice(4)).toEqual([
      'outer/update:approve:ann',
      'inner/update:approve:ANN',
      'inner/executed',
      'outer/executed',
    ]);
    expect(await engine.query('w', 'approver')).toBe('<ANN>');
    expect(log.slice(8)).toEqual([
      'outer/query:approver:{"approvedBy":"ANN"}',
      'inner/query:approver:{"approvedBy":"ANN"}',
    ]);
    // The rewritten signal is what was recorded: a replay reads it without asking the interceptors.
    expect(await engine.operationOutcome('w', { pos: 1 })).toMatchObject({ ok: true, value: 'rush!' });
    await world.shutdownAll();
  });

  it('execute runs again when another engine takes the workflow over, with the same input', async () => {
    const seen: { engine: string; input: unknown; isReplaying: boolean }[] = [];
    const watching = (engine: string): WorkflowInterceptor => ({
      *execute(call, next) {
        seen.push({ engine, input: call.input, isReplaying: call.isReplaying });
        return yield* next(call.input);
      },
      signal: (call, next) => next(`${engine}:${String(call.payload)}`),
    });
    const world = new TestWorld();
    const a = await world.engine([approval], { ...fencing, interceptors: { workflows: [watching('A')] } });
    await a.start(approval, { amount: 3 }, { id: 'w' });
    await world.idle();
    await a.signal('w', 'note', 'first');
    await world.idle();
    expect((await a.describe('w')).pending?.kind).toBe('until');
    world.crash(a);
    const b = await world.engine([approval], { ...fencing, interceptors: { workflows: [watching('B')] } });
    for (let i = 0; i < 10 && !seen.some((s) => s.engine === 'B'); i++)
      await world.advance(1000, { engines: [b] });
    expect(await b.update('w', 'approve', 'bo')).toBe('approved by bo');
    await world.idle([b]);
    expect(await b.handle('w').result()).toEqual({ amount: 3, quote: 6, note: 'A:first', approvedBy: 'bo' });
    expect(seen).toEqual([
      { engine: 'A', input: { amount: 3 }, isReplaying: false },
      { engine: 'B', input: { amount: 3 }, isReplaying: true },
    ]);
    await world.shutdownAll();
  });

  it('a throwing interceptor fails what it wraps, with its error', async () => {
    const world = new TestWorld();
    const failing = await world.engine([approval], {
      interceptors: {
        workflows: [
          {
            signal: () => {
              throw new TypeError('signal refused by policy');
            },
            update: () => {
              throw new Error('not allowed');
            },
            query: () => {
              throw new Error('no peeking');
            },
          },
        ],
      },
    });
    await failing.start(approval, { amount: 1 }, { id: 'w' });
    await world.idle();
    await expect(failing.update('w', 'approve', 'x')).rejects.toThrow(UpdateRejectedError);
    await expect(failing.update('w', 'approve', 'x')).rejects.toThrow(/not allowed/);
    await expect(failing.query('w', 'approver')).rejects.toThrow(QueryFailedError);
    await expect(failing.query('w', 'approver')).rejects.toThrow(/no peeking/);
    // The wait for the signal throws the interceptor's error: uncaught, it fails the workflow.
    await failing.signal('w', 'note', 'hi');
    await world.idle();
    const signalled = await failing.describe('w');
    expect(signalled.status).toBe('failed');
    expect(signalled.error).toMatchObject({ name: 'TypeError', message: 'signal refused by policy' });

    const other = new TestWorld();
    const broken = await other.engine([approval], {
      interceptors: {
        workflows: [
          {
            *execute() {
              throw new Error('execution blocked');
            },
          },
        ],
      },
    });
    await broken.start(approval, { amount: 1 }, { id: 'e' });
    await other.idle();
    expect((await broken.describe('e')).error).toMatchObject({ message: 'execution blocked' });
    const notGenerator = await other.engine([approval], {
      interceptors: { workflows: [{ execute: (() => 42) as never }] },
    });
    await notGenerator.start(approval, { amount: 1 }, { id: 'g' });
    await other.idle();
    expect((await notGenerator.describe('g')).error?.message).toMatch(
      /interceptor #0's execute returned number, not a generator/,
    );
    await world.shutdownAll();
    await other.shutdownAll();
  });

  it('are refused at construction unless an array of objects of known methods, saying so', async () => {
    for (const [workflows, message] of [
      [{}, /interceptors.workflows must be an array of objects/],
      [[() => 1], /workflows\[0\] must be an object with any of execute, signal, update, query/],
      [[{ execute() {} }, { handleSignal() {} }], /workflows\[1\] has 'handleSignal'/],
      [[{ update: 'log' }], /workflows\[0\].update must be a function/],
    ] as const) {
      const failure = await createEngine({
        storage: new MemoryStorage(),
        interceptors: { workflows: workflows as never },
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
