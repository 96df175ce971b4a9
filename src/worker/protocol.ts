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
 *
 * This module holds types and the validator only: it imports nothing from the engine at runtime, so the UI
 * can import it freely. Bump `PROTOCOL_VERSION` on any incompatible change of a shape below.
 */
import type {
  ClaimInfo,
  EngineEvent,
  EngineMetrics,
  EngineWarning,
  FenceRejection,
  ListFilter,
  ListPage,
  ResultWaiterInfo,
  SerializedError,
  ShutdownReport,
  StartOptions,
  TimelineEntry,
  WorkflowDescription,
} from '../engine';

/** The version of this protocol. Page and worker of one build always agree; a mismatch means a stale tab. */
export const PROTOCOL_VERSION = 1;

// ---------------------------------------------------------------------------------------------------------
// Shared shapes

/** `'engine'`: this tab runs workflows. `'viewer'` (`?engine=off`): it only observes and never claims. */
export type EngineMode = 'engine' | 'viewer';

/** The life of the worker host of one tab. */
export type HostState = 'starting' | 'running' | 'frozen' | 'stopping' | 'stopped' | 'failed';

export type HostStatus = {
  state: HostState;
  /** When the host entered this state (epoch ms). */
  since: number;
  /** A sentence for people: why it failed, what to do. Present for `failed`. */
  message?: string;
  error?: SerializedError;
};

/** The status an engine advertises in its presence record. */
export type PresenceStatus = 'starting' | 'running' | 'frozen' | 'stopped';

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
  startedAt: number;
  lastSeenAt: number;
  claimsHeld: number;
  protocolVersion: number;
};

/** An engine as the `engines` request reports it. */
export type EngineRecord = EnginePresence & {
  /** Whether the engine's Web Lock is held (it is alive), or null when the browser cannot tell. */
  alive: boolean | null;
  /** The engine of the worker that answered. */
  thisTab: boolean;
};

/** A registered workflow definition, as the studio shows it. */
export type DefinitionInfo = {
  name: string;
  version: number;
  description: string | null;
  /** Prefilled input of the start dialog; null when the definition has none. */
  sampleInput: unknown;
  queries: string[];
  updates: string[];
};

/**
 * Something went wrong that the worker handled, but a person should know: the engine's own warnings (a claim
 * lost, a wake discarded, a corrupt record, a storage hiccup), presence writes failing, malformed messages
 * that carried no id to reply to, and errors nobody caught inside the worker.
 */
export type HostWarning = {
  name: EngineWarning['name'] | 'PresenceWarning' | 'ProtocolWarning' | 'WorkerWarning';
  message: string;
  workflowId?: string;
};

/** What `hello` tells the page about its worker. */
export type HelloResult = {
  protocolVersion: number;
  engineId: string;
  label: string;
  shortLabel: string;
  color: string;
  mode: EngineMode;
  databaseName: string;
  status: HostStatus;
};

/** The database and mode a worker serves; sent with `hello`. */
export type WorkerConfig = {
  /** IndexedDB database name. Default `shuttle`; end-to-end tests use a fresh name per test. */
  databaseName: string;
  mode: EngineMode;
};

// ---------------------------------------------------------------------------------------------------------
// Requests

type Empty = Record<string, never>;

/** Every method, with its params and its result. */
export interface Methods {
  /**
   * The first request of a page. Its config chooses the database and mode; the worker starts its engine on
   * the first hello and answers at once (the engine may still be starting: see `status`). Later hellos
   * return fresh information and must name the same config.
   */
  hello: { params: { protocolVersion: number } & WorkerConfig; result: HelloResult };
  start: {
    params: { workflowType: string; input?: unknown; options?: StartOptions };
    result: { workflowId: string };
  };
  signal: { params: { workflowId: string; name: string; payload?: unknown }; result: null };
  query: { params: { workflowId: string; name: string; arg?: unknown }; result: unknown };
  update: {
    params: { workflowId: string; name: string; arg?: unknown; timeoutMs?: number };
    result: unknown;
  };
  cancel: { params: { workflowId: string; reason?: string }; result: null };
  terminate: { params: { workflowId: string; reason?: string }; result: null };
  suspend: { params: { workflowId: string }; result: null };
  resume: { params: { workflowId: string }; result: null };
  /** Waits for the workflow to finish (as a result waiter of this engine). */
  result: { params: { workflowId: string }; result: unknown };
  describe: { params: { workflowId: string }; result: WorkflowDescription };
  list: { params: { filter?: ListFilter }; result: ListPage };
  timeline: { params: { workflowId: string; after?: number; limit?: number }; result: TimelineEntry[] };
  claims: { params: Empty; result: ClaimInfo[] };
  fenceRejections: { params: { workflowId?: string }; result: FenceRejection[] };
  resultWaiters: { params: Empty; result: ResultWaiterInfo[] };
  metrics: { params: Empty; result: EngineMetrics };
  definitions: { params: Empty; result: DefinitionInfo[] };
  engines: { params: Empty; result: EngineRecord[] };
  ownedWorkflows: { params: Empty; result: string[] };
  /** Graceful shutdown: releases every claim (other tabs take over at once) and marks presence stopped. */
  shutdown: { params: Empty; result: ShutdownReport };
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
 * records. `engines`: presence records. `messages`: signals, cancel requests, updates. `timers`: durable
 * timers. `fence-rejections`: refused writes. `definitions`: authored definitions. `other`: anything else.
 */
export type StoreArea =
  | 'workflows'
  | 'timelines'
  | 'claims'
  | 'engines'
  | 'messages'
  | 'timers'
  | 'fence-rejections'
  | 'definitions'
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

type FieldRule = 'string' | 'string?' | 'integer' | 'integer?' | 'number?' | 'object?' | 'unknown?' | 'mode';

const paramRules: { readonly [M in Method]: Readonly<Record<keyof Params<M> & string, FieldRule>> } = {
  hello: { protocolVersion: 'integer', databaseName: 'string', mode: 'mode' },
  start: { workflowType: 'string', input: 'unknown?', options: 'object?' },
  signal: { workflowId: 'string', name: 'string', payload: 'unknown?' },
  query: { workflowId: 'string', name: 'string', arg: 'unknown?' },
  update: { workflowId: 'string', name: 'string', arg: 'unknown?', timeoutMs: 'number?' },
  cancel: { workflowId: 'string', reason: 'string?' },
  terminate: { workflowId: 'string', reason: 'string?' },
  suspend: { workflowId: 'string' },
  resume: { workflowId: 'string' },
  result: { workflowId: 'string' },
  describe: { workflowId: 'string' },
  list: { filter: 'object?' },
  timeline: { workflowId: 'string', after: 'integer?', limit: 'integer?' },
  claims: {},
  fenceRejections: { workflowId: 'string?' },
  resultWaiters: {},
  metrics: {},
  definitions: {},
  engines: {},
  ownedWorkflows: {},
  shutdown: {},
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
    case 'number?':
      return typeof value === 'number' && Number.isFinite(value)
        ? null
        : `must be a finite number, not ${describeValue(value)}`;
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
