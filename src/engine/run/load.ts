/**
 * Loading a workflow to drive it: its record and checkpoint, then its replay history (in pages) and its
 * buffered signals, read at once (a handoff waits on this load). Decoding is strict: a bad record raises
 * `CorruptRecordError` naming its key.
 *
 * The history of a run is the entries of its `wf-hist:` keys (the earlier layout: one key per entry), then
 * the history entries of its commit records in key order (workflow-writes.ts): a run written partly in each
 * layout has its older entries in the first and its newer ones in the second. The checkpoint says how many
 * are in each (`earlierHistory`), so a run reads `wf-hist:` keys only when it has some. Its log is always
 * read whole: its last record may carry the current checkpoint (checkpoint.ts, `resolveCheckpoint`).
 */
import type { Storage } from '../../storage/types';
import { resolveCheckpoint } from '../checkpoint';
import { keys } from '../keys';
import { tryDecodeEpoch } from '../ownership/holder';
import {
  decodeCheckpoint,
  decodeHeartbeat,
  decodeHistoryEntry,
  decodeLogRecord,
  decodeRecord,
  decodeSignal,
  type Checkpoint,
  type HeartbeatRecord,
  type HistoryEntry,
  type SignalRecord,
  type WorkflowRecord,
} from '../records';

export type LoadedWorkflow = {
  record: WorkflowRecord;
  recordRaw: string;
  /** The current checkpoint (checkpoint.ts). */
  checkpoint: Checkpoint;
  /**
   * The epoch the current checkpoint was written under: the one its carrying record names, or the workflow's
   * stored epoch read in the same call as the stored checkpoint (every epoch change rewrites `wf-ckpt:` in
   * the same batch). Null: none stored; undefined: unreadable.
   */
  epoch: number | null | undefined;
  history: HistoryEntry[];
  signals: { key: string; record: SignalRecord }[];
  /** The last heartbeats stored for the frontier's open activities, by key (heartbeats.ts). */
  heartbeats: Map<string, HeartbeatRecord>;
};

/** Reads everything needed to replay a workflow. Throws CorruptRecordError naming the bad key. */
export async function loadWorkflow(storage: Storage, workflowId: string): Promise<LoadedWorkflow | null> {
  const recordKey = keys.record(workflowId);
  const checkpointKey = keys.checkpoint(workflowId);
  // Everything, read again whole as long as `wf-ckpt:` moved (resolveCheckpoint); null once it is gone.
  const read = async () => {
    const [recordRaw, checkpointRaw, epochRaw] = await storage.getMany([
      recordKey,
      checkpointKey,
      keys.ownerEpoch(workflowId),
    ]);
    if (!recordRaw) return null;
    const record = decodeRecord(recordKey, recordRaw);
    if (!checkpointRaw) return null;
    const stored = decodeCheckpoint(checkpointKey, checkpointRaw);
    const inEarlier = stored.commits === undefined ? stored.historyLength : (stored.earlierHistory ?? 0);
    // The run's log (its history, and the record that may carry its current checkpoint), the history of
    // the earlier layout and buffered signals are read at once (a handoff waits on this load).
    const [earlier, log, signalEntries] = await Promise.all([
      inEarlier > 0 ? scanAll(storage, keys.historyPrefix(workflowId, record.run)) : [],
      scanAll(storage, keys.timelinePrefix(workflowId, record.run)),
      storage.scan(keys.signalPrefix(workflowId)),
    ]);
    return {
      storedRaw: checkpointRaw,
      last: log[log.length - 1],
      record,
      recordRaw,
      epochRaw,
      earlier,
      log,
      signalEntries,
    };
  };
  const first = await read();
  const resolved = first && (await resolveCheckpoint(workflowId, first, read));
  if (!resolved) return null;
  const { current } = resolved;
  const { checkpoint } = current;
  const { record, recordRaw, epochRaw, earlier, log, signalEntries } = resolved.read;
  const history: HistoryEntry[] = [];
  for (const { key, value } of earlier) history.push(decodeHistoryEntry(key, value));
  // Timeline records of the earlier layout (keyed by a sequence number alone) hold no history.
  const earlierKeyLength = keys.timeline(workflowId, record.run, 0).length;
  for (const { key, value } of log)
    if (key.length > earlierKeyLength)
      for (const entry of decodeLogRecord(key, value).history) history.push(entry);
  // Records a commit appended after this read of the stored checkpoint are not part of it.
  history.length = Math.min(history.length, checkpoint.historyLength);
  const signals = signalEntries.map(({ key, value }) => ({ key, record: decodeSignal(key, value) }));
  // An activity of the frontier that started before: its attempt runs again here, from its last heartbeat.
  const heartbeats = new Map<string, HeartbeatRecord>();
  const frontier = checkpoint.frontier;
  const open = (frontier?.leaves ?? []).filter(
    (leaf) => leaf.kind === 'activity' && !leaf.done && leaf.started === true,
  );
  if (frontier && open.length > 0) {
    const heartbeatKeys = open.map((leaf) =>
      keys.activityHeartbeat(workflowId, record.run, frontier.pos, leaf.member),
    );
    const raws = await storage.getMany(heartbeatKeys);
    raws.forEach((raw, index) => {
      const heartbeat = decodeHeartbeat(raw);
      if (heartbeat) heartbeats.set(heartbeatKeys[index]!, heartbeat);
    });
  }
  return {
    record,
    recordRaw,
    checkpoint,
    epoch: current.carriedEpoch ?? tryDecodeEpoch(epochRaw ?? null),
    history,
    signals,
    heartbeats,
  };
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
