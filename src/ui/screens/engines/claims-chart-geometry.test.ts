import { describe, expect, it } from 'vitest';
import { claimsAxes, minSpanMs, nowLabelRoom, type ChartFrame } from './claims-chart-geometry';

const frame: ChartFrame = { width: 800, height: 190, padding: { top: 12, right: 44, bottom: 24, left: 34 } };

describe('claims chart axes', () => {
  it('counts claims from 0 to at least 4 on whole numbers, rounding a larger top up to a nice one', () => {
    const few = claimsAxes(frame, 0, 60_000, 2);
    expect(few.claimTicks).toEqual([0, 1, 2, 3, 4]);
    expect([few.y(0), few.y(4)]).toEqual([190 - 24, 12]);
    const many = claimsAxes(frame, 0, 60_000, 7);
    expect(many.maxClaims).toBe(8);
    expect(many.claimTicks).toEqual([0, 2, 4, 6, 8]);
  });

  it('labels round clock times, none of them under the "now" label at the right end', () => {
    const start = new Date(2025, 0, 1, 12, 0, 7).getTime();
    const axes = claimsAxes(frame, start, start + 5 * 60_000, 3);
    expect(axes.timeTicks.length).toBeGreaterThanOrEqual(3);
    for (const tick of axes.timeTicks) {
      expect(new Date(tick).getSeconds()).toBe(0);
      expect(axes.x(tick)).toBeLessThanOrEqual(frame.width - frame.padding.right - nowLabelRoom);
    }
    expect(axes.x(start)).toBe(frame.padding.left);
    expect(axes.x(axes.end)).toBe(frame.width - frame.padding.right);
  });

  it('shows at least ten seconds, so the first samples do not stretch across the chart', () => {
    const axes = claimsAxes(frame, 1_000, 3_000, 1);
    expect(axes.end).toBe(1_000 + minSpanMs);
  });
});
