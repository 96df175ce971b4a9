/**
 * The entry of a tab's engine worker (a dedicated module worker). It wires the real environment into the
 * host: the page's `postMessage` channel, IndexedDB storage, Web Locks liveness and death watch, the
 * built-in workflows with their sources, and the compile sandbox (a nested worker that checks authored sources
 * before this worker evaluates them).
 * Everything else lives in src/host/engine-host.ts, which Node tests drive directly.
 *
 * Errors nobody caught inside the worker are reported to the page as warnings and marked handled, so they
 * never surface as a worker `error` event (which the page treats as a crash).
 */
import { IndexedDbStorage } from '../storage';
import { builtInWorkflows } from '../workflows';
import { builtInInfo } from './built-ins';
import { CompileSandbox, type SandboxWorker } from '../host/authoring/compile-sandbox';
import { DeathWatch } from './death-watch';
import { serveEngineHost } from '../host/engine-host';
import type { WorkerMessage } from '../protocol';
import { WebLocksLiveness, type LockManagerLike } from './web-locks-liveness';

/** The parts of `DedicatedWorkerGlobalScope` used here (the project's DOM typings describe a window). */
type WorkerScope = {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
  addEventListener(type: 'error', listener: (event: ErrorEvent) => void): void;
  addEventListener(type: 'unhandledrejection', listener: (event: PromiseRejectionEvent) => void): void;
  removeEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
};

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
    const storage = new IndexedDbStorage({ databaseName, onUnavailable });
    try {
      await storage.open();
    } catch (error) {
      await storage.close();
      throw error;
    }
    return storage;
  },
  workflows: builtInWorkflows,
  builtInInfo,
  ...(typeof Worker === 'undefined'
    ? {}
    : {
        compileSandbox: new CompileSandbox({
          spawn: () =>
            new Worker(new URL('./compile.worker.ts', import.meta.url), {
              type: 'module',
              name: 'shuttle compile sandbox',
            }) as unknown as SandboxWorker,
        }),
      }),
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
