/**
 * Pure builders for the writes that change a workflow's checkpoint: a run's commit record, claim transitions
 * that leave a timeline entry, and external transitions (terminate, suspend, resume, time out), and for the
 * first timeline record a start writes.
 *
 * The checkpoint is the workflow's progress anchor, and each write that replaces a checkpoint appends one
 * **commit record** to the run's log, at the key that checkpoint names (`commitRecordKey`: the run, the
 * next timeline sequence number and the number of records so far, which the new checkpoint counts up). The
 * record holds everything the write appended: its timeline entries and its history entries. So:
 * - a commit record's key is unused exactly while the checkpoint that names it is current: a checkpoint is
 *   replaced at most once, by the write that creates its record, and records are never deleted. A writer
 *   may therefore condition either on the exact checkpoint string it read (claim transitions, rotations) or
 *   on its record's key being absent (a run's commit, which needs no storage read for it: IndexedDB inserts
 *   the record with `add`, which fails if the key exists). Both serialise all writers of one workflow (its
 *   run's turns, claim transitions, rotations) in every ownership mode, and keep sequence numbers unique.
 * - a run's log, in key order, is its timeline and its history in order: records are keyed by the timeline
 *   sequence number they start at, then by their number, and both grow with every record. Records of the
 *   earlier layout (one `wf-hist:` key per history entry, timeline records keyed by their last entry's
 *   sequence number, as a start still writes its first record) sort before every commit record of their run.
 *
 * Under `workflow-lease` the epoch fence is added on top of writes that do not carry a run's commit record
 * (fenced-write.ts, workflow-lease.ts).
 */
import type { Condition, Operation } from '../storage/types';
import { keys } from './keys';
import { queueReleaseOperations } from './queues/release';
import {
  isTerminal,
  type Checkpoint,
  type HistoryEntry,
  type TimelineEntry,
  type TimelineNote,
  type WorkflowRecord,
} from './records';

export type { TimelineNote } from './records';

/** A timeline entry from what a writer noted, at `seq`, by `who`. */
export function timelineEntry(
  note: TimelineNote,
  seq: number,
  who: { engineId: string; epoch: number; now: number },
): TimelineEntry {
  return {
    seq,
    at: note.at ?? who.now,
    engineId: who.engineId,
    epoch: who.epoch,
    kind: note.kind,
    detail: note.detail,
  } as TimelineEntry;
}

export type WorkflowWrite = {
  conditions: Condition[];
  operations: Operation[];
  checkpoint: Checkpoint;
  checkpointRaw: string;
};

/**
 * The durable view of a workflow a write builds on: its record as read, its current checkpoint, and
 * `wf-ckpt:` exactly as read (which may be older than the current checkpoint: checkpoint.ts).
 */
export type WorkflowView = {
  record: WorkflowRecord;
  recordRaw: string;
  checkpoint: Checkpoint;
  checkpointRaw: string;
};

/**
 * The first timeline record of a run, written by its start (before any checkpoint exists): a single record
 * keyed by the last entry's `seq` (`decodeLogRecord` reads it).
 */
export function timelineWrite(workflowId: string, run: number, entries: readonly TimelineEntry[]): Operation {
  const last = entries[entries.length - 1]!;
  return {
    type: 'put',
    key: keys.timeline(workflowId, run, last.seq),
    value: JSON.stringify(entries.length === 1 ? last : entries),
  };
}

/** The key of the commit record the write that replaces `checkpoint` appends (see the module header). */
export function commitRecordKey(workflowId: string, run: number, checkpoint: Checkpoint): string {
  return keys.commitRecord(workflowId, run, checkpoint.timelineLength, checkpoint.commits ?? 0);
}

/**
 * The value of a commit record (`CommitRecord`): what the write appended to the run's log, and, for a run's
 * commit that does not rewrite `wf-ckpt:`, the checkpoint it makes current (already encoded) and its epoch.
 */
export function encodeCommitRecord(
  timeline: readonly TimelineEntry[],
  history: readonly HistoryEntry[],
  carried?: { checkpointRaw: string; epoch: number },
): string {
  const fields: string[] = [];
  if (timeline.length > 0) fields.push(`"t":${JSON.stringify(timeline)}`);
  if (history.length > 0) fields.push(`"h":${JSON.stringify(history)}`);
  if (carried) fields.push(`"c":${carried.checkpointRaw}`, `"e":${carried.epoch}`);
  return `{${fields.join(',')}}`;
}

/**
 * The log counters of the checkpoint that replaces `checkpoint`: one more commit record, and, when
 * `checkpoint` predates commit records, how many history entries it left under `wf-hist:` keys.
 */
export function nextLogCounters(checkpoint: Checkpoint): Pick<Checkpoint, 'commits' | 'earlierHistory'> {
  if (checkpoint.commits === undefined && checkpoint.historyLength > 0)
    return { commits: 1, earlierHistory: checkpoint.historyLength };
  return { commits: (checkpoint.commits ?? 0) + 1 };
}

/**
 * Appends timeline entries (and optional checkpoint changes) with the commit record the current checkpoint
 * names, conditioned on that record's absence and on `wf-ckpt:` as read (checkpoint.ts), and rewrites
 * `wf-ckpt:`.
 */
export function appendTimeline(
  view: Pick<WorkflowView, 'record' | 'checkpoint' | 'checkpointRaw'>,
  notes: readonly TimelineNote[],
  who: { engineId: string; epoch: number; now: number },
  changes: Partial<Checkpoint> = {},
): WorkflowWrite {
  const { record, checkpoint } = view;
  const entries = notes.map((note, index) => timelineEntry(note, checkpoint.timelineLength + index, who));
  const recordKey = commitRecordKey(record.id, record.run, checkpoint);
  const operations: Operation[] = [{ type: 'put', key: recordKey, value: encodeCommitRecord(entries, []) }];
  const next: Checkpoint = {
    ...checkpoint,
    ...changes,
    timelineLength: checkpoint.timelineLength + notes.length,
    ...nextLogCounters(checkpoint),
    updatedAt: who.now,
  };
  const checkpointRaw = JSON.stringify(next);
  operations.push({ type: 'put', key: keys.checkpoint(record.id), value: checkpointRaw });
  return {
    conditions: [
      { key: keys.checkpoint(record.id), expected: view.checkpointRaw },
      { key: recordKey, expected: null },
    ],
    operations,
    checkpoint: next,
    checkpointRaw,
  };
}

/** Moves a workflow to another status: record, status index, checkpoint and timeline in one write. */
export function changeStatus(
  view: WorkflowView,
  next: WorkflowRecord,
  notes: readonly TimelineNote[],
  who: { engineId: string; epoch: number; now: number },
  changes: Partial<Checkpoint> = {},
): WorkflowWrite & { recordRaw: string } {
  const write = appendTimeline(view, notes, who, changes);
  const recordRaw = JSON.stringify(next);
  write.conditions.push({ key: keys.record(next.id), expected: view.recordRaw });
  write.operations.push({ type: 'put', key: keys.record(next.id), value: recordRaw });
  if (view.record.status !== next.status) {
    write.operations.push({ type: 'delete', key: keys.statusIndex(view.record.status, next.id) });
    write.operations.push({ type: 'put', key: keys.statusIndex(next.status, next.id), value: next.type });
    // An end gives back the workflow's queue place or slots and its start key, in the same batch.
    if (isTerminal(next.status) && !isTerminal(view.record.status))
      write.operations.push(...queueReleaseOperations(view.record));
  }
  return { ...write, recordRaw };
}

/** Durable timers that belong to the frontier of a checkpoint (deleted when the workflow stops). */
export function frontierTimerKeys(checkpoint: Checkpoint): string[] {
  return (checkpoint.frontier?.leaves ?? []).flatMap((leaf) =>
    leaf.timerKey && !leaf.done ? [leaf.timerKey] : [],
  );
}

export function executionTimerKey(record: WorkflowRecord): string | null {
  if (record.executionTimeoutMs === undefined || record.startedAt === undefined) return null;
  return keys.timer(record.startedAt + record.executionTimeoutMs, record.id, `${record.run}.execution`);
}

export function startTimerKey(record: WorkflowRecord): string | null {
  return record.startAt === undefined ? null : keys.timer(record.startAt, record.id, `${record.run}.start`);
}

export function newCheckpoint(run: number, now: number): Checkpoint {
  return {
    v: 1,
    run,
    historyLength: 0,
    timelineLength: 0,
    position: 0,
    state: {},
    frontier: null,
    cancel: null,
    linkedChildren: [],
    updatedAt: now,
  };
}
