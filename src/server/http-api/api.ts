/**
 * Shuttle's HTTP API: the workflows, schedules and queues of a store, for a service in any language. `shuttle
 * serve` serves it under `/api/v1`; `createHttpApi` mounts it in a program's own server — a `node:http`
 * handler (`handleNode`, which Express and Connect take as middleware) and a fetch handler (`handleFetch`:
 * Hono, and any runtime that speaks `Request`/`Response`).
 *
 * One mechanism: each route (routes.ts) is a method of the wire contract. A request's params are gathered
 * from its path, query string and JSON body, checked by that method's own rules (`paramProblem`, the check
 * every entry point makes), and served by the host's own handler for it — the code a tab's worker and the
 * studio server's WebSocket run — so the engine refuses bad input here with the same typed errors and the
 * same reasons. What the API adds is HTTP's: bearer-token auth, statuses, a bounded body, the result's long
 * poll, and the OpenAPI document (openapi.ts).
 *
 * Errors are `{ "error": { "name", "message", "details" } }`, the status from the error's class
 * (../outcomes.ts): 400 bad input, 401 no token, 404 not found, 405 wrong method, 409 refused in its
 * state, 413 too large, 415 not JSON, 422 refused by the workflow's code or an unknown type, 503 stopping,
 * 504 gave up waiting, 500 anything else. Nothing is written before a request has been checked.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { isTerminal, serializeError, type Engine, type WorkflowDescription } from '../../engine';
import { queueHandlers } from '../../host/handlers/queues';
import { scheduleHandlers } from '../../host/handlers/schedules';
import type { Handler, HandlerContext, HostPort } from '../../host/handlers/types';
import { workflowHandlers } from '../../host/handlers/workflows';
import type { Storage } from '../../storage/types';
import { describeValue, isPlainObject, paramProblem, type Method } from '../../protocol';
import { classOfName, type ErrorClass } from '../outcomes';
import { packageRoot } from '../package-root';
import { bodyParams, openApiDocument } from './openapi';
import { routes, type QueryParam, type Route } from './routes';

/** Options of `createHttpApi`. */
export type HttpApiOptions = {
  /** The engine that serves the requests: a worker's, or an observer (it starts and steers; workers run). */
  engine: Engine;
  /**
   * The engine's store, read directly by `GET /activity-limits` for the activity slots held by groups the
   * engine does not declare (activity limits are declared in code, not stored). Without it, that route lists
   * only the engine's own groups.
   */
  storage?: Storage;
  /**
   * The token every request must carry as `Authorization: Bearer <token>` (at least 16 characters). `null`
   * only when the program authenticates requests itself before they reach the API.
   */
  token: string | null;
  /** The path the API is served under, e.g. `/api/v1` (default: none — a mount point already stripped it). */
  basePath?: string;
  /** The largest body accepted, in bytes (default 2 MiB). */
  maxBodyBytes?: number;
  /** Called with every error answered with a 500 (a bug or a store failure), for the program's log. */
  onInternalError?: (error: unknown, request: { method: string; path: string }) => void;
};

/** The HTTP API, ready to serve requests: mount one of its handlers in a server (docs/http-api.md). */
export type HttpApi = {
  /**
   * Serves a request of `node:http` under `basePath`. A request outside it calls `next` when given
   * (Express/Connect middleware), else answers 404.
   */
  handleNode(
    request: IncomingMessage,
    response: ServerResponse,
    next?: (error?: unknown) => void,
  ): Promise<void>;
  /** Serves a fetch `Request` (Hono: `app.all('/api/v1/*', (c) => api.handleFetch(c.req.raw))`). */
  handleFetch(request: Request): Promise<Response>;
  /** The OpenAPI 3.1 document, also served at `<basePath>/openapi.json`. */
  readonly openapi: Record<string, unknown>;
};

/** The statuses of the error classes (../outcomes.ts). */
const statusOfClass: Readonly<Record<ErrorClass, number>> = {
  'bad-input': 400,
  'too-large': 413,
  'not-found': 404,
  conflict: 409,
  refused: 422,
  'timed-out': 504,
  unavailable: 503,
  internal: 500,
};

/** An answer of the API. */
type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

/** A request as the API reads it, whichever server it came through. */
type ApiRequest = {
  method: string;
  /** The path under `basePath`, still percent-encoded. */
  path: string;
  query: URLSearchParams;
  header(name: string): string | undefined;
  body: string;
  signal: AbortSignal;
};

const defaultMaxBodyBytes = 2 * 1024 * 1024;
const defaultWaitMs = 30_000;

function errorReply(status: number, name: string, message: string, headers?: Record<string, string>): Reply {
  return { status, body: { error: { name, message } }, ...(headers ? { headers } : {}) };
}

/** A request the API refuses before calling the engine (a 4xx with its reason). */
class RequestRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorName = 'InvalidRequestError',
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

type CompiledRoute = { route: Route; segments: (string | { param: string })[]; label: string };

const compiled: readonly CompiledRoute[] = routes.map((route) => ({
  route,
  segments: route.path
    .split('/')
    .slice(1)
    .map((segment) => (/^\{\w+\}$/.test(segment) ? { param: segment.slice(1, -1) } : segment)),
  label: `${route.method} ${route.path}`,
}));

/** The route a method and path name, with its path params; a 404 or 405 when there is none. */
function matchRoute(method: string, path: string): { at: CompiledRoute; params: Record<string, string> } {
  const raw = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const parts = raw.split('/').slice(1);
  const decoded = parts.map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new RequestRefused(400, `The path segment '${part}' is not valid percent-encoding.`);
    }
  });
  const allowed: string[] = [];
  for (const at of compiled) {
    if (at.segments.length !== decoded.length) continue;
    const params: Record<string, string> = {};
    const fits = at.segments.every((segment, index) => {
      if (typeof segment === 'string') return segment === decoded[index];
      params[segment.param] = decoded[index]!;
      return decoded[index] !== '';
    });
    if (!fits) continue;
    if (at.route.method === method) return { at, params };
    allowed.push(at.route.method);
  }
  if (allowed.length > 0)
    throw new RequestRefused(
      405,
      `${method} is not served on ${path}; it takes ${allowed.join(', ')}.`,
      'MethodNotAllowedError',
      { allow: allowed.join(', ') },
    );
  throw new RequestRefused(
    404,
    `There is no ${method} ${path} in this API; its routes are listed in openapi.json.`,
    'RouteNotFoundError',
  );
}

/** A query parameter's value, typed as its route declares. */
function queryValue(label: string, name: string, spec: QueryParam, values: string[]): unknown {
  if (spec.type === 'string-list') {
    const items = values.flatMap((value) => value.split(',').map((part) => part.trim())).filter(Boolean);
    const wrong = spec.values ? items.find((item) => !spec.values!.includes(item)) : undefined;
    if (wrong !== undefined)
      throw new RequestRefused(
        400,
        `${label}: query parameter '${name}' has '${wrong}'; each value must be one of ${spec.values!.join(', ')}.`,
      );
    return items;
  }
  // Each occurrence one item, never split: an expression may hold commas.
  if (spec.type === 'repeated') return values;
  if (values.length > 1)
    throw new RequestRefused(
      400,
      `${label}: query parameter '${name}' is given ${values.length} times; give it once.`,
    );
  const text = values[0]!;
  if (spec.type === 'string') return text;
  if (spec.type === 'time') {
    const at = /^\d+$/.test(text)
      ? Number(text)
      : /^\d{4}-\d{2}-\d{2}/.test(text)
        ? Date.parse(text)
        : Number.NaN;
    if (!Number.isSafeInteger(at))
      throw new RequestRefused(
        400,
        `${label}: query parameter '${name}' must be a time: epoch milliseconds or ISO 8601 (2026-12-07T09:00:00Z), not '${text}'.`,
      );
    return at;
  }
  if (spec.type === 'boolean') {
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
    throw new RequestRefused(
      400,
      `${label}: query parameter '${name}' must be true or false, not '${text}'.`,
    );
  }
  const number = /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
  const { minimum = Number.MIN_SAFE_INTEGER, maximum = Number.MAX_SAFE_INTEGER } = spec;
  if (!Number.isSafeInteger(number) || number < minimum || number > maximum) {
    const range =
      spec.minimum !== undefined && spec.maximum !== undefined
        ? ` from ${minimum} to ${maximum}`
        : spec.minimum !== undefined
          ? ` of at least ${minimum}`
          : '';
    throw new RequestRefused(
      400,
      `${label}: query parameter '${name}' must be an integer${range}, not '${text}'.`,
    );
  }
  return number;
}

/**
 * The method's params a request gives, checked by the method's rules: path params, typed query
 * parameters, the JSON body's fields. `extra` holds the query parameters the API reads itself.
 */
function gatherParams(
  at: CompiledRoute,
  pathValues: Record<string, string>,
  request: ApiRequest,
): { params: Record<string, unknown>; extra: Record<string, unknown> } {
  const { route, label } = at;
  const params: Record<string, unknown> = { ...pathValues };
  const extra: Record<string, unknown> = {};
  const source: Record<string, string> = Object.fromEntries(
    Object.keys(pathValues).map((name) => [name, `path parameter '${name}'`]),
  );
  const spec = route.query ?? {};
  for (const name of new Set(request.query.keys())) {
    const query = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (!query)
      throw new RequestRefused(
        400,
        `${label} takes no query parameter '${name}'${Object.keys(spec).length ? `; it takes ${Object.keys(spec).join(', ')}` : ''}.`,
      );
    const value = queryValue(label, name, query, request.query.getAll(name));
    if (!query.to) extra[name] = value;
    else if (query.to.startsWith('filter.')) {
      const filter = (params.filter ??= {}) as Record<string, unknown>;
      filter[query.to.slice('filter.'.length)] = value;
    } else {
      params[query.to] = value;
      source[query.to] = `query parameter '${name}'`;
    }
  }
  const text = request.body.trim();
  if (!route.body) {
    if (text !== '') throw new RequestRefused(400, `${label} takes no body; send none.`);
  } else if (text !== '') {
    const type = (request.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json')
      throw new RequestRefused(
        415,
        `${label} takes a JSON body: send it with Content-Type: application/json${type ? `, not ${type}` : ''}.`,
        'UnsupportedMediaTypeError',
      );
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw new RequestRefused(
        400,
        `${label}: the body is not JSON (${error instanceof Error ? error.message : String(error)}).`,
      );
    }
    if (!isPlainObject(body))
      throw new RequestRefused(400, `${label}: the body must be a JSON object, not ${describeValue(body)}.`);
    const accepted = bodyParams(route);
    for (const [name, value] of Object.entries(body)) {
      if (Object.hasOwn(source, name))
        throw new RequestRefused(
          400,
          `${label}: body field '${name}' is given by the ${source[name]!.split(' ')[0]} already; leave it out of the body.`,
        );
      if (!accepted.includes(name))
        throw new RequestRefused(
          400,
          `${label}: body field '${name}' is not taken${accepted.length ? `; the body takes ${accepted.join(', ')}` : ''}.`,
        );
      params[name] = value;
      source[name] = `body field '${name}'`;
    }
  }
  const problem = paramProblem(route.calls, params);
  if (problem)
    throw new RequestRefused(
      400,
      `${label}: ${source[problem.param] ?? `body field '${problem.param}'`} ${problem.problem}.`,
    );
  if (route.calls === 'start') {
    const key = request.header('idempotency-key');
    if (key !== undefined) {
      const options = (params.options ?? {}) as Record<string, unknown>;
      if (options.idempotencyKey !== undefined && options.idempotencyKey !== key)
        throw new RequestRefused(
          400,
          `${label}: the Idempotency-Key header and options.idempotencyKey differ; give the key once.`,
        );
      params.options = { ...options, idempotencyKey: key };
    }
  }
  return { params, extra };
}

/** What a waiter of `/result` answers: the run's outcome, or that it has not finished. */
function outcomeOf(description: WorkflowDescription): Record<string, unknown> {
  const finished = isTerminal(description.status);
  return {
    workflowId: description.workflowId,
    run: description.run,
    status: description.status,
    finished,
    ...(description.status === 'completed' ? { result: description.result ?? null } : {}),
    ...(finished && description.error ? { error: description.error } : {}),
    ...(finished && description.reason ? { reason: description.reason } : {}),
  };
}

/** Whether `given` is `token`, compared in constant time (the studio's cookie and URL token use it too). */
export function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return '0.0.0';
  }
}

/**
 * Shuttle's HTTP API over `engine`: workflows, external activities and schedules as JSON over HTTP, behind a
 * bearer token, with its OpenAPI 3.1 document (`shuttle serve` serves the same under `/api/v1`). Throws
 * `InvalidOptionsError` for a token shorter than 16 characters or a `basePath` not starting with `/`.
 */
export function createHttpApi(options: HttpApiOptions): HttpApi {
  const { engine, token } = options;
  if (token !== null && (typeof token !== 'string' || token.length < 16))
    throw Object.assign(
      new Error(
        'createHttpApi: token must be a string of at least 16 characters (or null when the program authenticates requests itself).',
      ),
      { name: 'InvalidOptionsError' },
    );
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/'))
    throw Object.assign(new Error(`createHttpApi: basePath must start with '/', not '${basePath}'.`), {
      name: 'InvalidOptionsError',
    });
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  const openapi = openApiDocument(basePath, packageVersion());
  const context: HandlerContext = {
    engine: async () => engine,
    storage: () => options.storage ?? null,
    config: () => null,
    now: () => Date.now(),
    authoring: false,
    runtime: 'server',
  };
  const handlers = {
    ...workflowHandlers(context),
    ...scheduleHandlers(context),
    ...queueHandlers(context),
  } as Record<string, Handler<Method>>;
  const noPort: HostPort = { post: () => undefined, listen: () => () => undefined };
  /** One engine result waiter per run waited on, shared by every long poll of it (it ends with the run). */
  const waiters = new Map<string, Promise<void>>();

  async function waitForOutcome(
    workflowId: string,
    run: number | undefined,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const first = await engine.describe(workflowId, run === undefined ? {} : { run });
    if (isTerminal(first.status) || waitMs === 0) return outcomeOf(first);
    const key = JSON.stringify([workflowId, first.run]);
    let waiter = waiters.get(key);
    if (!waiter) {
      waiter = engine
        .handle(workflowId, { run: first.run })
        .result()
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => waiters.delete(key));
      waiters.set(key, waiter);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    await Promise.race([
      waiter,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
        onAbort = () => resolve();
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    return outcomeOf(await engine.describe(workflowId, { run: first.run }));
  }

  /** A workflow with no place in a queue (`GET /workflows/{id}/queue`): why, in words. */
  async function notQueued(workflowId: string): Promise<RequestRefused> {
    const description = await engine.describe(workflowId);
    return new RequestRefused(
      404,
      description.queue
        ? `Workflow '${workflowId}' went through queue '${description.queue.name}' and has ended (${description.status}): only a waiting or admitted workflow has a place in a queue. Its description keeps the queue it went through.`
        : `Workflow '${workflowId}' was not started onto a queue, so it has no place in one. Start it with options.queue, or give its definition a queue.`,
      'NotQueuedError',
    );
  }

  async function serve(request: ApiRequest): Promise<Reply> {
    if (request.method === 'GET' && (request.path === '/openapi.json' || request.path === '/openapi.json/'))
      return { status: 200, body: openapi };
    if (token !== null) {
      const header = request.header('authorization') ?? '';
      const given = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
      if (!given || !sameToken(given, token))
        return errorReply(
          401,
          'UnauthorizedError',
          given
            ? "The bearer token is not this API's: send the token `shuttle serve` printed (or the one the program was given)."
            : 'This API needs a token: send Authorization: Bearer <token> (`shuttle serve` prints it; SHUTTLE_TOKEN sets it).',
          { 'www-authenticate': 'Bearer' },
        );
    }
    let route: Route | undefined;
    try {
      const { at, params: pathValues } = matchRoute(request.method, request.path);
      route = at.route;
      const { params, extra } = gatherParams(at, pathValues, request);
      if (route.calls === 'result') {
        const waitMs = (extra.waitMs as number | undefined) ?? defaultWaitMs;
        const outcome = await waitForOutcome(
          params.workflowId as string,
          params.run as number | undefined,
          waitMs,
          request.signal,
        );
        return { status: 200, body: outcome };
      }
      const result = await handlers[route.calls]!(params as never, noPort);
      if (route.success.status === 204) return { status: 204 };
      if (route.calls === 'queuePosition' && result === null)
        throw await notQueued(params.workflowId as string);
      if (route.calls === 'start')
        return { status: (result as { started: boolean }).started ? 201 : 200, body: result };
      const body =
        route.shape === 'items'
          ? { items: result }
          : route.shape === 'result'
            ? { result: result ?? null }
            : result;
      return { status: route.success.status, body };
    } catch (error) {
      if (error instanceof RequestRefused)
        return errorReply(error.status, error.errorName, error.message, error.headers);
      const serialized = serializeError(error);
      const errorClass = classOfName(serialized.name);
      if (errorClass === 'internal')
        options.onInternalError?.(error, { method: request.method, path: request.path });
      return {
        status: statusOfClass[errorClass],
        body: {
          error: {
            name: serialized.name,
            message: serialized.message,
            ...(serialized.details ? { details: serialized.details } : {}),
          },
        },
      };
    }
  }

  /** The path under `basePath`, or null when the request is outside it. */
  const under = (pathname: string): string | null => {
    if (basePath === '') return pathname;
    if (pathname === basePath) return '/';
    return pathname.startsWith(`${basePath}/`) ? pathname.slice(basePath.length) : null;
  };

  const tooLarge = () =>
    errorReply(
      413,
      'PayloadTooLargeError',
      `The body is larger than ${maxBodyBytes} bytes; the API accepts at most that.`,
    );

  return {
    openapi,
    async handleNode(request, response, next) {
      const url = new URL(request.url ?? '/', 'http://api');
      const path = under(url.pathname);
      const send = (reply: Reply) => {
        if (response.headersSent || response.destroyed) return;
        const json = reply.body === undefined ? undefined : JSON.stringify(reply.body);
        response.writeHead(reply.status, {
          'cache-control': 'no-store',
          ...(json === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
          ...reply.headers,
        });
        response.end(json);
      };
      if (path === null) {
        if (next) return next();
        return send(errorReply(404, 'RouteNotFoundError', `${url.pathname} is not part of this API.`));
      }
      // A body a framework already read (Express's json parser) is taken as it parsed it.
      const parsed = (request as IncomingMessage & { body?: unknown }).body;
      let body: string;
      if (request.readableEnded && parsed !== undefined)
        body = typeof parsed === 'string' ? parsed : JSON.stringify(parsed);
      else {
        const declared = Number(request.headers['content-length'] ?? 0);
        if (declared > maxBodyBytes) {
          send(tooLarge());
          request.resume();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let overflow = false;
        for await (const chunk of request as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > maxBodyBytes) overflow = true;
          if (!overflow) chunks.push(chunk);
        }
        if (overflow) return send(tooLarge());
        body = Buffer.concat(chunks).toString('utf8');
      }
      const aborted = new AbortController();
      response.once('close', () => {
        if (!response.writableFinished) aborted.abort();
      });
      const header = (name: string) => {
        const value = request.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      };
      send(
        await serve({
          method: request.method ?? 'GET',
          path,
          query: url.searchParams,
          header,
          body,
          signal: aborted.signal,
        }),
      );
    },
    async handleFetch(request) {
      const url = new URL(request.url);
      const path = under(url.pathname);
      const toResponse = (reply: Reply) =>
        new Response(reply.body === undefined ? null : JSON.stringify(reply.body), {
          status: reply.status,
          headers: {
            'cache-control': 'no-store',
            ...(reply.body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
            ...reply.headers,
          },
        });
      if (path === null)
        return toResponse(errorReply(404, 'RouteNotFoundError', `${url.pathname} is not part of this API.`));
      if (Number(request.headers.get('content-length') ?? 0) > maxBodyBytes) return toResponse(tooLarge());
      const bytes = new Uint8Array(await request.arrayBuffer());
      if (bytes.length > maxBodyBytes) return toResponse(tooLarge());
      return toResponse(
        await serve({
          method: request.method,
          path,
          query: url.searchParams,
          header: (name) => request.headers.get(name) ?? undefined,
          body: new TextDecoder().decode(bytes),
          signal: request.signal,
        }),
      );
    },
  };
}
