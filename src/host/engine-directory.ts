/**
 * The engine directory: who every engine of a database was, kept after its presence record is gone. Presence
 * records (presence.ts) are deleted 10 minutes after their engine died, but workflow history — custody lanes,
 * timeline events, claims, fence rejections — names engines by id for as long as the history is kept, so the
 * studio resolves an engine id through live presence first, then this directory.
 *
 * One entry per engine, under `studio:engine-dir:<engineId>`: engine id, label, short label, recorded colour,
 * ordinal (its number in the database, from which the studio picks its display colour), mode, runtime, start
 * time and, once known, stop time. About 300 bytes with its key (264 for a tab, 336 for a server
 * worker).
 *
 * Guarantees:
 * - An engine's entry is written in the same batch as its first presence record (`PresenceWriter`), so an
 *   engine that appears in presence (and so can claim, and be named by history) has an entry.
 * - `stoppedAt` is filled in by the engine's own `stopped` record, by `recordCrash` on its behalf, or, for an
 *   engine that died without saying so, when its presence record is pruned (its last heartbeat). Never
 *   overwritten once set.
 * - Entries are never deleted: an engine may be named by a workflow that runs for months, and by finished
 *   runs kept forever by default (`retentionMs`), so no age is safe to prune at. They are cheap: a database
 *   that has run 10,000 engines (tabs opened, reloaded or restarted) holds about 3 MB of directory.
 *   `purgeEngineDirectory` exists for an operator who wants them gone; the studio then shows those engines by
 *   id, in grey.
 * - An entry that does not decode is skipped, never fatal.
 * - The directory goes through the `Storage` contract like presence, so every store has it: IndexedDB in
 *   tabs, PostgreSQL and PGlite for server workers, memory in tests.
 */
import type { Condition, Operation, Storage } from '../storage/types';
import type { EngineDirectoryEntry, EngineMode, EngineRuntime } from '../protocol';

/** Prefix of directory entries. */
export const engineDirectoryPrefix = 'studio:engine-dir:';

/** The key of an engine's directory entry. */
export function directoryKey(engineId: string): string {
  return engineDirectoryPrefix + encodeURIComponent(engineId);
}

/** What an entry is made from: a presence record or a starting engine's identity. */
export type DirectorySource = {
  engineId: string;
  label: string;
  shortLabel: string;
  color: string;
  ordinal?: number | null | undefined;
  mode: EngineMode;
  runtime: EngineRuntime;
  startedAt: number;
};

export function directoryEntryOf(source: DirectorySource, stoppedAt: number | null): EngineDirectoryEntry {
  return {
    engineId: source.engineId,
    label: source.label,
    shortLabel: source.shortLabel,
    color: source.color,
    ordinal:
      typeof source.ordinal === 'number' && Number.isSafeInteger(source.ordinal) && source.ordinal >= 0
        ? source.ordinal
        : null,
    mode: source.mode,
    runtime: source.runtime,
    startedAt: source.startedAt,
    stoppedAt,
  };
}

export function encodeDirectoryEntry(entry: EngineDirectoryEntry): string {
  return JSON.stringify(entry);
}

/** Decodes an entry, or returns null when it is not one. */
export function decodeDirectoryEntry(raw: string): EngineDirectoryEntry | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const strings = ['engineId', 'label', 'shortLabel', 'color'] as const;
  if (!strings.every((name) => typeof record[name] === 'string' && record[name] !== '')) return null;
  if (typeof record.startedAt !== 'number' || !Number.isFinite(record.startedAt)) return null;
  if (record.mode !== 'engine' && record.mode !== 'viewer') return null;
  const runtime = record.runtime as Record<string, unknown> | null | undefined;
  const decodedRuntime: EngineRuntime =
    typeof runtime === 'object' &&
    runtime !== null &&
    runtime.kind === 'server' &&
    typeof runtime.hostName === 'string' &&
    typeof runtime.pid === 'number'
      ? { kind: 'server', hostName: runtime.hostName, pid: runtime.pid }
      : { kind: 'tab' };
  return directoryEntryOf(
    {
      engineId: record.engineId as string,
      label: record.label as string,
      shortLabel: record.shortLabel as string,
      color: record.color as string,
      ordinal: typeof record.ordinal === 'number' ? record.ordinal : null,
      mode: record.mode,
      runtime: decodedRuntime,
      startedAt: record.startedAt,
    },
    typeof record.stoppedAt === 'number' && Number.isFinite(record.stoppedAt) ? record.stoppedAt : null,
  );
}

/** The write that stores `entry`. */
export function directoryPut(entry: EngineDirectoryEntry): Operation {
  return { type: 'put', key: directoryKey(entry.engineId), value: encodeDirectoryEntry(entry) };
}

/** Every decodable entry of the database, oldest engine first (then by id). */
export async function readEngineDirectory(storage: Pick<Storage, 'scan'>): Promise<EngineDirectoryEntry[]> {
  const entries = await storage.scan(engineDirectoryPrefix);
  return entries
    .map(({ value }) => decodeDirectoryEntry(value))
    .filter((entry): entry is EngineDirectoryEntry => entry !== null)
    .sort((a, b) =>
      a.startedAt !== b.startedAt ? a.startedAt - b.startedAt : a.engineId < b.engineId ? -1 : 1,
    );
}

/**
 * What a batch must check and write so that `engineId`'s entry says it stopped at `at`, given the entry's
 * stored string (`raw`, null when there is none) and, when there is none, what to make it from. Returns null
 * when nothing needs writing (the entry already says when it stopped, or there is nothing to make it from).
 */
export function stopInDirectory(
  raw: string | null,
  at: number,
  source: DirectorySource | null,
  engineId: string,
): { condition: Condition; operation: Operation } | null {
  const existing = raw === null ? null : decodeDirectoryEntry(raw);
  if (existing?.stoppedAt != null) return null;
  const base = existing ?? (source ? directoryEntryOf(source, null) : null);
  if (!base) return null;
  return {
    condition: { key: directoryKey(engineId), expected: raw },
    operation: directoryPut({ ...base, stoppedAt: at }),
  };
}

/**
 * Records that `engineId` stopped at `at` (a crash recorded on its behalf), unless its entry already says
 * when it stopped. Compare-and-swap, retried on a lost race. Returns whether this call wrote.
 */
export async function recordStopInDirectory(
  storage: Storage,
  engineId: string,
  at: number,
  source: DirectorySource | null,
): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const raw = await storage.get(directoryKey(engineId));
    const change = stopInDirectory(raw, at, source, engineId);
    if (!change) return false;
    if (await storage.conditionalBatch([change.condition], [change.operation])) return true;
  }
  return false;
}

/**
 * Deletes the entries of engines that stopped before `before` (entries without a stop time are kept). For an
 * operator's clean-up; nothing in Shuttle calls it. Returns how many were deleted.
 */
export async function purgeEngineDirectory(storage: Storage, before: number): Promise<number> {
  const entries = await storage.scan(engineDirectoryPrefix);
  let purged = 0;
  for (const { key, value } of entries) {
    const entry = decodeDirectoryEntry(value);
    if (!entry || entry.stoppedAt === null || entry.stoppedAt >= before) continue;
    if (await storage.conditionalBatch([{ key, expected: value }], [{ type: 'delete', key }])) purged++;
  }
  return purged;
}
