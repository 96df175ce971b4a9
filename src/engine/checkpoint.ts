/**
 * A workflow's current checkpoint.
 *
 * Each write that replaces a checkpoint appends the commit record that checkpoint names (workflow-writes.ts),
 * so a run's log is a chain, and the checkpoint is where the chain stands. `wf-ckpt:<id>` stores it — but a
 * run's commit, the write made once per step, does not rewrite it when its checkpoint is small: it carries
 * the checkpoint it makes current inside its commit record instead (`c`, with the epoch it was written under,
 * `e`), one storage request per step instead of two. Every other write (a run's last commit, a commit whose
 * checkpoint is larger than `carriedCheckpointChars`, claim transitions, cancels, status changes) rewrites
 * `wf-ckpt:` and carries nothing. So:
 *
 * - the current checkpoint is the stored one, unless the run's log holds a record at or after the key the
 *   stored one names; then it is the one the run's last record carries;
 * - a last record at or after that key that carries none was written (with a new `wf-ckpt:`) after the stored
 *   one was read: read it again.
 *
 * Readers ask for the last record of the workflow's logs (`lastLogRecord`) in the same turn as `wf-ckpt:`,
 * so finding the current checkpoint costs no round trip of its own.
 *
 * A write that replaces the current checkpoint conditions on both: `wf-ckpt:` exactly as read (no rewrite
 * since) and the absence of the record the current checkpoint names (no commit carried one since). A run's
 * own commit needs only the second: it is the run's anchor fence (ownership.md).
 */
import type { Entry, Storage } from '../storage/types';
import { CorruptRecordError } from './errors';
import { keys } from './keys';
import { decodeCheckpoint, decodeLogRecord, decodeRecord, type Checkpoint } from './records';
import { commitRecordKey, type WorkflowView } from './workflow-writes';

/** The largest encoded checkpoint a run's commit carries in its record instead of rewriting `wf-ckpt:`. */
export const carriedCheckpointChars = 2048;

export type CurrentCheckpoint = {
  checkpoint: Checkpoint;
  /** `wf-ckpt:<id>` exactly as read: what a write replacing the checkpoint conditions on (module header). */
  storedRaw: string;
  /** The epoch the record carrying `checkpoint` was written under; absent when the stored one is current. */
  carriedEpoch?: number;
};

/**
 * The current checkpoint given the stored one and the last record of its run's log (`undefined`: the log is
 * empty), or `'moved'` when `wf-ckpt:` was rewritten after `storedRaw` was read.
 */
export function checkpointAt(
  workflowId: string,
  storedRaw: string,
  last: Entry | undefined,
): CurrentCheckpoint | 'moved' {
  const stored = decodeCheckpoint(keys.checkpoint(workflowId), storedRaw);
  if (!last || last.key < commitRecordKey(workflowId, stored.run, stored))
    return { checkpoint: stored, storedRaw };
  // A record of a later run: a new run started after the stored checkpoint was read.
  if (!last.key.startsWith(keys.timelinePrefix(workflowId, stored.run))) return 'moved';
  const { carried } = decodeLogRecord(last.key, last.value);
  if (!carried) return 'moved';
  return { checkpoint: carried.checkpoint, storedRaw, carriedEpoch: carried.epoch };
}

/**
 * The last record of a workflow's logs (any run). Asked for in the same turn as `wf-ckpt:`, a store that
 * groups reads answers both from one snapshot in one round trip (IndexedDB: one transaction).
 */
export async function lastLogRecord(storage: Storage, workflowId: string): Promise<Entry | undefined> {
  const [last] = await storage.scan(keys.logsOf(workflowId), { reverse: true, limit: 1 });
  return last;
}

/** A read of `wf-ckpt:` (`storedRaw`) and of the last record of the workflow's log beside it (`undefined`: empty). */
export type CheckpointRead = { storedRaw: string; last: Entry | undefined };

/**
 * The current checkpoint given `read`, reading again with `readAgain` as long as `wf-ckpt:` moved, with the
 * read it comes from. How to read is the caller's (`currentCheckpoint`: the last log record alone; load.ts:
 * the run's whole log, with everything else a load needs); what the reads mean is decided here, once.
 * `readAgain` answers null when the workflow is gone (purged), and so does this. A read again that finds
 * `wf-ckpt:` as it was means the record that made it 'moved' neither carries a checkpoint nor was written
 * with a new one: `CorruptRecordError` naming that record.
 */
export async function resolveCheckpoint<R extends CheckpointRead>(
  workflowId: string,
  read: R,
  readAgain: () => Promise<R | null>,
): Promise<{ current: CurrentCheckpoint; read: R } | null> {
  for (;;) {
    const current = checkpointAt(workflowId, read.storedRaw, read.last);
    if (current !== 'moved') return { current, read };
    const again = await readAgain();
    if (again === null) return null;
    if (again.storedRaw === read.storedRaw)
      throw new CorruptRecordError(
        read.last!.key,
        `it follows checkpoint ${keys.checkpoint(workflowId)} in the run's log, yet neither carries a checkpoint nor replaced the stored one`,
      );
    read = again;
  }
}

/**
 * The current checkpoint of a workflow whose `wf-ckpt:` was read as `storedRaw`, given the last record of
 * its logs read beside it (`lastLogRecord`); read again as long as `wf-ckpt:` moved (`resolveCheckpoint`).
 * Null when the workflow is gone (purged) by the time it is read again.
 */
export async function currentCheckpoint(
  storage: Storage,
  workflowId: string,
  storedRaw: string,
  last: Entry | undefined,
): Promise<CurrentCheckpoint | null> {
  const resolved = await resolveCheckpoint(workflowId, { storedRaw, last }, async () => {
    const again = await storage.get(keys.checkpoint(workflowId));
    return again === null ? null : { storedRaw: again, last: await lastLogRecord(storage, workflowId) };
  });
  return resolved ? resolved.current : null;
}

/**
 * A workflow's view for a write that replaces its checkpoint, from its record, `wf-ckpt:` and the last record
 * of its logs as read: the
 * checkpoint is the current one, `checkpointRaw` the stored one (appendTimeline conditions on both). Null when
 * the workflow is gone by the time its log is read. Throws `CorruptRecordError` naming a bad key.
 */
export async function workflowView(
  storage: Storage,
  workflowId: string,
  recordRaw: string,
  checkpointRaw: string,
  last: Entry | undefined,
): Promise<(WorkflowView & { carriedEpoch?: number }) | null> {
  const record = decodeRecord(keys.record(workflowId), recordRaw);
  const current = await currentCheckpoint(storage, workflowId, checkpointRaw, last);
  if (!current) return null;
  return {
    record,
    recordRaw,
    checkpoint: current.checkpoint,
    checkpointRaw: current.storedRaw,
    ...(current.carriedEpoch !== undefined ? { carriedEpoch: current.carriedEpoch } : {}),
  };
}
