/**
 * The engine's key layout, defined once. Every key the engine reads or writes is built (and parsed) here.
 *
 * Ids inside keys are escaped reversibly (`%` → `%25`, `:` → `%3A`), so a `:` in a workflow id can never
 * forge another workflow's key, and `wf:a` is never a prefix of another workflow's keys because every
 * per-workflow prefix ends with `:` after the escaped id. Numbers are zero-padded so that key order is
 * numeric order.
 */

import type { WorkflowStatus } from './vocabulary';

export function escapeId(id: string): string {
  return id.replace(/%/g, '%25').replace(/:/g, '%3A');
}

export function unescapeId(escaped: string): string {
  return escaped.replace(/%3A/g, ':').replace(/%25/g, '%');
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** Durable timers sort by due time: 15 digits of milliseconds cover every date until year 33658. */
const timeWidth = 15;
const seqWidth = 10;

export const keys = {
  /** `prefix` (a history or timeline prefix) followed by a zero-padded sequence number. */
  sequenced: (prefix: string, seq: number) => `${prefix}${pad(seq, seqWidth)}`,
  /** The workflow record: type, version, status, input, result or error, timestamps, parent, run number. */
  record: (id: string) => `wf:${escapeId(id)}`,
  recordPrefix: 'wf:',
  /** The checkpoint: progress anchor written by every transition of the workflow (see records.ts and workflow-writes.ts). */
  checkpoint: (id: string) => `wf-ckpt:${escapeId(id)}`,
  checkpointPrefix: 'wf-ckpt:',
  /** Replay history of one run in the earlier layout (one key per entry); now kept in commit records. */
  history: (id: string, run: number, seq: number) =>
    `wf-hist:${escapeId(id)}:${pad(run, 6)}:${pad(seq, seqWidth)}`,
  historyPrefix: (id: string, run: number) => `wf-hist:${escapeId(id)}:${pad(run, 6)}:`,
  /**
   * The log of one run: its timeline and (since commit records) its replay history. A commit record is keyed
   * by the timeline sequence number its entries start at and the number of records the run had before it
   * (`commitRecord`); records of the earlier layout are keyed by their last timeline entry's `seq` alone
   * (`timeline`), and are still written for a workflow's first record by its start.
   */
  timeline: (id: string, run: number, seq: number) =>
    `wf-tl:${escapeId(id)}:${pad(run, 6)}:${pad(seq, seqWidth)}`,
  commitRecord: (id: string, run: number, seq: number, commit: number) =>
    `wf-tl:${escapeId(id)}:${pad(run, 6)}:${pad(seq, seqWidth)}:${pad(commit, seqWidth)}`,
  timelinePrefix: (id: string, run: number) => `${keys.logsOf(id)}${pad(run, 6)}:`,
  /** Every run's log of one workflow (what a purge leaves of it: tombstones, purge.ts). */
  logsOf: (id: string) => `wf-tl:${escapeId(id)}:`,
  /** The run number of a key under `logsOf(id)`. */
  runOfLog: (id: string, key: string) => Number(key.slice(keys.logsOf(id).length).slice(0, 6)),
  /**
   * A finished run kept when its id was started again (run history): its record and last checkpoint. The
   * latest run lives at `record` / `checkpoint`; earlier runs here, and every run's log under `timeline`.
   */
  pastRun: (id: string, run: number) => `wf-run:${escapeId(id)}:${pad(run, 6)}`,
  pastRunsOf: (id: string) => `wf-run:${escapeId(id)}:`,
  pastRunsPrefix: 'wf-run:',
  /**
   * A purge in progress (purge.ts): the runs whose logs are still being deleted. While it names a workflow
   * whose record is gone, the id cannot be started again (its run 1 log would collide with the old one).
   */
  purge: (id: string) => `wf-purge:${escapeId(id)}`,
  purgesPrefix: 'wf-purge:',
  /**
   * An idempotency key of `start` (`{ workflowId, run, at }`): a repeated key within the window returns that
   * run instead of starting another. The key is the caller's string, escaped like an id.
   */
  idempotency: (key: string) => `idem:${escapeId(key)}`,
  idempotencyPrefix: 'idem:',
  /** Status index for listing and for the reclaim scan. */
  statusIndex: (status: WorkflowStatus, id: string) => `wf-idx:${status}:${escapeId(id)}`,
  statusIndexPrefix: (status: WorkflowStatus) => `wf-idx:${status}:`,
  /**
   * Search attribute index (attributes.ts builds and parses its keys): `wf-attr:<name>:<type tag>:<encoded
   * value>!<escaped id>`, one per attribute of a workflow's latest run, written with its record.
   */
  attributeIndexPrefix: 'wf-attr:',
  /** Buffered signals (unfenced: any engine may append), in send order. */
  signal: (id: string, seq: number) => `sig:${escapeId(id)}:${pad(seq, seqWidth)}`,
  signalPrefix: (id: string) => `sig:${escapeId(id)}:`,
  signalsPrefix: 'sig:',
  /**
   * The completion of an external activity (`completeActivity` / `failActivity`), waiting for the owner to
   * take it into the run; deleted by the commit that does. One per activity position of a run.
   */
  activityCompletion: (id: string, run: number, pos: number, member: number) =>
    `act-done:${escapeId(id)}:${pad(run, 6)}:${pad(pos, seqWidth)}:${member}`,
  activityCompletionsOf: (id: string) => `act-done:${escapeId(id)}:`,
  activityCompletionsPrefix: 'act-done:',
  /** The last heartbeat recorded by an activity's attempts (its details go to the next attempt). */
  activityHeartbeat: (id: string, run: number, pos: number, member: number) =>
    `act-hb:${escapeId(id)}:${pad(run, 6)}:${pad(pos, seqWidth)}:${member}`,
  activityHeartbeatsOf: (id: string, run: number) => `act-hb:${escapeId(id)}:${pad(run, 6)}:`,
  /** The next signal sequence number of a workflow (compare-and-swap counter). */
  signalCounter: (id: string) => `sig-next:${escapeId(id)}`,
  /** A cooperative cancellation request (unfenced). */
  cancelRequest: (id: string) => `cancel:${escapeId(id)}`,
  cancelRequestsPrefix: 'cancel:',
  /** Update requests and responses. */
  updateRequest: (id: string, updateId: string) => `upd:${escapeId(id)}:${escapeId(updateId)}`,
  updateRequestPrefix: (id: string) => `upd:${escapeId(id)}:`,
  updateRequestsPrefix: 'upd:',
  updateResponse: (id: string, updateId: string) => `upr:${escapeId(id)}:${escapeId(updateId)}`,
  updateResponsePrefix: (id: string) => `upr:${escapeId(id)}:`,
  updateResponsesPrefix: 'upr:',
  /** Durable timers, sortable by due time. */
  timer: (dueAt: number, id: string, name: string) =>
    `timer:${pad(Math.max(0, Math.floor(dueAt)), timeWidth)}:${escapeId(id)}:${name}`,
  timersPrefix: 'timer:',
  /** Upper bound (exclusive scan cursor) for timers due at or before `time`. */
  timersDueAfter: (time: number) => `timer:${pad(Math.max(0, Math.floor(time)), timeWidth)}:\uffff`,
  /** Per-workflow fencing token and claim holder (workflow-lease). The epoch is never deleted. */
  ownerEpoch: (id: string) => `wf-owner-epoch:${escapeId(id)}`,
  ownerHolder: (id: string) => `wf-owner-holder:${escapeId(id)}`,
  ownerHoldersPrefix: 'wf-owner-holder:',
  ownerEpochsPrefix: 'wf-owner-epoch:',
  /**
   * A displacement notice (workflow-lease, ownership/notices.ts): engine `engineId` held `id` and another
   * engine's transition (a terminate, suspend, time-out, purge or takeover) displaced it. Read and deleted by
   * that engine; the key sorts under the engine, so it reads its notices with one scan.
   */
  ownerNotice: (engineId: string, id: string) => `wf-owner-notice:${escapeId(engineId)}:${escapeId(id)}`,
  ownerNoticesOf: (engineId: string) => `wf-owner-notice:${escapeId(engineId)}:`,
  ownerNoticesPrefix: 'wf-owner-notice:',
  /**
   * Slot `index` of an activity concurrency limit group (workflow-lease, activity-limits.ts): present while an
   * attempt holds it. Group names never hold `%`; they are escaped like ids (a `:` in a name).
   */
  activitySlot: (group: string, index: number) => `act-slot:${escapeId(group)}:${pad(index, 6)}`,
  activitySlotsOf: (group: string) => `act-slot:${escapeId(group)}:`,
  activitySlotsPrefix: 'act-slot:',
  /** An engine's session (workflow-lease): renewed once per pass, it keeps all of the engine's claims live. */
  session: (engineId: string) => `wf-session:${escapeId(engineId)}`,
  sessionsPrefix: 'wf-session:',
  /** Store-wide lease (lease mode) and the ownership mode marker. */
  leaseEpoch: 'lease:epoch',
  leaseHolder: 'lease:holder',
  modeMarker: 'ownership-mode-marker',
  /** Which payload codec first wrote to the store (payload-codec.ts); engines without a codec refuse it. */
  payloadCodecMarker: 'payload-codec-marker',
  /** Fence-rejection diagnostics: a deposed engine's refused write, drawn by the studio. */
  fenceRejection: (id: string, at: number, engineId: string) =>
    `fence-reject:${escapeId(id)}:${pad(Math.floor(at), timeWidth)}:${escapeId(engineId)}`,
  fenceRejectionPrefix: (id: string) => `fence-reject:${escapeId(id)}:`,
  fenceRejectionsPrefix: 'fence-reject:',
  /** Engine presence records (heartbeat, label) for the studio. */
  engine: (engineId: string) => `engine:${escapeId(engineId)}`,
  enginesPrefix: 'engine:',
  /** Workflow definitions authored in the studio (source text). */
  definition: (name: string, version: number) => `def:${escapeId(name)}:${pad(version, 6)}`,
  definitionsPrefix: 'def:',
  /** A schedule: its spec, state and last slots (src/engine/schedules). */
  schedule: (name: string) => `sched:${escapeId(name)}`,
  schedulesPrefix: 'sched:',
  /** The due index of schedules: one entry per active schedule at the time it next needs a pass. */
  scheduleDue: (dueAt: number, name: string) =>
    `sched-due:${pad(Math.max(0, Math.floor(dueAt)), timeWidth)}:${escapeId(name)}`,
  scheduleDuePrefix: 'sched-due:',
  /** Upper bound (exclusive scan cursor) for schedule entries due at or before `time`. */
  scheduleDueAfter: (time: number) => `sched-due:${pad(Math.max(0, Math.floor(time)), timeWidth)}:\uffff`,
  /**
   * Workflow queues (src/engine/queues): the declaration an engine last wrote, for the studio and the CLI.
   * Queue names are [A-Za-z0-9_.-] only, so they need no escaping.
   */
  queueDeclaration: (queue: string) => `queue-def:${queue}`,
  queueDeclarationsPrefix: 'queue-def:',
  /**
   * A workflow waiting in a queue, in admission order: `order` is its enqueue time plus its priority's
   * weight (queues/order.ts), so FIFO within a priority and no starvation across priorities.
   */
  queueWait: (queue: string, order: number, id: string) =>
    `queue-wait:${queue}:${pad(Math.max(0, Math.floor(order)), timeWidth)}:${escapeId(id)}`,
  queueWaitPrefix: (queue: string) => `queue-wait:${queue}:`,
  queueWaitsPrefix: 'queue-wait:',
  /** One of a queue's `concurrency` slots, held by an admitted workflow until it finishes. */
  queueSlot: (queue: string, slot: number) => `queue-slot:${queue}:${pad(slot, 6)}`,
  queueSlotPrefix: (queue: string) => `queue-slot:${queue}:`,
  queueSlotsPrefix: 'queue-slot:',
  /** One of a concurrency key's `perKeyConcurrency` slots. */
  queueKeySlot: (queue: string, key: string, slot: number) =>
    `queue-kslot:${queue}:${escapeId(key)}:${pad(slot, 6)}`,
  queueKeySlotPrefix: (queue: string, key: string) => `queue-kslot:${queue}:${escapeId(key)}:`,
  queueKeySlotsPrefix: (queue: string) => `queue-kslot:${queue}:`,
  /** One of a rate limit's `limit` tokens: the time it was last used (a token is reusable a period later). */
  queueRate: (queue: string, token: number) => `queue-rate:${queue}:${pad(token, 6)}`,
  queueRatePrefix: (queue: string) => `queue-rate:${queue}:`,
  /**
   * A singleton or debounce key of a start (`{ id, run }`): the workflow it names is the one a start with the
   * same key joins. Scoped by queue (or by workflow type for a start without a queue).
   */
  startKey: (scope: string, kind: 'singleton' | 'debounce', key: string) =>
    `start-key:${escapeId(scope)}:${kind}:${escapeId(key)}`,
} as const;

/** The part of `key` after `prefix`, split on `:` and unescaped. */
function fields(key: string, prefix: string): string[] {
  return key.slice(prefix.length).split(':');
}

export type ParsedTimerKey = { dueAt: number; workflowId: string; name: string };

export function parseTimerKey(key: string): ParsedTimerKey | null {
  if (!key.startsWith(keys.timersPrefix)) return null;
  const [due, id, ...rest] = fields(key, keys.timersPrefix);
  if (due === undefined || id === undefined || rest.length === 0) return null;
  const dueAt = Number(due);
  if (!Number.isFinite(dueAt)) return null;
  return { dueAt, workflowId: unescapeId(id), name: rest.join(':') };
}

/** The workflow id of a key `<prefix><escaped id>[:…]`, or null if the key does not start with prefix. */
export function workflowIdOf(key: string, prefix: string): string | null {
  if (!key.startsWith(prefix)) return null;
  const [id] = fields(key, prefix);
  return id === undefined || id === '' ? null : unescapeId(id);
}

export type ParsedScheduleDueKey = { dueAt: number; name: string };

export function parseScheduleDueKey(key: string): ParsedScheduleDueKey | null {
  if (!key.startsWith(keys.scheduleDuePrefix)) return null;
  const [due, name, ...rest] = fields(key, keys.scheduleDuePrefix);
  if (due === undefined || name === undefined || name === '' || rest.length > 0) return null;
  const dueAt = Number(due);
  return Number.isFinite(dueAt) ? { dueAt, name: unescapeId(name) } : null;
}

export function parseDefinitionKey(key: string): { name: string; version: number } | null {
  if (!key.startsWith(keys.definitionsPrefix)) return null;
  const [name, version] = fields(key, keys.definitionsPrefix);
  if (name === undefined || version === undefined) return null;
  const parsed = Number(version);
  return Number.isSafeInteger(parsed) ? { name: unescapeId(name), version: parsed } : null;
}

/** What a stored key holds, for hosts that react to the change feed (the studio's live updates). */
export type StoredKeyKind =
  | 'record'
  | 'past-run'
  | 'purge'
  | 'idempotency'
  | 'activity-completion'
  | 'activity-heartbeat'
  | 'activity-slot'
  | 'checkpoint'
  | 'status-index'
  | 'attribute-index'
  | 'history'
  | 'timeline'
  | 'signal'
  | 'cancel-request'
  | 'update-request'
  | 'update-response'
  | 'timer'
  | 'claim-holder'
  | 'claim-epoch'
  | 'claim-session'
  | 'claim-notice'
  | 'lease'
  | 'mode-marker'
  | 'fence-rejection'
  | 'engine'
  | 'definition'
  | 'schedule'
  | 'schedule-due'
  | 'queue'
  | 'other';

const keyKinds: readonly { prefix: string; kind: StoredKeyKind; id: 'first' | 'second' | 'none' }[] = [
  { prefix: 'wf:', kind: 'record', id: 'first' },
  { prefix: 'wf-run:', kind: 'past-run', id: 'first' },
  { prefix: 'wf-purge:', kind: 'purge', id: 'first' },
  { prefix: 'idem:', kind: 'idempotency', id: 'none' },
  { prefix: 'act-done:', kind: 'activity-completion', id: 'first' },
  { prefix: 'act-hb:', kind: 'activity-heartbeat', id: 'first' },
  { prefix: 'act-slot:', kind: 'activity-slot', id: 'none' },
  { prefix: 'wf-ckpt:', kind: 'checkpoint', id: 'first' },
  { prefix: 'wf-idx:', kind: 'status-index', id: 'second' },
  { prefix: 'wf-attr:', kind: 'attribute-index', id: 'none' },
  { prefix: 'wf-hist:', kind: 'history', id: 'first' },
  { prefix: 'wf-tl:', kind: 'timeline', id: 'first' },
  { prefix: 'sig:', kind: 'signal', id: 'first' },
  { prefix: 'sig-next:', kind: 'signal', id: 'first' },
  { prefix: 'cancel:', kind: 'cancel-request', id: 'first' },
  { prefix: 'upd:', kind: 'update-request', id: 'first' },
  { prefix: 'upr:', kind: 'update-response', id: 'first' },
  { prefix: 'timer:', kind: 'timer', id: 'second' },
  { prefix: 'wf-owner-holder:', kind: 'claim-holder', id: 'first' },
  { prefix: 'wf-owner-epoch:', kind: 'claim-epoch', id: 'first' },
  { prefix: 'wf-session:', kind: 'claim-session', id: 'none' },
  { prefix: 'wf-owner-notice:', kind: 'claim-notice', id: 'second' },
  { prefix: 'lease:', kind: 'lease', id: 'none' },
  { prefix: 'ownership-mode-marker', kind: 'mode-marker', id: 'none' },
  { prefix: 'payload-codec-marker', kind: 'mode-marker', id: 'none' },
  { prefix: 'fence-reject:', kind: 'fence-rejection', id: 'first' },
  { prefix: 'engine:', kind: 'engine', id: 'none' },
  { prefix: 'def:', kind: 'definition', id: 'none' },
  { prefix: 'sched:', kind: 'schedule', id: 'none' },
  { prefix: 'sched-due:', kind: 'schedule-due', id: 'none' },
  { prefix: 'queue-', kind: 'queue', id: 'none' },
  { prefix: 'start-key:', kind: 'queue', id: 'none' },
];

/** Classifies a stored key: what it holds and, for per-workflow keys, the workflow id. */
export function describeStoredKey(key: string): { kind: StoredKeyKind; workflowId: string | null } {
  for (const { prefix, kind, id } of keyKinds) {
    if (!key.startsWith(prefix)) continue;
    if (id === 'none') return { kind, workflowId: null };
    const parts = key.slice(prefix.length).split(':');
    const escaped = id === 'first' ? parts[0] : parts[1];
    return { kind, workflowId: escaped ? unescapeId(escaped) : null };
  }
  return { kind: 'other', workflowId: null };
}

/** Keys a host may write beside the engine: engine presence records and authored definitions. */
export const hostKeys = {
  engine: keys.engine,
  enginesPrefix: keys.enginesPrefix,
  definition: keys.definition,
  definitionsPrefix: keys.definitionsPrefix,
  parseDefinition: parseDefinitionKey,
} as const;
