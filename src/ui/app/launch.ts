/**
 * The studio's launch, on the public browser runtime (`shuttle/browser`): reads its URL options, and connects
 * the page to the studio server that served it (`connectShuttleServer`) or to a new engine worker of this tab
 * (`connectBrowserEngine` with the studio's worker, src/worker/engine.worker.ts: the browser runtime with the
 * built-in demos, the editor's definitions and the chaos tools' freeze).
 *
 * - `?db=<name>` chooses the IndexedDB database (default `shuttle`), so tests and experiments never touch
 *   each other's data; `?engine=off` opens a viewer that observes without claiming any workflow.
 */
import {
  connectBrowserEngine,
  connectShuttleServer,
  defaultDatabaseName,
  type LaunchOptions,
  type ShuttleClient,
} from '../../public/browser';

/** The studio's options from a URL query string. Invalid values fall back to the defaults. */
export type StudioConfig = { databaseName: string; viewer: boolean };

/** The studio's options from a URL query string (`location.search`). Invalid values fall back to defaults. */
export function readStudioConfig(search: string): StudioConfig {
  const query = new URLSearchParams(search);
  const db = query.get('db')?.trim() ?? '';
  return {
    databaseName: db.length > 0 && db.length <= 200 ? db : defaultDatabaseName,
    viewer: query.get('engine') === 'off',
  };
}

/** Whether this page was served by a studio server (`shuttle serve` says so in a meta tag). */
export function isServedByServer(doc: Pick<Document, 'querySelector'>): boolean {
  return doc.querySelector('meta[name="shuttle-server"]') !== null;
}

/**
 * The studio's client for this page: connected to the studio server that served it (the page then runs no
 * engine of its own), otherwise to a new engine worker of this tab.
 */
export function launchStudioClient(search: string, options: LaunchOptions = {}): ShuttleClient {
  if (typeof document !== 'undefined' && isServedByServer(document)) return connectShuttleServer();
  return launchEngineWorker(readStudioConfig(search), options);
}

/** Spawns this tab's studio engine worker for `config` and returns its connected client. */
export function launchEngineWorker(config: StudioConfig, options: LaunchOptions = {}): ShuttleClient {
  return connectBrowserEngine({
    ...options,
    databaseName: config.databaseName,
    viewer: config.viewer,
    worker: () =>
      new Worker(new URL('../../worker/engine.worker.ts', import.meta.url), {
        type: 'module',
        name: `shuttle engine (${config.databaseName}${config.viewer ? ', viewer' : ''})`,
      }),
  });
}
