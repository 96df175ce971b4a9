/**
 * The protocol between a studio page (main thread) and its engine worker, or a server it is connected to:
 * every message either way is one of the tagged unions below, and every message from the page is validated
 * with `parseRequest` before use.
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
 */
import type { EngineEvent, SerializedError } from '../engine';
import { checkField, describeValue, isPlainObject, type FieldRule } from './fields';
import { declarations, isMethod, methods, type Method, type Params } from './methods';
import { PROTOCOL_VERSION, type HostStatus, type HostWarning } from './shapes';

export type RequestMessage<M extends Method = Method> = {
  [K in M]: { kind: 'request'; v: number; id: number; method: K; params: Params<K> };
}[M];

export type ResponseMessage =
  | { kind: 'response'; v: number; id: number; ok: true; value: unknown }
  | { kind: 'response'; v: number; id: number; ok: false; error: SerializedError };

/**
 * Kinds of stored data a store change touched. The page maps each to the queries to refetch.
 * `workflows`: records, checkpoints, status index. `timelines`: timeline entries. `claims`: holder and epoch
 * records. `sessions`: engine sessions (their renewal extends every claim of the engine; it changes no
 * claim). `engines`: presence records. `messages`: signals, cancel requests, updates. `timers`: durable
 * timers. `fence-rejections`: refused writes. `definitions`: authored definitions. `schedules`: schedule
 * records and their due index. `queues`: queue declarations, wait entries, slots, rate tokens, start keys. `other`: anything else.
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
  | 'queues'
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

/** A message that cannot be served. `id` is the request id when it could be read (reply to it). */
export type ProtocolError = { kind: 'protocol-error'; id: number | null; error: SerializedError };

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
  const problem = paramProblem(method, params);
  if (problem?.unknown)
    return protocolError(
      id,
      `Request '${method}' has an unknown param '${problem.param}'; it takes ${paramNames(method).join(', ') || 'no params'}.`,
    );
  if (problem) return protocolError(id, `Request '${method}': param '${problem.param}' ${problem.problem}.`);
  return { kind: 'request', v: PROTOCOL_VERSION, id, method, params } as RequestMessage;
}

/** The params a method takes, in declaration order. */
export function paramNames(method: Method): string[] {
  return Object.keys(declarations[method].params);
}

/**
 * The first param of `params` that breaks `method`'s declared rules: one it does not take (`unknown`), or
 * one whose value breaks its rule (`problem` says why, e.g. "must be a string, not number 3"). Null when
 * they all hold. Every entry point checks params with this: a tab's worker and the studio server (through
 * `parseRequest`), and the HTTP API (src/server/http-api), each wording where the param came from.
 */
export function paramProblem(
  method: Method,
  params: Record<string, unknown>,
): { param: string; problem: string; unknown: boolean } | null {
  const rules: Readonly<Record<string, FieldRule>> = declarations[method].params;
  for (const name of Object.keys(params))
    if (!Object.hasOwn(rules, name)) return { param: name, problem: 'is not taken', unknown: true };
  for (const [name, rule] of Object.entries(rules)) {
    const problem = checkField(rule, params[name]);
    if (problem) return { param: name, problem, unknown: false };
  }
  return null;
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
