/**
 * Crash-and-recover: an engine dropped at any operation boundary is replaced by a new engine on the same
 * store, which finishes the workflow with every recorded operation run exactly once. Also crashes in the
 * middle of each kind of wait: retry backoff, sleep, signal wait, child, update.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TestWorld, type TestEngine } from './engine.test-support';
import { CancelledError } from './errors';
import { defineWorkflow } from './workflow';

/** Counts every activity invocation by name. */
function makeWorkflows(runs: Map<string, number>) {
  const count = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);
  const child = defineWorkflow({
    name: 'crash-child',
    version: 1,
    *run(ctx, input: { n: number }) {
      const doubled = yield* ctx.activity('child-double', () => (count('child-double'), input.n * 2));
      yield* ctx.sleep(200);
      return doubled;
    },
  });
  const parent = defineWorkflow({
    name: 'crash-parent',
    version: 1,
    *run(ctx) {
      ctx.state.approved = false;
      const a = yield* ctx.activity('first', () => (count('first'), 1));
      const flaky = yield* ctx.activity(
        'flaky',
        ({ attempt }) => {
          count(`flaky#${attempt}`);
          if (attempt < 3) throw new Error(`flaky ${attempt}`);
          return 10;
        },
        { retry: { maxAttempts: 5, initialIntervalMs: 100 } },
      );
      yield* ctx.sleep(500);
      const signal = yield* ctx.waitForSignal<number>('go');
      const kid = yield* ctx.startChild(child, { n: 21 }, { id: `${ctx.workflowId}-kid` });
      const [x, y] = yield* ctx.all([
        ctx.activity('par-x', () => (count('par-x'), 'x')),
        ctx.activity('par-y', () => (count('par-y'), 'y')),
      ]);
      yield* ctx.waitUntil(() => ctx.state.approved === true);
      const stamp = yield* ctx.uuid();
      const last = yield* ctx.activity('last', () => (count('last'), 100));
      return { sum: a + flaky + (signal ?? 0) + kid + last, x, y, stampLength: stamp.length };
    },
    updates: { approve: { handle: (state) => ((state.approved = true), 'approved') } },
  });
  return { parent, child };
}

const expected = { sum: 1 + 10 + 5 + 42 + 100, x: 'x', y: 'y', stampLength: 36 };

/** Drives the workflow on whichever engine is alive: sends its signal and update when it waits on them. */
async function drive(world: TestWorld, engine: () => TestEngine, id: string): Promise<void> {
  for (let step = 0; step < 200; step++) {
    const current = engine();
    const description = await current.describe(id);
    if (description.status !== 'running') return;
    const leaves = description.pending?.leaves ?? [];
    if (description.pending?.kind === 'signal') await current.signal(id, 'go', 5);
    if (description.pending?.kind === 'until' && leaves.some((leaf) => !leaf.done))
      await current.update(id, 'approve').catch(() => undefined);
    await world.advance(100);
  }
  throw new Error('workflow did not finish');
}

async function countCommits(): Promise<number> {
  const runs = new Map<string, number>();
  const { parent, child } = makeWorkflows(runs);
  const world = new TestWorld();
  const engine = await world.engine([parent, child]);
  let commits = 0;
  engine.subscribe((event) => {
    if (event.type === 'operation.committed' && event.workflowId === 'w') commits++;
  });
  await engine.start(parent, undefined, { id: 'w' });
  await drive(world, () => engine, 'w');
  expect(await engine.handle('w').result()).toEqual(expected);
  return commits;
}

/** Runs to completion with a crash right after commit #boundary; returns invocation counts, and which
 * activities were in flight (started, not recorded) at the crash: those may run again. */
async function crashAt(boundary: number): Promise<{ runs: Map<string, number>; inFlight: string[] }> {
  const runs = new Map<string, number>();
  const { parent, child } = makeWorkflows(runs);
  const world = new TestWorld();
  const a = await world.engine([parent, child]);
  let live: TestEngine = a;
  let commits = 0;
  a.subscribe((event) => {
    if (event.type === 'operation.committed' && event.workflowId === 'w' && ++commits === boundary) {
      // The process dies right after the commit landed, before anything else runs.
      world.crash(a);
      void a.shutdown();
    }
  });
  // The test talks to the workflow through an observer engine, which survives A's crash.
  const observer = await world.engine([parent, child], { claimWorkflows: false, recover: false });
  await a.start(parent, undefined, { id: 'w' });
  for (let step = 0; step < 200 && live === a; step++) {
    if (commits >= boundary) break;
    const description = await observer.describe('w');
    if (description.status !== 'running') break;
    if (description.pending?.kind === 'signal') await observer.signal('w', 'go', 5);
    if (description.pending?.kind === 'until') void observer.update('w', 'approve').catch(() => undefined);
    await world.advance(100);
  }
  const b = await world.engine([parent, child], { recover: false });
  live = b;
  const atCrash = await b.describe('w');
  const inFlight = (atCrash.pending?.leaves ?? [])
    .filter((leaf) => leaf.kind === 'activity' && !leaf.done && !leaf.retrying)
    .map((leaf) => leaf.name);
  await b.recoverAll();
  await drive(world, () => b, 'w');
  expect(await b.handle('w').result()).toEqual(expected);
  return { runs, inFlight };
}

describe('crash at any operation boundary', () => {
  it('every recorded operation runs exactly once, for every boundary', async () => {
    const total = await countCommits();
    expect(total).toBeGreaterThan(8);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: total }), async (boundary) => {
        const { runs, inFlight } = await crashAt(boundary);
        for (const [name, count] of runs) {
          // An activity in flight at the crash is at-least-once; every recorded one ran exactly once.
          const limit = inFlight.some((activity) => name === activity || name.startsWith(`${activity}#`))
            ? 2
            : 1;
          expect(
            count,
            `${name} ran ${count} times with a crash after commit #${boundary}`,
          ).toBeLessThanOrEqual(limit);
          expect(count).toBeGreaterThanOrEqual(1);
        }
        const kinds = new Set([...runs.keys()].map((name) => name.split('#')[0]));
        expect([...kinds].sort()).toEqual(['child-double', 'first', 'flaky', 'last', 'par-x', 'par-y']);
      }),
      { numRuns: total, examples: Array.from({ length: total }, (_, i) => [i + 1]) },
    );
  });
});

describe('crash in the middle of each kind of wait', () => {
  async function crashWhile(
    predicate: (description: Awaited<ReturnType<TestEngine['describe']>>) => boolean,
  ) {
    const runs = new Map<string, number>();
    const { parent, child } = makeWorkflows(runs);
    const world = new TestWorld();
    const a = await world.engine([parent, child]);
    await a.start(parent, undefined, { id: 'w' });
    let crashed = false;
    for (let step = 0; step < 100; step++) {
      await world.idle();
      const description = await a.describe('w');
      if (predicate(description)) {
        world.crash(a);
        crashed = true;
        break;
      }
      if (description.pending?.kind === 'signal') await a.signal('w', 'go', 5);
      if (description.pending?.kind === 'until') await a.update('w', 'approve');
      await world.advance(50);
    }
    expect(crashed).toBe(true);
    const b = await world.engine([parent, child]);
    await drive(world, () => b, 'w');
    expect(await b.handle('w').result()).toEqual(expected);
    return runs;
  }

  it('during an activity retry backoff', async () => {
    const runs = await crashWhile((d) => d.pending?.leaves[0]?.retrying === true);
    expect(runs.get('flaky#1')).toBe(1);
    expect(runs.get('first')).toBe(1);
  });

  it('during a sleep', async () => {
    const runs = await crashWhile((d) => d.pending?.kind === 'sleep');
    expect(runs.get('flaky#3')).toBe(1);
  });

  it('during a signal wait', async () => {
    const runs = await crashWhile((d) => d.pending?.kind === 'signal');
    expect(runs.get('flaky#3')).toBe(1);
  });

  it('while waiting on a child', async () => {
    const runs = await crashWhile((d) => d.pending?.kind === 'child');
    expect(runs.get('child-double')).toBe(1);
  });

  it('while waiting for an update', async () => {
    const runs = await crashWhile((d) => d.pending?.kind === 'until');
    expect(runs.get('par-x')).toBe(1);
  });
});

describe('cancellation survives a crash', () => {
  it('a cancel request stored while the owner is dead is delivered by the next owner', async () => {
    const cleanups: string[] = [];
    const wf = defineWorkflow({
      name: 'cancel-crash',
      version: 1,
      *run(ctx) {
        try {
          yield* ctx.sleep(60_000);
        } catch (error) {
          if (error instanceof CancelledError)
            yield* ctx.activity('cleanup', () => void cleanups.push('done'));
          throw error;
        }
      },
    });
    const world = new TestWorld();
    const a = await world.engine([wf]);
    await a.start(wf, undefined, { id: 'c' });
    await world.idle();
    world.crash(a);
    const b = await world.engine([wf], { recover: false });
    await b.cancel('c', 'while nobody watched');
    const c = await world.engine([wf]);
    await world.idle([b, c]);
    expect((await c.describe('c')).status).toBe('cancelled');
    expect(cleanups).toEqual(['done']);
  });
});
