/**
 * Summary statistics for benchmark samples. Pure functions over plain arrays, shared by the Node runner, the
 * browser runner and the report, so every figure is summarised the same way.
 *
 * - `percentile` is the nearest-rank percentile: always one of the samples, never an interpolation, so a
 *   p95 of five handoffs is the slowest one (which is what it honestly is).
 * - `median` averages the two middle samples of an even-sized set.
 * - Empty input has no statistics: the functions return `null` rather than inventing a zero.
 */

/** The median of `values`, or null when there are none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The nearest-rank percentile `p` (0–100) of `values`, or null when there are none.
 *
 * @example
 * percentile([10, 20, 30, 40], 50); // 20
 * percentile([10, 20, 30, 40], 95); // 40
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile: p must be from 0 to 100; got ${p}.`);
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** A latency figure as latest.json reports it: p50 and p95 in ms, or null when nothing was measured. */
export type Spread = { p50: number | null; p95: number | null };

/** What details.json keeps about one figure: its spread plus the samples it came from. */
export type SampleSummary = Spread & {
  n: number;
  min: number | null;
  max: number | null;
  samples: number[];
};

/** Rounds to `digits` decimals (default 0); keeps null as null. */
export function roundTo(value: number | null, digits = 0): number | null {
  if (value === null || !Number.isFinite(value)) return value === null ? null : value;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/**
 * p50 (the median, a sample's value for odd counts) and p95 of `samples`, with the samples themselves.
 * Numbers are rounded to `digits` decimals.
 */
export function summarize(samples: readonly number[], digits = 0): SampleSummary {
  const finite = samples.filter((value) => Number.isFinite(value));
  return {
    p50: roundTo(median(finite), digits),
    p95: roundTo(percentile(finite, 95), digits),
    n: finite.length,
    min: finite.length ? roundTo(Math.min(...finite), digits) : null,
    max: finite.length ? roundTo(Math.max(...finite), digits) : null,
    samples: finite.map((value) => roundTo(value, digits)!),
  };
}

/** The `{ p50, p95 }` part of a summary (what latest.json keeps). */
export function spreadOf(summary: Spread): Spread {
  return { p50: summary.p50, p95: summary.p95 };
}
