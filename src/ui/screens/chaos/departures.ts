/**
 * How workflows left an engine a drill broke, read from their durable timelines: whether the others took
 * them because the engine said so (it released them, or its session ended), because the liveness oracle
 * reported it gone (Web Locks in tabs, the advisory lock on servers), or only because its claims expired.
 * The drills check this reason rather than the wall-clock time of the move, which a loaded machine stretches
 * without changing how the move was decided.
 */
import type { TimelineEntry } from '../../../public';
import type { TakeoverReason } from '../../../public/browser';

/** `released`: the engine released the claim and another acquired it; otherwise the takeover's reason. */
export type Departure = 'released' | TakeoverReason;

/** How the workflow of `timeline` first left `engineId`, or null if it never did (or ended first). */
export function departureFrom(timeline: readonly TimelineEntry[], engineId: string): Departure | null {
  let released = false;
  for (const entry of timeline) {
    if (entry.kind === 'claim-taken-over' && entry.detail.fromEngineId === engineId)
      return entry.detail.reason;
    if (entry.kind === 'claim-released' && entry.detail.engineId === engineId) released = true;
    else if (released && entry.kind === 'claim-acquired' && entry.detail.engineId !== engineId)
      return 'released';
  }
  return null;
}

/** The departures of several workflows counted by kind, in a fixed order, e.g. "12 released, 8 holder-stopped". */
export function describeDepartures(departures: readonly (Departure | null)[]): string {
  const counts = new Map<string, number>();
  for (const departure of departures) {
    const key = departure ?? 'not moved';
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, count]) => `${count} ${key}`)
    .join(', ');
}
