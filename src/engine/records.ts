/**
 * The shapes of everything the engine stores, and their decoders. Decoding is strict: a record that does
 * not have the expected shape raises `CorruptRecordError` naming its key, and the caller fails that one
 * workflow closed (never overwriting the record). Ownership values decode fail-closed in ownership/holder.ts.
 */
import type { SearchAttributes } from './attributes';
import type { QueueMembership, StartKeyMembership } from './queues/queue-options';
import type { Json, JsonObject } from './codec';
import { CorruptRecordError, type SerializedError } from './errors';
import {
  isTerminal,
  isWorkflowStatus,
  type AcquireHow,
  type TakeoverReason,
  type TerminalStatus,
  type TimelineKind,
  type WorkflowStatus,
} from './vocabulary';
import type { TraceContext } from './tracing';
import type { ParentClosePolicy } from './workflow';

export { isTerminal } from './vocabulary';

export type ParentLink = {
  id: string;
  run: number;
  pos: number;
  member: number;
  closePolicy: ParentClosePolicy;
};

/** `wf:<id>`: changes only on status transitions (never on an ordinary step). */
export type WorkflowRecord = {
  v: 1;
  id: string;
  type: string;
  version: number;
  /** Run number: 1 for the first run of this id, +1 each time a finished id is started again. */
  run: number;
  status: WorkflowStatus;
  input?: Json;
  result?: Json;
  error?: SerializedError;
  /** Why it was cancelled, terminated or suspended. */
  reason?: string;
  createdAt: number;
  /** Pending (delayed start) workflows start at this time. */
  startAt?: number;
  startedAt?: number;
  endedAt?: number;
  executionTimeoutMs?: number;
  parent?: ParentLink;
  /** Started by a schedule (src/engine/schedules): which one, and for which slot. */
  scheduledBy?: ScheduledBy;
  /** Started by `fork`: the run it copied, and the operation it continued from (src/engine/fork.ts). */
  forkedFrom?: ForkedFrom;
  /** Started by `ctx.continueAsNew` in the run before it (its number: this run's minus one). */
  continuedFrom?: number;
  /** Search attributes (`ctx.setAttributes`), each with an index key beside the record (attributes.ts). */
  attributes?: SearchAttributes;
  /** Started onto a queue (src/engine/queues): its place while `pending`, its slots once admitted. */
  queue?: QueueMembership;
  /** Started with a singleton or debounce key: the key, freed when the workflow ends (queues/start-keys.ts). */
  startKey?: StartKeyMembership;
  createdBy: string;
  /**
   * The trace context the workflow was started in (propagation fields, e.g. W3C `traceparent`: tracing.ts):
   * every engine that drives it parents its spans on it. Kept by continue-as-new. Absent: started untraced.
   */
  trace?: TraceContext;
};

/**
 * What a forked run copied: run `run` of workflow `id`, whose recorded outcomes of operations 0 to
 * `position - 1` it replays; it runs operation `position` and everything after anew.
 */
export type ForkedFrom = { id: string; run: number; position: number };

/**
 * What started a scheduled workflow: the schedule's name and the slot (the cron time, epoch ms) it was
 * started for; `trigger: true` for a run started by `triggerSchedule` (its slot is the time of the trigger).
 */
export type ScheduledBy = { schedule: string; slot: number; trigger?: true };

/** One leaf operation of the frontier (the operation the workflow waits on). */
export type Leaf = {
  member: number;
  kind: 'activity' | 'sleep' | 'signal' | 'until' | 'child';
  name: string;
  done: boolean;
  /** Activities: the attempt that runs next (or runs now). */
  attempt?: number;
  /** Activities: this attempt's start was committed (it may be running, or was interrupted). */
  started?: boolean;
  /** A durable timer belonging to this leaf (sleep, retry backoff or timeout) and when it is due. */
  timerKey?: string;
  dueAt?: number;
  /** Activities waiting for a retry backoff. */
  retrying?: boolean;
  /** Activities with `completion: 'external'`: finished by `completeActivity` / `failActivity`. */
  external?: boolean;
  lastError?: SerializedError;
  /** Children: the child workflow id and how the parent relates to it. */
  childId?: string;
  closePolicy?: ParentClosePolicy;
};

export type Frontier = {
  pos: number;
  kind: 'activity' | 'sleep' | 'signal' | 'until' | 'child' | 'all' | 'race';
  name: string;
  since: number;
  leaves: Leaf[];
};

/**
 * `wf-ckpt:<id>`: the progress anchor. Every transition of the workflow rewrites it, and appends the commit
 * record its predecessor names (workflow-writes.ts), so each checkpoint is replaced at most once.
 */
export type Checkpoint = {
  v: 1;
  run: number;
  /** Number of history entries of this run (the next history sequence number). */
  historyLength: number;
  /** Number of timeline entries of this run (the next timeline sequence number). */
  timelineLength: number;
  /**
   * Number of commit records of this run: the next write that replaces this checkpoint appends its record at
   * `commitRecordKey(id, run, this)`. Absent in checkpoints written before commit records (read as 0).
   */
  commits?: number;
  /**
   * How many of this run's history entries are under `wf-hist:` keys (the earlier layout), written before its
   * first commit record; the rest are in its commit records. Absent: none (or, without `commits`, all).
   */
  earlierHistory?: number;
  /** Operations resolved so far (the position of the frontier). */
  position: number;
  state: JsonObject;
  frontier: Frontier | null;
  cancel: { reason?: string; requestedAt: number; delivered: boolean } | null;
  /** Children started with parentClosePolicy 'terminate' that are terminated when this workflow ends. */
  linkedChildren: string[];
  updatedAt: number;
};

export type HistoryEntry =
  | {
      t: 'op';
      pos: number;
      /** Member index inside `all` / `race`; absent for a simple operation or a whole-operation outcome. */
      member?: number;
      kind: string;
      name: string;
      ok: true;
      value?: Json;
    }
  | {
      t: 'op';
      pos: number;
      member?: number;
      kind: string;
      name: string;
      ok: false;
      error: SerializedError;
      /** A delivered cancellation: the whole operation threw CancelledError. */
      cancelled?: true;
    }
  | {
      t: 'update';
      pos: number;
      updateId: string;
      name: string;
      /** The argument it was sent with (its request is deleted once applied); absent when sent without one. */
      arg?: Json;
      stateAfter: JsonObject;
    };

/** A leaf position inside a workflow: the operation's position and, inside `all`/`race`, its member. */
type At = { pos: number; member: number };

/**
 * What each kind of timeline entry records. The entry is a discriminated union on `kind`, so readers (the
 * studio's custody lanes, the invariant checks) get typed fields instead of re-parsing JSON.
 */
export type TimelineDetails = {
  scheduled: {
    workflowType: string;
    version: number;
    startAt: number;
    parentId?: string;
    scheduledBy?: ScheduledBy;
    /** Waiting in a queue (admitted when a slot is free, not before `startAt`). */
    queue?: { name: string; key?: string; priority: number };
    /** A debounced start moved it back (`startAt` is the new time) and replaced its input. */
    debounced?: boolean;
  };
  started: {
    workflowType: string;
    version: number;
    parentId?: string;
    delayed?: boolean;
    scheduledBy?: ScheduledBy;
    forkedFrom?: ForkedFrom;
    /** Started by `ctx.continueAsNew` in this run (the next run's `started` entry names it). */
    continuedFrom?: number;
    /** Admitted from a queue after waiting `waitedMs`, into slot `slot` (when the queue has a limit). */
    queue?: { name: string; waitedMs: number; slot?: number; keySlot?: number };
  };
  'claim-acquired': { engineId: string; epoch: number; how: AcquireHow };
  'claim-taken-over': {
    fromEngineId: string | null;
    fromEpoch: number;
    toEngineId: string;
    toEpoch: number;
    reason: TakeoverReason;
  };
  'claim-released': { engineId: string; epoch: number };
  'activity-started': At & { name: string; attempt: number; rerun?: boolean };
  'activity-completed': At & { name: string; attempt: number; durationMs: number };
  'activity-failed': At & { name: string; attempt: number; error: SerializedError };
  'activity-retry-scheduled': At & { name: string; nextAttempt: number; dueAt: number; waitMs: number };
  'timer-armed': At & { durationMs: number; dueAt: number };
  'timer-fired': At & { kind: Leaf['kind'] };
  'signal-received': { name: string; sentBy: string };
  'signal-consumed': At & { name: string };
  /** `ctx.signalWorkflow` / `ctx.cancelWorkflow` sent to workflow `to` (run/messages.ts). */
  'message-sent': At & { to: string; message: 'signal' | 'cancel'; name?: string };
  'wait-completed': At & { satisfied: boolean };
  'update-applied': { name: string; updateId: string };
  'update-rejected': { name: string; updateId: string; error: string };
  'child-started': At & { childId: string; workflowType: string; parentClosePolicy: ParentClosePolicy };
  'child-completed': At & { childId: string; status: WorkflowStatus };
  'cancel-requested': { reason?: string; requestedBy: string };
  suspended: { reason?: string; newEpoch?: number };
  resumed: Record<string, never>;
} & {
  [K in TerminalStatus]: {
    reason?: string;
    /** The epoch minted by the rotation that ended it (terminate, time-out). */
    newEpoch?: number;
    /** How it failed (or what a cancelled workflow threw). */
    error?: { name: string; message: string };
    /** It returned a value (kept in its record). */
    hasResult?: boolean;
    /** `continued-as-new`: the run it started, and that run's version. */
    nextRun?: number;
    version?: number;
  };
};

export type { TimelineKind } from './vocabulary';

/** One timeline entry: when, by which engine at which epoch, and what happened. */
export type TimelineEntry = {
  [K in TimelineKind]: {
    seq: number;
    at: number;
    engineId: string;
    /** The epoch under which it was written (0 outside workflow-lease). */
    epoch: number;
    kind: K;
    detail: TimelineDetails[K];
  };
}[TimelineKind];

/** What a writer says happened; the writer adds `seq`, `at`, `engineId` and `epoch`. */
export type TimelineNote = {
  [K in TimelineKind]: { kind: K; detail: TimelineDetails[K]; at?: number };
}[TimelineKind];

export type TimerRecord = {
  workflowId: string;
  /** `sleep`, `retry`, `timeout` (signal / until / activity-attempt), `start` (delayed start), `execution`. */
  purpose: 'sleep' | 'retry' | 'timeout' | 'start' | 'execution';
  run: number;
  pos?: number;
  member?: number;
};

export type SignalRecord = { name: string; payload?: Json; sentAt: number; sentBy: string };
/** An activity's last recorded heartbeat (`keys.activityHeartbeat`): which attempt sent it, when, from where. */
export type HeartbeatRecord = { attempt: number; details?: Json; at: number; engineId: string };

/** A stored heartbeat, or null when absent or unreadable (a heartbeat is advice: never worth failing over). */
export function decodeHeartbeat(raw: string | null | undefined): HeartbeatRecord | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Partial<HeartbeatRecord>;
    if (
      Number.isSafeInteger(value.attempt) &&
      Number.isFinite(value.at) &&
      typeof value.engineId === 'string'
    )
      return value as HeartbeatRecord;
  } catch {
    // unreadable: as if absent
  }
  return null;
}
export type CancelRequest = { reason?: string; requestedAt: number; requestedBy: string };
export type UpdateRequest = {
  updateId: string;
  name: string;
  arg?: Json;
  requestedAt: number;
  requestedBy: string;
};
export type UpdateResponse =
  | { updateId: string; ok: true; value?: Json; appliedAt: number; appliedBy: string }
  | { updateId: string; ok: false; error: SerializedError; appliedAt: number; appliedBy: string };
export type FenceRejection = {
  workflowId: string;
  engineId: string;
  heldEpoch: number;
  currentEpoch: number | null;
  at: number;
  what: string;
};

function parseJson(key: string, raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new CorruptRecordError(key, 'not valid JSON');
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function need(condition: boolean, key: string, reason: string): asserts condition {
  if (!condition) throw new CorruptRecordError(key, reason);
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isTime = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

export function decodeRecord(key: string, raw: string): WorkflowRecord {
  const value = parseJson(key, raw);
  need(isObject(value), key, 'not an object');
  need(value.v === 1, key, `unknown record version ${JSON.stringify(value.v)}`);
  need(typeof value.id === 'string' && value.id.length > 0, key, 'missing id');
  need(typeof value.type === 'string' && value.type.length > 0, key, 'missing type');
  need(isCount(value.version) && (value.version as number) > 0, key, 'bad version');
  need(isCount(value.run) && (value.run as number) > 0, key, 'bad run number');
  need(isWorkflowStatus(value.status), key, `unknown status ${JSON.stringify(value.status)}`);
  need(isTime(value.createdAt), key, 'bad createdAt');
  return value as unknown as WorkflowRecord;
}

export function decodeCheckpoint(key: string, raw: string): Checkpoint {
  return checkCheckpoint(key, parseJson(key, raw));
}

function checkCheckpoint(key: string, value: unknown): Checkpoint {
  need(isObject(value), key, 'not an object');
  need(value.v === 1, key, `unknown checkpoint version ${JSON.stringify(value.v)}`);
  need(isCount(value.run), key, 'bad run number');
  need(isCount(value.historyLength), key, 'bad historyLength');
  need(isCount(value.timelineLength), key, 'bad timelineLength');
  need(value.commits === undefined || isCount(value.commits), key, 'bad commits');
  need(value.earlierHistory === undefined || isCount(value.earlierHistory), key, 'bad earlierHistory');
  need(isCount(value.position), key, 'bad position');
  need(isObject(value.state), key, 'state is not an object');
  need(value.frontier === null || isObject(value.frontier), key, 'bad frontier');
  if (isObject(value.frontier)) need(Array.isArray(value.frontier.leaves), key, 'frontier without leaves');
  need(Array.isArray(value.linkedChildren), key, 'bad linkedChildren');
  return value as unknown as Checkpoint;
}

/** A finished run kept when its id was started again (`keys.pastRun`). */
export type PastRun = { v: 1; record: WorkflowRecord; checkpoint: Checkpoint };

export function encodePastRun(record: WorkflowRecord, checkpoint: Checkpoint): string {
  return JSON.stringify({ v: 1, record, checkpoint } satisfies PastRun);
}

export function decodePastRun(key: string, raw: string): PastRun {
  const value = parseJson(key, raw);
  need(isObject(value), key, 'not an object');
  need(value.v === 1, key, `unknown past-run version ${JSON.stringify(value.v)}`);
  need(isObject(value.record) && isObject(value.checkpoint), key, 'missing record or checkpoint');
  const record = decodeRecord(key, JSON.stringify(value.record));
  const checkpoint = checkCheckpoint(key, value.checkpoint);
  need(isTerminal(record.status), key, `a past run must be finished; it is ${record.status}`);
  return { v: 1, record, checkpoint };
}

/** A history entry of the earlier layout, stored under its own `wf-hist:` key. */
export function decodeHistoryEntry(key: string, raw: string): HistoryEntry {
  const value = parseJson(key, raw);
  need(isObject(value), key, 'not an object');
  need(value.t === 'op' || value.t === 'update', key, 'unknown history entry type');
  need(isCount(value.pos), key, 'bad position');
  return value as unknown as HistoryEntry;
}

/**
 * A commit record (`wf-tl:` keys): everything one write appended to a run's log, as one storage value — the
 * timeline entries it appended (`t`) and the history entries (`h`, in order, numbered on from the history
 * before it). Either is omitted when empty. A run's commit that does not rewrite `wf-ckpt:` carries the
 * checkpoint it makes current (`c`) and the epoch it was written under (`e`): see checkpoint.ts.
 */
export type CommitRecord = { t?: TimelineEntry[]; h?: HistoryEntry[]; c?: Checkpoint; e?: number };

/** A checkpoint carried by a commit record, with the epoch its write was made under. */
export type CarriedCheckpoint = { checkpoint: Checkpoint; epoch: number };

/**
 * The entries of a `wf-tl:` record in any of its shapes: a commit record (`{ t, h }`), or a timeline record
 * of the earlier layout, which holds one entry as an object or several as an array, and no history.
 */
export function decodeLogRecord(
  key: string,
  raw: string,
): { timeline: TimelineEntry[]; history: HistoryEntry[]; carried?: CarriedCheckpoint } {
  const value = parseJson(key, raw);
  let timeline: unknown[];
  let history: unknown[] = [];
  let carried: CarriedCheckpoint | undefined;
  if (Array.isArray(value)) timeline = value;
  else {
    need(isObject(value), key, 'not an object');
    if (typeof value.kind === 'string') timeline = [value];
    else {
      need(value.t === undefined || Array.isArray(value.t), key, 'bad timeline entries');
      need(value.h === undefined || Array.isArray(value.h), key, 'bad history entries');
      timeline = (value.t as unknown[] | undefined) ?? [];
      history = (value.h as unknown[] | undefined) ?? [];
      if (value.c !== undefined) {
        need(isCount(value.e), key, 'a carried checkpoint without its epoch');
        carried = { checkpoint: checkCheckpoint(key, value.c), epoch: value.e as number };
      }
    }
  }
  for (const entry of timeline)
    need(isObject(entry) && typeof entry.kind === 'string' && isCount(entry.seq), key, 'bad timeline entry');
  for (const entry of history)
    need(
      isObject(entry) && (entry.t === 'op' || entry.t === 'update') && isCount(entry.pos),
      key,
      'bad history entry',
    );
  return {
    timeline: timeline as unknown as TimelineEntry[],
    history: history as unknown as HistoryEntry[],
    ...(carried ? { carried } : {}),
  };
}

/** The timeline entries of a `wf-tl:` record, in any of its shapes (`decodeLogRecord`). */
export function decodeTimelineRecord(key: string, raw: string): TimelineEntry[] {
  return decodeLogRecord(key, raw).timeline;
}

function decodeLoose<T>(
  key: string,
  raw: string,
  check: (value: Record<string, unknown>) => boolean,
  what: string,
): T {
  const value = parseJson(key, raw);
  need(isObject(value) && check(value), key, `bad ${what}`);
  return value as unknown as T;
}

/** A loose record's check: each of these fields is a string. */
const strings =
  (...fields: string[]) =>
  (value: Record<string, unknown>): boolean =>
    fields.every((field) => typeof value[field] === 'string');

export const decodeTimer = (key: string, raw: string) =>
  decodeLoose<TimerRecord>(key, raw, strings('workflowId', 'purpose'), 'timer');
export const decodeSignal = (key: string, raw: string) =>
  decodeLoose<SignalRecord>(key, raw, strings('name'), 'signal');
export const decodeCancelRequest = (key: string, raw: string) =>
  decodeLoose<CancelRequest>(key, raw, (v) => isTime(v.requestedAt), 'cancel request');
export const decodeUpdateRequest = (key: string, raw: string) =>
  decodeLoose<UpdateRequest>(key, raw, strings('updateId', 'name'), 'update request');
export const decodeUpdateResponse = (key: string, raw: string) =>
  decodeLoose<UpdateResponse>(
    key,
    raw,
    (v) => typeof v.updateId === 'string' && typeof v.ok === 'boolean',
    'update response',
  );
export const decodeFenceRejection = (key: string, raw: string) =>
  decodeLoose<FenceRejection>(key, raw, strings('workflowId'), 'fence rejection');
