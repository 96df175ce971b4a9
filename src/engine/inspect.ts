/**
 * Read-only views of the store for `describe`, `list`, `timeline`, `operationOutcome` and the studio's claims
 * screen. They read committed durable state only, so they give the same answer on every engine sharing the
 * store. A corrupt record does not make a view throw: the workflow is reported with `corrupt` naming the key.
 */
import type { Entry, Storage } from '../storage/types';
import type { Json, JsonObject } from './codec';
import {
  CorruptRecordError,
  InvalidArgumentError,
  InvalidSearchAttributeError,
  WorkflowNotFoundError,
  type SerializedError,
} from './errors';
import { assertWorkflowId } from './ids';
import { escapeId, keys, unescapeId, workflowIdOf } from './keys';
import { isTerminal, workflowStatuses, type WorkflowStatus } from './vocabulary';
import { currentCheckpoint, lastLogRecord, workflowView } from './checkpoint';
import { recordedHistory, type RecordedHistory } from './replay-check';
import { decodeHolder, tryDecodeEpoch, type Holder } from './ownership/holder';
import { completionToken } from './external-activities';
import { claimExpiry, decodeSession, type Session } from './ownership/session';
import {
  decodeCheckpoint,
  decodeHeartbeat,
  decodeFenceRejection,
  decodeHistoryEntry,
  decodeLogRecord,
  decodePastRun,
  decodeRecord,
  decodeSignal,
  decodeTimelineRecord,
  type Checkpoint,
  type FenceRejection,
  type Frontier,
  type HistoryEntry,
  type TimelineEntry,
  type WorkflowRecord,
} from './records';
import { describeCommand } from './workflow';
import { listRow, matchesListFilter, type RowContext } from './list-row';
import {
  attributeConditions,
  attributeNamePrefix,
  attributeTypeOfKey,
  drivingRange,
  matchesConditions,
  parseAttributeIndexKey,
  resolveCondition,
  type AttributeFilter,
  type AttributeType,
  type ResolvedCondition,
} from './attributes';

/**
 * Who holds a workflow's claim. `expiresAt` is when the claim stops being live unless renewed: the expiry of
 * the holder's session (or when that session ended), or the holder's own expiry for older claims.
 */
export type WorkflowOwner = { engineId: string; epoch: number; claimedAt: number; expiresAt: number };

/** What a workflow waits on. */
export type PendingOperation = {
  position: number;
  kind: Frontier['kind'];
  name: string;
  /** e.g. "activity 'charge' (attempt 2)", "signal 'approve'", "all of 3" */
  summary: string;
  since: number;
  leaves: {
    kind: string;
    name: string;
    done: boolean;
    attempt?: number;
    retrying?: boolean;
    dueAt?: number;
    childId?: string;
    lastError?: SerializedError;
    /** An external activity still waiting: the token `completeActivity` / `failActivity` take. */
    completionToken?: string;
    /** An activity not done yet: its last recorded heartbeat (`context.heartbeat(details)`), if any. */
    heartbeat?: { attempt: number; details?: Json; at: number; engineId: string };
  }[];
};

/**
 * What a workflow's record says, under the public names (`workflowId`, `workflowType`, `parentId`): derived
 * from `WorkflowRecord` in one place (`factsOf`), so a field added to the record cannot be forgotten here.
 */
export type WorkflowFacts = Pick<
  WorkflowRecord,
  | 'version'
  | 'run'
  | 'status'
  | 'input'
  | 'result'
  | 'error'
  | 'reason'
  | 'createdAt'
  | 'startAt'
  | 'startedAt'
  | 'endedAt'
  | 'executionTimeoutMs'
  | 'scheduledBy'
  | 'forkedFrom'
  | 'continuedFrom'
  | 'attributes'
  | 'queue'
  | 'startKey'
> & { workflowId: string; workflowType: string; parentId?: string };

/** The facts of a record: everything but the storage envelope (`v`), the parent link's internals and `createdBy`. */
export function factsOf(record: WorkflowRecord): WorkflowFacts {
  const { v: _v, id, type, parent, createdBy: _createdBy, ...facts } = record;
  return { workflowId: id, workflowType: type, ...facts, ...(parent ? { parentId: parent.id } : {}) };
}

/**
 * A signal sent to a workflow that has not consumed it yet: buffered in the store (`sig:<id>:<seq>`) until the
 * workflow waits for a signal of that name. `sentBy` is the engine that sent it.
 */
export type BufferedSignal = { seq: number; name: string; payload?: Json; sentAt: number; sentBy: string };

/** How many buffered signals `describe` lists, oldest first (`bufferedSignalsMore` says there are more). */
export const maxBufferedSignalsDescribed = 100;

export type WorkflowDescription = WorkflowFacts & {
  updatedAt: number;
  /** Children started with parentClosePolicy 'terminate'. */
  linkedChildren: string[];
  owner: WorkflowOwner | null;
  /** The stored fencing epoch (workflow-lease), or null when none was ever minted. */
  epoch: number | null;
  pending: PendingOperation | null;
  /** Operations resolved so far. */
  position: number;
  state: JsonObject;
  cancelRequested: boolean;
  historyLength: number;
  timelineLength: number;
  /**
   * Signals sent but not consumed yet, oldest first (at most `maxBufferedSignalsDescribed`): those the
   * workflow does not wait for (yet). Empty for a finished workflow and an earlier run.
   */
  bufferedSignals: BufferedSignal[];
  /** More signals are buffered than `bufferedSignals` lists. */
  bufferedSignalsMore: boolean;
  corrupt?: { key: string; message: string };
};

/** One row of `list`: the record's identity and timing facts, with its owner and what it waits on. */
export type WorkflowSummary = Pick<
  WorkflowFacts,
  | 'workflowId'
  | 'workflowType'
  | 'version'
  | 'run'
  | 'status'
  | 'createdAt'
  | 'startedAt'
  | 'endedAt'
  | 'parentId'
  | 'attributes'
> & {
  updatedAt: number;
  owner: WorkflowOwner | null;
  epoch: number | null;
  waitingOn: string | null;
  /** How it failed, in one line. */
  error?: string;
  corrupt?: { key: string; message: string };
};

export type ListFilter = {
  /** One status or several. */
  status?: WorkflowStatus | WorkflowStatus[];
  workflowType?: string;
  /** Only workflows currently owned by this engine id. */
  ownerEngineId?: string;
  /** Only ids starting with this prefix. */
  idPrefix?: string;
  /** Page size, 1–1000. Default 100. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /**
   * Time ranges, in epoch ms: created at or after `createdFrom` and before `createdTo`; ended (finished) at or
   * after `endedFrom` and before `endedTo` — an unfinished workflow has not ended, so an `ended…` bound leaves
   * it out. Applied to each row as the list walks (as the type and owner filters are): a narrow range over a
   * large store reads more to fill a page.
   */
  createdFrom?: number;
  createdTo?: number;
  endedFrom?: number;
  endedTo?: number;
  /**
   * Also list the earlier runs kept by run history, each right after its workflow's latest run (filters apply
   * to every run; `limit` counts workflows, so a page may hold more rows).
   */
  allRuns?: boolean;
  /**
   * Only these workflows (at most 1,000 ids), read together in a few transactions: the rows of the workflows
   * a change notice names, for a view that patches its rows. The other filters apply too; ids that name no
   * workflow are left out; rows come in the order of `ids`, all on one page (`limit` and `cursor` ignored).
   */
  ids?: string[];
  /**
   * Search attributes (`ctx.setAttributes`): name → a value (equality) or a range `{ gt, gte, lt, lte, eq }`,
   * e.g. `{ customer: 'acme', amount: { gte: 100, lt: 500 } }`. Every name must match. The list walks the
   * attribute index (an equality's, else the first name's range), never every workflow; the other filters
   * apply to the rows it finds. Values are typed by the attribute's declared type (a registered definition
   * declares it; else the type the index holds): a `time` takes a `Date`, epoch ms or an ISO-8601 string.
   * Rows come in the walked attribute's value order (then id order), not id order. Latest runs only (not
   * with `allRuns`). A bad filter throws `InvalidSearchAttributeError`.
   */
  attributes?: AttributeFilter;
  /**
   * The same as text, as the CLI (`--where`), the HTTP API (`where=`) and the studio's chips send it: each
   * `name op value` with op one of `=` `>` `>=` `<` `<=` (`amount>=100`, `customer=acme`, `due<2026-01-01`),
   * the value read as the attribute's type. Combined with `attributes` (every condition must hold).
   */
  where?: string[];
};

export type ListPage = { items: WorkflowSummary[]; nextCursor: string | null };

export type ClaimInfo = {
  workflowId: string;
  holder: WorkflowOwner | null;
  /** The exact stored holder string could not be decoded (reads as expired). */
  holderCorrupt: boolean;
  epoch: number | null;
};

export function summarizePending(
  frontier: Frontier | null,
  of?: { workflowId: string; run: number },
): PendingOperation | null {
  if (!frontier) return null;
  const open = frontier.leaves.filter((leaf) => !leaf.done);
  let summary: string;
  if (frontier.kind === 'all' || frontier.kind === 'race')
    summary = `${frontier.kind} of ${frontier.leaves.length} (${open.map((leaf) => describeCommand(leaf)).join(', ')})`;
  else {
    const leaf = frontier.leaves[0];
    summary = describeCommand(frontier);
    if (leaf?.kind === 'activity' && leaf.attempt && leaf.attempt > 1)
      summary += ` (attempt ${leaf.attempt}${leaf.retrying ? ', backing off' : ''})`;
    if (leaf?.kind === 'child' && leaf.childId) summary = `child '${leaf.childId}'`;
  }
  return {
    position: frontier.pos,
    kind: frontier.kind,
    name: frontier.name,
    summary,
    since: frontier.since,
    leaves: frontier.leaves.map((leaf) => ({
      kind: leaf.kind,
      name: leaf.name,
      done: leaf.done,
      ...(leaf.attempt !== undefined ? { attempt: leaf.attempt } : {}),
      ...(leaf.retrying ? { retrying: true } : {}),
      ...(leaf.dueAt !== undefined ? { dueAt: leaf.dueAt } : {}),
      ...(leaf.childId ? { childId: leaf.childId } : {}),
      ...(leaf.lastError ? { lastError: leaf.lastError } : {}),
      ...(leaf.external && !leaf.done && of
        ? { completionToken: completionToken(of.workflowId, of.run, frontier.pos, leaf.member) }
        : {}),
    })),
  };
}

/** `pending` with the last recorded heartbeat of each activity not done yet (one read for all of them). */
async function withHeartbeats(
  storage: Storage,
  pending: PendingOperation | null,
  frontier: Frontier | null,
  of: { workflowId: string; run: number },
): Promise<PendingOperation | null> {
  if (!pending || !frontier) return pending;
  const open = frontier.leaves.filter((leaf) => leaf.kind === 'activity' && !leaf.done);
  if (open.length === 0) return pending;
  const raws = await storage.getMany(
    open.map((leaf) => keys.activityHeartbeat(of.workflowId, of.run, frontier.pos, leaf.member)),
  );
  const leaves = [...pending.leaves];
  open.forEach((leaf, index) => {
    const heartbeat = decodeHeartbeat(raws[index]);
    if (heartbeat) leaves[leaf.member] = { ...leaves[leaf.member]!, heartbeat };
  });
  return { ...pending, leaves };
}

/** The owners named by holder records, with their expiry read from their engines' sessions. */
async function ownersOf(
  storage: Storage,
  raws: readonly (string | null | undefined)[],
): Promise<(WorkflowOwner | null)[]> {
  const holders = raws.map((raw) => (raw === null || raw === undefined ? null : decodeHolder(raw)));
  const engines = [
    ...new Set(holders.flatMap((holder) => (holder && holder.expiresAt === null ? [holder.engineId] : []))),
  ];
  const sessionRaws = engines.length > 0 ? await storage.getMany(engines.map((id) => keys.session(id))) : [];
  const sessions = new Map<string, Session | null>(
    engines.map((id, index) => {
      const raw = sessionRaws[index];
      return [id, raw === null || raw === undefined ? null : decodeSession(raw)];
    }),
  );
  return holders.map((holder) => (holder ? ownerFrom(holder, sessions.get(holder.engineId)) : null));
}

function ownerFrom(holder: Holder, session: Session | null | undefined): WorkflowOwner {
  return {
    engineId: holder.engineId,
    epoch: holder.epoch,
    claimedAt: holder.claimedAt,
    expiresAt: claimExpiry(holder, session),
  };
}

function corruptOf(error: unknown): { key: string; message: string } {
  if (error instanceof CorruptRecordError) return { key: error.key, message: error.message };
  return { key: '?', message: error instanceof Error ? error.message : String(error) };
}

/** One run of a workflow id, for the run switcher: the latest first. */
export type RunSummary = Pick<
  WorkflowFacts,
  'run' | 'workflowType' | 'version' | 'status' | 'createdAt' | 'startedAt' | 'endedAt'
> & { latest: boolean };

function runSummary(record: WorkflowRecord, latest: boolean): RunSummary {
  const { run, workflowType, version, status, createdAt, startedAt, endedAt } = factsOf(record);
  return {
    run,
    workflowType,
    version,
    status,
    createdAt,
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(endedAt !== undefined ? { endedAt } : {}),
    latest,
  };
}

/** Every run of `workflowId` still stored, latest first; empty when the id is unknown. */
export async function listRuns(storage: Storage, workflowId: string): Promise<RunSummary[]> {
  const [latestRaw, past] = await Promise.all([
    storage.get(keys.record(workflowId)),
    scanAll(storage, keys.pastRunsOf(workflowId)),
  ]);
  const runs: RunSummary[] = [];
  if (latestRaw) runs.push(runSummary(decodeRecord(keys.record(workflowId), latestRaw), true));
  for (const { key, value } of past.reverse()) {
    try {
      runs.push(runSummary(decodePastRun(key, value).record, false));
    } catch {
      // a corrupt past run is left out of the switcher; describe names it
    }
  }
  return runs;
}

/** Every entry under `prefix`, read in pages of 1,000. */
export async function scanAll(storage: Storage, prefix: string): Promise<{ key: string; value: string }[]> {
  const entries: { key: string; value: string }[] = [];
  for (let after: string | undefined; ;) {
    const page = await storage.scan(prefix, { ...(after ? { after } : {}), limit: 1000 });
    entries.push(...page);
    if (page.length < 1000) return entries;
    after = page[page.length - 1]!.key;
  }
}

/** A finished earlier run of `workflowId` (run history), or null when it is not stored. */
export async function describePastRun(
  storage: Storage,
  workflowId: string,
  run: number,
): Promise<WorkflowDescription | null> {
  const key = keys.pastRun(workflowId, run);
  const raw = await storage.get(key);
  if (!raw) return null;
  const { record, checkpoint } = decodePastRun(key, raw);
  return {
    ...factsOf(record),
    updatedAt: checkpoint.updatedAt ?? record.createdAt,
    linkedChildren: checkpoint.linkedChildren,
    owner: null,
    epoch: null,
    pending: null,
    position: checkpoint.position,
    state: checkpoint.state,
    cancelRequested: checkpoint.cancel?.delivered === true,
    historyLength: checkpoint.historyLength,
    timelineLength: checkpoint.timelineLength,
    bufferedSignals: [],
    bufferedSignalsMore: false,
  };
}

export async function describeWorkflow(
  storage: Storage,
  workflowId: string,
): Promise<WorkflowDescription | null> {
  // Asked for in the same turn as the record, so a store that groups reads answers both in one transaction.
  const [[recordRaw, checkpointRaw, holderRaw, epochRaw, cancelRaw], signalEntries, last] = await Promise.all(
    [
      storage.getMany([
        keys.record(workflowId),
        keys.checkpoint(workflowId),
        keys.ownerHolder(workflowId),
        keys.ownerEpoch(workflowId),
        keys.cancelRequest(workflowId),
      ]),
      storage.scan(keys.signalPrefix(workflowId), { limit: maxBufferedSignalsDescribed + 1 }),
      lastLogRecord(storage, workflowId),
    ],
  );
  if (!recordRaw) return null;
  let record: WorkflowRecord;
  try {
    record = decodeRecord(keys.record(workflowId), recordRaw);
  } catch (error) {
    return {
      workflowId,
      workflowType: '?',
      version: 0,
      run: 0,
      status: 'failed',
      createdAt: 0,
      updatedAt: 0,
      linkedChildren: [],
      owner: null,
      epoch: null,
      pending: null,
      position: 0,
      state: {},
      cancelRequested: false,
      historyLength: 0,
      timelineLength: 0,
      bufferedSignals: [],
      bufferedSignalsMore: false,
      corrupt: corruptOf(error),
    };
  }
  const read = await checkpointOf(storage, workflowId, record, checkpointRaw ?? null, last);
  const checkpoint = 'checkpoint' in read ? read.checkpoint : null;
  let corrupt = 'corrupt' in read ? read.corrupt : undefined;
  const finished = isTerminal(record.status);
  const bufferedSignals: BufferedSignal[] = [];
  if (!finished)
    for (const { key, value } of signalEntries.slice(0, maxBufferedSignalsDescribed)) {
      try {
        const signal = decodeSignal(key, value);
        bufferedSignals.push({
          seq: Number(key.slice(key.lastIndexOf(':') + 1)),
          name: signal.name,
          ...(signal.payload === undefined ? {} : { payload: signal.payload }),
          sentAt: signal.sentAt,
          sentBy: signal.sentBy,
        });
      } catch (error) {
        corrupt ??= corruptOf(error);
      }
    }
  const epoch = tryDecodeEpoch(epochRaw ?? null);
  if (epoch === undefined)
    corrupt = {
      key: keys.ownerEpoch(workflowId),
      message: `Stored record '${keys.ownerEpoch(workflowId)}' is corrupt (not a positive integer).`,
    };
  return {
    ...factsOf(record),
    updatedAt: checkpoint?.updatedAt ?? record.createdAt,
    linkedChildren: checkpoint?.linkedChildren ?? [],
    owner: (await ownersOf(storage, [holderRaw]))[0] ?? null,
    epoch: epoch ?? null,
    pending: await withHeartbeats(
      storage,
      summarizePending(checkpoint?.frontier ?? null, { workflowId, run: record.run }),
      checkpoint?.frontier ?? null,
      { workflowId, run: record.run },
    ),
    position: checkpoint?.position ?? 0,
    state: checkpoint?.state ?? {},
    cancelRequested: cancelRaw !== null || checkpoint?.cancel?.delivered === true,
    historyLength: checkpoint?.historyLength ?? 0,
    timelineLength: checkpoint?.timelineLength ?? 0,
    bufferedSignals,
    bufferedSignalsMore: !finished && signalEntries.length > maxBufferedSignalsDescribed,
    ...(corrupt ? { corrupt } : {}),
  };
}

function assertStatus(status: unknown): asserts status is WorkflowStatus {
  if (!workflowStatuses.includes(status as WorkflowStatus))
    throw new InvalidArgumentError(
      `Unknown status filter ${JSON.stringify(status)}; use one of ${workflowStatuses.join(', ')}.`,
    );
}

/** A list's page size: 1–1000 (default 100); refused, not rounded or clamped, when outside. */
function pageLimit(filter: ListFilter): number {
  const limit = filter.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
    throw new InvalidArgumentError(
      `A list's limit is an integer from 1 to 1000 (workflows per page); got ${JSON.stringify(limit)}. Page on with nextCursor.`,
    );
  return limit;
}

/** Pages through workflows, newest-created last (key order), applying filters. */
export async function listWorkflows(
  storage: Storage,
  filter: ListFilter = {},
  /** The type registered definitions declare for a search attribute (the index is asked otherwise). */
  declaredType: (name: string) => AttributeType | undefined = () => undefined,
): Promise<ListPage> {
  // With `ids`, limit is not used (every named workflow comes on one page).
  const limit = filter.ids === undefined ? pageLimit(filter) : 1000;
  const conditions = await resolveAttributeFilter(storage, filter, declaredType);
  for (const bound of ['createdFrom', 'createdTo', 'endedFrom', 'endedTo'] as const) {
    const value = filter[bound];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value)))
      throw new InvalidArgumentError(
        `A list's ${bound} is a time in epoch milliseconds (e.g. Date.now() - 3_600_000); got ${JSON.stringify(value)}.`,
      );
  }
  const statuses =
    filter.status === undefined ? null : Array.isArray(filter.status) ? filter.status : [filter.status];
  statuses?.forEach(assertStatus);
  if (conditions === 'none') return { items: [], nextCursor: null };
  if (filter.ids !== undefined) return listByIds(storage, filter, conditions);
  if (conditions.length > 0) return listByAttributes(storage, filter, conditions, limit);
  // Listing every run walks the records: the status index names latest runs only.
  const singleStatus = statuses && statuses.length === 1 && !filter.allRuns ? statuses[0]! : null;
  const base = singleStatus ? keys.statusIndexPrefix(singleStatus) : keys.recordPrefix;
  // Ids are escaped character by character, so the escaped id prefix is a key prefix: seek straight to it.
  const prefix = filter.idPrefix ? base + escapeId(filter.idPrefix) : base;
  const items: WorkflowSummary[] = [];
  let workflows = 0;
  let after = filter.cursor;
  let nextCursor: string | null = null;
  for (;;) {
    const pageSize = Math.min(1000, Math.max(limit * 2, 50));
    const page = await storage.scan(prefix, { ...(after ? { after } : {}), limit: pageSize });
    if (page.length === 0) break;
    const ids = page.map(({ key }) => workflowIdOf(key, base)!);
    const summaries = await summarize(
      storage,
      ids,
      singleStatus ? { indexed: singleStatus } : { recordRaws: page.map(({ value }) => value) },
    );
    const pastRuns = filter.allRuns ? await pastRunSummaries(storage, ids) : null;
    for (let index = 0; index < summaries.length; index++) {
      const rows = [summaries[index]!, ...(pastRuns?.[index] ?? [])].filter((row) =>
        matchesListFilter(row, filter),
      );
      after = page[index]!.key;
      if (rows.length === 0) continue;
      items.push(...rows);
      if (++workflows === limit) {
        nextCursor = index < summaries.length - 1 || page.length === pageSize ? after : null;
        return { items, nextCursor };
      }
    }
    if (page.length < pageSize) break;
  }
  return { items, nextCursor };
}

/** `list` of `filter.ids`: their records in one read, the rest of their rows in the next. */
async function listByIds(
  storage: Storage,
  filter: ListFilter,
  conditions: readonly ResolvedCondition[],
): Promise<ListPage> {
  const ids = filter.ids!;
  if (!Array.isArray(ids) || ids.length > 1000)
    throw new InvalidArgumentError(
      `list: ids must be an array of at most 1,000 workflow ids, not ${Array.isArray(ids) ? `${ids.length} ids` : typeof ids}.`,
    );
  for (const id of ids) assertWorkflowId(id);
  const unique = [...new Set(ids)];
  const records = await storage.getMany(unique.map((id) => keys.record(id)));
  const present = unique.filter((_, index) => records[index] !== null);
  const summaries = await summarize(storage, present, {
    recordRaws: records.filter((raw): raw is string => raw !== null),
  });
  const pastRuns = filter.allRuns ? await pastRunSummaries(storage, present) : null;
  const items = summaries
    .flatMap((summary, index) => [summary, ...(pastRuns?.[index] ?? [])])
    .filter((row) => matchesListFilter(row, filter) && matchesConditions(row.attributes, conditions));
  return { items, nextCursor: null };
}

/**
 * The conditions of `filter.attributes` and `filter.where`, typed: by the type a registered definition
 * declares, else by the type the index holds for the name (one short scan); `'none'` when no workflow holds
 * some attribute named (nothing can match). Throws `InvalidSearchAttributeError` for a bad filter.
 */
async function resolveAttributeFilter(
  storage: Storage,
  filter: ListFilter,
  declaredType: (name: string) => AttributeType | undefined,
): Promise<ResolvedCondition[] | 'none'> {
  const raw = attributeConditions(filter.attributes, filter.where);
  if (raw.length === 0) return [];
  if (filter.allRuns)
    throw new InvalidSearchAttributeError(
      raw[0]!.name,
      'list: attribute filters find latest runs (the index names those only); leave out allRuns, or list allRuns without attributes.',
    );
  const types = new Map<string, AttributeType | null>();
  for (const { name } of raw) {
    if (types.has(name)) continue;
    let type: AttributeType | null = declaredType(name) ?? null;
    if (!type) {
      const [first] = await storage.scan(attributeNamePrefix(name), { limit: 1 });
      type = first ? attributeTypeOfKey(name, first.key) : null;
    }
    types.set(name, type);
  }
  // Shapes are checked for every condition (an unknown attribute still gets its bad value refused).
  const resolved = raw.map((condition) => {
    const type = types.get(condition.name);
    return type ? resolveCondition(condition, type) : null;
  });
  return resolved.some((condition) => condition === null) ? 'none' : (resolved as ResolvedCondition[]);
}

/**
 * `list` by search attributes: walks the index range of one condition (`drivingRange`), reads the rows of
 * the workflows it names, keeps those that pass every filter. Reads grow with the page and the rows the
 * other filters drop, never with the number of workflows stored.
 */
async function listByAttributes(
  storage: Storage,
  filter: ListFilter,
  conditions: readonly ResolvedCondition[],
  limit: number,
): Promise<ListPage> {
  const range = drivingRange(conditions);
  const items: WorkflowSummary[] = [];
  let after =
    filter.cursor !== undefined && (range.after === undefined || filter.cursor > range.after)
      ? filter.cursor
      : range.after;
  for (;;) {
    const pageSize = Math.min(1000, Math.max(limit * 2, 50));
    const scanned = await storage.scan(range.prefix, { ...(after ? { after } : {}), limit: pageSize });
    const page: { key: string; id: string }[] = [];
    let ended = scanned.length < pageSize;
    for (const { key } of scanned) {
      const parsed = parseAttributeIndexKey(range.typePrefix, key);
      if (!parsed) continue;
      if (range.stop(parsed.encoded)) {
        ended = true;
        break;
      }
      page.push({ key, id: unescapeId(parsed.escapedId) });
    }
    if (page.length > 0) {
      const ids = page.map(({ id }) => id);
      const recordRaws = await storage.getMany(ids.map((id) => keys.record(id)));
      const summaries = await summarize(storage, ids, { recordRaws });
      for (let index = 0; index < summaries.length; index++) {
        const row = summaries[index]!;
        after = page[index]!.key;
        if (!matchesListFilter(row, filter) || !matchesConditions(row.attributes, conditions)) continue;
        items.push(row);
        if (items.length === limit)
          return { items, nextCursor: index < summaries.length - 1 || !ended ? after : null };
      }
    }
    if (ended) break;
    after = scanned[scanned.length - 1]!.key;
  }
  return { items, nextCursor: null };
}

/** A list row of `record` (list-row.ts), with what the caller read beside it. */
function summaryRow(record: WorkflowRecord, beside: RowContext): WorkflowSummary {
  return listRow(factsOf(record), beside);
}

/** The kept earlier runs of each of `ids` as list rows, latest first (a corrupt one is a row that says so). */
async function pastRunSummaries(storage: Storage, ids: string[]): Promise<WorkflowSummary[][]> {
  return Promise.all(
    ids.map(async (id) =>
      (await scanAll(storage, keys.pastRunsOf(id))).reverse().map(({ key, value }): WorkflowSummary => {
        try {
          const { record, checkpoint } = decodePastRun(key, value);
          return summaryRow(record, {
            updatedAt: checkpoint.updatedAt ?? record.createdAt,
            owner: null,
            epoch: null,
            waitingOn: null,
          });
        } catch (error) {
          return corruptSummary(id, error);
        }
      }),
    ),
  );
}

function corruptSummary(id: string, error: unknown): WorkflowSummary {
  return {
    workflowId: id,
    workflowType: '?',
    version: 0,
    run: 0,
    status: 'failed' as const,
    createdAt: 0,
    updatedAt: 0,
    owner: null,
    epoch: null,
    waitingOn: null,
    corrupt: corruptOf(error),
  };
}

/** A row's workflow record, decoded, or why it cannot be (reported as a corrupt row). */
type DecodedRecord = { record: WorkflowRecord } | { error: unknown };

function decodeRow(id: string, recordRaw: string | null | undefined): DecodedRecord {
  try {
    if (!recordRaw)
      throw new CorruptRecordError(
        keys.record(id),
        'missing (the index names a workflow that does not exist)',
      );
    return { record: decodeRecord(keys.record(id), recordRaw) };
  } catch (error) {
    return { error };
  }
}

/**
 * The list rows of `ids`, given their records as read (`recordRaws`), or, for ids read from one status's
 * index (`{ indexed }`), the status it names: their records are then read with the rest of their rows.
 */
async function summarize(
  storage: Storage,
  ids: string[],
  given: { recordRaws: (string | null)[] } | { indexed: WorkflowStatus },
): Promise<WorkflowSummary[]> {
  const known = 'recordRaws' in given ? ids.map((id, index) => decodeRow(id, given.recordRaws[index])) : null;
  // A live row's current checkpoint needs the last record of its logs (checkpoint.ts), read in the same turn
  // as `wf-ckpt:`; a finished one's stored checkpoint is current. Rows read from the index are live or not as
  // it says: a finished one that has started again since is no longer of the status listed (its row is
  // filtered out), and telling it by its record would take a round trip of its own.
  const live =
    'indexed' in given
      ? ids.map(() => !isTerminal(given.indexed))
      : known!.map((row) => 'record' in row && !isTerminal(row.record.status));
  const [extra, lasts] = await Promise.all([
    storage.getMany(
      ids.flatMap((id) => [
        ...(known ? [] : [keys.record(id)]),
        keys.checkpoint(id),
        keys.ownerHolder(id),
        keys.ownerEpoch(id),
      ]),
    ),
    Promise.all(ids.map((id, index) => (live[index] ? lastLogRecord(storage, id) : undefined))),
  ]);
  const stride = known ? 3 : 4;
  const owners = await ownersOf(
    storage,
    ids.map((_, index) => extra[index * stride + (known ? 1 : 2)]),
  );
  const rows = ids.map((id, index) => {
    const base = index * stride;
    const decoded = known ? known[index]! : decodeRow(id, extra[base]);
    const [checkpointRaw, holderRaw, epochRaw] = extra.slice(known ? base : base + 1, base + stride);
    return { id, decoded, checkpointRaw, holderRaw, epochRaw };
  });
  const checkpoints = await Promise.all(
    rows.map(({ id, decoded, checkpointRaw }, index) =>
      'record' in decoded
        ? checkpointOf(storage, id, decoded.record, checkpointRaw ?? null, lasts[index])
        : null,
    ),
  );
  return rows.map(({ id, decoded, holderRaw, epochRaw }, index) => {
    if ('error' in decoded) return corruptSummary(id, decoded.error);
    const { record } = decoded;
    try {
      const read = checkpoints[index] ?? { checkpoint: null };
      const checkpoint = 'checkpoint' in read ? read.checkpoint : null;
      const corrupt = 'corrupt' in read ? read.corrupt : undefined;
      const epoch = tryDecodeEpoch(epochRaw ?? null);
      return summaryRow(record, {
        updatedAt: checkpoint?.updatedAt ?? record.createdAt,
        owner: holderRaw ? (owners[index] ?? null) : null,
        epoch: epoch ?? null,
        // A queued workflow waits for its queue to admit it (it has no operation open yet).
        waitingOn:
          record.status === 'pending' && record.queue
            ? `queue '${record.queue.name}'`
            : (summarizePending(checkpoint?.frontier ?? null)?.summary ?? null),
        ...(corrupt ? { corrupt } : {}),
      });
    } catch (error) {
      return corruptSummary(id, error);
    }
  });
}

/** The durable timeline of a workflow's current run (or of `run`). */
export async function readTimeline(
  storage: Storage,
  workflowId: string,
  options: { run?: number; after?: number; limit?: number } = {},
): Promise<TimelineEntry[]> {
  let run = options.run;
  if (run === undefined) {
    const raw = await storage.get(keys.record(workflowId));
    if (!raw) return [];
    run = decodeRecord(keys.record(workflowId), raw).run;
  }
  const prefix = keys.timelinePrefix(workflowId, run);
  const entries: TimelineEntry[] = [];
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const take = (key: string, value: string) => {
    for (const entry of decodeTimelineRecord(key, value))
      if (options.after === undefined || entry.seq > options.after) entries.push(entry);
  };
  // The run's log in key order is its timeline in order (workflow-writes.ts). Records keyed after `after`'s
  // sequence number hold only later entries — commit records start there, records of the earlier layout end
  // there — except that the last commit record starting before it may run past it.
  let after = options.after !== undefined ? keys.timeline(workflowId, run, options.after) : undefined;
  if (after !== undefined) {
    const [straddling] = await storage.scan(prefix, { after, reverse: true, limit: 1 });
    if (straddling) take(straddling.key, straddling.value);
  }
  // Pages of records (a commit record may hold no timeline entry, so a page can hold fewer entries).
  while (entries.length < limit) {
    const pageSize = Math.min(1000, limit - entries.length);
    const page = await storage.scan(prefix, { ...(after ? { after } : {}), limit: pageSize });
    for (const { key, value } of page) take(key, value);
    if (page.length < pageSize) break;
    after = page[page.length - 1]!.key;
  }
  return entries.length > limit ? entries.slice(0, limit) : entries;
}

/** The kind of an operation a workflow yields (`ctx.<operation>`), as its run's history names it. */
export type OperationKind = Frontier['kind'] | 'now' | 'random' | 'uuid' | 'patch';

/**
 * Which outcome `operationOutcome` reads: the operation at `pos` (a timeline entry's `detail.pos`) and, inside
 * `all` / `race`, its `member` (default 0: a simple operation's only one); or the applied update `updateId`.
 */
export type OutcomeOf = { pos: number; member?: number } | { updateId: string };

/**
 * What a run's history recorded for one operation: its result (`value`, absent when it returned nothing: a
 * sleep, a signal wait that timed out or got no payload) or its error, as replay feeds it to the workflow.
 * A signal wait's value is the signal's payload; a child's, the child's result; `waitUntil`'s, true or false.
 * `cancelled`: the workflow was cancelled while it waited; inside `all` / `race` that outcome is the whole
 * operation's (no `member`), recorded before this member had one.
 */
export type OperationOutcome =
  | { kind: OperationKind; name: string; pos: number; member?: number; ok: true; value?: Json }
  | {
      kind: OperationKind;
      name: string;
      pos: number;
      member?: number;
      ok: false;
      error: SerializedError;
      cancelled?: true;
    }
  | {
      kind: 'update';
      name: string;
      /** The position the workflow waited at when the update was applied. */
      pos: number;
      updateId: string;
      ok: true;
      /**
       * The argument the update was sent with; absent when it was sent without one (or was applied before
       * arguments were kept in history).
       */
      arg?: Json;
      /**
       * The workflow's state right after the update's handler ran (what replay restores). The handler's
       * return value is not kept: its caller received it, and its response was deleted once read.
       */
      stateAfter: JsonObject;
    };

/** Records read per storage call while looking for an outcome: most are found in the first page. */
const outcomePageSize = 200;

/**
 * The recorded outcome of one operation of a workflow's current run (or of `run`), or null while its history
 * holds none (the operation has not finished, or the run never got there). Timeline entries name operations
 * but carry no values; the values are in the history entries written beside them, so this reads the run's
 * log: the history of the earlier layout (`wf-hist:` keys) first, then the commit records, in pages, and
 * stops at the entry sought — or, for a position, at the first entry past it (history positions only grow).
 */
export async function readOperationOutcome(
  storage: Storage,
  workflowId: string,
  of: OutcomeOf & { run?: number },
): Promise<OperationOutcome | null> {
  let run = of.run;
  if (run === undefined) {
    const raw = await storage.get(keys.record(workflowId));
    if (!raw) return null;
    run = decodeRecord(keys.record(workflowId), raw).run;
  }
  const find = outcomeFinder(of);
  // The run's history in order: the entries of the earlier layout, then those of the commit records.
  let walked = await walkHistory(storage, keys.historyPrefix(workflowId, run), (key, value) =>
    find([decodeHistoryEntry(key, value)]),
  );
  if (walked === 'end')
    walked = await walkHistory(storage, keys.timelinePrefix(workflowId, run), (key, value) =>
      find(decodeLogRecord(key, value).history),
    );
  const found = typeof walked === 'string' ? find.fallback() : walked;
  if (!found) return null;
  if (found.t === 'op') {
    const { t: _t, ...outcome } = found;
    return outcome as OperationOutcome;
  }
  return {
    kind: 'update',
    name: found.name,
    pos: found.pos,
    updateId: found.updateId,
    ok: true,
    ...(found.arg === undefined ? {} : { arg: found.arg }),
    stateAfter: found.stateAfter,
  };
}

/**
 * The recorded history of a workflow's latest run (or of `run`), as replay testing takes it
 * (replay-check.ts): the run's identity, input, position, frontier and every history entry the checkpoint
 * counts. `WorkflowNotFoundError` when that run is not stored.
 */
export async function readRecordedHistory(
  storage: Storage,
  workflowId: string,
  run?: number,
): Promise<RecordedHistory> {
  const [recordRaw, checkpointRaw] = await storage.getMany([
    keys.record(workflowId),
    keys.checkpoint(workflowId),
  ]);
  let view: { record: WorkflowRecord; checkpoint: Checkpoint } | null = null;
  if (recordRaw && checkpointRaw) {
    const latest = await workflowView(
      storage,
      workflowId,
      recordRaw,
      checkpointRaw,
      await lastLogRecord(storage, workflowId),
    );
    if (latest && (run === undefined || run === latest.record.run)) view = latest;
    else if (latest && run !== undefined && run < latest.record.run) {
      const key = keys.pastRun(workflowId, run);
      const raw = await storage.get(key);
      if (raw) view = decodePastRun(key, raw);
    }
  }
  if (!view) throw new WorkflowNotFoundError(workflowId, run);
  const { record, checkpoint } = view;
  const entries = await readHistoryBefore(storage, workflowId, record.run, Number.MAX_SAFE_INTEGER);
  // Entries a commit appended after this read of the checkpoint are not part of it.
  return recordedHistory(record, checkpoint, entries.slice(0, checkpoint.historyLength));
}

/**
 * The history entries of run `run` before operation `position` (those of operations `0 … position - 1` and
 * the updates applied while it waited at them), in order: the earlier layout first, then the commit records,
 * read until the first entry at or past `position` (history positions only grow).
 */
export async function readHistoryBefore(
  storage: Storage,
  workflowId: string,
  run: number,
  position: number,
): Promise<HistoryEntry[]> {
  const before: HistoryEntry[] = [];
  const take = (entries: readonly HistoryEntry[]): 'past' | undefined => {
    for (const entry of entries) {
      if (entry.pos >= position) return 'past';
      before.push(entry);
    }
    return undefined;
  };
  if (position === 0) return before;
  const walked = await walkHistory(storage, keys.historyPrefix(workflowId, run), (key, value) =>
    take([decodeHistoryEntry(key, value)]),
  );
  if (walked === 'end')
    await walkHistory(storage, keys.timelinePrefix(workflowId, run), (key, value) =>
      take(decodeLogRecord(key, value).history),
    );
  return before;
}

/**
 * Looks at history entries in order: returns the entry sought, `'past'` once the entries have moved beyond
 * it (nothing later can be it), or undefined to go on. `fallback()` is the whole-operation outcome of an
 * `all` / `race` (its cancellation) seen at the position, for a member that has none of its own.
 */
function outcomeFinder(of: OutcomeOf): {
  (entries: readonly HistoryEntry[]): HistoryEntry | 'past' | undefined;
  fallback(): HistoryEntry | null;
} {
  let whole: HistoryEntry | null = null;
  const find = (entries: readonly HistoryEntry[]): HistoryEntry | 'past' | undefined => {
    for (const entry of entries) {
      if ('updateId' in of) {
        if (entry.t === 'update' && entry.updateId === of.updateId) return entry;
        continue;
      }
      if (entry.pos > of.pos) return 'past';
      if (entry.t !== 'op' || entry.pos !== of.pos) continue;
      const member = of.member ?? 0;
      if (entry.member === member) return entry;
      // A simple operation's outcome carries no member; an all / race's without one is the whole operation's.
      if (entry.member === undefined)
        if (entry.kind === 'all' || entry.kind === 'race') whole = entry;
        else if (member === 0) return entry;
    }
    return undefined;
  };
  return Object.assign(find, { fallback: () => whole });
}

/**
 * Visits the records under `prefix` in key order, a page at a time, until `visit` answers: the entry it
 * found, or `'past'`; `'end'` when it was asked about every record without an answer.
 */
async function walkHistory(
  storage: Storage,
  prefix: string,
  visit: (key: string, value: string) => HistoryEntry | 'past' | undefined,
): Promise<HistoryEntry | 'past' | 'end'> {
  for (let after: string | undefined; ;) {
    const page = await storage.scan(prefix, { ...(after ? { after } : {}), limit: outcomePageSize });
    for (const { key, value } of page) {
      const answer = visit(key, value);
      if (answer) return answer;
    }
    if (page.length < outcomePageSize) return 'end';
    after = page[page.length - 1]!.key;
  }
}

export async function readFenceRejections(storage: Storage, workflowId?: string): Promise<FenceRejection[]> {
  const page = await storage.scan(
    workflowId ? keys.fenceRejectionPrefix(workflowId) : keys.fenceRejectionsPrefix,
    { limit: 1000 },
  );
  return page.flatMap(({ key, value }) => {
    try {
      return [decodeFenceRejection(key, value)];
    } catch {
      return [];
    }
  });
}

/** Every holder record with its epoch (the studio's claims screen). */
export async function listClaims(storage: Storage): Promise<ClaimInfo[]> {
  const holders = await storage.scan(keys.ownerHoldersPrefix);
  const epochs = await epochsOf(storage, holders);
  const owners = await ownersOf(
    storage,
    holders.map(({ value }) => value),
  );
  return holders.map(({ key }, index) => {
    const holder = owners[index] ?? null;
    return {
      workflowId: unescapeId(key.slice(keys.ownerHoldersPrefix.length)),
      holder,
      holderCorrupt: holder === null,
      epoch: tryDecodeEpoch(epochs[index] ?? null) ?? null,
    };
  });
}

/**
 * The epoch record of each holder's workflow. A few are read by key; many are read in one scan of the epoch
 * records (one storage request instead of one per claim: on IndexedDB, thousands of reads by key in one
 * transaction would hold every other tab's writes back meanwhile, renewals included).
 */
async function epochsOf(storage: Storage, holders: readonly Entry[]): Promise<(string | null)[]> {
  const epochKeys = holders.map(({ key }) =>
    keys.ownerEpoch(unescapeId(key.slice(keys.ownerHoldersPrefix.length))),
  );
  if (holders.length <= epochsByKeyAtMost) return storage.getMany(epochKeys);
  const all = new Map((await storage.scan(keys.ownerEpochsPrefix)).map(({ key, value }) => [key, value]));
  return epochKeys.map((key) => all.get(key) ?? null);
}

const epochsByKeyAtMost = 200;

/**
 * A workflow's current checkpoint for display (checkpoint.ts), given the last record of its logs read beside
 * `wf-ckpt:`: a finished workflow's stored one is current (its last commit rewrites it).
 */
async function checkpointOf(
  storage: Storage,
  workflowId: string,
  record: WorkflowRecord,
  checkpointRaw: string | null,
  last: Entry | undefined,
): Promise<{ checkpoint: Checkpoint | null } | { corrupt: { key: string; message: string } }> {
  if (!checkpointRaw) return { checkpoint: null };
  try {
    if (isTerminal(record.status))
      return { checkpoint: decodeCheckpoint(keys.checkpoint(workflowId), checkpointRaw) };
    const current = await currentCheckpoint(storage, workflowId, checkpointRaw, last);
    return { checkpoint: current?.checkpoint ?? null };
  } catch (error) {
    return { corrupt: corruptOf(error) };
  }
}
