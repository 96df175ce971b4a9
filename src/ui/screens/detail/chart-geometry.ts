/**
 * Geometry of the detail screen's time axis, without React: a linear time scale, "nice" ticks, packing
 * overlapping spans into rows, and aggregation — when more spans fall into a row than there are pixels to
 * draw them, neighbours closer than a pixel merge into one mark that says how many it holds. That keeps a
 * 10,000-entry timeline at a few hundred SVG elements.
 */

export type TimeScale = {
  start: number;
  end: number;
  width: number;
  /** x of a time. */
  x(at: number): number;
  /** Time at an x. */
  at(x: number): number;
};

export function timeScale(start: number, end: number, width: number): TimeScale {
  const span = Math.max(1, end - start);
  return {
    start,
    end,
    width,
    x: (at) => ((at - start) / span) * width,
    at: (x) => start + (x / Math.max(1, width)) * span,
  };
}

const steps = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
  600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000,
];

/** Tick times (as offsets from `start`, in ms) about every `targetPx` pixels, on a round step. */
export function niceTicks(
  start: number,
  end: number,
  width: number,
  targetPx = 90,
): { step: number; offsets: number[] } {
  const span = Math.max(1, end - start);
  const wanted = Math.max(1, Math.floor(width / targetPx));
  const raw = span / wanted;
  const step = steps.find((candidate) => candidate >= raw) ?? steps.at(-1)!;
  const offsets: number[] = [];
  for (let offset = 0; offset <= span + 0.5; offset += step) offsets.push(offset);
  return { step, offsets };
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
