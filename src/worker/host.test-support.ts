/**
 * A driver for worker host tests: a host over MemoryStorage and in-memory liveness, wired to a
 * `ShuttleClient` through an in-process message channel that behaves like a worker's (asynchronous delivery,
 * structured cloning of every message), so tests speak the real protocol end to end without a browser.
 *
 * Tabs opened on one `FakeBroadcastHub` share a control channel, and their clients can restart their
 * worker. Terminating a fake worker kills its host the way a browser would: its engine's liveness hold is
 * gone and its storage refuses every further call, so its graceful shutdown (which stops its timers) lands
 * nothing.
 */
import { InMemoryLiveness, type AnyWorkflowDefinition } from '../engine';
import type { MemoryStorage } from '../storage';
import { createShuttleClient, type ShuttleClient, type WorkerLike } from '../client/client';
import type { BroadcastPort } from '../client/control-channel';
import {
  serveEngineHost,
  type EngineHost,
  type EngineHostOptions,
  type HostLiveness,
  type HostPort,
} from '../host/engine-host';
import type { EngineMode, WorkerMessage } from '../protocol';

type Listener = (event: MessageEvent<unknown>) => void;

/** A fake `Worker` for the page side, whose other end is a host port. */
export class FakeWorkerChannel {
  readonly #pageListeners = new Set<Listener>();
  readonly #errorListeners = new Set<(event: Event) => void>();
  readonly #hostListeners = new Set<(data: unknown) => void>();
  /** Every message the host sent, for assertions. */
  readonly sent: WorkerMessage[] = [];
  terminated = false;
  /** Called when the page terminates the worker. */
  onTerminate: (() => void) | null = null;

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
      if (this.terminated) return;
      this.terminated = true;
      this.onTerminate?.();
    },
  };

  readonly port: HostPort = {
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

/** One broadcast channel name shared by several tabs: delivers to every other port, asynchronously. */
export class FakeBroadcastHub {
  readonly #ports = new Set<Set<(event: MessageEvent<unknown>) => void>>();
  /** Every message posted, for assertions. */
  readonly posted: unknown[] = [];

  open(): BroadcastPort {
    const listeners = new Set<(event: MessageEvent<unknown>) => void>();
    this.#ports.add(listeners);
    return {
      postMessage: (message) => {
        const copy = structuredClone(message);
        this.posted.push(copy);
        for (const other of this.#ports)
          if (other !== listeners)
            setTimeout(() => {
              for (const listener of other) listener({ data: copy } as MessageEvent<unknown>);
            }, 0);
      },
      addEventListener: (_type, listener) => listeners.add(listener),
      removeEventListener: (_type, listener) => listeners.delete(listener),
      close: () => this.#ports.delete(listeners),
    };
  }
}

/** An in-memory liveness oracle that can also list live engines and count announced exits as deaths. */
export class ListingLiveness extends InMemoryLiveness implements HostLiveness {
  readonly #held = new Set<string>();

  override async hold(engineId: string): Promise<() => void> {
    const release = await super.hold(engineId);
    this.#held.add(engineId);
    return release;
  }

  async liveEngineIds(): Promise<ReadonlySet<string>> {
    return new Set([...this.#held].filter((engineId) => this.isAlive(engineId)));
  }

  markGone(engineId: string): void {
    this.kill(engineId);
  }
}

export type TestTab = {
  channel: FakeWorkerChannel;
  host: EngineHost;
  client: ShuttleClient;
  /** Every host this tab ran (a restart adds one); the last is the current one. */
  hosts: EngineHost[];
  close(): Promise<void>;
};

/** A view of `storage` that refuses every call once `kill` was called (a terminated worker's storage). */
function killableStorage(storage: MemoryStorage): { storage: MemoryStorage; kill(): void } {
  let killed = false;
  const view = new Proxy(storage, {
    get(target, property, receiver) {
      if (property === 'close') return async () => undefined;
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (killed) {
          if (property === 'watch') return () => undefined;
          return Promise.reject(new Error('the worker was terminated'));
        }
        return (value as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    storage: view,
    kill: () => {
      killed = true;
    },
  };
}

/** Opens a "tab": a host serving `storage`, and a client connected to it. */
export function openTestTab(options: {
  storage: MemoryStorage;
  liveness?: InMemoryLiveness;
  workflows: readonly AnyWorkflowDefinition[];
  mode?: EngineMode;
  databaseName?: string;
  host?: Partial<EngineHostOptions>;
  /** The tabs' shared control channel; without it the client has none. */
  hub?: FakeBroadcastHub;
}): TestTab {
  const liveness = options.liveness ?? new InMemoryLiveness();
  const hosts: EngineHost[] = [];
  const channels: FakeWorkerChannel[] = [];
  const spawn = (): WorkerLike => {
    const channel = new FakeWorkerChannel();
    const storage = killableStorage(options.storage);
    const host = serveEngineHost({
      port: channel.port,
      openStorage: async () => storage.storage,
      workflows: options.workflows,
      liveness,
      heartbeatIntervalMs: 50,
      pushIntervalMs: 5,
      ...options.host,
    });
    channel.onTerminate = () => {
      storage.kill();
      liveness.kill(host.engineId);
      void host.dispose(); // stops its timers; with its storage gone, nothing it does lands
    };
    hosts.push(host);
    channels.push(channel);
    return channel.worker;
  };
  const client = createShuttleClient(spawn(), {
    databaseName: options.databaseName ?? 'test',
    mode: options.mode ?? 'engine',
    spawnWorker: spawn,
    ...(options.hub ? { controlPort: options.hub.open(), controlAckTimeoutMs: 200 } : {}),
  });
  return {
    get channel() {
      return channels.at(-1)!;
    },
    get host() {
      return hosts.at(-1)!;
    },
    client,
    hosts,
    async close() {
      client.close();
      await Promise.all(hosts.map((host) => host.dispose()));
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
