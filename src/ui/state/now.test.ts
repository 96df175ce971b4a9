import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClockStore } from './now';

describe('shared clock', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('ticks every second while anything watches it, and runs no timer once nothing does', () => {
    let time = 1_000;
    const clock = createClockStore(() => time);
    expect(clock.getState().ticking()).toBe(false);
    const stopFirst = clock.getState().watch();
    const stopSecond = clock.getState().watch();
    time = 2_500;
    vi.advanceTimersByTime(1_000);
    expect(clock.getState().now).toBe(2_500);
    stopFirst();
    stopFirst();
    expect(clock.getState().ticking()).toBe(true);
    stopSecond();
    expect(clock.getState().ticking()).toBe(false);
    time = 9_000;
    vi.advanceTimersByTime(5_000);
    expect(clock.getState().now).toBe(2_500);
  });

  it('reads the time afresh when the first watcher arrives', () => {
    let time = 1_000;
    const clock = createClockStore(() => time);
    time = 4_000;
    const stop = clock.getState().watch();
    expect(clock.getState().now).toBe(4_000);
    stop();
  });
});
