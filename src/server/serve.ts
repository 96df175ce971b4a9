/**
 * `shuttle serve`: the studio for a server store. It serves the built studio over HTTP, the studio protocol
 * over a WebSocket, and the HTTP API for services under `/api/v1` (http-api/: bearer-token auth, OpenAPI at
 * `/api/v1/openapi.json`), from an observer engine on the store (it claims nothing; with `engines` it also
 * runs that many engines of its own), so a browser watches — and acts on — the workflows the workers run.
 *
 * Security is part of the feature:
 * - It listens on 127.0.0.1 unless told otherwise.
 * - It makes a random token at start and prints the URL that carries it. The first request with the token
 *   gets it as an HttpOnly, SameSite=Strict cookie (and is redirected to drop it from the address bar); every
 *   request and WebSocket handshake without a valid token is refused with 401, and one whose `Origin` is not
 *   the studio's own with 403 — before anything is served or upgraded.
 * - The browser cannot make the server run code: definitions come only from the operator's files; the
 *   studio shows those saved in the studio read-only and refuses to compile or save new ones.
 * - Messages are bounded (2 MiB, above the engine's payload limit): a bigger frame, one that is not JSON, or
 *   a binary one closes that socket with a reason (1009, 1007, 1003) and harms no other. Requests are validated as in a tab;
 *   a wrong protocol version or an unknown method is answered with an error and the socket stays open.
 */
import type { PayloadCodec } from '../engine';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { serveEngineHost, type EngineHost, type FleetControl, type HostPort } from '../host/engine-host';
import { allocateProcessIdentity } from '../host/presence';
import type { WorkerMessage } from '../protocol';
import { PollingDeathWatch } from '../host/death-watch';
import { loadDefinitions, serverQueues } from './definitions';
import { createHttpApi, sameToken } from './http-api/api';
import { builtInActivityLimits } from '../workflows';
import { createLogger, type Logger } from './log';
import { openStore, StartupError, type StoreOptions } from './store';
import { packageRoot, runningFromSource } from './package-root';
import { defaultWorkerTimings, startWorker, type RunningWorker } from './worker';
import { hostname } from 'node:os';

export type ServeOptions = StoreOptions & {
  /** Definition files the workers run (the studio needs them to start, query and update). */
  workflows?: readonly string[];
  demos?: boolean;
  /** Address to listen on. Default 127.0.0.1. */
  host?: string;
  /** Port to listen on; 0 picks a free one. Default 7300. */
  port?: number;
  /** Engines to run in this process besides the observer. Default 0. */
  engines?: number;
  /** The folder of the built studio. Default `dist` of the project (built on first use if missing). */
  studioDir?: string;
  /** The token of the studio and of the HTTP API (at least 16 characters); default a random one. */
  token?: string;
  /** The workers of a fleet this server controls (shuttle dev): kill, freeze, thaw, stop, start. */
  fleet?: FleetControl;
  logger?: Logger;
  /** The payload codec of an encoded store (`--codec`): the observer engine and the extra engines use it. */
  codec?: PayloadCodec;
};

export type RunningServer = {
  /** The URL to open, token included. */
  readonly url: string;
  /** The HTTP API's base URL (`<origin>/api/v1`); requests carry `Authorization: Bearer <token>`. */
  readonly apiUrl: string;
  readonly origin: string;
  readonly token: string;
  readonly port: number;
  readonly storeLabel: string;
  readonly host: EngineHost;
  stop(): Promise<void>;
};

/** Where the HTTP API is served (src/server/http-api). */
export const apiBasePath = '/api/v1';

/** The largest message a page may send, in bytes. */
export const maxMessageBytes = 2 * 1024 * 1024;

/**
 * The frame size at which the WebSocket library itself gives up, before buffering the payload. It closes
 * with 1009 but no reason, so the studio's own check (at `maxMessageBytes`, with a reason the page shows)
 * sits below it; frames past this are refused unread, reason-less.
 */
const hardFrameLimitBytes = 4 * maxMessageBytes;

const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const projectRoot = packageRoot;
/**
 * Where the studio is: built into `dist` on first use when running from this repository's source; shipped
 * built in `lib/studio` by the package (scripts/build-package.mjs).
 */
const defaultStudioDir = runningFromSource ? join(projectRoot, 'dist') : join(projectRoot, 'lib', 'studio');

/** Builds the studio into `dist` when it is not there yet (in this repository; the package ships it built). */
async function ensureStudio(studioDir: string, logger: Logger): Promise<void> {
  if (existsSync(join(studioDir, 'index.html'))) return;
  if (!existsSync(join(projectRoot, 'index.html')))
    throw new StartupError(
      `The studio is not in ${studioDir}, and this installation cannot build it: reinstall the shuttle package, or pass studioDir.`,
    );
  logger.info('building the studio (first run)', { dir: studioDir });
  const { build } = await import('vite');
  await build({ root: projectRoot, logLevel: 'warn', build: { outDir: studioDir, emptyOutDir: true } });
}

function cookieToken(request: IncomingMessage): string | undefined {
  const header = request.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === 'shuttle_token') return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const logger = options.logger ?? createLogger({ component: 'serve' });
  if (options.token !== undefined && options.token.length < 16)
    throw new StartupError(
      'The token (SHUTTLE_TOKEN) must be at least 16 characters; leave it unset for a random one.',
    );
  const studioDir = resolve(options.studioDir ?? defaultStudioDir);
  const definitions = await loadDefinitions(options.workflows ?? [], options.demos ?? false);
  // The studio starts workflows onto the modules' queues: its engine declares them, as the workers do.
  const queues = serverQueues(definitions);
  await ensureStudio(studioDir, logger);
  const store = await openStore(options);
  const liveness = store.liveness;
  const host = serveEngineHost({
    config: { databaseName: store.label, mode: 'viewer' },
    openStorage: async () => store.storage,
    storageOwner: 'caller',
    storeLabel: () => store.label,
    workflows: definitions.workflows,
    builtInInfo: definitions.info,
    runtime: { kind: 'server', hostName: hostname(), pid: process.pid },
    allocateIdentity: (storage, engineId) => allocateProcessIdentity(storage, engineId, 'studio server'),
    loadAuthoredDefinitions: false,
    allowFreeze: false,
    workflowClaimTtlMs: defaultWorkerTimings.claimTtlMs,
    workflowClaimRenewIntervalMs: defaultWorkerTimings.renewIntervalMs,
    ...(options.fleet ? { fleet: options.fleet } : {}),
    ...(liveness
      ? {
          liveness,
          deathWatch: (selfId: string, onDeath: (engineId: string) => void) =>
            new PollingDeathWatch({ liveEngineIds: () => liveness.liveEngineIds(), selfId, onDeath }),
        }
      : {}),
    ...(options.codec ? { codec: options.codec } : {}),
    ...(queues.length > 0 ? { queues } : {}),
    // With the demos, the demos' activity limits too: its engine runs no activity, but then the studio and
    // GET /activity-limits show their limits beside the slots the workers hold (not stored: see
    // src/host/activity-slots.ts).
    ...(options.demos ? { activityLimits: builtInActivityLimits } : {}),
    onWarning: (warning) => logger.warn(warning.message, { warning: warning.name }),
  });
  const engine = await host.engine();
  const extra: RunningWorker[] = [];
  for (let index = 0; index < (options.engines ?? 0); index++)
    extra.push(
      await startWorker({
        ...options,
        workflows: options.workflows ?? [],
        label: `serve-engine-${index + 1}`,
        store,
        logger,
      }),
    );

  const token = options.token ?? randomBytes(18).toString('base64url');
  const api = createHttpApi({
    engine,
    storage: store.storage,
    token,
    basePath: apiBasePath,
    onInternalError: (error, request) =>
      logger.warn('an HTTP API request failed', {
        method: request.method,
        path: request.path,
        error: error instanceof Error ? error.message : String(error),
      }),
  });
  const bindHost = options.host ?? '127.0.0.1';
  let origin = '';
  const indexHtml = readFileSync(join(studioDir, 'index.html'), 'utf8').replace(
    '<head>',
    '<head>\n    <meta name="shuttle-server" content="websocket" />',
  );

  /** Why a request must be refused (status and a sentence), or null when it may go on. */
  const refusal = (request: IncomingMessage, url: URL): { status: number; message: string } | null => {
    const requestOrigin = request.headers.origin;
    if (
      requestOrigin !== undefined &&
      requestOrigin !== origin &&
      !hostOrigins(request).includes(requestOrigin)
    )
      return {
        status: 403,
        message: `Refused: requests from ${requestOrigin} may not use this studio; only pages it serves itself may.`,
      };
    if (!sameToken(url.searchParams.get('token') ?? cookieToken(request), token))
      return {
        status: 401,
        message: 'This Shuttle studio needs its token: open the URL that `shuttle serve` printed.',
      };
    return null;
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://studio');
    // The HTTP API authenticates with a bearer token of its own (the same token): no cookie, so no page of
    // another site can make a browser call it.
    if (url.pathname === apiBasePath || url.pathname.startsWith(`${apiBasePath}/`)) {
      void api.handleNode(request, response);
      return;
    }
    const refused = refusal(request, url);
    if (refused) {
      response.writeHead(refused.status, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`${refused.message}\n`);
      return;
    }
    if (url.searchParams.has('token')) {
      // Keep the token in a cookie the page's own requests carry, not in its address bar. The page moves on
      // by itself rather than through a 302: a navigation that another site started (the studio of a tab,
      // "Connect to server…") stays cross-site through its redirects, so the browser would not send this
      // SameSite=Strict cookie on the redirected request, and the studio would answer 401. The page's own
      // navigation is same-site.
      url.searchParams.delete('token');
      const next = JSON.stringify(`${url.pathname}${url.search}`).replaceAll('<', '\\u003c');
      response.writeHead(200, {
        'set-cookie': `shuttle_token=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      response.end(
        `<!doctype html><html><head><meta charset="utf-8"><title>Shuttle studio</title></head><body><script>location.replace(${next});</script></body></html>\n`,
      );
      return;
    }
    serveStatic(studioDir, url.pathname, indexHtml, response);
  });

  const sockets = new WebSocketServer({ noServer: true, maxPayload: hardFrameLimitBytes });
  server.on('upgrade', (request, socket, head) => {
    const url = new URL(request.url ?? '/', 'http://studio');
    const refused = url.pathname === '/ws' ? refusal(request, url) : { status: 404, message: 'Not found' };
    if (refused) {
      socket.end(
        `HTTP/1.1 ${refused.status} ${refused.status === 401 ? 'Unauthorized' : refused.status === 403 ? 'Forbidden' : 'Not Found'}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${refused.message}\n`,
      );
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => connectSocket(ws, host, logger));
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new StartupError(
              `Port ${options.port ?? 7300} is in use; give another with --port (0 picks a free one).`,
            )
          : error,
      ),
    );
    server.listen(options.port ?? 7300, bindHost, () => resolveListen());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 7300);
  const shownHost = bindHost === '0.0.0.0' || bindHost === '::' ? '127.0.0.1' : bindHost;
  origin = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
  logger.info('studio serving', {
    url: origin,
    api: `${origin}${apiBasePath}`,
    store: store.label,
    workers: extra.length,
  });

  return {
    url: `${origin}/?token=${token}`,
    apiUrl: `${origin}${apiBasePath}`,
    origin,
    token,
    port,
    storeLabel: store.label,
    host,
    stop: async () => {
      for (const client of sockets.clients) client.close(1001, 'the server is stopping');
      sockets.close();
      server.closeAllConnections?.();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      await Promise.all(extra.map((worker) => worker.stop()));
      await host.shutdown().catch(() => undefined);
      await host.dispose().catch(() => undefined);
      await store.close().catch(() => undefined);
    },
  };
}

/**
 * The origins of the studio as this request reached it (its Host header): over plain HTTP, or over HTTPS
 * through a proxy that ends TLS in front of the server and passes the Host header on (a page the proxy
 * serves then says `https://` + that host). A foreign page cannot name this host as its own origin.
 */
function hostOrigins(request: IncomingMessage): string[] {
  const host = request.headers.host ?? '';
  return [`http://${host}`, `https://${host}`];
}

/** One page on a WebSocket: the same protocol a tab's worker speaks, one JSON message per frame. */
function connectSocket(ws: WebSocket, host: EngineHost, logger: Logger): void {
  let listener: ((data: unknown) => void) | null = null;
  const port: HostPort = {
    post: (message: WorkerMessage) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    },
    listen: (receive) => {
      listener = receive;
      return () => {
        listener = null;
      };
    },
  };
  const disconnect = host.connect(port);
  ws.on('message', (data, isBinary) => {
    if (isBinary) return ws.close(1003, 'Only text frames of JSON are accepted.');
    const bytes = Array.isArray(data)
      ? data.reduce((sum, part) => sum + part.length, 0)
      : data instanceof ArrayBuffer
        ? data.byteLength
        : data.length;
    if (bytes > maxMessageBytes)
      return ws.close(1009, `A message was larger than ${maxMessageBytes / (1024 * 1024)} MiB.`);
    let message: unknown;
    try {
      message = JSON.parse(data.toString());
    } catch {
      return ws.close(1007, 'A message was not JSON; the studio protocol sends one JSON object per frame.');
    }
    listener?.(message);
  });
  ws.on('close', () => disconnect());
  ws.on('error', (error) => {
    logger.warn('a studio connection failed', { error: error.message });
    disconnect();
  });
}

function serveStatic(root: string, pathname: string, indexHtml: string, response: ServerResponse): void {
  const decoded = (() => {
    try {
      return decodeURIComponent(pathname);
    } catch {
      return '/';
    }
  })();
  const file = normalize(join(root, decoded));
  const inside = file === root || file.startsWith(root + sep);
  const exists = inside && existsSync(file) && statSync(file).isFile();
  if (!exists || decoded === '/' || decoded.endsWith('/index.html')) {
    if (extname(decoded) && decoded !== '/index.html' && !exists) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('Not found.\n');
      return;
    }
    response.writeHead(200, { 'content-type': contentTypes['.html']!, 'cache-control': 'no-store' });
    response.end(indexHtml);
    return;
  }
  response.writeHead(200, {
    'content-type': contentTypes[extname(file)] ?? 'application/octet-stream',
    'cache-control': decoded.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  response.end(readFileSync(file));
}
