/**
 * Pure builders for writes that change a workflow from outside its run: creating it, claim transitions that
 * leave a timeline entry, and external transitions (terminate, suspend, resume, time out).
 *
 * The checkpoint is the workflow's progress anchor: every writer of a workflow's timeline or status rewrites
 * the checkpoint and conditions on the exact string it read. That one rule serialises all writers of one
 * workflow (its run's turns, claim transitions, rotations) in every ownership mode, and keeps timeline
 * sequence numbers unique. Under `workflow-lease` the epoch fence is added on top (fenced-write.ts).
 */
import type { Condition, Operation } from '../storage/types';
import { keys } from './keys';
import type { Checkpoint, TimelineEntry, TimelineNote, WorkflowRecord } from './records';

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

/** The current durable view of a workflow, exactly as read. */
export type WorkflowView = {
  record: WorkflowRecord;
  recordRaw: string;
  checkpoint: Checkpoint;
  checkpointRaw: string;
};

/**
 * The one write that appends `entries` (consecutive, in order) to a run's timeline: a single record keyed by
 * the last entry's `seq`, so that a scan after a `seq` finds every record holding a later entry
 * (`decodeTimelineRecord` reads it).
 */
export function timelineWrite(workflowId: string, run: number, entries: readonly TimelineEntry[]): Operation {
  const last = entries[entries.length - 1]!;
  return {
    type: 'put',
    key: keys.timeline(workflowId, run, last.seq),
    value: JSON.stringify(entries.length === 1 ? last : entries),
  };
}

/**
 * Appends timeline entries (and optional checkpoint changes) conditioned on the checkpoint just read.
 */
export function appendTimeline(
  view: Pick<WorkflowView, 'record' | 'checkpoint' | 'checkpointRaw'>,
  notes: readonly TimelineNote[],
  who: { engineId: string; epoch: number; now: number },
  changes: Partial<Checkpoint> = {},
): WorkflowWrite {
  const { record, checkpoint } = view;
  const entries = notes.map((note, index) => timelineEntry(note, checkpoint.timelineLength + index, who));
  const operations: Operation[] = entries.length > 0 ? [timelineWrite(record.id, record.run, entries)] : [];
  const next: Checkpoint = {
    ...checkpoint,
    ...changes,
    timelineLength: checkpoint.timelineLength + notes.length,
    updatedAt: who.now,
  };
  const checkpointRaw = JSON.stringify(next);
  operations.push({ type: 'put', key: keys.checkpoint(record.id), value: checkpointRaw });
  return {
    conditions: [{ key: keys.checkpoint(record.id), expected: view.checkpointRaw }],
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
