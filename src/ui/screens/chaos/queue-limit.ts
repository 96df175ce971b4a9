/**
 * The queue-limit check of the "Queue limit through a crash" drill, read from durable timelines only: a
 * workflow held a slot of its queue from its admission (its `started` entry, whose `detail.queue` names the
 * queue) to its end (its terminal entry); the slot is taken in the admitting batch and given back in the
 * ending one. At no instant may more of those intervals overlap than the queue's `concurrency`, nor more of
 * one concurrency key's than its `perKeyConcurrency`. Pure, so the unit tests can show it fails on an overlap.
 */
import type { TimelineEntry } from '../../../public';
import { isTerminal } from '../../../public/browser';

/** The time one workflow held a slot of its queue. */
export type QueueHold = {
  workflowId: string;
  /** Its concurrency key (from the `scheduled` entry that put it in the queue), or null. */
  key: string | null;
  /** Admitted at (its `started` entry). */
  from: number;
  /** Ended at (its terminal entry), or null while it has not ended (it still holds the slot). */
  to: number | null;
  admittedBy: string;
  endedBy: string | null;
};

/**
 * When the workflow of `timeline` held a slot of `queue`: from its admission to its end. Null when it was
 * never admitted from that queue (it still waits, or it was started without the queue).
 *
 * Its key is the one the `scheduled` entry that put it in the queue names. A start that found the queue free
 * is admitted in its own create batch and has no such entry (its `started` entry names the queue, not the
 * key), so `startedWithKey` — the `concurrencyKey` the caller started it with — stands in for it.
 */
export function queueHoldFrom(
  workflowId: string,
  timeline: readonly TimelineEntry[],
  queue: string,
  startedWithKey: string | null = null,
): QueueHold | null {
  let key: string | null = startedWithKey;
  let admission: TimelineEntry | null = null;
  for (const entry of timeline) {
    if (admission === null) {
      if (entry.kind === 'scheduled' && entry.detail.queue?.name === queue)
        key = entry.detail.queue.key ?? key;
      else if (entry.kind === 'started' && entry.detail.queue?.name === queue) admission = entry;
    } else if (isTerminal(entry.kind)) {
      return {
        workflowId,
        key,
        from: admission.at,
        to: entry.at,
        admittedBy: admission.engineId,
        endedBy: entry.engineId,
      };
    }
  }
  return admission === null
    ? null
    : { workflowId, key, from: admission.at, to: null, admittedBy: admission.engineId, endedBy: null };
}

export type QueueLimits = { concurrency: number | null; perKeyConcurrency: number | null };

export type QueueLimitResult = {
  /** The most holds at one instant. */
  peak: number;
  /** The most holds of one key at one instant (0 when no hold has a key). */
  peakPerKey: number;
  /** Each instant a limit was exceeded, in words; empty when the limits held. */
  violations: string[];
};

type Sweep = { peak: number; excesses: { at: number; held: string[] }[] };

/**
 * The most intervals open at one instant, and every instant the count rose above `limit`. Intervals are
 * half-open [from, to): an end and an admission at the same millisecond do not overlap (the slot freed by
 * one batch is what the next admission takes). An interval that has not ended is open to the end of time.
 */
function sweep(holds: readonly QueueHold[], limit: number | null): Sweep {
  const events = holds.flatMap((hold) => [
    { at: hold.from, delta: 1, id: hold.workflowId },
    { at: hold.to ?? Number.POSITIVE_INFINITY, delta: -1, id: hold.workflowId },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const open = new Set<string>();
  const excesses: Sweep['excesses'] = [];
  let peak = 0;
  for (const event of events) {
    if (event.delta < 0) {
      open.delete(event.id);
      continue;
    }
    open.add(event.id);
    peak = Math.max(peak, open.size);
    if (limit !== null && open.size > limit) excesses.push({ at: event.at, held: [...open] });
  }
  return { peak, excesses };
}

function clockTime(at: number): string {
  return new Date(at).toISOString().slice(11, 23);
}

/** Checks `holds` against the queue's limits (a null limit is not checked, but its peak is still measured). */
export function checkQueueLimit(holds: readonly QueueHold[], limits: QueueLimits): QueueLimitResult {
  const violations: string[] = [];
  const overall = sweep(holds, limits.concurrency);
  for (const { at, held } of overall.excesses)
    violations.push(
      `${held.length} held a slot at once at ${clockTime(at)} (${held.join(', ')}); the queue admits ${limits.concurrency}`,
    );
  const byKey = new Map<string, QueueHold[]>();
  for (const hold of holds)
    if (hold.key !== null) byKey.set(hold.key, [...(byKey.get(hold.key) ?? []), hold]);
  let peakPerKey = 0;
  for (const [key, keyed] of byKey) {
    const one = sweep(keyed, limits.perKeyConcurrency);
    peakPerKey = Math.max(peakPerKey, one.peak);
    for (const { at, held } of one.excesses)
      violations.push(
        `${held.length} of key ${key} held a slot at once at ${clockTime(at)} (${held.join(', ')}); the queue admits ${limits.perKeyConcurrency} per key`,
      );
  }
  return { peak: overall.peak, peakPerKey, violations };
}
