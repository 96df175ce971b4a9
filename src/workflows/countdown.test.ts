import { describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '../engine';
import { countdown } from './countdown';
import { TestWorld, entriesOf } from './workflows.test-support';

describe('countdown', () => {
  it('counts down with one durable sleep per tick and reports the remaining count', async () => {
    const world = new TestWorld();
    const engine = await world.engine([countdown]);
    const handle = await engine.start(countdown, { from: 3, tickMs: 1_000 }, { id: 'cd' });
    await world.idle();
    expect(await engine.query('cd', 'remaining')).toBe(3);

    await world.advance(999);
    expect(await engine.query('cd', 'remaining')).toBe(3);
    await world.advance(1);
    expect(await engine.query('cd', 'remaining')).toBe(2);
    expect(await engine.query('cd', 'progress')).toEqual({ remaining: 2, total: 3 });

    await world.advance(2_000, { stepMs: 1_000 });
    expect(await handle.result()).toEqual({ counted: 3 });
    expect(await engine.query('cd', 'remaining')).toBe(0);
    const timeline = await engine.timeline('cd');
    expect(entriesOf(timeline, 'timer-armed').map((entry) => entry.detail.durationMs)).toEqual([
      1_000, 1_000, 1_000,
    ]);
    expect(entriesOf(timeline, 'timer-fired')).toHaveLength(3);
  });

  it('is handed off to another engine mid-count without repeating a tick (workflow-lease)', async () => {
    const world = new TestWorld();
    const options = { ownership: 'workflow-lease' as const, liveness: world.liveness };
    const a = await world.engine([countdown], options);
    const b = await world.engine([countdown], options);
    await a.start(countdown, { from: 6, tickMs: 500 }, { id: 'cd' });
    await world.idle();
    await world.advance(1_000, { stepMs: 500 });
    expect(await b.query('cd', 'remaining')).toBe(4);

    world.liveness.kill(a.id); // A's tab is closed; only B runs from here on
    await world.advance(2_000, { stepMs: 500, engines: [b] });

    expect(await b.handle('cd').result()).toEqual({ counted: 6 });
    const fired = entriesOf(await b.timeline('cd'), 'timer-fired');
    expect(fired.map((entry) => entry.detail.pos)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(fired.map((entry) => entry.engineId)).toEqual([a.id, a.id, b.id, b.id, b.id, b.id]);
  });

  it('continues as new every ticksPerRun ticks: each run replays its own ticks, the chain counts them all', async () => {
    const world = new TestWorld();
    const options = { ownership: 'workflow-lease' as const, liveness: world.liveness };
    const a = await world.engine([countdown], options);
    const b = await world.engine([countdown], options);
    const handle = await a.start(countdown, { from: 5, tickMs: 500, ticksPerRun: 2 }, { id: 'cd' });
    await world.idle();
    await world.advance(1_500, { stepMs: 500 });
    // Run 2 counts from 3; the chain's total is still 5.
    expect(await b.describe('cd')).toMatchObject({ run: 2, continuedFrom: 1, input: { from: 3, total: 5 } });
    expect(await b.query('cd', 'progress')).toEqual({ remaining: 2, total: 5 });

    world.liveness.kill(a.id); // handed over in the middle of run 2
    await world.advance(2_000, { stepMs: 500, engines: [b] });
    expect(await b.handle('cd', { run: 1 }).result()).toEqual({ counted: 5 });
    expect(await handle.result()).toEqual({ counted: 5 });
    const runs = await b.runs('cd');
    expect(runs.map(({ run, status }) => `${run}:${status}`)).toEqual([
      '3:completed',
      '2:continued-as-new',
      '1:continued-as-new',
    ]);
    for (const run of [1, 2, 3])
      expect(entriesOf(await b.timeline('cd', { run }), 'timer-fired')).toHaveLength(run === 3 ? 1 : 2);
  });

  it('fails with a readable message for an impossible count', async () => {
    const world = new TestWorld();
    const engine = await world.engine([countdown]);
    const handle = await engine.start(countdown, { from: -1 });
    await world.idle();
    await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
    await expect(handle.result()).rejects.toThrow(/from must be an integer from 0 to 10,000; got -1/);
  });
});
