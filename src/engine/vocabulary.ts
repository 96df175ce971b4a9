/**
 * Shuttle's vocabulary, defined once: the workflow statuses, which of them are terminal, the kinds of
 * timeline entries, and the limits a caller must know before it asks (the longest id, the default payload
 * limit). A pure module with no imports, so that every layer — the studio's UI included, at
 * runtime — reads the same words instead of keeping a copy.
 */
import type { TimelineEntry } from './records';

/** The longest workflow id the engine accepts, in characters. */
export const maxIdLength = 256;

/** The default of `limits.maxPayloadBytes`: the largest input, result, payload or state, in bytes of JSON. */
export const defaultMaxPayloadBytes = 256 * 1024;

/** Every status a workflow can have. */
export const workflowStatuses = [
  'pending',
  'running',
  'suspended',
  'completed',
  'failed',
  'cancelled',
  'terminated',
  'timed-out',
] as const;

export type WorkflowStatus = (typeof workflowStatuses)[number];

/** Statuses a workflow never leaves (its run is over). */
export const terminalStatuses = ['completed', 'failed', 'cancelled', 'terminated', 'timed-out'] as const;

export type TerminalStatus = (typeof terminalStatuses)[number];

const terminal: ReadonlySet<string> = new Set(terminalStatuses);

/** Whether `status` is terminal. Accepts any string, so timeline kinds can be asked too. */
export function isTerminal(status: string): status is TerminalStatus {
  return terminal.has(status);
}

export function isWorkflowStatus(value: unknown): value is WorkflowStatus {
  return typeof value === 'string' && (workflowStatuses as readonly string[]).includes(value);
}

/** Every kind of timeline entry, in roughly the order a workflow meets them. */
export const timelineKinds = [
  'scheduled',
  'started',
  'claim-acquired',
  'claim-taken-over',
  'claim-released',
  'activity-started',
  'activity-completed',
  'activity-failed',
  'activity-retry-scheduled',
  'timer-armed',
  'timer-fired',
  'signal-received',
  'signal-consumed',
  'wait-completed',
  'update-applied',
  'update-rejected',
  'child-started',
  'child-completed',
  'cancel-requested',
  'suspended',
  'resumed',
  ...terminalStatuses,
] as const;

export type TimelineKind = (typeof timelineKinds)[number];

/** The timeline kinds that give a workflow a new owner or a new epoch. */
export const ownershipKinds = ['claim-acquired', 'claim-taken-over', 'claim-released'] as const;

/** Why a claim was taken over: its holder's claim expired, its engine died or stopped, or it was unreadable. */
export type TakeoverReason = 'expired' | 'holder-dead' | 'holder-stopped' | 'orphaned' | 'undecodable-holder';

/** How an engine came to hold a workflow, as a `claim-acquired` entry says. */
export type AcquireHow = 'start' | 'child' | 'acquire' | 'resume' | 'delayed-start';

/** The entries of one kind of a timeline, typed by that kind. */
export function entriesOf<K extends TimelineKind>(
  timeline: readonly TimelineEntry[],
  kind: K,
): Extract<TimelineEntry, { kind: K }>[] {
  return timeline.filter((entry): entry is Extract<TimelineEntry, { kind: K }> => entry.kind === kind);
}
