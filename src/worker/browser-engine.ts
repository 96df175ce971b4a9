/**
 * The browser runtime's worker side, for any web app (and for the studio): one call, made in a dedicated
 * module worker the app's bundler builds, runs a tab's engine there — IndexedDB storage, Web Locks liveness
 * and death watch, cross-tab handoff — behind the same host and protocol the studio's tabs use. The page
 * talks to it with `connectBrowserEngine` (src/client/launch.ts).
 *
 * Guarantees:
 * - Every tab of one database (`databaseName`, chosen by the page) runs one engine; each workflow runs on
 *   exactly one of them at a time (per-workflow claims fenced by epochs). When a tab closes, crashes or is
 *   frozen, the others take its workflows over (tens of milliseconds when the tab announced it, a renew
 *   interval after a crash, which its Web Lock reveals).
 * - The worker registers the app's `workflows` only: nothing authored elsewhere is ever evaluated here
 *   (only the studio's worker, through `serveBrowserEngine`, loads definitions written in its editor).
 * - Errors nobody caught inside the worker reach the page as warnings and are marked handled, so they never
 *   surface as a worker `error` event (which the page treats as a crash).
 */
import type { AnyWorkflowDefinition, EngineOptions } from '../engine';
import { IndexedDbStorage, type IndexedDbDurability } from '../storage';
import type { BuiltInInfo } from '../host/authoring/definition-store';
import type { CompileSandbox } from '../host/authoring/compile-sandbox';
import { serveEngineHost, type EngineHost } from '../host/engine-host';
import type { WorkerMessage } from '../protocol';
import { DeathWatch } from './death-watch';
import { WebLocksLiveness, type LockManagerLike } from './web-locks-liveness';

/** Options of `runBrowserEngine`. */
export type BrowserEngineOptions = {
  /** The workflow definitions this app runs. Every tab of the app must register the same ones. */
  workflows: readonly AnyWorkflowDefinition[];
  /**
   * The workflow queues this app starts onto (`EngineOptions.queues`: `defineQueue(name, options)` results,
   * or name → options). Every tab must declare the same ones. Default: none.
   */
  queues?: EngineOptions['queues'];
  /**
   * Activity concurrency limits (`EngineOptions.activityLimits`: group → `{ concurrency?, perEngine? }`).
   * Every tab must declare the same ones. Default: none.
   */
  activityLimits?: EngineOptions['activityLimits'];
  /**
   * IndexedDB's durability for the engine's commits: `'default'` (the browser's: Chromium's is relaxed,
   * which survives a tab or browser crash but not an operating system crash), `'relaxed'` or `'strict'`
   * (flushed to disk before a commit is acknowledged). Default `'default'`.
   */
  durability?: IndexedDbDurability;
  /** Claim TTL in ms: how long a silent tab keeps its workflows when its death is not seen. Default 6,000. */
  claimTtlMs?: number;
  /** Claim renewal interval in ms. Default 1,000. */
  renewIntervalMs?: number;
  /** How long a finished run is kept, in ms after it ended, for types that set no `retentionMs`. Default: forever. */
  retentionMs?: number;
  /**
   * Maps a recorded failure's stack, once, when it is recorded: browsers apply no source map to
   * `error.stack`, so frames of workflows bundled into this worker name the bundle's URL and line; a mapper
   * can rewrite them (e.g. through the bundle's source map, loaded before the engine starts). A mapper that
   * throws leaves the stack as it was. Default: none.
   */
  mapStack?: (stack: string) => string;
};

/** What the studio's worker adds (engine.worker.ts); an app's worker has none of it. */
export type StudioEngineOptions = {
  /** Run definitions saved in the studio's editor. */
  loadAuthoredDefinitions: boolean;
  /** The built-ins' sources shown by its editor. */
  builtInInfo: ReadonlyMap<string, BuiltInInfo>;
  /** Where authored sources are compiled. */
  compileSandbox?: Pick<CompileSandbox, 'check' | 'dispose'>;
  /** Its chaos tools may freeze this worker's event loop. */
  allowFreeze: boolean;
};

/** The parts of `DedicatedWorkerGlobalScope` used here (the project's DOM typings describe a window). */
type WorkerScope = {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
  addEventListener(type: 'error', listener: (event: ErrorEvent) => void): void;
  addEventListener(type: 'unhandledrejection', listener: (event: PromiseRejectionEvent) => void): void;
  removeEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
};

/**
 * Runs this tab's engine in the current dedicated worker. Call it once, at the top level of the worker
 * module the page starts with `connectBrowserEngine`.
 *
 * @example
 * // shuttle.worker.ts — built by the app's bundler (Vite, webpack 5, esbuild…)
 * import { runBrowserEngine } from 'shuttle/browser-worker';
 * import { checkout } from './workflows/checkout';
 * runBrowserEngine({ workflows: [checkout] });
 */
export function runBrowserEngine(options: BrowserEngineOptions): EngineHost {
  return serveBrowserEngine(options, null);
}

/** `runBrowserEngine`, with what the studio adds when `studio` is given (src/worker/engine.worker.ts). */
export function serveBrowserEngine(
  options: BrowserEngineOptions,
  studio: StudioEngineOptions | null,
): EngineHost {
  if (typeof self === 'undefined' || typeof (self as { postMessage?: unknown }).postMessage !== 'function')
    throw new TypeError(
      'runBrowserEngine must run inside a dedicated Web Worker: start the worker module that calls it with connectBrowserEngine({ worker: () => new Worker(new URL("./shuttle.worker.ts", import.meta.url), { type: "module" }) }) on the page.',
    );
  if (!Array.isArray(options?.workflows))
    throw new TypeError(
      'runBrowserEngine needs { workflows: [...] }: the definitions (defineWorkflow) this app runs.',
    );
  const scope = self as unknown as WorkerScope;
  const host = serveEngineHost({
    port: {
      post: (message: WorkerMessage) => scope.postMessage(message),
      listen: (listener) => {
        const onMessage = (event: MessageEvent<unknown>) => listener(event.data);
        scope.addEventListener('message', onMessage);
        return () => scope.removeEventListener('message', onMessage);
      },
    },
    openStorage: async (databaseName, onUnavailable) => {
      const storage = new IndexedDbStorage({
        databaseName,
        onUnavailable,
        ...(options.durability === undefined ? {} : { durability: options.durability }),
      });
      try {
        await storage.open();
      } catch (error) {
        await storage.close();
        throw error;
      }
      return storage;
    },
    workflows: options.workflows,
    ...(options.queues === undefined ? {} : { queues: options.queues }),
    ...(options.activityLimits === undefined ? {} : { activityLimits: options.activityLimits }),
    loadAuthoredDefinitions: studio?.loadAuthoredDefinitions ?? false,
    allowFreeze: studio?.allowFreeze ?? false,
    ...(studio === null ? {} : { builtInInfo: studio.builtInInfo }),
    ...(studio?.compileSandbox === undefined ? {} : { compileSandbox: studio.compileSandbox }),
    ...(options.claimTtlMs === undefined ? {} : { workflowClaimTtlMs: options.claimTtlMs }),
    ...(options.renewIntervalMs === undefined
      ? {}
      : { workflowClaimRenewIntervalMs: options.renewIntervalMs }),
    ...(options.retentionMs === undefined ? {} : { retentionMs: options.retentionMs }),
    ...(options.mapStack === undefined ? {} : { mapStack: options.mapStack }),
    ...(WebLocksLiveness.isSupported()
      ? {
          liveness: new WebLocksLiveness(),
          deathWatch: (selfId: string, onDeath: (engineId: string) => void) =>
            new DeathWatch({
              locks: (navigator as unknown as { locks: LockManagerLike }).locks,
              selfId,
              onDeath,
            }),
        }
      : {}),
  });
  scope.addEventListener('error', (event) => {
    host.reportUncaught(event.error ?? event.message);
    event.preventDefault();
  });
  scope.addEventListener('unhandledrejection', (event) => {
    host.reportUncaught(event.reason);
    event.preventDefault();
  });
  return host;
}
