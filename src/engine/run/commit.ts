/**
 * What a turn's commit writes, as one atomic batch (the run's `#commit` in workflow-run.ts sends it through
 * the fenced writer and applies the outcome):
 * - one commit record of everything the turn appends (its timeline and history entries) at the key the
 *   checkpoint it replaces names (workflow-writes.ts); that key being unused is the batch's condition, so
 *   the commit lands only while the checkpoint this run last wrote or read is current;
 * - the new checkpoint: carried by the record when small (one storage request), else, and always on the last
 *   commit, rewritten at `wf-ckpt:` (checkpoint.ts);
 * - on the last commit, the terminal record, its status index entry and the claim's release — or, when the
 *   run continued as new, the run kept in run history and the next run created in its place (its record,
 *   checkpoint and first timeline entry), the claim kept: the engine drives the next run at once;
 * - the turn's own operations and conditions (timers, consumed signals, update responses, children).
 */
import type { Condition, Operation as StorageOperation } from '../../storage/types';
import { carriedCheckpointChars } from '../checkpoint';
import { assertPlainData, utf8Bytes } from '../codec';
import { PayloadTooLargeError } from '../errors';
import { keys } from '../keys';
import { mutation } from '../mutations';
import { queueReleaseOperations } from '../queues/release';
import { encodePastRun, type Checkpoint, type TimelineNote, type WorkflowRecord } from '../records';
import {
  commitRecordKey,
  encodeCommitRecord,
  newCheckpoint,
  nextLogCounters,
  timelineEntry,
  timelineWrite,
} from '../workflow-writes';
import type { RunState } from './run-state';
import type { Turn } from './turn';

/** The checkpoint a commit of `turn` writes: the run's, with the turn's counts, the state and the time. */
export function nextCheckpoint(
  run: Pick<RunState, 'checkpoint' | 'state'>,
  turn: Turn,
  now: number,
): Checkpoint {
  return {
    ...run.checkpoint,
    historyLength: run.checkpoint.historyLength + turn.history.length,
    timelineLength: run.checkpoint.timelineLength + turn.timeline.length,
    ...nextLogCounters(run.checkpoint),
    state: run.state,
    updatedAt: now,
  };
}

/**
 * The checkpoint as stored. Checks that `ctx.state` is plain JSON data within the payload limit (the
 * frontier and counters around it are small and bounded).
 */
export function encodeCheckpoint(workflowId: string, checkpoint: Checkpoint, limit: number): string {
  const what = `State of workflow '${workflowId}'`;
  assertPlainData(checkpoint.state, what);
  const raw = JSON.stringify(checkpoint);
  if (raw.length * 3 > limit) {
    const stateBytes = utf8Bytes(JSON.stringify(checkpoint.state));
    if (stateBytes > limit) throw new PayloadTooLargeError(what, stateBytes, limit);
  }
  return raw;
}

/**
 * The batch of `turn`'s commit, replacing `run.checkpoint` with the checkpoint encoded as `checkpointRaw`;
 * with `finalRecord`, the last commit. `recordRaw` is the workflow record as stored now; the batch returns
 * it as stored after the commit.
 */
export function commitBatch(
  run: Pick<RunState, 'id' | 'host' | 'record' | 'checkpoint' | 'continuation'>,
  turn: Turn,
  commit: {
    /** The checkpoint this commit leaves the run at (`checkpointRaw` encoded). */
    checkpoint: Checkpoint;
    checkpointRaw: string;
    epoch: number;
    now: number;
    finalRecord: WorkflowRecord | null;
    recordRaw: string;
    /** The run's `wf-ckpt:` key (asked for only when the checkpoint is not carried). */
    checkpointKey: () => string;
  },
): { conditions: Condition[]; operations: StorageOperation[]; recordRaw: string } {
  const { host } = run;
  const { checkpointRaw, epoch, now, finalRecord } = commit;
  // One record of everything this commit appends, at the key the checkpoint it replaces names: its absence
  // is this commit's condition (workflow-writes.ts).
  const who = { engineId: host.engineId, epoch, now };
  const timeline = turn.timeline.map((note, index) =>
    timelineEntry(note, run.checkpoint.timelineLength + index, who),
  );
  // A small checkpoint rides in the record (one storage request); the last commit and a large checkpoint
  // rewrite `wf-ckpt:` (checkpoint.ts).
  const carry = !finalRecord && checkpointRaw.length <= carriedCheckpointChars;
  const recordKey = commitRecordKey(run.id, run.record.run, run.checkpoint);
  const next = finalRecord ? run.continuation : null;
  const operations: StorageOperation[] = next
    ? [
        { type: 'put', key: recordKey, value: encodeCommitRecord(timeline, turn.history) },
        {
          type: 'put',
          key: keys.pastRun(run.id, run.record.run),
          value: encodePastRun(finalRecord!, commit.checkpoint),
        },
      ]
    : carry
      ? [
          {
            type: 'put',
            key: recordKey,
            value: encodeCommitRecord(timeline, turn.history, { checkpointRaw, epoch }),
          },
        ]
      : [
          { type: 'put', key: recordKey, value: encodeCommitRecord(timeline, turn.history) },
          { type: 'put', key: commit.checkpointKey(), value: checkpointRaw },
        ];
  let recordRaw = commit.recordRaw;
  if (next) {
    // The next run, in the place of this one: the status stays `running` (its index entry too), the claim
    // is kept, and its log starts with its `started` entry (and the claim's, under workflow-lease).
    recordRaw = JSON.stringify(next);
    const notes: TimelineNote[] = [
      {
        kind: 'started',
        detail: { workflowType: next.type, version: next.version, continuedFrom: run.record.run },
      },
    ];
    // The claim goes on with the new run: its timeline says who holds it, at which epoch, from its start.
    if (epoch > 0)
      notes.push({
        kind: 'claim-acquired',
        detail: { engineId: host.engineId, epoch, how: 'continue-as-new' },
      });
    const entries = notes.map((note, seq) => timelineEntry(note, seq, who));
    operations.push(
      { type: 'put', key: keys.record(run.id), value: recordRaw },
      {
        type: 'put',
        key: commit.checkpointKey(),
        value: JSON.stringify({
          ...newCheckpoint(next.run, now),
          timelineLength: entries.length,
        } satisfies Checkpoint),
      },
      timelineWrite(run.id, next.run, entries),
    );
  } else if (finalRecord) {
    recordRaw = JSON.stringify(finalRecord);
    operations.push({ type: 'put', key: keys.record(run.id), value: recordRaw });
    operations.push({ type: 'delete', key: keys.statusIndex(run.record.status, run.id) });
    operations.push({
      type: 'put',
      key: keys.statusIndex(finalRecord.status, run.id),
      value: finalRecord.type,
    });
    operations.push(...host.releaseOperations(run.id));
    operations.push(...queueReleaseOperations(run.record));
  } else if (turn.recordChanged) {
    // `ctx.setAttributes` (run/attributes.ts): the record with its new attributes; the index writes are
    // among the turn's operations.
    recordRaw = JSON.stringify(run.record);
    operations.push({ type: 'put', key: keys.record(run.id), value: recordRaw });
  }
  operations.push(...turn.operations);
  const conditions: Condition[] =
    mutation() === 'unfenced-commit'
      ? [...turn.conditions]
      : [{ key: recordKey, expected: null }, ...turn.conditions];
  return { conditions, operations, recordRaw };
}
