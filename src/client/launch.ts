/**
 * Starting a tab's engine worker from the page: reads the studio's URL options, spawns the module worker,
 * connects the client, and ties the engine's life to the page's.
 *
 * Guarantees:
 * - `?db=<name>` chooses the IndexedDB database (default `shuttle`), so tests and experiments never touch
 *   each other's data; `?engine=off` opens a viewer that observes without claiming any workflow.
 * - When the page is hidden for good (`pagehide`: closed, reloaded, navigated away), the other tabs are told
 *   at once on the control channel (they count this engine dead and take its workflows over within tens of
 *   milliseconds), and the worker is asked to shut down gracefully. The browser usually kills the worker
 *   before that release lands; its Web Lock disappears with it, which the other tabs' death watches see too. A page restored from the back-forward cache
 *   reloads, since its engine has stopped.
 * - When the browser freezes the tab (`freeze`, Page Lifecycle API: a background tab; its worker is frozen
 *   too), the other tabs are told the same way at once and the worker is terminated, so a frozen tab holds
 *   neither claims nor its Web Lock nor an IndexedDB transaction. On `resume` the tab starts a fresh engine
 *   (a new engine id, as after a restart); the old one never writes again.
 * - The client gets the database's control channel (`shuttle-control:<database>`), so chaos actions reach the
 *   engines of other tabs, and a way to start a fresh worker, so the tab's engine can be restarted in place.
 */
import { createShuttleClient, type ShuttleClient } from './client';
import { connectToServer, isServedByServer, serverSocketUrl } from './server-connection';
import { controlChannelName, type EngineMode, type WorkerConfig } from '../protocol';

/** The database used when the URL names none. */
export const defaultDatabaseName = 'shuttle';

/** The studio's options from a URL query string (`location.search`). Invalid values fall back to defaults. */
export function readWorkerConfig(search: string): WorkerConfig {
  const query = new URLSearchParams(search);
  const db = query.get('db')?.trim() ?? '';
  const mode: EngineMode = query.get('engine') === 'off' ? 'viewer' : 'engine';
  return { databaseName: db.length > 0 && db.length <= 200 ? db : defaultDatabaseName, mode };
}

/** Options of `launchEngineWorker`. */
export type LaunchOptions = {
  /**
   * Shut the engine down on `pagehide`, hand over on `freeze` and start a fresh engine on `resume`, and
   * reload on a back-forward-cache restore. Default true.
   */
  followPageLifecycle?: boolean;
};

/**
 * The studio's client for this page: connected to the studio server that served it (`shuttle serve`: the
 * page then runs no engine of its own), otherwise to a new engine worker of this tab.
 *
 * @example
 * const client = launchStudioClient(location.search);
 */
export function launchStudioClient(search: string, options: LaunchOptions = {}): ShuttleClient {
  if (typeof document !== 'undefined' && isServedByServer(document))
    return createShuttleClient(connectToServer(serverSocketUrl(location)), {
      databaseName: 'server',
      mode: 'viewer',
      server: true,
    });
  return launchEngineWorker(readWorkerConfig(search), options);
}

/**
 * Spawns this tab's engine worker for `config` and returns its connected client.
 *
 * @example
 * const client = launchEngineWorker(readWorkerConfig(location.search));
 */
export function launchEngineWorker(config: WorkerConfig, options: LaunchOptions = {}): ShuttleClient {
  const spawnWorker = () =>
    new Worker(new URL('../worker/engine.worker.ts', import.meta.url), {
      type: 'module',
      name: `shuttle engine (${config.databaseName}${config.mode === 'viewer' ? ', viewer' : ''})`,
    });
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
