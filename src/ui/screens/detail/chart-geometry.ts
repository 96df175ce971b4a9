/**
 * Geometry of the detail screen's time axis, without React: a linear time scale and ticks at round
 * durations (both from d3-scale), packing overlapping spans into rows, and aggregation — when more spans
 * fall into a row than there are pixels to draw them, neighbours closer than a pixel merge into one mark
 * that says how many it holds. That keeps a 10,000-entry timeline at a few hundred SVG elements.
 */
import { scaleLinear, scaleUtc, type ScaleLinear } from 'd3-scale';

export type TimeScale = {
  start: number;
  end: number;
  width: number;
  /** x of a time. */
  x(at: number): number;
  /** Time at an x. */
  at(x: number): number;
};

/** `start`…`end` (at least 1 ms apart) onto 0…`width`, linearly. */
export function timeScale(start: number, end: number, width: number): TimeScale {
  const linear: ScaleLinear<number, number> = scaleLinear()
    .domain([start, start + Math.max(1, end - start)])
    .range([0, width]);
  return { start, end, width, x: (at) => linear(at), at: (x) => linear.invert(x) };
}

/**
 * Tick times (as offsets from `start`, in ms) about every `targetPx` pixels, on a round duration: d3's UTC
 * time ticks over the offsets, so steps are 1-2-5 ms below a second, then 1, 5, 15 and 30 s, 1, 5, 15 and
 * 30 min, 1, 3, 6 and 12 h, days. d3 picks the step nearest the target; where that would put ticks closer
 * than 70% of `targetPx` (too close for their labels), fewer are asked for.
 */
export function niceTicks(
  start: number,
  end: number,
  width: number,
  targetPx = 90,
): { step: number; offsets: number[] } {
  const span = Math.max(1, end - start);
  const axis = scaleUtc().domain([0, span]).range([0, width]);
  const offsetsFor = (count: number) => axis.ticks(count).map((tick) => tick.getTime());
  let count = Math.max(1, Math.floor(width / targetPx));
  let offsets = offsetsFor(count);
  const stepOf = (list: number[]) => (list.length > 1 ? list[1]! - list[0]! : span);
  while (count > 1 && (stepOf(offsets) / span) * width < targetPx * 0.7) offsets = offsetsFor(--count);
  return { step: stepOf(offsets), offsets };
}

/** "0", "250 ms", "1.5 s", "2 min", "1 h 30 min": an offset on the axis, rounded to the tick step. */
export function formatOffset(offsetMs: number, step: number): string {
  if (offsetMs === 0) return '0';
  if (step < 1_000)
    return offsetMs < 1_000
      ? `${Math.round(offsetMs)} ms`
      : `${(offsetMs / 1000).toFixed(step < 100 ? 2 : 1)} s`;
  if (step < 60_000 && (offsetMs < 60_000 || step < 15_000)) return `${Math.round(offsetMs / 1000)} s`;
  if (step < 3_600_000) {
    const minutes = Math.floor(offsetMs / 60_000);
    const seconds = Math.round((offsetMs % 60_000) / 1000);
    return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
  }
  const hours = Math.floor(offsetMs / 3_600_000);
  const minutes = Math.round((offsetMs % 3_600_000) / 60_000);
  return minutes ? `${hours} h ${minutes} min` : `${hours} h`;
}

/**
 * Assigns each item (sorted by start) the first of at most `maxRows` rows where it does not overlap the
 * previous item; items that fit nowhere go to the row that frees up first. Returns the row of each item in
 * input order and the number of rows used.
 */
export function packRows<T extends { start: number; end: number }>(
  items: readonly T[],
  maxRows = 4,
): { rows: number[]; count: number } {
  const order = items.map((_, index) => index).sort((a, b) => items[a]!.start - items[b]!.start);
  const rowEnds: number[] = [];
  const rows = new Array<number>(items.length).fill(0);
  for (const index of order) {
    const item = items[index]!;
    let row = rowEnds.findIndex((end) => end <= item.start);
    if (row < 0) {
      if (rowEnds.length < maxRows) row = rowEnds.length;
      else row = rowEnds.indexOf(Math.min(...rowEnds));
    }
    rowEnds[row] = Math.max(rowEnds[row] ?? -Infinity, item.end);
    rows[index] = row;
  }
  return { rows, count: Math.max(1, rowEnds.length) };
}

export type Mark<T> = { x0: number; x1: number; items: T[] };

/**
 * Pixel extents of `items` on `scale`, merged where they touch (closer than `minGapPx`). Items entirely
 * outside the scale are left out. With few items nothing merges unless they really overlap on screen.
 */
export function aggregateMarks<T extends { start: number; end: number }>(
  items: readonly T[],
  scale: TimeScale,
  minGapPx = 1,
): Mark<T>[] {
  const visible = items
    .filter((item) => item.end >= scale.start && item.start <= scale.end)
    .sort((a, b) => a.start - b.start);
  const marks: Mark<T>[] = [];
  for (const item of visible) {
    const x0 = Math.max(0, scale.x(item.start));
    const x1 = Math.min(scale.width, Math.max(x0 + 2, scale.x(item.end)));
    const last = marks.at(-1);
    if (last && x0 - last.x1 < minGapPx && (visible.length > scale.width / 3 || x0 < last.x1)) {
      last.x1 = Math.max(last.x1, x1);
      last.items.push(item);
    } else marks.push({ x0, x1, items: [item] });
  }
  return marks;
}

/** A stretch of time shown by the chart (epoch ms). */
export type TimeRange = { start: number; end: number };

/** The narrowest stretch the keyboard zooms into, in ms. */
export const minZoomMs = 20;

/**
 * The view after a keyboard zoom: `factor` < 1 zooms in (0.5 shows half as much), > 1 zooms out, kept around
 * `center` (default: the middle of the view) and inside `full`. Null when the result shows all of `full`
 * (no zoom left).
 */
export function zoomBy(view: TimeRange, full: TimeRange, factor: number, center?: number): TimeRange | null {
  const fullSpan = Math.max(1, full.end - full.start);
  const span = Math.min(fullSpan, Math.max(minZoomMs, (view.end - view.start) * factor));
  if (span >= fullSpan) return null;
  const middle = Math.min(full.end, Math.max(full.start, center ?? (view.start + view.end) / 2));
  const start = Math.min(full.end - span, Math.max(full.start, middle - span / 2));
  return { start, end: start + span };
}

/** The view moved by `fraction` of its width (negative: earlier), kept inside `full`. */
export function panBy(view: TimeRange, full: TimeRange, fraction: number): TimeRange {
  const span = view.end - view.start;
  const start = Math.min(full.end - span, Math.max(full.start, view.start + span * fraction));
  return { start, end: start + span };
}
