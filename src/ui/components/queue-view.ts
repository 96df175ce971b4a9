/**
 * How the studio words workflow queues (the Queues screen and a queued workflow's page): a queue's limits
 * in one line, its running count against its limit, a waiting workflow's place, an admitted one's wait.
 * Pure, so each wording is tested once (queue-view.test.ts).
 *
 * Slots are numbered from 1 for people ("slot 1 of 2"); the engine numbers them from 0 (`slot: 0` in the
 * timeline's raw detail).
 */
import type { QueueMembership, QueuePosition, QueueView } from '../../public';
import { formatDuration } from './time-format';

/** The limits part of a queue's declaration (what `QueueView` and the stored declaration share). */
export type QueueLimits = Pick<
  QueueView,
  'concurrency' | 'perKeyConcurrency' | 'perEngineConcurrency' | 'rateLimit'
>;

const periodWords: ReadonlyArray<readonly [number, string]> = [
  [1_000, 'second'],
  [60_000, 'minute'],
  [3_600_000, 'hour'],
  [86_400_000, 'day'],
];

/** "per minute", "per 10 s", "per 5 min", "per 2 h" — a rate limit's period. */
export function ratePeriodText(periodMs: number): string {
  for (const [ms, word] of periodWords) if (periodMs === ms) return `per ${word}`;
  return `per ${roundDurationText(periodMs)}`;
}

/** A declared duration in its largest whole unit: "2 h", "5 min", "10 s", else as `formatDuration` writes it. */
export function roundDurationText(ms: number): string {
  if (ms > 0 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms > 0 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms > 0 && ms % 1_000 === 0) return `${ms / 1_000} s`;
  return formatDuration(ms);
}

/** "2 at once · 1 per key · 5 per engine · 30 per minute"; "no limits" for a queue that declares none. */
export function queueLimitsText(queue: QueueLimits): string {
  const parts: string[] = [];
  if (queue.concurrency !== null) parts.push(`${queue.concurrency} at once`);
  if (queue.perKeyConcurrency !== null) parts.push(`${queue.perKeyConcurrency} per key`);
  if (queue.perEngineConcurrency !== null) parts.push(`${queue.perEngineConcurrency} per engine`);
  if (queue.rateLimit !== null)
    parts.push(`${queue.rateLimit.limit} ${ratePeriodText(queue.rateLimit.periodMs)}`);
  return parts.length > 0 ? parts.join(' · ') : 'no limits';
}

/** "1 / 2" (running of its limit), or "—" for a queue without a `concurrency` limit (nothing is counted). */
export function runningText(queue: Pick<QueueView, 'running' | 'concurrency'>): string {
  if (queue.running === null || queue.concurrency === null) return '—';
  return `${queue.running} / ${queue.concurrency}`;
}

/** Whether the queue is at its `concurrency` limit (every slot held). */
export function queueFull(queue: Pick<QueueView, 'running' | 'concurrency'>): boolean {
  return queue.running !== null && queue.concurrency !== null && queue.running >= queue.concurrency;
}

/** "7", or "10,000+" when the engine stopped counting. */
export function waitingText(queue: Pick<QueueView, 'waiting' | 'waitingCapped'>): string {
  return `${queue.waiting.toLocaleString('en')}${queue.waitingCapped ? '+' : ''}`;
}

/** How long the first in line has waited ("12 s"), or "—" when none waits. */
export function oldestWaitText(queue: Pick<QueueView, 'oldestEnqueuedAt'>, now: number): string {
  return queue.oldestEnqueuedAt === null
    ? '—'
    : formatDuration(now - queue.oldestEnqueuedAt, { coarse: true });
}

/** "4 of 30 in the window" (rate-limited queues), with when a token frees when all are used; null otherwise. */
export function rateText(queue: Pick<QueueView, 'rate' | 'rateLimit'>, now: number): string | null {
  if (queue.rate === null || queue.rateLimit === null) return null;
  const used = `${queue.rate.usedInWindow} of ${queue.rateLimit.limit}`;
  return queue.rate.nextFreeAt === null
    ? used
    : `${used} — next in ${formatDuration(queue.rate.nextFreeAt - now, { coarse: true })}`;
}

/** A slot index as people read it: "slot 2" or "slot 2 of 3" (the engine counts from 0). */
export function slotText(slot: number, concurrency?: number | null): string {
  return concurrency ? `slot ${slot + 1} of ${concurrency}` : `slot ${slot + 1}`;
}

/** "(key acme, priority 5)" — the start's key and priority. */
function keyAndPriority(key: string | undefined, priority: number): string {
  return `(${key !== undefined ? `key ${key}, ` : ''}priority ${priority})`;
}

/**
 * A waiting workflow's place: "position 3 of 7 (key acme, priority 5)", with "not before 12:00:01" when a
 * delay or debounce holds it. `of` is the queue's waiting count (unknown: left out).
 */
export function positionText(
  position: QueuePosition,
  of?: { waiting: number; waitingCapped: boolean },
): string {
  const place =
    position.position === undefined
      ? 'waiting'
      : `position ${position.position.toLocaleString('en')}${of ? ` of ${waitingText(of)}` : ''}`;
  return `${place} ${keyAndPriority(position.key, position.priority)}`;
}

/** "after 1.2 s (slot 2)" — how long an admitted workflow waited in its queue, and its slot. */
export function admittedText(
  membership: Pick<QueueMembership, 'enqueuedAt' | 'admittedAt' | 'slot'>,
): string {
  const waited =
    membership.admittedAt === undefined
      ? ''
      : `after ${formatDuration(membership.admittedAt - membership.enqueuedAt)}`;
  const slot = membership.slot === undefined ? '' : `(${slotText(membership.slot)})`;
  return [waited, slot].filter(Boolean).join(' ');
}

/**
 * A queue's waiting list for display: as the engine returns it (admission order), numbered from 1, marking
 * an entry that may not be admitted yet (`held`: its not-before time is ahead) and one whose concurrency key
 * is at the queue's per-key limit (`keyFull`: those behind it with another key go first).
 */
export function waitingRows(
  queue: Pick<QueueView, 'next' | 'keys' | 'perKeyConcurrency'>,
  now: number,
): {
  position: number;
  workflowId: string;
  type: string;
  key: string | null;
  notBefore: number | null;
  held: boolean;
  keyFull: boolean;
}[] {
  const limit = queue.perKeyConcurrency;
  const full = new Set(
    limit === null ? [] : queue.keys.filter((key) => key.running >= limit).map((key) => key.key),
  );
  return queue.next.map((entry, index) => ({
    position: index + 1,
    workflowId: entry.workflowId,
    type: entry.type,
    key: entry.key ?? null,
    notBefore: entry.notBefore ?? null,
    held: entry.notBefore !== undefined && entry.notBefore > now,
    keyFull: entry.key !== undefined && full.has(entry.key),
  }));
}

/** The Queues screen's summary: "2 queues · 3 running · 5 waiting". */
export function queuesSummary(queues: readonly Pick<QueueView, 'running' | 'waiting' | 'slots'>[]): string {
  if (queues.length === 0)
    return 'Workflows admitted under concurrency and rate limits, across every engine.';
  const running = queues.reduce((sum, queue) => sum + (queue.running ?? queue.slots.length), 0);
  const waiting = queues.reduce((sum, queue) => sum + queue.waiting, 0);
  return `${queues.length} queue${queues.length === 1 ? '' : 's'} · ${running} running · ${waiting.toLocaleString('en')} waiting`;
}
