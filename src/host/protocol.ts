/**
 * The protocol between a studio page (main thread) and its engine worker: every message either way is one of
 * the tagged unions below, and every message from the page is validated with `parseRequest` before use.
 *
 * Guarantees:
 * - Page → worker: only `RequestMessage`s. Each carries the page's `PROTOCOL_VERSION` (`v`), a numeric `id`
 *   the reply echoes, a `method` and its `params` object. The worker answers every request it can identify
 *   with exactly one `ResponseMessage`: `ok: true` with a structured-cloneable `value`, or `ok: false` with a
 *   `SerializedError` (`name`, `message`, `details`).
 * - Worker → page: responses, and pushed messages that need no request: engine events (batched), store
 *   change notices (coalesced; they say which kinds of data and which workflows changed, so the page knows
 *   what to refetch), status changes of the worker host, warnings, and a heartbeat every second.
 * - `parseRequest` never throws. A malformed message yields a `ProtocolError` (with the request id when one
 *   could be read, so the worker can reply); a message from a page of another build yields a
 *   `ProtocolVersionMismatchError` that says to reload the tab.
 * - Tab ↔ tab: the control channel (a `BroadcastChannel` named `shuttle-control:<database>`) carries
 *   `ControlMessage`s between the main threads of the tabs of one database, so any tab can freeze, crash,
 *   shut down or restart another tab's engine, or have it start a workflow. `parseControlMessage` validates
 *   them the same way; a message of another protocol version is reported as such, so the receiver can ignore
 *   it with a warning.
 *
 * This module holds types and the validator only: it imports nothing from the engine at runtime, so the UI
 * can import it freely. Bump `PROTOCOL_VERSION` on any incompatible change of a shape below.
 */
import type {
  ClaimHolder,
  ClaimInfo,
  EngineEvent,
  EngineMetrics,
  EngineWarning,
  FenceRejection,
  ListFilter,
  ListPage,
  OperationOutcome,
  PurgeReport,
  ReclaimOutcome,
  ResultWaiterInfo,
  RunSummary,
  ScheduleInfo,
  ScheduleSpecInput,
  SerializedError,
  ShutdownReport,
  StartOptions,
  TimelineEntry,
  WorkflowDescription,
} from '../engine';
import type { StorageUsage } from '../storage/types';
import type { Diagnostic } from './authoring/compile';
import type { CompileReport } from './authoring/compile-sandbox';
import type { DeleteOutcome, SaveOutcome } from './authoring/definition-store';

export type { CompileReport, DeleteOutcome, SaveOutcome };

/** One problem of a definition's source, at a 1-based line and column: a syntax error, an exception while
 * the module loaded, or a missing or wrong default export. */
export type DefinitionDiagnostic = Diagnostic;

/** The version of this protocol. Page and worker of one build always agree; a mismatch means a stale tab. */
export const PROTOCOL_VERSION = 6;

/**
 * The claim timings of the studio's engines, defined once: a claim (an engine's session) lives 6 s without
 * renewal, is renewed every second, and may be taken over 2 s (two renew intervals) after it expired. The
 * host configures its engine with them; the pages draw claims and wait on takeovers with them.
 */
export const studioClaimTimings = { ttlMs: 6_000, renewIntervalMs: 1_000, graceMs: 2_000 } as const;

// ---------------------------------------------------------------------------------------------------------
// Shared shapes

/** `'engine'`: this tab runs workflows. `'viewer'` (`?engine=off`): it only observes and never claims. */
export type EngineMode = 'engine' | 'viewer';

/**
 * The life of the worker host of one tab. `frozen`: its event loop is stalled on purpose (chaos freeze) until
 * `HostStatus.frozenUntil`; it pushes `running` again when the stall ends.
 */
export type HostState = 'starting' | 'running' | 'frozen' | 'stopping' | 'stopped' | 'failed';

export type HostStatus = {
  state: HostState;
  /** When the host entered this state (epoch ms). */
  since: number;
  /** For `frozen`: when the stall ends (epoch ms). */
  frozenUntil?: number;
  /** A sentence for people: why it failed, what to do. Present for `failed`. */
  message?: string;
  error?: SerializedError;
};

/**
 * The status an engine advertises in its presence record. `crashed` is written on a crashed engine's behalf
 * by another engine (a crashed worker writes nothing): its tab terminated it through the control channel.
 */
export type PresenceStatus = 'starting' | 'running' | 'frozen' | 'stopped' | 'crashed';

/**
 * An engine's status as `engines()` reports it: the presence status, or `dead` when the engine's Web Lock is
 * not held although it never recorded a stop (its tab was closed or crashed before it could say so).
 */
export type EngineStatus = PresenceStatus | 'dead';

/** What an engine has done since it started; published in its presence record. */
export type EngineCounters = {
  /** Workflows this engine drove to `completed`. */
  workflowsCompleted: number;
  /** Claims this engine lost (taken over, rotated, or refused at a write). */
  claimsLost: number;
  /** Writes of this engine that the epoch fence refused. */
  writesFencedOut: number;
  /** In-memory wake-ups this engine discarded because it no longer owned the workflow. */
  wakesDiscarded: number;
  /** Claims this engine took over from an expired or dead holder. */
  takeovers: number;
};

/**
 * An engine's presence record, stored under `engine:<engineId>` and refreshed every second by its worker.
 * Engines of every tab sharing the database are visible through it.
 */
export type EnginePresence = {
  engineId: string;
  /** e.g. `Tab C`. Unique per database: a new engine (a reload, a new tab) gets the next letter. */
  label: string;
  /** The letters of `label` shown inside colour chips, e.g. `C`. */
  shortLabel: string;
  /** `#rrggbb` from a palette whose colours also differ in lightness. */
  color: string;
  mode: EngineMode;
  status: PresenceStatus;
  /** For `frozen`: when the stall ends (epoch ms). */
  frozenUntil?: number;
  startedAt: number;
  lastSeenAt: number;
  claimsHeld: number;
  /** The studio protocol version of the engine's build; another version means a stale tab. */
  protocolVersion: number;
  /** The engine's result waiters: pending first, then the 20 most recently settled. */
  resultWaiters: ResultWaiterInfo[];
  counters: EngineCounters;
  /** Where the engine runs: a studio tab, or a server process (with its host name and process id). */
  runtime: EngineRuntime;
};

/** Where an engine runs. */
export type EngineRuntime = { kind: 'tab' } | { kind: 'server'; hostName: string; pid: number };

/** An engine as the `engines` request reports it. */
export type EngineRecord = Omit<EnginePresence, 'status'> & {
  status: EngineStatus;
  /** Whether the engine's Web Lock is held (it is alive), or null when the browser cannot tell. */
  alive: boolean | null;
  /** The engine of the worker that answered. */
  thisTab: boolean;
};

/**
 * A workflow definition as the studio shows it: a built-in demo, or one authored in the studio and saved
 * (`def:<name>:<version>`). Each saved version is listed on its own.
 */
export type DefinitionInfo = {
  name: string;
  version: number;
  description: string | null;
  /** Prefilled input of the start dialog; null when the definition has none. */
  sampleInput: unknown;
  queries: string[];
  updates: string[];
  /** A built-in demo: read-only in the editor, copyable as a template. */
  builtIn: boolean;
  /** A short human title (the built-in demos'), or null. */
  title: string | null;
  /** Normally started by a parent workflow, not by people. */
  childOnly: boolean;
  /** The TypeScript module, as shipped (built-ins) or as saved; null when it is not known. */
  source: string | null;
  /** When it was saved (epoch ms); null for built-ins. */
  savedAt: number | null;
  /** The engine that saved it; null for built-ins. */
  savedBy: string | null;
  /** Whether this tab's engine has registered it: only a registered definition can be started here. */
  registered: boolean;
  /**
   * Why this tab's engine could not load the saved source (line and column of each problem); null when it
   * loaded. An older body of the same version may still be registered.
   */
  loadProblems: DefinitionDiagnostic[] | null;
};

/**
 * Something went wrong that the worker handled, but a person should know: the engine's own warnings (a claim
 * lost, a wake discarded, a corrupt record, a storage hiccup), presence writes failing, malformed messages
 * that carried no id to reply to, and errors nobody caught inside the worker.
 */
export type HostWarning = {
  /**
   * `VersionMismatchWarning`: another live engine of the database runs a different build of the studio
   * (`engineId` names it); the message says which tab to reload.
   */
  /** `DefinitionWarning`: a saved definition could not be loaded by this engine (the message says why). */
  name:
    | EngineWarning['name']
    | 'PresenceWarning'
    | 'ProtocolWarning'
    | 'WorkerWarning'
    | 'VersionMismatchWarning'
    | 'DefinitionWarning';
  message: string;
  workflowId?: string;
  engineId?: string;
};

/** What `hello` tells the page about its worker (or the server it is connected to). */
export type HelloResult = {
  protocolVersion: number;
  engineId: string;
  label: string;
  shortLabel: string;
  color: string;
  mode: EngineMode;
  databaseName: string;
  status: HostStatus;
  /** Where this engine runs: the tab's own worker, or a server the page is connected to. */
  runtime: EngineRuntime;
  /** The store, in words, e.g. `IndexedDB 'shuttle'` or `PostgreSQL 127.0.0.1:5432/shuttle`. */
  store: string;
  /** The claim timings of this store's engines (how long a silent engine keeps its workflows). */
  claimTimings: { ttlMs: number; renewIntervalMs: number; graceMs: number };
  /** Whether definitions written in the studio can be compiled, saved and run here (not on servers). */
  authoring: boolean;
};

/** A worker process of a fleet that the server controls (`shuttle dev`). */
export type FleetProcess = {
  /** The engine it runs, once it has started one. */
  engineId: string | null;
  label: string;
  pid: number;
  state: 'starting' | 'running' | 'frozen' | 'stopping' | 'exited';
  startedAt: number;
  /** How it ended (`SIGKILL`, exit code 0, …), once it has. */
  exit?: string;
};

/** What the studio can do to a worker process of a controlled fleet. */
export type FleetActionType = 'kill' | 'freeze' | 'thaw' | 'stop' | 'start';

/** What a fleet action did. */
export type FleetActionOutcome = {
  action: FleetActionType;
  pid: number;
  engineId: string | null;
  label: string;
};

/**
 * A tab's wish to keep its label for its lifetime in that browser tab, sent with the first `hello` of a
 * reloaded, restarted or resumed tab: the label its previous engine had and that engine's id (which has
 * ended). Granted unless another live engine has that label now (a duplicated tab); see `presence.ts`.
 */
export type KeepLabel = { label: string; previousEngineId: string };

/** The database and mode a worker serves; sent with `hello`. */
export type WorkerConfig = {
  /** IndexedDB database name. Default `shuttle`; end-to-end tests use a fresh name per test. */
  databaseName: string;
  mode: EngineMode;
};

// ---------------------------------------------------------------------------------------------------------
// Requests

type Empty = Record<string, never>;

/** A cron's next fire times, or why the engine refuses it (`previewSchedule`). */
export type SchedulePreview =
  { ok: true; nextFireAt: number[] } | { ok: false; field: string; message: string };

/** Every method, with its params and its result. */
export interface Methods {
  /**
   * The first request of a page. Its config chooses the database and mode; the worker starts its engine on
   * the first hello and answers at once (the engine may still be starting: see `status`). Later hellos
   * return fresh information and must name the same config.
   */
  hello: { params: { protocolVersion: number; keepLabel?: KeepLabel } & WorkerConfig; result: HelloResult };
  start: {
    params: { workflowType: string; input?: unknown; options?: StartOptions };
    /**
     * The id and the run it started (1, or the next run of a finished id started again). `started: false`
     * when `options.idempotencyKey` had already started a run within the engine's window: that run is
     * returned and nothing was created.
     */
    result: { workflowId: string; run: number; started: boolean };
  };
  signal: { params: { workflowId: string; name: string; payload?: unknown }; result: null };
  /** Completes an external activity (its token: `describe(id).pending.leaves[i].completionToken`). */
  completeActivity: { params: { token: string; result?: unknown }; result: null };
  /** Fails an external activity with `{ name?, message }`. */
  failActivity: { params: { token: string; error: { name?: string; message: string } }; result: null };
  /** Signals workflow `options.id` if it runs, else starts it with the signal in the same commit. */
  signalWithStart: {
    params: {
      workflowType: string;
      input?: unknown;
      signalName: string;
      payload?: unknown;
      options: StartOptions & { id: string };
    };
    result: { workflowId: string; run: number; started: boolean };
  };
  query: { params: { workflowId: string; name: string; arg?: unknown }; result: unknown };
  update: {
    params: { workflowId: string; name: string; arg?: unknown; timeoutMs?: number };
    result: unknown;
  };
  cancel: { params: { workflowId: string; reason?: string }; result: null };
  terminate: { params: { workflowId: string; reason?: string }; result: null };
  suspend: { params: { workflowId: string }; result: null };
  resume: { params: { workflowId: string }; result: null };
  /** Waits for the workflow (its latest run, or `run`) to finish (as a result waiter of this engine). */
  result: { params: { workflowId: string; run?: number }; result: unknown };
  /**
   * The latest run, or `run`: an earlier run kept by run history. A running workflow's description lists the
   * signals buffered for it, sent but not consumed yet (`bufferedSignals`, at most 100, oldest first).
   */
  describe: { params: { workflowId: string; run?: number }; result: WorkflowDescription };
  /** Every stored run of a workflow id, latest first. */
  runs: { params: { workflowId: string }; result: RunSummary[] };
  list: { params: { filter?: ListFilter }; result: ListPage };
  timeline: {
    params: { workflowId: string; run?: number; after?: number; limit?: number };
    result: TimelineEntry[];
  };
  /**
   * What the history of the latest run (or `run`) recorded for one operation: the result or error of the
   * operation at `pos` (`member` inside all / race, default 0) — an activity's or child's result, a signal's
   * payload — or, given `updateId` instead, the state right after that update; null while nothing is
   * recorded. Timeline entries name the operation (`detail.pos`, `detail.member`) but carry no value.
   */
  operationOutcome: {
    params: { workflowId: string; run?: number; pos?: number; member?: number; updateId?: string };
    result: OperationOutcome | null;
  };
  /** Deletes every run of a finished workflow, or only the earlier run `run`. */
  purge: { params: { workflowId: string; run?: number }; result: PurgeReport };
  /**
   * Purges every finished workflow `filter` matches (its status, if given, must be finished ones; default
   * every finished status), all of its runs; `dryRun` only counts them. `failed` names any it could not
   * purge (e.g. started again meanwhile).
   */
  purgeFinished: {
    params: { filter?: ListFilter; dryRun?: boolean };
    result: { matched: number; purged: number; failed: { workflowId: string; message: string }[] };
  };
  /** How much room the store takes (see `StorageUsage`). */
  storageUsage: { params: Empty; result: StorageUsage };
  /** Every schedule of the store. */
  schedules: { params: Empty; result: ScheduleInfo[] };
  describeSchedule: { params: { name: string }; result: ScheduleInfo };
  /** Creates a schedule (unchanged when it exists with the same spec; a different one needs `replace`). */
  createSchedule: {
    params: { name: string; spec: ScheduleSpecInput; replace?: boolean };
    result: ScheduleInfo;
  };
  pauseSchedule: { params: { name: string }; result: ScheduleInfo };
  resumeSchedule: { params: { name: string }; result: ScheduleInfo };
  /** Starts one run of the schedule now, outside its slots. */
  triggerSchedule: { params: { name: string }; result: { workflowId: string; run: number } };
  /** Deletes a schedule; the workflows it started are left alone. */
  deleteSchedule: { params: { name: string }; result: null };
  /**
   * The next `count` (default 5) fire times of a cron in a time zone, or the engine's reason for refusing it
   * (`field` 'cron' or 'timezone'): for the studio's live preview. Writes nothing.
   */
  previewSchedule: {
    params: { cron: string; timezone?: string; count?: number };
    result: SchedulePreview;
  };
  claims: { params: Empty; result: ClaimInfo[] };
  /**
   * Who holds the workflow's claim and whether that holder is live now (its session, and the liveness
   * oracle: a Web Lock in tabs, an advisory lock on servers); null when nobody holds it (finished,
   * suspended, pending, or between owners). `WorkflowNotFoundError` for an id that has no workflow.
   */
  claimHolder: { params: { workflowId: string }; result: ClaimHolder | null };
  /**
   * Takes one workflow over on this engine now when, and only when, it has no holder or its holder is
   * expired or dead; a live holder is left alone. The engine's outcome comes back as data (`held-live` with
   * the holder, `taken-over` with the new epoch, …; see `ReclaimOutcome`). Refused with
   * `ObserverCannotClaimError` by an engine that claims nothing (a viewer tab, the studio server's observer).
   */
  reclaim: { params: { workflowId: string }; result: ReclaimOutcome };
  fenceRejections: { params: { workflowId?: string }; result: FenceRejection[] };
  resultWaiters: { params: Empty; result: ResultWaiterInfo[] };
  metrics: { params: Empty; result: EngineMetrics };
  /** Built-in and saved definitions, with their sources; see `DefinitionInfo`. */
  definitions: { params: Empty; result: DefinitionInfo[] };
  /**
   * Compiles and loads a definition's source (in a throwaway worker, so an endless loop cannot stall the
   * engine) without saving it: the name and version it declares, or its diagnostics.
   */
  compileDefinition: { params: { source: string }; result: CompileReport };
  /**
   * Saves a definition as `def:<name>:<version>`; every tab's engine registers it at once. Refused (nothing
   * written) when it does not compile (`invalid`), takes a built-in's name (`reserved`), or changes the body
   * of a version that unfinished workflows use (`version-in-use`, with a `suggestedVersion`) unless `force`.
   */
  saveDefinition: { params: { source: string; force?: boolean }; result: SaveOutcome };
  /** Deletes a saved version; refused (`in-use`) while unfinished workflows use it. */
  deleteDefinition: { params: { name: string; version: number }; result: DeleteOutcome };
  engines: { params: Empty; result: EngineRecord[] };
  ownedWorkflows: { params: Empty; result: string[] };
  /** Graceful shutdown: releases every claim (other tabs take over at once) and marks presence stopped. */
  shutdown: { params: Empty; result: ShutdownReport };
  /**
   * Chaos: stalls the worker's event loop for `seconds` (0 < seconds ≤ 600), like a frozen tab. The worker
   * first marks its presence `frozen` and pushes the status, then answers, then busy-waits. It keeps its Web
   * Lock, so other engines take its workflows over only after the claim TTL.
   */
  freeze: { params: { seconds: number }; result: { frozenUntil: number } };
  /** Records in another engine's presence that its tab terminated its worker (status `crashed`). */
  recordCrash: { params: { engineId: string; at: number }; result: null };
  /**
   * Another tab announced that its engine is going away (its page is being hidden for good): count it dead
   * now and take its workflows over.
   */
  engineExiting: { params: { engineId: string }; result: null };
  /** The worker processes of the fleet this server controls (`controlled: false` when it controls none). */
  fleet: { params: Empty; result: { controlled: boolean; processes: FleetProcess[] } };
  /**
   * Acts on a worker process of the controlled fleet: `kill` (SIGKILL), `freeze` for `seconds` (SIGSTOP, then
   * SIGCONT), `thaw` (SIGCONT), `stop` (SIGTERM: graceful), or `start` one more worker (no `engineId`).
   */
  fleetAction: {
    params: { engineId?: string; action: string; seconds?: number };
    result: FleetActionOutcome;
  };
}

export type Method = keyof Methods;
export type Params<M extends Method> = Methods[M]['params'];
export type Result<M extends Method> = Methods[M]['result'];

export type RequestMessage<M extends Method = Method> = {
  [K in M]: { kind: 'request'; v: number; id: number; method: K; params: Params<K> };
}[M];

// ---------------------------------------------------------------------------------------------------------
// Worker → page

export type ResponseMessage =
  | { kind: 'response'; v: number; id: number; ok: true; value: unknown }
  | { kind: 'response'; v: number; id: number; ok: false; error: SerializedError };

/**
 * Kinds of stored data a store change touched. The page maps each to the queries to refetch.
 * `workflows`: records, checkpoints, status index. `timelines`: timeline entries. `claims`: holder and epoch
 * records. `sessions`: engine sessions (their renewal extends every claim of the engine; it changes no
 * claim). `engines`: presence records. `messages`: signals, cancel requests, updates. `timers`: durable
 * timers. `fence-rejections`: refused writes. `definitions`: authored definitions. `schedules`: schedule
 * records and their due index. `other`: anything else.
 */
export type StoreArea =
  | 'workflows'
  | 'timelines'
  | 'claims'
  | 'sessions'
  | 'engines'
  | 'messages'
  | 'timers'
  | 'fence-rejections'
  | 'definitions'
  | 'schedules'
  | 'other';

export type PushMessage =
  /** Engine events of this tab's engine since the previous batch, in order. */
  | { kind: 'events'; v: number; events: EngineEvent[] }
  /**
   * Commits by any engine of the database since the previous notice. `workflowIds` is null when too many
   * workflows changed to list (refetch everything of those areas).
   */
  | { kind: 'store-changed'; v: number; areas: StoreArea[]; workflowIds: string[] | null }
  | { kind: 'status'; v: number; status: HostStatus }
  | { kind: 'warning'; v: number; warning: HostWarning }
  | { kind: 'heartbeat'; v: number; at: number };

export type WorkerMessage = ResponseMessage | PushMessage;

// ---------------------------------------------------------------------------------------------------------
// Validation of page → worker messages

/** A message that cannot be served. `id` is the request id when it could be read (reply to it). */
export type ProtocolError = { kind: 'protocol-error'; id: number | null; error: SerializedError };

type FieldRule =
  | 'string'
  | 'string?'
  | 'integer'
  | 'integer?'
  | 'number'
  | 'number?'
  | 'boolean?'
  | 'object'
  | 'object?'
  | 'unknown?'
  | 'mode';

const paramRules: { readonly [M in Method]: Readonly<Record<keyof Params<M> & string, FieldRule>> } = {
  hello: { protocolVersion: 'integer', databaseName: 'string', mode: 'mode', keepLabel: 'object?' },
  start: { workflowType: 'string', input: 'unknown?', options: 'object?' },
  signal: { workflowId: 'string', name: 'string', payload: 'unknown?' },
  completeActivity: { token: 'string', result: 'unknown?' },
  failActivity: { token: 'string', error: 'object' },
  signalWithStart: {
    workflowType: 'string',
    input: 'unknown?',
    signalName: 'string',
    payload: 'unknown?',
    options: 'object',
  },
  query: { workflowId: 'string', name: 'string', arg: 'unknown?' },
  update: { workflowId: 'string', name: 'string', arg: 'unknown?', timeoutMs: 'number?' },
  cancel: { workflowId: 'string', reason: 'string?' },
  terminate: { workflowId: 'string', reason: 'string?' },
  suspend: { workflowId: 'string' },
  resume: { workflowId: 'string' },
  result: { workflowId: 'string', run: 'integer?' },
  describe: { workflowId: 'string', run: 'integer?' },
  runs: { workflowId: 'string' },
  list: { filter: 'object?' },
  timeline: { workflowId: 'string', run: 'integer?', after: 'integer?', limit: 'integer?' },
  operationOutcome: {
    workflowId: 'string',
    run: 'integer?',
    pos: 'integer?',
    member: 'integer?',
    updateId: 'string?',
  },
  purge: { workflowId: 'string', run: 'integer?' },
  purgeFinished: { filter: 'object?', dryRun: 'boolean?' },
  storageUsage: {},
  schedules: {},
  describeSchedule: { name: 'string' },
  createSchedule: { name: 'string', spec: 'object', replace: 'boolean?' },
  pauseSchedule: { name: 'string' },
  resumeSchedule: { name: 'string' },
  triggerSchedule: { name: 'string' },
  deleteSchedule: { name: 'string' },
  previewSchedule: { cron: 'string', timezone: 'string?', count: 'integer?' },
  claims: {},
  claimHolder: { workflowId: 'string' },
  reclaim: { workflowId: 'string' },
  fenceRejections: { workflowId: 'string?' },
  resultWaiters: {},
  metrics: {},
  definitions: {},
  compileDefinition: { source: 'string' },
  saveDefinition: { source: 'string', force: 'boolean?' },
  deleteDefinition: { name: 'string', version: 'integer' },
  engines: {},
  ownedWorkflows: {},
  shutdown: {},
  freeze: { seconds: 'number' },
  recordCrash: { engineId: 'string', at: 'number' },
  engineExiting: { engineId: 'string' },
  fleet: {},
  fleetAction: { engineId: 'string?', action: 'string', seconds: 'number?' },
};

/** Every method name, in a stable order. */
export const methods = Object.keys(paramRules) as Method[];

export function isMethod(value: unknown): value is Method {
  return typeof value === 'string' && Object.hasOwn(paramRules, value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/** Why `value` breaks `rule`, or null when it is fine. */
function checkField(rule: FieldRule, value: unknown): string | null {
  const optional = rule.endsWith('?');
  if (value === undefined) return optional ? null : 'is missing';
  switch (rule) {
    case 'string':
    case 'string?':
      return typeof value === 'string' ? null : `must be a string, not ${describeValue(value)}`;
    case 'integer':
    case 'integer?':
      return Number.isSafeInteger(value) ? null : `must be an integer, not ${describeValue(value)}`;
    case 'number':
    case 'number?':
      return typeof value === 'number' && Number.isFinite(value)
        ? null
        : `must be a finite number, not ${describeValue(value)}`;
    case 'boolean?':
      return typeof value === 'boolean' ? null : `must be true or false, not ${describeValue(value)}`;
    case 'object':
    case 'object?':
      return isPlainObject(value) ? null : `must be a plain object, not ${describeValue(value)}`;
    case 'mode':
      return value === 'engine' || value === 'viewer'
        ? null
        : `must be 'engine' or 'viewer', not ${describeValue(value)}`;
    case 'unknown?':
      return null;
  }
}

function protocolError(id: number | null, message: string): ProtocolError {
  return { kind: 'protocol-error', id, error: { name: 'ProtocolError', message } };
}

/**
 * Validates one message from the page. Returns the typed request, or a `ProtocolError` saying what is wrong
 * (never throws). Checks the envelope, the protocol version, the method name, and each param's type;
 * unknown params are refused, so a typo never silently drops an option. Payload contents (inputs, signals,
 * filters, start options) are checked further by the engine.
 */
export function parseRequest(data: unknown): RequestMessage | ProtocolError {
  if (!isPlainObject(data))
    return protocolError(null, `Malformed message: expected a request object, got ${describeValue(data)}.`);
  const id = Number.isSafeInteger(data.id) && (data.id as number) >= 0 ? (data.id as number) : null;
  if (data.kind !== 'request')
    return protocolError(id, `Malformed message: kind must be 'request', got ${describeValue(data.kind)}.`);
  if (id === null)
    return protocolError(
      null,
      `Malformed request: id must be a non-negative integer, got ${describeValue(data.id)}.`,
    );
  if (data.v !== PROTOCOL_VERSION)
    return {
      kind: 'protocol-error',
      id,
      error: {
        name: 'ProtocolVersionMismatchError',
        message:
          `This tab's page speaks studio protocol version ${describeValue(data.v)}, but its engine worker speaks ` +
          `version ${PROTOCOL_VERSION}: the tab runs a different build of the studio than its worker. Reload the tab.`,
        details: { pageVersion: data.v ?? null, workerVersion: PROTOCOL_VERSION },
      },
    };
  if (!isMethod(data.method))
    return protocolError(
      id,
      `Unknown method ${describeValue(data.method)}; the worker serves: ${methods.join(', ')}.`,
    );
  const method = data.method;
  const params = data.params === undefined ? {} : data.params;
  if (!isPlainObject(params))
    return protocolError(
      id,
      `Malformed request '${method}': params must be an object, not ${describeValue(params)}.`,
    );
  const rules: Readonly<Record<string, FieldRule>> = paramRules[method];
  for (const name of Object.keys(params))
    if (!Object.hasOwn(rules, name))
      return protocolError(
        id,
        `Request '${method}' has an unknown param '${name}'; it takes ${Object.keys(rules).join(', ') || 'no params'}.`,
      );
  for (const [name, rule] of Object.entries(rules)) {
    const problem = checkField(rule, params[name]);
    if (problem) return protocolError(id, `Request '${method}': param '${name}' ${problem}.`);
  }
  return { kind: 'request', v: PROTOCOL_VERSION, id, method, params } as RequestMessage;
}

/** True for a `ProtocolError` returned by `parseRequest`. */
export function isProtocolError(value: RequestMessage | ProtocolError): value is ProtocolError {
  return value.kind === 'protocol-error';
}

const pushKinds: ReadonlySet<string> = new Set(['events', 'store-changed', 'status', 'warning', 'heartbeat']);

/**
 * A light check of a message from the worker (same build, so shapes are trusted once the envelope is
 * right): returns it typed, or null when it is not a protocol message of this version.
 */
export function parseWorkerMessage(data: unknown): WorkerMessage | null {
  if (!isPlainObject(data) || data.v !== PROTOCOL_VERSION || typeof data.kind !== 'string') return null;
  if (data.kind === 'response')
    return Number.isSafeInteger(data.id) && typeof data.ok === 'boolean' ? (data as WorkerMessage) : null;
  return pushKinds.has(data.kind) ? (data as WorkerMessage) : null;
}

// ---------------------------------------------------------------------------------------------------------
// Tab ↔ tab: the control channel

/** The name of the control channel of a database: one `BroadcastChannel` shared by all its tabs. */
export function controlChannelName(databaseName: string): string {
  return `shuttle-control:${databaseName}`;
}

/**
 * What one tab can ask the tab hosting an engine to do to that engine. `start` has that engine start a
 * workflow (so it claims and runs it), no earlier than `notBefore` (epoch ms) when given, so several tabs can
 * start at one instant; the hosting tab waits at most 5 s for it.
 */
export type ControlAction =
  | { type: 'freeze'; seconds: number }
  | { type: 'crash' }
  | { type: 'shutdown' }
  | { type: 'restart' }
  | { type: 'start'; workflowType: string; input?: unknown; options?: StartOptions; notBefore?: number };

export type ControlActionType = ControlAction['type'];

/** What each action reports when it is done. `engineId` is the engine acted on. */
export type ControlOutcomes = {
  /** The worker marked itself frozen and is stalled until `frozenUntil` (epoch ms). */
  freeze: { engineId: string; frozenUntil: number };
  /** The worker was terminated at `crashedAt`; its Web Lock is gone, so other tabs take over at once. */
  crash: { engineId: string; crashedAt: number };
  /** The engine shut down gracefully, releasing `claimsReleased` claims. */
  shutdown: { engineId: string; claimsReleased: number };
  /** The old worker was terminated and the tab now runs `newEngineId`. */
  restart: { engineId: string; newEngineId: string };
  /** The engine started workflow `workflowId`. */
  start: { engineId: string; workflowId: string };
};

export type ControlOutcome = ControlOutcomes[ControlActionType];

export type ControlMessage =
  /** Asks the tab hosting `engineId` to act on it. `from` is the asking tab's engine id, when it has one. */
  | {
      kind: 'control-request';
      v: number;
      requestId: string;
      engineId: string;
      action: ControlAction;
      from: string | null;
    }
  /** The hosting tab has the request and is acting on it (sent before acting). */
  | { kind: 'control-ack'; v: number; requestId: string; engineId: string }
  /** The outcome of a request. */
  | { kind: 'control-reply'; v: number; requestId: string; ok: true; value: ControlOutcome }
  | { kind: 'control-reply'; v: number; requestId: string; ok: false; error: SerializedError }
  /** A tab terminated its engine's worker at `at`; tabs that hear it record the engine as crashed. */
  | { kind: 'engine-crashed'; v: number; engineId: string; at: number }
  /**
   * A tab is going away (`pagehide`: closed, reloaded, navigated): its engine is about to die. Tabs that hear
   * it count the engine dead at once and take its workflows over, without waiting for the browser to release
   * its Web Lock (which takes a tenth of a second or more after the page is gone).
   */
  | { kind: 'engine-exiting'; v: number; engineId: string; at: number };

/** The result of `parseControlMessage`. */
export type ParsedControlMessage =
  | { ok: true; message: ControlMessage }
  /** A control message of another build: ignore it, with a warning (`version` as received). */
  | { ok: false; reason: 'version'; version: unknown; kind: string }
  | { ok: false; reason: 'malformed'; problem: string };

const controlActionTypes: ReadonlySet<string> = new Set(['freeze', 'crash', 'shutdown', 'restart', 'start']);

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 200;
}

function checkControlAction(value: unknown): string | null {
  if (!isPlainObject(value) || !controlActionTypes.has(value.type as string))
    return `action must be one of ${[...controlActionTypes].join(', ')}, not ${describeValue(value)}`;
  if (value.type === 'freeze') {
    const seconds = value.seconds;
    if (typeof seconds !== 'number' || !(seconds > 0 && seconds <= 600))
      return `freeze seconds must be a number above 0 and at most 600, not ${describeValue(seconds)}`;
  }
  if (value.type === 'start') {
    // Plain data for the hosting tab's `start`, which the engine validates again.
    if (!isNonEmptyString(value.workflowType))
      return `start workflowType must be a string, not ${describeValue(value.workflowType)}`;
    if (value.options !== undefined && !isPlainObject(value.options))
      return `start options must be a plain object, not ${describeValue(value.options)}`;
    const notBefore = value.notBefore;
    if (notBefore !== undefined && (typeof notBefore !== 'number' || !Number.isFinite(notBefore)))
      return `start notBefore must be a time (epoch ms), not ${describeValue(notBefore)}`;
  }
  return null;
}

/**
 * Validates a message from the control channel (never throws). Other tabs run code of their own build, so
 * nothing is trusted: envelope, version, ids and action are all checked.
 */
export function parseControlMessage(data: unknown): ParsedControlMessage {
  if (!isPlainObject(data) || typeof data.kind !== 'string')
    return { ok: false, reason: 'malformed', problem: `not a control message: ${describeValue(data)}` };
  const kinds = ['control-request', 'control-ack', 'control-reply', 'engine-crashed', 'engine-exiting'];
  if (!kinds.includes(data.kind))
    return { ok: false, reason: 'malformed', problem: `unknown kind ${describeValue(data.kind)}` };
  if (data.v !== PROTOCOL_VERSION) return { ok: false, reason: 'version', version: data.v, kind: data.kind };
  const malformed = (problem: string): ParsedControlMessage => ({
    ok: false,
    reason: 'malformed',
    problem: `${data.kind as string}: ${problem}`,
  });
  switch (data.kind) {
    case 'control-request': {
      if (!isNonEmptyString(data.requestId)) return malformed('requestId must be a string');
      if (!isNonEmptyString(data.engineId)) return malformed('engineId must be a string');
      if (data.from !== null && !isNonEmptyString(data.from))
        return malformed('from must be a string or null');
      const problem = checkControlAction(data.action);
      if (problem) return malformed(problem);
      break;
    }
    case 'control-ack':
      if (!isNonEmptyString(data.requestId) || !isNonEmptyString(data.engineId))
        return malformed('requestId and engineId must be strings');
      break;
    case 'control-reply':
      if (!isNonEmptyString(data.requestId)) return malformed('requestId must be a string');
      if (data.ok === true ? !isPlainObject(data.value) : data.ok !== false || !isPlainObject(data.error))
        return malformed('a reply needs ok with a value, or ok: false with an error');
      break;
    case 'engine-crashed':
    case 'engine-exiting':
      if (!isNonEmptyString(data.engineId) || typeof data.at !== 'number' || !Number.isFinite(data.at))
        return malformed('engineId must be a string and at a time');
      break;
  }
  return { ok: true, message: data as ControlMessage };
}
