/**
 * The facts of one timeline entry for the event detail: everything the entry records, under names people
 * read — the operation (position, member, name), the attempt, the engine and epoch it was written under,
 * the failure with its stack, timings — and the operation's other entries, so an attempt reads with its
 * retries. Pure, so the detail never cuts what the list had to shorten.
 */
import type { SerializedError, TimelineEntry } from '../../../engine';

export type EventFact = { label: string; value: string };

export type EventDetail = {
  seq: number;
  kind: TimelineEntry['kind'];
  at: number;
  engineId: string;
  epoch: number;
  facts: EventFact[];
  /** A failure the entry records (an activity attempt's, the workflow's), in full. */
  error: (Partial<SerializedError> & { name: string; message: string }) | null;
  /** The operation's position, when the entry is about one. */
  position: number | null;
  /** The entry's own fields, as recorded. */
  raw: Record<string, unknown>;
};

const labels: Record<string, string> = {
  pos: 'Operation position',
  member: 'Member (in all / race)',
  name: 'Name',
  attempt: 'Attempt',
  nextAttempt: 'Next attempt',
  durationMs: 'Duration (ms)',
  waitMs: 'Back-off (ms)',
  dueAt: 'Due at',
  startAt: 'Starts at',
  rerun: 'Re-run of an interrupted attempt',
  sentBy: 'Sent by engine',
  engineId: 'Engine',
  fromEngineId: 'From engine',
  toEngineId: 'To engine',
  fromEpoch: 'From epoch',
  toEpoch: 'To epoch',
  newEpoch: 'New epoch',
  reason: 'Reason',
  how: 'How',
  childId: 'Child workflow',
  workflowType: 'Type',
  version: 'Version',
  parentId: 'Parent',
  parentClosePolicy: 'Parent close policy',
  status: 'Status',
  satisfied: 'Condition met',
  updateId: 'Update id',
  requestedBy: 'Requested by engine',
  delayed: 'Started after a delay',
  hasResult: 'Returned a value',
  kind: 'Operation kind',
};

function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** The detail of `entry`. `formatTime` renders epoch-ms fields (due times). */
export function eventDetail(entry: TimelineEntry, formatTime: (at: number) => string): EventDetail {
  const detail = entry.detail as Record<string, unknown>;
  const facts: EventFact[] = [];
  let error: EventDetail['error'] = null;
  for (const [key, value] of Object.entries(detail)) {
    if (value === undefined) continue;
    if (key === 'error') {
      error = typeof value === 'string' ? { name: 'Error', message: value } : (value as EventDetail['error']);
      continue;
    }
    const label = labels[key] ?? key;
    facts.push({
      label,
      value:
        (key === 'dueAt' || key === 'startAt') && typeof value === 'number' ? formatTime(value) : show(value),
    });
  }
  return {
    seq: entry.seq,
    kind: entry.kind,
    at: entry.at,
    engineId: entry.engineId,
    epoch: entry.epoch,
    facts,
    error,
    position: typeof detail.pos === 'number' ? detail.pos : null,
    raw: detail,
  };
}

/** The entries of the same operation (same position), in order: an attempt with its retries. */
export function sameOperation(timeline: readonly TimelineEntry[], entry: TimelineEntry): TimelineEntry[] {
  const pos = (entry.detail as { pos?: number }).pos;
  if (pos === undefined) return [entry];
  return timeline.filter((candidate) => (candidate.detail as { pos?: number }).pos === pos);
}
