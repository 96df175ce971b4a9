/**
 * `client.api`: the wire contract's methods as functions, derived from the protocol's declarations
 * (src/protocol/methods.ts). One function per declared method, built at run time from
 * `Object.keys(declarations)` and typed from the same table, so a method declared in src/protocol is
 * `client.api.<name>(params)` at once, with its params and result types, and no change here.
 *
 * Every function sends its request through the client's request path (`ShuttleClient.call`): the same
 * ordinary timeout, the same rebuilt errors, the same ordering behind the first `hello`. The methods that
 * legitimately wait longer than an ordinary call are the only ones named here (`waitingMethods`).
 */
import { declarations, type Method, type Params, type Result } from '../protocol';

/** One function per method of the wire contract: its params in, its result out. */
export type ProtocolApi = { readonly [M in Method]: (params: Params<M>) => Promise<Result<M>> };

/**
 * The client's request path: sends one request, resolves with its result. `timeoutMs` is how long to wait
 * for the answer (null: as long as the worker lives); left out, the client's ordinary request timeout.
 */
export type SendRequest = <M extends Method>(
  method: M,
  params: Params<M>,
  timeoutMs?: number | null,
) => Promise<Result<M>>;

/**
 * How long the calls that wait for something other than the engine's answer may take: `result` waits for the
 * workflow to finish (as long as the worker lives), `update` for its owner to apply it (its own `timeoutMs`,
 * default 60 s, plus 5 s). Every other method gets the client's ordinary request timeout.
 */
const waitingMethods: { readonly [M in Method]?: (params: Params<M>) => number | null } = {
  result: () => null,
  update: (params) => (params.timeoutMs ?? 60_000) + 5_000,
};

/** How long a call of `method` waits: its own limit (`waitingMethods`), or undefined for the ordinary one. */
function waitingLimit<M extends Method>(method: M, params: Params<M>): number | null | undefined {
  const limit = waitingMethods[method] as ((params: Params<M>) => number | null) | undefined;
  return limit?.(params);
}

/** Builds the facade over `send`: one function per declared method, frozen. */
export function createApi(send: SendRequest): ProtocolApi {
  const api: Partial<Record<Method, (params: never) => Promise<unknown>>> = {};
  for (const method of Object.keys(declarations) as Method[]) {
    api[method] = (params: Params<typeof method>) => send(method, params, waitingLimit(method, params));
  }
  return Object.freeze(api) as ProtocolApi;
}

/**
 * The entries of `values` that are not undefined: for optional params, so an argument left out is not sent
 * (`{ workflowId, ...optional({ reason }) }`).
 */
export function optional<T extends Record<string, unknown>>(
  values: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const defined: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) if (value !== undefined) defined[name] = value;
  return defined as { [K in keyof T]?: Exclude<T[K], undefined> };
}
