/**
 * Purge and retention: deleting finished runs, on request (`engine.purge`) or when they are older than
 * their type's `retentionMs` (the retention sweep of maintenance).
 *
 * A purge is two steps, so that it is atomic where it matters and bounded everywhere:
 * 1. One conditional batch, conditioned on everything it read (the record, the checkpoint, the claim
 *    holder, each earlier run it removes, the purge marker): it removes what names the runs — the record,
 *    checkpoint and status index entry (a whole workflow), or the earlier run's `wf-run:` entry — and writes
 *    the purge marker `wf-purge:<id>` listing the runs whose logs remain. From this commit on the runs are
 *    gone for every reader. A start, a resume or a late owner racing it changes one of those keys, so either
 *    the purge or the racing write lands, never both; a running workflow (anything not finished) is refused.
 * 2. The logs (timeline, history, commit records) of the listed runs — and for a whole workflow its
 *    messages, update requests and responses and fence rejections — are deleted in batches of
 *    `purgeBatchKeys`; then the marker goes (conditioned on what was read, so runs added meanwhile are not
 *    forgotten). If an engine stops half-way, any engine's next sweep finishes the marker.
 *
 * While a marker names a workflow whose record is gone, starting that id again is refused (a new run's log
 * could meet the old one); the marker lives for one purge's deletes. The epoch (`wf-owner-epoch:`) is never
 * deleted: an id started again continues its epochs.
 *
 * Tombstones: a run's commit is fenced by its anchor alone (the key of the commit record it appends, which
 * every epoch change writes first: workflow-lease.ts), so where the id has an epoch, the log records that
 * opened an epoch are kept as tombstones `{"purged": epoch}` instead of deleted (`logPage`), and a start of
 * the id continues its run numbers after them (lifecycle.ts). A zombie of an old run meets the tombstone of
 * its successor's takeover, whatever was purged or started since.
 *
 * Retention: `retentionMs` of the workflow's definition, else the engine's `retentionMs`; no value means
 * keep forever. An engine judges only the types it has a definition of (another engine's definition may
 * keep them longer). The sweep walks the terminal status indexes and the earlier runs with cursors that
 * survive between passes, reading at most `sweepScanKeys` index entries and purging at most
 * `sweepMaxPurges` runs per pass, and starts over every `sweepIntervalMs`. The same sweep deletes
 * idempotency keys (`idem:`) older than the engine's `idempotencyWindowMs`.
 */
import type { Condition, Operation, Storage } from '../storage/types';
import { attributeIndexWrites } from './attributes';
import type { Clock } from './clock';
import {
  CorruptRecordError,
  EngineLeaseNotHeldError,
  InvalidWorkflowStateError,
  WorkflowNotFoundError,
} from './errors';
import type { EngineWarning } from './events';
import { scanAll } from './inspect';
import { decodeIdempotency } from './lifecycle';
import { escapeId, keys, workflowIdOf } from './keys';
import type { MetricsCounters } from './metrics';
import type { FencedWriter } from './ownership/fenced-write';
import { decodeLogRecord, decodePastRun, decodeRecord } from './records';
import { isTerminal, terminalStatuses } from './vocabulary';

export const purgeBatchKeys = 200;
export const sweepScanKeys = 500;
export const sweepMaxPurges = 50;
export const sweepIntervalMs = 60_000;

/** What a purge removed: the runs, and how many keys in all. */
export type PurgeReport = { workflowId: string; runs: number[]; keysDeleted: number };

type Marker = { v: 1; runs: number[]; all: boolean };

/** A purged log record that opened an epoch (`logPage`): `{"purged": epoch}`, read as an empty record. */
function encodeTombstone(epoch: number | null): string {
  return JSON.stringify({ purged: epoch });
}

/** The epoch a tombstone carries (null: unknown), or undefined when `raw` is not a tombstone. */
export function decodeTombstone(raw: string): number | null | undefined {
  if (!raw.startsWith('{"purged":')) return undefined;
  try {
    const { purged } = JSON.parse(raw) as { purged: unknown };
    return typeof purged === 'number' ? purged : null;
  } catch {
    return undefined;
  }
}

/** The epoch of the log entry before a page (null: unknown), or 'none' at the start of a run's log. */
type LastEpoch = number | null | 'none';

/**
 * What a purge does with one page of a run's log, in key order: the records that opened an epoch (those
 * whose first timeline entry's epoch differs from the entry before it, the run's first record included)
 * become tombstones `{"purged": epoch}`, tombstones stay as they are (they carry the epoch the records after
 * them are compared with), and everything else is deleted. Pure: the caller keeps `lastEpoch` for the next
 * page once this one has landed.
 */
function logPage(
  page: readonly { key: string; value: string }[],
  lastEpoch: LastEpoch,
): { operations: Operation[]; lastEpoch: LastEpoch } {
  const operations: Operation[] = [];
  const epochOf = (entry: { epoch?: unknown }) => (typeof entry.epoch === 'number' ? entry.epoch : null);
  for (const { key, value } of page) {
    const tombstone = decodeTombstone(value);
    if (tombstone !== undefined) {
      lastEpoch = tombstone;
      continue;
    }
    let timeline;
    try {
      timeline = decodeLogRecord(key, value).timeline;
    } catch {
      lastEpoch = null; // unreadable: kept, and what follows it is judged afresh
      operations.push({ type: 'put', key, value: encodeTombstone(null) });
      continue;
    }
    if (timeline.length === 0) {
      operations.push({ type: 'delete', key }); // history alone opens no epoch
      continue;
    }
    const opened = epochOf(timeline[0]!) !== lastEpoch;
    lastEpoch = epochOf(timeline.at(-1)!);
    operations.push(
      opened ? { type: 'put', key, value: encodeTombstone(lastEpoch) } : { type: 'delete', key },
    );
  }
  return { operations, lastEpoch };
}

function decodeMarker(key: string, raw: string): Marker {
  try {
    const value = JSON.parse(raw) as Partial<Marker>;
    if (value.v === 1 && Array.isArray(value.runs) && value.runs.every((run) => Number.isSafeInteger(run)))
      return { v: 1, runs: value.runs, all: value.all === true };
  } catch {
    // fall through
  }
  throw new CorruptRecordError(key, 'a purge marker must be { v: 1, runs: number[], all: boolean }');
}

function mergeMarker(raw: string | null, key: string, runs: number[], all: boolean): string {
  const before = raw === null ? null : decodeMarker(key, raw);
  const merged = [...new Set([...(before?.runs ?? []), ...runs])].sort((a, b) => a - b);
  return JSON.stringify({ v: 1, runs: merged, all: all || before?.all === true } satisfies Marker);
}

export type PurgerDeps = {
  storage: Storage;
  writer: FencedWriter;
  /**
   * The operations telling the engine a purged holder names that it lost the workflow (ownership/notices.ts;
   * none outside workflow-lease).
   */
  displaced(workflowId: string, holderRaw: string | null): Operation[];
  engineId: string;
  clock: Clock;
  metrics: MetricsCounters;
  /** The retention of a type this engine has a definition of, or undefined (keep, or not ours to judge). */
  retentionOf(workflowType: string): number | undefined;
  /** Whether any registered type (or the engine default) has a retention at all: else the sweep is idle. */
  hasRetention(): boolean;
  /** Idempotency keys older than this are deleted by the sweep. */
  idempotencyWindowMs: number;
  warn(warning: EngineWarning): void;
};

export class Purger {
  readonly #deps: PurgerDeps;
  #nextSweepAt = 0;
  /** Where the sweep goes on: a status index or the earlier runs, and the last key it read there. */
  #cursor: { prefix: string; after: string | undefined } | null = null;
  #idemAfter: string | undefined;
  #nextIdemSweepAt = 0;
  #nextMarkerScanAt = 0;

  constructor(deps: PurgerDeps) {
    this.#deps = deps;
  }

  /**
   * Purges every run of `workflowId` (the latest must be finished), or only the earlier run `run`. Throws
   * `WorkflowNotFoundError` when there is nothing of that id (or run) to purge, `InvalidWorkflowStateError`
   * when the workflow is not finished.
   */
  async purge(workflowId: string, options: { run?: number } = {}): Promise<PurgeReport> {
    const { storage } = this.#deps;
    const markerKey = keys.purge(workflowId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const [recordRaw, checkpointRaw, holderRaw, markerRaw] = await storage.getMany([
        keys.record(workflowId),
        keys.checkpoint(workflowId),
        keys.ownerHolder(workflowId),
        markerKey,
      ]);
      const past = await scanAll(storage, keys.pastRunsOf(workflowId));
      if (!recordRaw) {
        if (markerRaw) return this.#finish(workflowId);
        throw new WorkflowNotFoundError(workflowId, options.run);
      }
      const record = decodeRecord(keys.record(workflowId), recordRaw);
      const conditions: Condition[] = [{ key: markerKey, expected: markerRaw ?? null }];
      const operations: Operation[] = [];
      let runs: number[];
      let all: boolean;
      if (options.run !== undefined && options.run !== record.run) {
        const pastKey = keys.pastRun(workflowId, options.run);
        const entry = past.find(({ key }) => key === pastKey);
        if (!entry) throw new WorkflowNotFoundError(workflowId, options.run);
        conditions.push({ key: pastKey, expected: entry.value });
        operations.push({ type: 'delete', key: pastKey });
        runs = [options.run];
        all = false;
      } else {
        if (!isTerminal(record.status))
          throw new InvalidWorkflowStateError(
            workflowId,
            record.status,
            'purge',
            'Only finished runs are purged: cancel or terminate it first.',
          );
        conditions.push(
          { key: keys.record(workflowId), expected: recordRaw },
          { key: keys.checkpoint(workflowId), expected: checkpointRaw ?? null },
          { key: keys.ownerHolder(workflowId), expected: holderRaw ?? null },
          ...past.map(({ key, value }) => ({ key, expected: value })),
        );
        operations.push(
          { type: 'delete', key: keys.record(workflowId) },
          { type: 'delete', key: keys.checkpoint(workflowId) },
          { type: 'delete', key: keys.statusIndex(record.status, workflowId) },
          // The search attributes' index keys go with the record that names them (attributes.ts).
          ...attributeIndexWrites(escapeId(workflowId), record.type, record.attributes, undefined),
          ...(holderRaw ? [{ type: 'delete' as const, key: keys.ownerHolder(workflowId) }] : []),
          ...this.#deps.displaced(workflowId, holderRaw ?? null),
          ...past.map(({ key }) => ({ type: 'delete' as const, key })),
        );
        runs = [
          record.run,
          ...past.flatMap(({ key }) => {
            const run = Number(key.slice(keys.pastRunsOf(workflowId).length));
            return Number.isSafeInteger(run) ? [run] : [];
          }),
        ];
        all = true;
      }
      operations.push({
        type: 'put',
        key: markerKey,
        value: mergeMarker(markerRaw ?? null, markerKey, runs, all),
      });
      const outcome = await this.#deps.writer.write(
        null,
        conditions,
        operations,
        `purge workflow '${workflowId}'`,
      );
      if (!outcome.ok) {
        if (outcome.reason === 'deposed') throw new EngineLeaseNotHeldError(this.#deps.engineId);
        continue; // something changed meanwhile: judge again
      }
      const report = await this.#finish(workflowId);
      return {
        workflowId,
        runs: runs.sort((a, b) => a - b),
        keysDeleted: report.keysDeleted + operations.length - 1,
      };
    }
    throw new InvalidWorkflowStateError(workflowId, 'changing too fast', 'purge', 'Try again.');
  }

  /** Step 2: deletes the logs the marker lists, then the marker. */
  async #finish(workflowId: string): Promise<PurgeReport> {
    const { storage } = this.#deps;
    const markerKey = keys.purge(workflowId);
    let deleted = 0;
    let runs: number[] = [];
    for (;;) {
      const markerRaw = await storage.get(markerKey);
      if (markerRaw === null) return { workflowId, runs, keysDeleted: deleted };
      const marker = decodeMarker(markerKey, markerRaw);
      runs = marker.runs;
      // Where the id had per-workflow claims, a late owner's commit names a record of its log (module header).
      const tombstones = (await storage.get(keys.ownerEpoch(workflowId))) !== null;
      const prefixes = marker.runs.flatMap((run) => [
        keys.historyPrefix(workflowId, run),
        keys.activityHeartbeatsOf(workflowId, run),
      ]);
      if (marker.all)
        prefixes.push(
          keys.signalPrefix(workflowId),
          keys.updateRequestPrefix(workflowId),
          keys.updateResponsePrefix(workflowId),
          keys.fenceRejectionPrefix(workflowId),
          keys.activityCompletionsOf(workflowId),
        );
      for (const run of marker.runs)
        deleted += await this.#purgeKeys(keys.timelinePrefix(workflowId, run), tombstones);
      for (const prefix of prefixes) deleted += await this.#purgeKeys(prefix, false);
      const extra: Operation[] = marker.all
        ? [
            { type: 'delete', key: keys.signalCounter(workflowId) },
            { type: 'delete', key: keys.cancelRequest(workflowId) },
          ]
        : [];
      const landed = await this.#deps.writer.write(
        null,
        [{ key: markerKey, expected: markerRaw }],
        [...extra, { type: 'delete', key: markerKey }],
        `finish purging workflow '${workflowId}'`,
      );
      if (landed.ok) {
        this.#deps.metrics.runsPurged += marker.runs.length;
        return { workflowId, runs, keysDeleted: deleted + extra.length };
      }
      if (landed.reason === 'deposed') throw new EngineLeaseNotHeldError(this.#deps.engineId);
      // the marker changed (another purge added runs): go again
    }
  }

  /**
   * Deletes every key under `prefix`, a page at a time; with `tombstones` (a run's log of an id with an
   * epoch), each page is `logPage`'s, its epoch carried to the next page once the page has landed.
   */
  async #purgeKeys(prefix: string, tombstones: boolean): Promise<number> {
    let deleted = 0;
    let after: string | undefined; // only tombstones stay behind the cursor
    let lastEpoch: LastEpoch = 'none';
    for (;;) {
      const page = await this.#deps.storage.scan(prefix, {
        ...(after ? { after } : {}),
        limit: purgeBatchKeys,
      });
      if (page.length === 0) return deleted;
      const planned: { operations: Operation[]; lastEpoch: LastEpoch } = tombstones
        ? logPage(page, lastEpoch)
        : { operations: page.map(({ key }): Operation => ({ type: 'delete', key })), lastEpoch };
      // A page of tombstones alone (a purge that stopped after its logs, gone over again) writes nothing.
      const outcome =
        planned.operations.length === 0
          ? { ok: true as const }
          : await this.#deps.writer.write(
              null,
              [],
              planned.operations,
              `purge ${page.length} keys under ${prefix}`,
            );
      if (!outcome.ok) {
        if (outcome.reason === 'deposed') throw new EngineLeaseNotHeldError(this.#deps.engineId);
        continue;
      }
      deleted += planned.operations.filter(({ type }) => type === 'delete').length;
      lastEpoch = planned.lastEpoch;
      if (page.length < purgeBatchKeys) return deleted;
      if (tombstones) after = page[page.length - 1]!.key;
    }
  }

  /**
   * One retention pass: every `sweepIntervalMs` it finishes interrupted purges and deletes expired
   * idempotency keys (a page at a time); and it purges a bounded number of runs older than their retention,
   * a round every `sweepIntervalMs`, going on where the previous pass stopped. Between rounds a pass reads
   * nothing.
   */
  async sweep(now: number): Promise<void> {
    const { storage } = this.#deps;
    // Markers outlive a purge only when its engine stopped half-way: looking once a round is enough.
    if (now >= this.#nextMarkerScanAt) {
      this.#nextMarkerScanAt = now + sweepIntervalMs;
      for (const { key } of await storage.scan(keys.purgesPrefix, { limit: 20 }))
        await this.#finish(workflowIdOf(key, keys.purgesPrefix)!);
    }
    await this.#sweepIdempotencyKeys(now);
    if (!this.#deps.hasRetention() || now < this.#nextSweepAt) return;
    const prefixes = [
      ...terminalStatuses.map((status) => keys.statusIndexPrefix(status)),
      keys.pastRunsPrefix,
    ];
    let scanned = 0;
    let purged = 0;
    this.#cursor ??= { prefix: prefixes[0]!, after: undefined };
    while (scanned < sweepScanKeys && purged < sweepMaxPurges) {
      const cursor: { prefix: string; after: string | undefined } = this.#cursor;
      const { prefix, after } = cursor;
      const page = await storage.scan(prefix, { ...(after ? { after } : {}), limit: 100 });
      scanned += page.length;
      for (const { key, value } of page) {
        cursor.after = key;
        const expired = await this.#expired(prefix, key, value, now).catch(() => null);
        if (!expired) continue;
        try {
          await this.purge(expired.workflowId, expired.run === undefined ? {} : { run: expired.run });
          purged++;
        } catch (error) {
          if (error instanceof WorkflowNotFoundError || error instanceof InvalidWorkflowStateError) continue;
          throw error;
        }
        if (purged >= sweepMaxPurges) return;
      }
      if (page.length < 100) {
        const next: number = prefixes.indexOf(prefix) + 1;
        if (next >= prefixes.length) {
          // a whole round is done: the next one starts after the interval
          this.#cursor = null;
          this.#nextSweepAt = now + sweepIntervalMs;
          return;
        }
        this.#cursor = { prefix: prefixes[next]!, after: undefined };
      }
    }
  }

  /** Deletes idempotency keys past their window, a bounded page a pass, going on where the last stopped. */
  async #sweepIdempotencyKeys(now: number): Promise<void> {
    if (now < this.#nextIdemSweepAt) return;
    const page = await this.#deps.storage.scan(keys.idempotencyPrefix, {
      ...(this.#idemAfter ? { after: this.#idemAfter } : {}),
      limit: sweepScanKeys,
    });
    for (const { key, value } of page) {
      const held = decodeIdempotency(value);
      if (held && held.at + this.#deps.idempotencyWindowMs > now) continue;
      await this.#deps.writer.write(
        null,
        [{ key, expected: value }],
        [{ type: 'delete', key }],
        'expire an idempotency key',
      );
    }
    this.#idemAfter = page.length === sweepScanKeys ? page[page.length - 1]!.key : undefined;
    if (this.#idemAfter === undefined) this.#nextIdemSweepAt = now + sweepIntervalMs;
  }

  /** The run `key` names, when it is finished and older than its type's retention. */
  async #expired(
    prefix: string,
    key: string,
    value: string,
    now: number,
  ): Promise<{ workflowId: string; run?: number } | null> {
    if (prefix === keys.pastRunsPrefix) {
      const { record } = decodePastRun(key, value);
      const retention = this.#deps.retentionOf(record.type);
      if (retention === undefined || (record.endedAt ?? record.createdAt) + retention > now) return null;
      return { workflowId: record.id, run: record.run };
    }
    // A status index entry's value is the workflow's type: most entries are judged without a read.
    const retention = this.#deps.retentionOf(value);
    if (retention === undefined) return null;
    const workflowId = workflowIdOf(key, prefix)!;
    const raw = await this.#deps.storage.get(keys.record(workflowId));
    if (!raw) return null;
    const record = decodeRecord(keys.record(workflowId), raw);
    if (!isTerminal(record.status) || (record.endedAt ?? record.createdAt) + retention > now) return null;
    // The latest run's purge takes every earlier run with it (they ended before it).
    return { workflowId };
  }
}
