/**
 * A driver for worker host tests: a host over MemoryStorage and in-memory liveness, wired to a
 * `ShuttleClient` through an in-process message channel that behaves like a worker's (asynchronous delivery,
 * structured cloning of every message), so tests speak the real protocol end to end without a browser.
 */
import { InMemoryLiveness, type AnyWorkflowDefinition } from '../engine';
import type { MemoryStorage } from '../storage';
import { createShuttleClient, type ShuttleClient, type WorkerLike } from './client';
import { serveEngineHost, type EngineHost, type EngineHostOptions } from './host';
import type { EngineMode, WorkerMessage } from './protocol';

type Listener = (event: MessageEvent<unknown>) => void;

/** A fake `Worker` for the page side, whose other end is a host port. */
export class FakeWorkerChannel {
  readonly #pageListeners = new Set<Listener>();
  readonly #errorListeners = new Set<(event: Event) => void>();
  readonly #hostListeners = new Set<(data: unknown) => void>();
  /** Every message the host sent, for assertions. */
  readonly sent: WorkerMessage[] = [];
  terminated = false;

  readonly worker: WorkerLike = {
    postMessage: (message: unknown) => {
      const copy = structuredClone(message);
      setTimeout(() => {
        if (!this.terminated) for (const listener of this.#hostListeners) listener(copy);
      }, 0);
    },
    addEventListener: ((type: 'message' | 'error', listener: Listener & ((event: Event) => void)) => {
      if (type === 'message') this.#pageListeners.add(listener);
      else this.#errorListeners.add(listener);
    }) as WorkerLike['addEventListener'],
    removeEventListener: ((type: 'message' | 'error', listener: Listener & ((event: Event) => void)) => {
      if (type === 'message') this.#pageListeners.delete(listener);
      else this.#errorListeners.delete(listener);
    }) as WorkerLike['removeEventListener'],
    terminate: () => {
      this.terminated = true;
    },
  };

  readonly port: EngineHostOptions['port'] = {
    post: (message) => {
      const copy = structuredClone(message);
      this.sent.push(copy);
      setTimeout(() => {
        if (this.terminated) return;
        for (const listener of this.#pageListeners) listener({ data: copy } as MessageEvent<unknown>);
      }, 0);
    },
    listen: (listener) => {
      this.#hostListeners.add(listener);
      return () => this.#hostListeners.delete(listener);
    },
  };

  /** Delivers a raw message to the host, as a page would post it. */
  postRaw(data: unknown): void {
    this.worker.postMessage(data);
  }

  /** Simulates the worker crashing: an `error` event on the page side, and silence afterwards. */
  crash(message: string): void {
    this.terminated = true;
    for (const listener of this.#errorListeners) listener({ type: 'error', message } as unknown as Event);
  }
}

export type TestTab = {
  channel: FakeWorkerChannel;
  host: EngineHost;
  client: ShuttleClient;
  close(): Promise<void>;
};

/** Opens a "tab": a host serving `storage`, and a client connected to it. */
export function openTestTab(options: {
  storage: MemoryStorage;
  liveness?: InMemoryLiveness;
  workflows: readonly AnyWorkflowDefinition[];
  mode?: EngineMode;
  databaseName?: string;
  host?: Partial<EngineHostOptions>;
}): TestTab {
  const channel = new FakeWorkerChannel();
  const host = serveEngineHost({
    port: channel.port,
    openStorage: async () => options.storage,
    workflows: options.workflows,
    liveness: options.liveness ?? new InMemoryLiveness(),
    heartbeatIntervalMs: 50,
    pushIntervalMs: 5,
    ...options.host,
  });
  const client = createShuttleClient(channel.worker, {
    databaseName: options.databaseName ?? 'test',
    mode: options.mode ?? 'engine',
  });
  return {
    channel,
    host,
    client,
    async close() {
      client.close();
      await host.dispose();
    },
  };
}

/** A store shared by test tabs; `close()` on a tab closes it, so give each tab a view that ignores close. */
export function sharedStorage(storage: MemoryStorage): MemoryStorage {
  return new Proxy(storage, {
    get(target, property, receiver) {
      if (property === 'close') return async () => undefined;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
