/**
 * Loading a workflow to drive it: its record and checkpoint, then its replay history (in pages) and its
 * buffered signals, read at once (a handoff waits on this load). Decoding is strict: a bad record raises
 * `CorruptRecordError` naming its key.
 */
import type { Storage } from '../../storage/types';
import { keys } from '../keys';
import {
  decodeCheckpoint,
  decodeHistoryEntry,
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
  history: HistoryEntry[];
  signals: { key: string; record: SignalRecord }[];
};

/** Reads everything needed to replay a workflow. Throws CorruptRecordError naming the bad key. */
export async function loadWorkflow(storage: Storage, workflowId: string): Promise<LoadedWorkflow | null> {
  const recordKey = keys.record(workflowId);
  const checkpointKey = keys.checkpoint(workflowId);
  const [recordRaw, checkpointRaw] = await storage.getMany([recordKey, checkpointKey]);
  if (!recordRaw) return null;
  const record = decodeRecord(recordKey, recordRaw);
  if (!checkpointRaw) return null;
  const checkpoint = decodeCheckpoint(checkpointKey, checkpointRaw);
  // History and buffered signals are read at once (a handoff waits on this load).
  const [history, signalEntries] = await Promise.all([
    loadHistory(storage, workflowId, record.run),
    storage.scan(keys.signalPrefix(workflowId)),
  ]);
  history.length = Math.min(history.length, checkpoint.historyLength);
  const signals = signalEntries.map(({ key, value }) => ({ key, record: decodeSignal(key, value) }));
  return { record, recordRaw, checkpoint, checkpointRaw, history, signals };
}

async function loadHistory(storage: Storage, workflowId: string, run: number): Promise<HistoryEntry[]> {
  const history: HistoryEntry[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await storage.scan(keys.historyPrefix(workflowId, run), {
      ...(after ? { after } : {}),
      limit: 500,
    });
    for (const { key, value } of page) history.push(decodeHistoryEntry(key, value));
    if (page.length < 500) return history;
    after = page[page.length - 1]!.key;
  }
}
