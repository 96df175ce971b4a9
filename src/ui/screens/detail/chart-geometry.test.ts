import { describe, expect, it } from 'vitest';
import {
  aggregateMarks,
  formatOffset,
  niceTicks,
  packRows,
  panBy,
  timeScale,
  zoomBy,
} from './chart-geometry';

describe('chart geometry', () => {
  it('maps times to pixels and back', () => {
    const scale = timeScale(1_000, 3_000, 400);
    expect(scale.x(2_000)).toBe(200);
    expect(scale.at(100)).toBe(1_500);
  });

  it('picks round tick steps about every 90 px', () => {
    expect(niceTicks(0, 10_000, 900)).toEqual({
      step: 1_000,
      offsets: [0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000, 10_000],
    });
    expect(niceTicks(0, 200, 450).step).toBe(50);
    expect(niceTicks(5_000, 5_000 + 10 * 60_000, 900)).toMatchObject({ step: 60_000 });
    expect(niceTicks(0, 3 * 3_600_000, 900).offsets.slice(0, 3)).toEqual([0, 900_000, 1_800_000]);
    expect(formatOffset(90_000, 30_000)).toBe('1 min 30 s');
    expect(formatOffset(250, 50)).toBe('250 ms');
    expect(formatOffset(1_500, 500)).toBe('1.5 s');
  });

  it('asks for fewer ticks rather than crowd the labels of a span between round steps', () => {
    // Ten ticks of 22 min would be 2.2 min apart; whole minutes would be 41 px apart, so it takes 5 min.
    const { step, offsets } = niceTicks(0, 22 * 60_000, 900);
    expect(step).toBe(5 * 60_000);
    expect(offsets).toEqual([0, 5, 10, 15, 20].map((minutes) => minutes * 60_000));
    expect(formatOffset(offsets[1]!, step)).toBe('5 min');
  });

  it('packs overlapping spans into rows, and only as many rows as needed', () => {
    const spans = [
      { start: 0, end: 10 },
      { start: 5, end: 15 },
      { start: 12, end: 20 },
      { start: 16, end: 30 },
    ];
    expect(packRows(spans)).toEqual({ rows: [0, 1, 0, 1], count: 2 });
    expect(packRows(spans, 1)).toEqual({ rows: [0, 0, 0, 0], count: 1 });
  });

  it('merges thousands of spans into a few marks, but keeps a handful of separate spans apart', () => {
    const scale = timeScale(0, 10_000, 500);
    const many = Array.from({ length: 10_000 }, (_, index) => ({ start: index, end: index + 0.5 }));
    const marks = aggregateMarks(many, scale);
    expect(marks.length).toBeLessThan(50);
    expect(marks.reduce((sum, mark) => sum + mark.items.length, 0)).toBe(10_000);
    const few = [
      { start: 0, end: 100 },
      { start: 150, end: 300 },
    ];
    expect(aggregateMarks(few, scale)).toHaveLength(2);
  });
});

describe('keyboard zoom', () => {
  const full = { start: 1_000, end: 11_000 };
  it('zooms in around the middle or a chosen time, inside the whole range', () => {
    expect(zoomBy(full, full, 0.5)).toEqual({ start: 3_500, end: 8_500 });
    expect(zoomBy(full, full, 0.5, 10_500)).toEqual({ start: 6_000, end: 11_000 });
    expect(zoomBy(full, full, 0.5, 0)).toEqual({ start: 1_000, end: 6_000 });
    // Never narrower than minZoomMs.
    expect(zoomBy({ start: 5_000, end: 5_030 }, full, 0.5)).toEqual({ start: 5_005, end: 5_025 });
  });
  it('zooms out back to the whole range (null: no zoom left)', () => {
    expect(zoomBy({ start: 3_500, end: 8_500 }, full, 1.5)).toEqual({ start: 2_250, end: 9_750 });
    expect(zoomBy({ start: 3_500, end: 8_500 }, full, 2)).toBeNull();
  });
  it('pans by a fraction of the view without leaving the range', () => {
    expect(panBy({ start: 3_000, end: 5_000 }, full, 0.25)).toEqual({ start: 3_500, end: 5_500 });
    expect(panBy({ start: 2_000, end: 4_000 }, full, -1)).toEqual({ start: 1_000, end: 3_000 });
    expect(panBy({ start: 9_000, end: 10_500 }, full, 1)).toEqual({ start: 9_500, end: 11_000 });
  });
});
