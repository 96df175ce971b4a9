import { describe, expect, it } from 'vitest';
import { formatDuration, formatRelative } from './time-format';

describe('time format', () => {
  it('writes durations at a precision a person reads', () => {
    expect(formatDuration(340)).toBe('340 ms');
    expect(formatDuration(1_234)).toBe('1.2 s');
    expect(formatDuration(14_900)).toBe('14 s');
    expect(formatDuration(125_000)).toBe('2 min 05 s');
    expect(formatDuration(3_780_000)).toBe('1 h 03 min');
    expect(formatDuration(4_400, { coarse: true })).toBe('4 s');
    expect(formatDuration(Number.NaN)).toBe('—');
  });

  it('writes times relative to now, in both directions', () => {
    expect(formatRelative(1_000, 1_500)).toBe('just now');
    expect(formatRelative(0, 12_000)).toBe('12 s ago');
    expect(formatRelative(10_000, 0)).toBe('in 10 s');
    expect(formatRelative(0, 3 * 3_600_000)).toBe('3 h ago');
  });
});
