import { afterEach, describe, expect, it, vi } from 'vitest';
import { CancelledError, WorkflowFailedError } from '../engine';
import { slowSteps, slowStepsActivities, type SlowStepsInput } from './slow-steps';
import { TestWorld, entriesOf } from './workflows.test-support';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('slow-steps', () => {
  it('runs the steps in order, each for its real duration, reporting progress', async () => {
    const work = vi.spyOn(slowStepsActivities, 'work');
    const input: SlowStepsInput = {
      steps: [
        { name: 'extract', ms: 30 },
        { name: 'transform', ms: 300 },
        { name: 'load', ms: 20 },
      ],
    };
    const world = new TestWorld();
    const engine = await world.engine([slowSteps]);
    const handle = await engine.start(slowSteps, input, { id: 'etl' });
    const startedAt = performance.now();

    await vi.waitFor(async () =>
      expect(await engine.query('etl', 'progress')).toEqual({
        current: 'transform',
        completed: ['extract'],
        total: 3,
      }),
    );
    await world.idle();

    expect(await handle.result()).toEqual({ completed: ['extract', 'transform', 'load'], workMs: 350 });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(340);
    expect(work.mock.calls.map(([step]) => step.name)).toEqual(['extract', 'transform', 'load']);
    const completed = entriesOf(await engine.timeline('etl'), 'activity-completed');
    expect(completed.map((entry) => entry.detail.name)).toEqual(['extract', 'transform', 'load']);
  });

  it('after a crash mid-step, aborts the step in flight and redoes only that step on the new engine', async () => {
    const original = slowStepsActivities.work;
    const heartbeats: unknown[] = [];
    const work = vi
      .spyOn(slowStepsActivities, 'work')
      .mockImplementation((step, activity) =>
        original(step, { ...activity, heartbeat: (details) => heartbeats.push(details) }),
      );
    const input: SlowStepsInput = {
      steps: [
        { name: 'extract', ms: 20 },
        { name: 'transform', ms: 600 },
        { name: 'load', ms: 20 },
      ],
    };
    const world = new TestWorld();
    const a = await world.engine([slowSteps]);
    await a.start(slowSteps, input, { id: 'etl' });
    await vi.waitFor(() => expect(work).toHaveBeenCalledTimes(2));
    const inFlight = work.mock.results[1]!.value as Promise<unknown>;
    inFlight.catch(() => undefined);

    await a.shutdown();
    // The first engine's attempt stops at once: its AbortSignal was aborted.
    await expect(inFlight).rejects.toThrow(CancelledError);

    const b = await world.engine([slowSteps], { recover: true });
    await world.idle([b]);

    expect(await b.handle('etl').result()).toEqual({
      completed: ['extract', 'transform', 'load'],
      workMs: 640,
    });
    expect(work.mock.calls.map(([step]) => step.name)).toEqual(['extract', 'transform', 'transform', 'load']);
    expect(heartbeats).toContainEqual({ doneMs: 600, totalMs: 600 });
    const completed = entriesOf(await b.timeline('etl'), 'activity-completed');
    expect(completed.map((entry) => [entry.detail.name, entry.engineId])).toEqual([
      ['extract', a.id],
      ['transform', b.id],
      ['load', b.id],
    ]);
  });

  it('fails with a readable message for a step without a duration', async () => {
    const world = new TestWorld();
    const engine = await world.engine([slowSteps]);
    const handle = await engine.start(slowSteps, {
      steps: [{ name: 'extract' }],
    } as unknown as SlowStepsInput);
    await world.idle();
    await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
    await expect(handle.result()).rejects.toThrow(
      /needs a name \(1–100 characters\) and ms from 0 to 60,000/,
    );
  });
});
