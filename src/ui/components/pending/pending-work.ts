/**
 * Pending work, from what `describe` says a workflow waits on (`pending.leaves`): each open operation — an
 * activity with its attempt and, while it backs off, when the next attempt is due; a timer with its due
 * time; a signal or a `waitUntil` condition with its timeout; a child workflow — one row each, for one
 * workflow or across the store, soonest due first. And the signals buffered for a workflow, sent but not
 * consumed yet (`describe(id).bufferedSignals`), oldest first, with a one-line preview of each payload. Pure.
 */
import type { WorkflowDescription, WorkflowStatus } from '../../../public';

export type PendingKind = 'activity' | 'timer' | 'signal' | 'condition' | 'child';

export const pendingKinds: readonly PendingKind[] = ['activity', 'timer', 'signal', 'condition', 'child'];

export const pendingKindLabels: Record<PendingKind, string> = {
  activity: 'Activities',
  timer: 'Timers',
  signal: 'Signals',
  condition: 'Conditions',
  child: 'Children',
};

export type PendingItem = {
  /** Unique within a list: workflow, position and member. */
  key: string;
  workflowId: string;
  workflowType: string;
  status: WorkflowStatus;
  kind: PendingKind;
  name: string;
  /** Since when the workflow waits on this operation. */
  since: number;
  /** Activities: the attempt running, or the next one while it backs off. */
  attempt: number | null;
  /** Activities: backing off before the next attempt (due at `dueAt`). */
  retrying: boolean;
  /** A timer's due time, an activity's next attempt, a signal's or condition's timeout. */
  dueAt: number | null;
  childId: string | null;
  /** Activities: the last attempt's failure. */
  lastError: string | null;
  /** An external activity waiting for its completion. */
  external: boolean;
  /** Activities: the last recorded heartbeat — its details in one line, when, and which attempt sent it. */
  heartbeat: { preview: string | null; at: number; attempt: number } | null;
};

const kindOf: Record<string, PendingKind> = {
  activity: 'activity',
  sleep: 'timer',
  signal: 'signal',
  until: 'condition',
  child: 'child',
};

/** The open operations of a workflow (none when it waits on nothing). */
export function pendingOf(
  workflow: Pick<WorkflowDescription, 'workflowId' | 'workflowType' | 'status' | 'pending'>,
): PendingItem[] {
  const pending = workflow.pending;
  if (!pending) return [];
  return pending.leaves.flatMap((leaf, member) => {
    if (leaf.done) return [];
    const kind = kindOf[leaf.kind];
    if (!kind) return [];
    return [
      {
        key: `${workflow.workflowId}\u0000${pending.position}\u0000${member}`,
        workflowId: workflow.workflowId,
        workflowType: workflow.workflowType,
        status: workflow.status,
        kind,
        name: leaf.name,
        since: pending.since,
        attempt: kind === 'activity' ? (leaf.attempt ?? 1) : null,
        retrying: leaf.retrying === true,
        dueAt: leaf.dueAt ?? null,
        childId: leaf.childId ?? null,
        lastError: leaf.lastError ? `${leaf.lastError.name}: ${leaf.lastError.message}` : null,
        external: leaf.completionToken !== undefined,
        heartbeat: leaf.heartbeat
          ? {
              preview:
                leaf.heartbeat.details === undefined ? null : payloadPreview(leaf.heartbeat.details).text,
              at: leaf.heartbeat.at,
              attempt: leaf.heartbeat.attempt,
            }
          : null,
      },
    ];
  });
}

/** Soonest due first; what has no due time after, longest waiting first. */
export function byDue(a: PendingItem, b: PendingItem): number {
  if (a.dueAt !== null && b.dueAt !== null) return a.dueAt - b.dueAt;
  if (a.dueAt !== null) return -1;
  if (b.dueAt !== null) return 1;
  return a.since - b.since;
}

/** What an item is doing, in words: "attempt 2 · backing off", "waiting for its completion (external)". */
export function pendingState(item: PendingItem): string {
  switch (item.kind) {
    case 'activity':
      // While it backs off, `attempt` is the attempt to come (the one before failed).
      if (item.retrying) return `backing off · attempt ${item.attempt} due`;
      return item.external
        ? `attempt ${item.attempt} · waiting for its completion (external)`
        : `attempt ${item.attempt} · running`;
    case 'timer':
      return 'sleeping until due';
    case 'signal':
      return item.dueAt !== null ? 'waiting · times out' : 'waiting (no timeout)';
    case 'condition':
      return item.dueAt !== null ? 'waiting for its condition · times out' : 'waiting for its condition';
    case 'child':
      return item.childId ? `waiting for child ${item.childId}` : 'waiting for its child';
  }
}

/**
 * A signal sent to a workflow that has not consumed it: buffered in the store until the workflow waits for a
 * signal of its name (`describe(id).bufferedSignals`).
 */
export type BufferedItem = {
  /** Unique within a list: workflow and signal sequence number. */
  key: string;
  workflowId: string;
  workflowType: string;
  name: string;
  /** Absent when it was sent without one. */
  payload?: unknown;
  hasPayload: boolean;
  sentAt: number;
  /** The engine that sent it. */
  sentBy: string;
};

/** The signals buffered for a workflow, oldest first (none for a description without them). */
export function bufferedOf(
  workflow: Pick<WorkflowDescription, 'workflowId' | 'workflowType'> &
    Partial<Pick<WorkflowDescription, 'bufferedSignals'>>,
): BufferedItem[] {
  return (workflow.bufferedSignals ?? []).map((signal) => ({
    key: `${workflow.workflowId}\u0000${signal.seq}`,
    workflowId: workflow.workflowId,
    workflowType: workflow.workflowType,
    name: signal.name,
    ...(signal.payload === undefined ? {} : { payload: signal.payload }),
    hasPayload: signal.payload !== undefined,
    sentAt: signal.sentAt,
    sentBy: signal.sentBy,
  }));
}

/** Oldest sent first (the order a workflow takes them in). */
export function bySent(a: BufferedItem, b: BufferedItem): number {
  return a.sentAt - b.sentAt || a.key.localeCompare(b.key);
}

/** How many characters of a payload's JSON a row shows before "Show all". */
export const payloadPreviewLength = 80;

/**
 * A payload as one line of JSON, cut at `max` characters (then ending in "…"); `truncated` says whether
 * there is more to read.
 */
export function payloadPreview(
  payload: unknown,
  max: number = payloadPreviewLength,
): { text: string; truncated: boolean } {
  const text = JSON.stringify(payload) ?? String(payload);
  if (text.length <= max) return { text, truncated: false };
  return { text: `${text.slice(0, max - 1)}…`, truncated: true };
}
