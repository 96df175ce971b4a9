/**
 * Starting a tab's engine worker from the page — the page side of the browser runtime, for any web app and
 * for the studio (src/ui/app/launch.ts): spawns the module worker, connects the client, and ties the engine's
 * life to the page's.
 *
 * Guarantees:
 * - Every tab that connects to the same database (`databaseName`, default `shuttle`) coordinates with the
 *   others; a viewer (`viewer: true`) observes and acts without claiming any workflow.
 * - When the page is hidden for good (`pagehide`: closed, reloaded, navigated away), the other tabs are told
 *   at once on the control channel (they count this engine dead and take its workflows over within tens of
 *   milliseconds), and the worker is asked to shut down gracefully. The browser usually kills the worker
 *   before that release lands; its Web Lock disappears with it, which the other tabs' death watches see too.
 *   A page restored from the back-forward cache reloads, since its engine has stopped.
 * - When the browser freezes the tab (`freeze`, Page Lifecycle API: a background tab; its worker is frozen
 *   too), the other tabs are told the same way at once and the worker is terminated, so a frozen tab holds
 *   neither claims nor its Web Lock nor an IndexedDB transaction. On `resume` the tab starts a fresh engine
 *   (a new engine id, as after a restart); the old one never writes again.
 * - The client gets the database's control channel (`shuttle-control:<database>`), so chaos actions reach the
 *   engines of other tabs, and a way to start a fresh worker, so the tab's engine can be restarted in place.
 */
import { createShuttleClient, type ShuttleClient } from './client';
import { connectToServer, serverSocketUrl } from './server-connection';
import { controlChannelName, type WorkerConfig } from '../protocol';

/** The database used when none is named. */
export const defaultDatabaseName = 'shuttle';

/** How the engine follows the page (options of `connectBrowserEngine` and the studio's launch). */
export type LaunchOptions = {
  /**
   * Shut the engine down on `pagehide`, hand over on `freeze` and start a fresh engine on `resume`, and
   * reload on a back-forward-cache restore. Default true.
   */
  followPageLifecycle?: boolean;
};

/** Options of `connectBrowserEngine`. */
export type BrowserEngineConnectOptions = LaunchOptions & {
  /**
   * Starts the app's engine worker: a dedicated module worker whose module calls `runBrowserEngine`. Called
   * again to replace the engine (a tab resumed after the browser froze it, `restartThisTab`).
   *
   * @example () => new Worker(new URL('./shuttle.worker.ts', import.meta.url), { type: 'module' })
   */
  worker: () => Worker;
  /**
   * The IndexedDB database the tabs share: every tab of the app that names the same database coordinates
   * with the others. Default `'shuttle'`; at most 200 characters.
   */
  databaseName?: string;
  /** Observe only: this tab's engine claims no workflow (it can still start, signal and read them). Default false. */
  viewer?: boolean;
};

/**
 * The page side of the browser runtime, for any web app: starts this tab's engine worker and returns its
 * client. Every tab of the app calls it; each runs an engine, and they share the workflows of one IndexedDB
 * database, each running on exactly one tab and moving to another when its tab closes, crashes or freezes.
 * By default the engine follows the page's lifecycle (see `LaunchOptions`).
 *
 * @example
 * const shuttle = connectBrowserEngine({
 *   worker: () => new Worker(new URL('./shuttle.worker.ts', import.meta.url), { type: 'module' }),
 * });
 * const { workflowId } = await shuttle.api.start({ workflowType: 'checkout', input: { cart: 42 } });
 * const outcome = await shuttle.api.result({ workflowId });
 */
export function connectBrowserEngine(options: BrowserEngineConnectOptions): ShuttleClient {
  if (typeof options?.worker !== 'function')
    throw new TypeError(
      "connectBrowserEngine needs { worker: () => new Worker(new URL('./shuttle.worker.ts', import.meta.url), { type: 'module' }) }: a function that starts the worker module calling runBrowserEngine.",
    );
  const databaseName = options.databaseName ?? defaultDatabaseName;
  if (typeof databaseName !== 'string' || databaseName.trim() === '' || databaseName.length > 200)
    throw new TypeError(
      `connectBrowserEngine's databaseName must be a non-empty string of at most 200 characters; got ${JSON.stringify(databaseName)}.`,
    );
  const config: WorkerConfig = { databaseName, mode: options.viewer === true ? 'viewer' : 'engine' };
  return startEngineWorker(config, options.worker, options);
}

/** Starts an engine worker for `config` with `spawnWorker` and returns its connected client. */
export function startEngineWorker(
  config: WorkerConfig,
  spawnWorker: () => Worker,
  options: LaunchOptions,
): ShuttleClient {
  const client = createShuttleClient(spawnWorker(), {
    ...config,
    spawnWorker,
    ...(typeof BroadcastChannel === 'undefined'
      ? {}
      : { controlPort: new BroadcastChannel(controlChannelName(config.databaseName)) }),
  });
  if (options.followPageLifecycle ?? true) {
    addEventListener('pagehide', () => client.exitTab());
    // Page Lifecycle: a background tab about to be frozen hands its workflows over now, and rejoins with a
    // fresh engine when it resumes (see `freezeTab` and `resumeTab`).
    document.addEventListener('freeze', () => client.freezeTab());
    document.addEventListener('resume', () => void client.resumeTab().catch(() => undefined));
    addEventListener('pageshow', (event) => {
      if (event.persisted) location.reload();
    });
  }
  return client;
}

/**
 * A client for a Shuttle server (`shuttle serve`) over its WebSocket: the same client a tab's engine gives,
 * acting on the server's engines (the page runs none of its own). `url` is the server's socket,
 * `ws(s)://host:port/ws`; by default, the server that served this page. The server accepts pages of its own
 * origin (it served them, or a proxy in front of it did) carrying its token.
 *
 * @example
 * const shuttle = connectShuttleServer(); // in a page served by `shuttle serve`
 * const page = await shuttle.api.list({ status: 'failed' });
 */
export function connectShuttleServer(url?: string): ShuttleClient {
  const socketUrl = url ?? serverSocketUrl(location);
  let protocol: string;
  try {
    protocol = new URL(socketUrl).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'ws:' && protocol !== 'wss:')
    throw new TypeError(
      `connectShuttleServer needs the server's WebSocket address (ws://host:port/ws or wss://…); got ${JSON.stringify(socketUrl)}.`,
    );
  return createShuttleClient(connectToServer(socketUrl), {
    databaseName: 'server',
    mode: 'viewer',
    server: true,
  });
}
