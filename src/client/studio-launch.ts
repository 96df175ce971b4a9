/**
 * The studio's launch: reads its URL options, and connects the page to the studio server that served it or
 * to a new engine worker of this tab (src/worker/engine.worker.ts: the browser runtime with the studio's
 * built-ins, authoring and chaos tools). Apps use `connectBrowserEngine` (launch.ts) instead.
 *
 * - `?db=<name>` chooses the IndexedDB database (default `shuttle`), so tests and experiments never touch
 *   each other's data; `?engine=off` opens a viewer that observes without claiming any workflow.
 */
import { createShuttleClient, type ShuttleClient } from './client';
import { defaultDatabaseName, startEngineWorker, type LaunchOptions } from './launch';
import { connectToServer, isServedByServer, serverSocketUrl } from './server-connection';
import type { EngineMode, WorkerConfig } from '../protocol';

/** The studio's options from a URL query string (`location.search`). Invalid values fall back to defaults. */
export function readWorkerConfig(search: string): WorkerConfig {
  const query = new URLSearchParams(search);
  const db = query.get('db')?.trim() ?? '';
  const mode: EngineMode = query.get('engine') === 'off' ? 'viewer' : 'engine';
  return { databaseName: db.length > 0 && db.length <= 200 ? db : defaultDatabaseName, mode };
}

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
  return startEngineWorker(config, spawnWorker, options);
}
