import { afterEach, describe, expect, it, vi } from 'vitest';
import { WorkflowFailedError } from '../engine';
import { flaky, flakyActivities } from './flaky';
import { TestWorld, entriesOf } from './workflows.test-support';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('flaky', () => {
  it('fails its first three attempts, backs off 500, 1,000 and 2,000 ms, and succeeds on the fourth', async () => {
    const callService = vi.spyOn(flakyActivities, 'callService');
    const world = new TestWorld();
    const engine = await world.engine([flaky]);
    const handle = await engine.start(
      flaky,
      { failures: 3, maxAttempts: 5, initialIntervalMs: 500 },
      { id: 'f' },
    );
    await world.idle();
    expect(callService).toHaveBeenCalledTimes(1);
    const pending = (await engine.describe('f')).pending;
    expect(pending?.leaves[0]).toMatchObject({ kind: 'activity', attempt: 2, retrying: true });
    expect(pending?.leaves[0]?.lastError?.name).toBe('ServiceUnavailableError');

    // Nothing runs before the backoff timer is due.
    await world.advance(499);
    await world.idle();
    expect(callService).toHaveBeenCalledTimes(1);
    await world.advance(1);
    await world.idle();
    expect(callService).toHaveBeenCalledTimes(2);
    await world.advance(1_000);
    await world.idle();
    await world.advance(2_000);
    await world.idle();

    expect(await handle.result()).toEqual({ succeededOnAttempt: 4, failedAttempts: 3 });
    expect(callService.mock.calls.map(([, activity]) => activity.attempt)).toEqual([1, 2, 3, 4]);
    expect(await engine.query('f', 'status')).toEqual({
      stage: 'succeeded',
      plannedFailures: 3,
      succeededOnAttempt: 4,
    });
    const timeline = await engine.timeline('f');
    expect(entriesOf(timeline, 'activity-started').map((entry) => entry.detail.attempt)).toEqual([
      1, 2, 3, 4,
    ]);
    expect(entriesOf(timeline, 'activity-failed')).toHaveLength(3);
    expect(entriesOf(timeline, 'activity-retry-scheduled').map((entry) => entry.detail.waitMs)).toEqual([
      500, 1_000, 2_000,
    ]);
    expect(entriesOf(timeline, 'activity-completed')[0]?.detail).toMatchObject({ attempt: 4 });
  });

  it('caps the backoff at maxIntervalMs', async () => {
    const world = new TestWorld();
    const engine = await world.engine([flaky]);
    const handle = await engine.start(
      flaky,
      { failures: 4, maxAttempts: 5, initialIntervalMs: 1_000, maxIntervalMs: 1_500 },
      { id: 'f' },
    );
    await world.idle();
    for (let i = 0; i < 4; i++) {
      await world.advance(1_500);
      await world.idle();
    }
    expect(await handle.result()).toEqual({ succeededOnAttempt: 5, failedAttempts: 4 });
    const waits = entriesOf(await engine.timeline('f'), 'activity-retry-scheduled').map(
      (e) => e.detail.waitMs,
    );
    expect(waits).toEqual([1_000, 1_500, 1_500, 1_500]);
  });

  it('gives up after maxAttempts and fails with the last error', async () => {
    const callService = vi.spyOn(flakyActivities, 'callService');
    const world = new TestWorld();
    const engine = await world.engine([flaky]);
    const handle = await engine.start(
      flaky,
      { failures: 5, maxAttempts: 3, initialIntervalMs: 100 },
      { id: 'f' },
    );
    await world.idle();
    await world.advance(100);
    await world.idle();
    await world.advance(200);
    await world.idle();

    await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
    await expect(handle.result()).rejects.toThrow(/call-flaky-service' failed after 3 attempts.*503/);
    expect(callService).toHaveBeenCalledTimes(3);
    expect(await engine.query('f', 'status')).toMatchObject({ stage: 'gave-up', succeededOnAttempt: null });
  });

  it('makes the next attempt on a new engine when the owner crashes during a backoff', async () => {
    const callService = vi.spyOn(flakyActivities, 'callService');
    const world = new TestWorld();
    const a = await world.engine([flaky]);
    await a.start(flaky, { failures: 1, initialIntervalMs: 500 }, { id: 'f' });
    await world.idle();
    expect(callService).toHaveBeenCalledTimes(1);

    await a.shutdown();
    const b = await world.engine([flaky], { recover: true });
    await world.advance(500, { engines: [b] });
    await world.idle([b]);

    expect(await b.handle('f').result()).toEqual({ succeededOnAttempt: 2, failedAttempts: 1 });
    expect(callService.mock.calls.map(([, activity]) => activity.attempt)).toEqual([1, 2]);
    const started = entriesOf(await b.timeline('f'), 'activity-started');
    expect(started.map((entry) => entry.engineId)).toEqual([a.id, b.id]);
  });
});
