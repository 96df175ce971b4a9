import { describe, expect, it } from 'vitest';
import { median, percentile, roundTo, spreadOf, summarize } from './stats';

describe('median', () => {
  it('is the middle sample of an odd count and the mean of the two middle ones of an even count', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('does not reorder its input', () => {
    const samples = [3, 1, 2];
    median(samples);
    expect(samples).toEqual([3, 1, 2]);
  });

  it('is null for no samples', () => {
    expect(median([])).toBeNull();
  });
});

describe('percentile', () => {
  it('is the nearest-rank sample: p50 of four is the second, p95 the largest', () => {
    expect(percentile([40, 10, 30, 20], 50)).toBe(20);
    expect(percentile([40, 10, 30, 20], 95)).toBe(40);
  });

  it('gives p95 of twenty samples as the nineteenth smallest', () => {
    const samples = Array.from({ length: 20 }, (_, index) => 20 - index);
    expect(percentile(samples, 95)).toBe(19);
  });

  it('gives p0 as the smallest and p100 as the largest sample', () => {
    expect(percentile([7, 3, 9], 0)).toBe(3);
    expect(percentile([7, 3, 9], 100)).toBe(9);
  });

  it('rejects a percentile outside 0–100 and is null for no samples', () => {
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
    expect(percentile([], 95)).toBeNull();
  });
});

describe('summarize', () => {
  it('reports p50, p95, count, extremes and the rounded samples, ignoring non-finite values', () => {
    expect(summarize([12.4, 10.6, Number.NaN, 30.2, 20])).toEqual({
      p50: 16,
      p95: 30,
      n: 4,
      min: 11,
      max: 30,
      samples: [12, 11, 30, 20],
    });
  });

  it('keeps decimals when asked and reports nulls when nothing was measured', () => {
    expect(summarize([0.3333, 0.6666], 2).p50).toBe(0.5);
    expect(summarize([])).toEqual({ p50: null, p95: null, n: 0, min: null, max: null, samples: [] });
  });

  it('reduces to the { p50, p95 } spread latest.json keeps', () => {
    expect(spreadOf(summarize([1, 2, 3]))).toEqual({ p50: 2, p95: 3 });
  });
});

describe('roundTo', () => {
  it('rounds to the given decimals and keeps null', () => {
    expect(roundTo(1.23456, 3)).toBe(1.235);
    expect(roundTo(2.5)).toBe(3);
    expect(roundTo(null)).toBeNull();
  });
});
