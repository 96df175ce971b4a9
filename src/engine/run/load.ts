/**
 * Loading a workflow to drive it: its record and checkpoint, then its replay history (in pages) and its
 * buffered signals, read at once (a handoff waits on this load). Decoding is strict: a bad record raises
 * `CorruptRecordError` naming its key.
 *
 * The history of a run is the entries of its `wf-hist:` keys (the earlier layout: one key per entry), then
 * the history entries of its commit records in key order (workflow-writes.ts): a run written partly in each
 * layout has its older entries in the first and its newer ones in the second. The checkpoint says how many
 * are in each (`earlierHistory`), so a run reads only the layouts that hold some, and a run just started
 * reads neither.
 */
import type { Storage } from '../../storage/types';
import { keys } from '../keys';
import {
  decodeCheckpoint,
  decodeHistoryEntry,
  decodeLogRecord,
  decodeRecord,
  decodeSignal,
  type Checkpoint,
  type HistoryEntry,
  type SignalRecord,
  type WorkflowRecord,
} from '../records';

export type LoadedWorkflow = {
  record: WorkflowRecord;
  recordRaw: string;
  checkpoint: Checkpoint;
  checkpointRaw: string;
  /**
   * The workflow's stored epoch, read in the same call as the checkpoint: the epoch that checkpoint was
   * written under (every epoch change replaces the checkpoint in the same batch).
   */
  epochRaw: string | null;
  history: HistoryEntry[];
  signals: { key: string; record: SignalRecord }[];
};

/** Reads everything needed to replay a workflow. Throws CorruptRecordError naming the bad key. */
export async function loadWorkflow(storage: Storage, workflowId: string): Promise<LoadedWorkflow | null> {
  const recordKey = keys.record(workflowId);
  const checkpointKey = keys.checkpoint(workflowId);
  const [recordRaw, checkpointRaw, epochRaw] = await storage.getMany([
    recordKey,
    checkpointKey,
    keys.ownerEpoch(workflowId),
  ]);
  if (!recordRaw) return null;
  const record = decodeRecord(recordKey, recordRaw);
  if (!checkpointRaw) return null;
  const checkpoint = decodeCheckpoint(checkpointKey, checkpointRaw);
  // History and buffered signals are read at once (a handoff waits on this load).
  const [history, signalEntries] = await Promise.all([
    loadHistory(storage, workflowId, record.run, checkpoint),
    storage.scan(keys.signalPrefix(workflowId)),
  ]);
  history.length = Math.min(history.length, checkpoint.historyLength);
  const signals = signalEntries.map(({ key, value }) => ({ key, record: decodeSignal(key, value) }));
  return { record, recordRaw, checkpoint, checkpointRaw, epochRaw: epochRaw ?? null, history, signals };
}

/** The run's history, reading only the layouts the checkpoint says hold some of it. */
async function loadHistory(
  storage: Storage,
  workflowId: string,
  run: number,
  checkpoint: Checkpoint,
): Promise<HistoryEntry[]> {
  const inEarlier =
    checkpoint.commits === undefined ? checkpoint.historyLength : (checkpoint.earlierHistory ?? 0);
  const inRecords = checkpoint.historyLength - inEarlier;
  const [earlier, records] = await Promise.all([
    inEarlier > 0 ? scanAll(storage, keys.historyPrefix(workflowId, run)) : [],
    inRecords > 0 ? scanAll(storage, keys.timelinePrefix(workflowId, run)) : [],
  ]);
  const history: HistoryEntry[] = [];
  for (const { key, value } of earlier) history.push(decodeHistoryEntry(key, value));
  // Timeline records of the earlier layout (keyed by a sequence number alone) hold no history.
  const earlierKeyLength = keys.timeline(workflowId, run, 0).length;
  for (const { key, value } of records)
    if (key.length > earlierKeyLength)
      for (const entry of decodeLogRecord(key, value).history) history.push(entry);
  return history;
}

/** Every entry under `prefix`, in pages. */
async function scanAll(storage: Storage, prefix: string): Promise<{ key: string; value: string }[]> {
  const entries: { key: string; value: string }[] = [];
  for (;;) {
    const page = await storage.scan(prefix, {
      ...(entries.length > 0 ? { after: entries[entries.length - 1]!.key } : {}),
      limit: 500,
    });
    for (const entry of page) entries.push(entry);
    if (page.length < 500) return entries;
  }
}
