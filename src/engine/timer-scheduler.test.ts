/**
 * The timer scheduler hands due timers to the engine: different workflows' at once (so that timers falling
 * due together on workflows held by a dead engine are claimed together), one workflow's in due order.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import { SimulatedClock } from './clock';
import { keys } from './keys';
import type { TimerRecord } from './records';
import { TimerScheduler } from './timer-scheduler';

describe('TimerScheduler', () => {
  it('fires due timers of different workflows concurrently and each workflow’s timers in order, once each', async () => {
    const storage = new MemoryStorage();
    const clock = new SimulatedClock(Date.UTC(2026, 0, 1));
    const now = clock.now();
    const timers: [string, TimerRecord][] = [];
    for (let i = 0; i < 20; i++)
      timers.push([
        keys.timer(now - 100 + i, `wf-${i}`, 'sleep'),
        { workflowId: `wf-${i}`, purpose: 'sleep', run: 1 },
      ]);
    // wf-0 has a second due timer, after its first; and one timer is not due yet.
    timers.push([
      keys.timer(now - 10, 'wf-0', 'timeout'),
      { workflowId: 'wf-0', purpose: 'timeout', run: 1 },
    ]);
    timers.push([
      keys.timer(now + 1000, 'wf-late', 'sleep'),
      { workflowId: 'wf-late', purpose: 'sleep', run: 1 },
    ]);
    await storage.batch(timers.map(([key, timer]) => ({ type: 'put', key, value: JSON.stringify(timer) })));

    const fired: string[] = [];
    let inFlight = 0;
    let mostAtOnce = 0;
    const release: (() => void)[] = [];
    const scheduler = new TimerScheduler({
      storage,
      clock,
      automatic: false,
      fire: async (key) => {
        fired.push(key);
        inFlight++;
        mostAtOnce = Math.max(mostAtOnce, inFlight);
        await new Promise<void>((resolve) => release.push(resolve));
        inFlight--;
      },
      onError: (error) => {
        throw error;
      },
    });
    const pass = scheduler.fireDue(now);
    // Let the pass hand out what it can before anything is released.
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(mostAtOnce).toBeGreaterThan(1);
    while (inFlight > 0 || release.length > 0) {
      release.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await pass;
    expect(new Set(fired).size).toBe(fired.length);
    expect(fired).toHaveLength(21);
    expect(fired.some((key) => key.includes('wf-late'))).toBe(false);
    const ofWf0 = fired.filter((key) => key.includes(':wf-0:'));
    expect(ofWf0).toEqual([keys.timer(now - 100, 'wf-0', 'sleep'), keys.timer(now - 10, 'wf-0', 'timeout')]);
  });
});
