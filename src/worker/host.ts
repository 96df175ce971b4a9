/**
 * The worker host: everything one tab's engine worker does, behind a port, so it runs the same in the real
 * worker (engine.worker.ts) and in Node tests (over MemoryStorage and a fake port).
 *
 * Guarantees:
 * - Every message from the page is validated with `parseRequest`; a malformed one is answered with an error
 *   when it carries an id, reported as a warning when it does not, and never throws out of the host.
 * - Every request gets exactly one response. Errors cross as `SerializedError` (`name`, `message`,
 *   `details`); a value that cannot be cloned is answered with an error instead of being lost.
 * - The first `hello` names the database and the mode; the host then opens the storage, takes a label and
 *   colour, writes its presence record, and creates the engine (`workflow-lease`, claim TTL 6 s, renewal
 *   1 s, Web Locks liveness, the built-in workflows). `hello` answers once the identity is known, without
 *   waiting for recovery; requests that need the engine wait for it.
 * - Viewer mode creates an observer engine (`claimWorkflows: false`, `recover: false`): it reads, signals
 *   and starts workflows that other tabs run, and never claims one.
 * - Failures of the worker itself (the database blocked, deleted or full, the engine refusing to start)
 *   become a `failed` status with a readable message, pushed to the page, never a silent death.
 * - Engine events and store change notices are pushed in batches, at most one of each per `pushIntervalMs`;
 *   a heartbeat is pushed and the presence record refreshed every `heartbeatIntervalMs`.
 * - `shutdown` stops the engine gracefully: every claim is released (other tabs take over at once) and the
 *   presence record says `stopped`.
 */
import {
  createEngine,
  serializeError,
  type AnyWorkflowDefinition,
  type Engine,
  type EngineEvent,
  type EngineLiveness,
  type SerializedError,
  type ShutdownReport,
} from '../engine';
import type { Storage } from '../storage';
import { PresenceWriter, allocateEngineIdentity, readPresence, type EngineIdentity } from './presence';
import {
  PROTOCOL_VERSION,
  isProtocolError,
  parseRequest,
  type DefinitionInfo,
  type EngineRecord,
  type HelloResult,
  type HostState,
  type HostStatus,
  type HostWarning,
  type Params,
  type RequestMessage,
  type Result,
  type WorkerConfig,
  type WorkerMessage,
} from './protocol';
import { StoreChangeCoalescer } from './store-changes';

/** How the host talks to its page. */
export type HostPort = {
  /** Sends one message to the page. May throw (e.g. `DataCloneError`); the host handles that. */
  post(message: WorkerMessage): void;
  /** Calls `listener` with every message from the page; returns the function that stops listening. */
  listen(listener: (data: unknown) => void): () => void;
};

/** A liveness oracle that can also list every live engine at once (`WebLocksLiveness` can). */
export type HostLiveness = EngineLiveness & { liveEngineIds?(): Promise<ReadonlySet<string> | null> };

/** Options of `serveEngineHost`. */
export type EngineHostOptions = {
  port: HostPort;
  /**
   * Opens the storage of a database. Called once, on the first `hello`. `onUnavailable` must be called if
   * the database becomes unusable later (deleted or upgraded in another tab, closed by the browser).
   */
  openStorage(databaseName: string, onUnavailable: (error: Error) => void): Promise<Storage>;
  /** The definitions every engine registers (the built-in demos). */
  workflows: readonly AnyWorkflowDefinition[];
  /** Liveness oracle (Web Locks in the browser). Default: none (claims then expire by TTL only). */
  liveness?: HostLiveness;
  /** Claim TTL, in ms. Default 6,000. */
  workflowClaimTtlMs?: number;
  /** Claim renewal interval, in ms. Default 1,000. */
  workflowClaimRenewIntervalMs?: number;
  /** How often the presence record is refreshed and a heartbeat pushed, in ms. Default 1,000. */
  heartbeatIntervalMs?: number;
  /** Shortest interval between two pushes of events or store changes, in ms. Default 16. */
  pushIntervalMs?: number;
  /** Current time in epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Mints this engine's id. Default `crypto.randomUUID`. */
  randomUUID?: () => string;
};

/** A running host. */
export type EngineHost = {
  readonly engineId: string;
  /** Reports an error nobody caught inside the worker to the page, as a warning. */
  reportUncaught(error: unknown): void;
  /** Shuts the engine down (if it started), stops every timer, closes the storage and stops listening. */
  dispose(): Promise<void>;
};

/** Which host states may follow which: the whole lifecycle in one table. */
const nextStates: Readonly<Record<HostState, readonly HostState[]>> = {
  starting: ['running', 'stopping', 'failed'],
  running: ['frozen', 'stopping', 'failed'],
  frozen: ['running', 'stopping', 'failed'],
  stopping: ['stopped', 'failed'],
  stopped: [],
  failed: [],
};

type Started = { storage: Storage; identity: EngineIdentity; presence: PresenceWriter };

const placeholderIdentity: EngineIdentity = {
  ordinal: -1,
  label: 'Tab ?',
  shortLabel: '?',
  color: '#767676',
};

/**
 * Serves the studio protocol on `port`.
 *
 * @example
 * serveEngineHost({
 *   port: { post: (message) => self.postMessage(message), listen: (listener) => … },
 *   openStorage: async (databaseName, onUnavailable) => new IndexedDbStorage({ databaseName, onUnavailable }),
 *   workflows: builtInWorkflows,
 *   liveness: new WebLocksLiveness(),
 * });
 */
export function serveEngineHost(options: EngineHostOptions): EngineHost {
  return new Host(options);
}

class Host implements EngineHost {
  readonly engineId: string;
  readonly #options: EngineHostOptions;
  readonly #now: () => number;
  readonly #stopListening: () => void;
  readonly #heartbeat: ReturnType<typeof setInterval>;
  #status: HostStatus;
  #config: WorkerConfig | null = null;
  /** Storage, identity and presence: settles before `hello` answers. */
  #started: Promise<Started | null> | null = null;
  #identity: EngineIdentity = placeholderIdentity;
  #presence: PresenceWriter | null = null;
  #storage: Storage | null = null;
  #engine: Promise<Engine> | null = null;
  #engineNow: Engine | null = null;
  #unsubscribe: (() => void)[] = [];
  #shutdown: Promise<ShutdownReport> | null = null;
  #events: EngineEvent[] = [];
  readonly #changes = new StoreChangeCoalescer();
  #pushTimer: ReturnType<typeof setTimeout> | null = null;
  #lastPushAt = 0;
  #lastPresenceError = '';
  #disposed = false;

  constructor(options: EngineHostOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.engineId = (options.randomUUID ?? (() => crypto.randomUUID()))();
    this.#status = { state: 'starting', since: this.#now() };
    this.#stopListening = options.port.listen((data) => void this.#receive(data));
    this.#heartbeat = setInterval(() => this.#beat(), options.heartbeatIntervalMs ?? 1_000);
  }

  // -------------------------------------------------------------------------------------------------------
  // Messages

  async #receive(data: unknown): Promise<void> {
    const request = parseRequest(data);
    if (isProtocolError(request)) {
      if (request.id !== null) this.#respond(request.id, { ok: false, error: request.error });
      else this.#warn({ name: 'ProtocolWarning', message: `Ignored a message: ${request.error.message}` });
      return;
    }
    try {
      const value = await this.#serve(request);
      this.#respond(request.id, { ok: true, value });
    } catch (error) {
      this.#respond(request.id, { ok: false, error: serializeError(error) });
    }
  }

  #respond(id: number, outcome: { ok: true; value: unknown } | { ok: false; error: SerializedError }): void {
    const message: WorkerMessage = { kind: 'response', v: PROTOCOL_VERSION, id, ...outcome };
    try {
      this.#options.port.post(message);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.#options.port.post({
        kind: 'response',
        v: PROTOCOL_VERSION,
        id,
        ok: false,
        error: {
          name: 'DataCloneError',
          message: `The worker could not send this reply to the page (${reason}). Results must be plain data.`,
        },
      });
    }
  }

  #push(message: WorkerMessage): void {
    if (this.#disposed) return;
    try {
      this.#options.port.post(message);
    } catch (error) {
      console.error('[shuttle worker] could not push a message to the page', error);
    }
  }

  async #serve(request: RequestMessage): Promise<unknown> {
    if (request.method === 'hello') return this.#hello(request.params);
    if (request.method === 'engines') return this.#engines();
    if (request.method === 'shutdown') return this.#shutdownOnce();
    const engine = await this.#requireEngine();
    switch (request.method) {
      case 'start': {
        const { workflowType, input, options } = request.params;
        const handle = await engine.start(workflowType, input, options ?? {});
        return { workflowId: handle.workflowId } satisfies Result<'start'>;
      }
      case 'signal': {
        const { workflowId, name, payload } = request.params;
        await engine.signal(workflowId, name, payload);
        return null;
      }
      case 'query': {
        const { workflowId, name, arg } = request.params;
        return (await engine.query(workflowId, name, arg)) ?? null;
      }
      case 'update': {
        const { workflowId, name, arg, timeoutMs } = request.params;
        return (
          (await engine.update(workflowId, name, arg, timeoutMs === undefined ? {} : { timeoutMs })) ?? null
        );
      }
      case 'cancel':
        await engine.cancel(request.params.workflowId, request.params.reason);
        return null;
      case 'terminate':
        await engine.terminate(request.params.workflowId, request.params.reason);
        return null;
      case 'suspend':
        await engine.suspend(request.params.workflowId);
        return null;
      case 'resume':
        await engine.resume(request.params.workflowId);
        return null;
      case 'result':
        return (await engine.handle(request.params.workflowId).result()) ?? null;
      case 'describe':
        return engine.describe(request.params.workflowId);
      case 'list':
        return engine.list(request.params.filter ?? {});
      case 'timeline': {
        const { workflowId, after, limit } = request.params;
        return engine.timeline(workflowId, {
          ...(after === undefined ? {} : { after }),
          ...(limit === undefined ? {} : { limit }),
        });
      }
      case 'claims':
        return engine.claims();
      case 'fenceRejections':
        return engine.fenceRejections(request.params.workflowId);
      case 'resultWaiters':
        return engine.resultWaiters();
      case 'metrics':
        return engine.metrics();
      case 'definitions':
        return engine.definitions().map((definition): DefinitionInfo => ({
          name: definition.name,
          version: definition.version,
          description: definition.description ?? null,
          sampleInput: definition.sampleInput ?? null,
          queries: Object.keys(definition.queries ?? {}),
          updates: Object.keys(definition.updates ?? {}),
        }));
      case 'ownedWorkflows':
        return engine.ownedWorkflows();
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Start-up

  async #hello(params: Params<'hello'>): Promise<HelloResult> {
    const config: WorkerConfig = { databaseName: params.databaseName, mode: params.mode };
    if (params.protocolVersion !== PROTOCOL_VERSION)
      throw Object.assign(
        new Error(
          `This tab's page speaks studio protocol version ${params.protocolVersion}, but its worker speaks ${PROTOCOL_VERSION}. Reload the tab.`,
        ),
        { name: 'ProtocolVersionMismatchError' },
      );
    if (config.databaseName.length === 0 || config.databaseName.length > 200)
      throw protocolMisuse('The database name must have 1 to 200 characters.');
    if (!this.#config) {
      this.#config = config;
      this.#started = this.#start(config);
    } else if (this.#config.databaseName !== config.databaseName || this.#config.mode !== config.mode)
      throw protocolMisuse(
        `This worker already serves database '${this.#config.databaseName}' in ${this.#config.mode} mode; a worker serves one database for its life. Open a new tab for '${config.databaseName}'.`,
      );
    await this.#started;
    return {
      protocolVersion: PROTOCOL_VERSION,
      engineId: this.engineId,
      label: this.#identity.label,
      shortLabel: this.#identity.shortLabel,
      color: this.#identity.color,
      mode: this.#config.mode,
      databaseName: this.#config.databaseName,
      status: this.#status,
    };
  }

  /** Opens storage and takes an identity; then starts the engine in the background. */
  async #start(config: WorkerConfig): Promise<Started | null> {
    let storage: Storage;
    try {
      storage = await this.#options.openStorage(config.databaseName, (error) => this.#storageLost(error));
    } catch (error) {
      this.#fail(`The studio could not open its database '${config.databaseName}'.`, error);
      this.#engine = Promise.reject(unavailableError(this.#status.message ?? 'The engine failed.'));
      this.#engine.catch(() => undefined);
      return null;
    }
    this.#storage = storage;
    if (storage.watch)
      this.#unsubscribe.push(
        storage.watch('', (keys) => {
          this.#changes.add(keys);
          this.#schedulePush();
        }),
      );
    try {
      this.#identity = await allocateEngineIdentity(storage, this.engineId);
    } catch (error) {
      this.#fail('The studio could not register this tab’s engine in the database.', error);
      this.#engine = Promise.reject(unavailableError(this.#status.message ?? 'The engine failed.'));
      this.#engine.catch(() => undefined);
      return null;
    }
    const presence = new PresenceWriter({
      storage,
      engineId: this.engineId,
      identity: this.#identity,
      mode: config.mode,
      startedAt: this.#status.since,
      now: this.#now,
      onError: (error) => this.#presenceFailed(error),
    });
    this.#presence = presence;
    await presence.write({ status: 'starting' });
    this.#engine = this.#createEngine(storage, config);
    this.#engine.catch(() => undefined);
    return { storage, identity: this.#identity, presence };
  }

  async #createEngine(storage: Storage, config: WorkerConfig): Promise<Engine> {
    const viewer = config.mode === 'viewer';
    let engine: Engine;
    try {
      engine = await createEngine({
        storage,
        engineId: this.engineId,
        workflows: this.#options.workflows,
        ownership: 'workflow-lease',
        workflowClaimTtlMs: this.#options.workflowClaimTtlMs ?? 6_000,
        workflowClaimRenewIntervalMs: this.#options.workflowClaimRenewIntervalMs ?? 1_000,
        ...(this.#options.liveness ? { liveness: this.#options.liveness } : {}),
        claimWorkflows: !viewer,
        recover: !viewer,
        onWarning: (warning) => this.#warn(warning),
      });
    } catch (error) {
      this.#fail('This tab’s engine could not start.', error);
      throw error;
    }
    this.#engineNow = engine;
    this.#unsubscribe.push(
      engine.subscribe((event) => {
        this.#events.push(event);
        this.#schedulePush();
      }),
    );
    if (this.#setStatus({ state: 'running', since: this.#now() }))
      void this.#presence?.write({ status: 'running', claimsHeld: engine.metrics().claimsHeld });
    return engine;
  }

  /** The engine, once started; requests sent right behind the first hello wait for it. */
  async #requireEngine(): Promise<Engine> {
    if (!this.#started) throw protocolMisuse('Send hello first: it tells the worker which database to open.');
    await this.#started;
    if (!this.#engine) throw unavailableError(this.#status.message ?? 'The engine did not start.');
    return this.#engine;
  }

  // -------------------------------------------------------------------------------------------------------
  // Status, presence, pushes

  /** Moves to `next` if the lifecycle allows it; pushes the change. Returns whether it moved. */
  #setStatus(next: HostStatus): boolean {
    if (next.state !== this.#status.state && !nextStates[this.#status.state].includes(next.state))
      return false;
    this.#status = next;
    this.#push({ kind: 'status', v: PROTOCOL_VERSION, status: next });
    return true;
  }

  #fail(what: string, error: unknown): void {
    const serialized = serializeError(error);
    const moved = this.#setStatus({
      state: 'failed',
      since: this.#now(),
      message: `${what} ${serialized.message}`,
      error: serialized,
    });
    if (moved) void this.#presence?.write({ status: 'stopped', claimsHeld: 0 });
  }

  #storageLost(error: Error): void {
    this.#fail('The database became unusable.', error);
    void this.#engineNow?.shutdown().catch(() => undefined);
  }

  #presenceFailed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (message === this.#lastPresenceError) return;
    this.#lastPresenceError = message;
    this.#warn({
      name: 'PresenceWarning',
      message: `Could not refresh this engine's presence record: ${message}`,
    });
  }

  #warn(warning: HostWarning): void {
    console.warn(`[shuttle worker] ${warning.name}: ${warning.message}`);
    this.#push({ kind: 'warning', v: PROTOCOL_VERSION, warning });
  }

  reportUncaught(error: unknown): void {
    const serialized = serializeError(error);
    this.#warn({
      name: 'WorkerWarning',
      message: `Uncaught in the engine worker: ${serialized.name}: ${serialized.message}`,
    });
  }

  #beat(): void {
    this.#push({ kind: 'heartbeat', v: PROTOCOL_VERSION, at: this.#now() });
    const state = this.#status.state;
    if (this.#presence && (state === 'starting' || state === 'running' || state === 'frozen'))
      void this.#presence.write({ claimsHeld: this.#engineNow?.metrics().claimsHeld ?? 0 });
  }

  #schedulePush(): void {
    if (this.#pushTimer !== null || this.#disposed) return;
    const wait = Math.max(0, this.#lastPushAt + (this.#options.pushIntervalMs ?? 16) - this.#now());
    this.#pushTimer = setTimeout(() => {
      this.#pushTimer = null;
      this.#lastPushAt = this.#now();
      if (this.#events.length > 0) {
        const events = this.#events;
        this.#events = [];
        this.#push({ kind: 'events', v: PROTOCOL_VERSION, events });
      }
      const notice = this.#changes.flush();
      if (notice) this.#push(notice);
    }, wait);
  }

  // -------------------------------------------------------------------------------------------------------
  // Engines, shutdown

  async #engines(): Promise<EngineRecord[]> {
    const started = await this.#started;
    if (!started)
      throw this.#config
        ? unavailableError(this.#status.message ?? 'The engine failed.')
        : protocolMisuse('Send hello first: it tells the worker which database to open.');
    const [records, live] = await Promise.all([
      readPresence(started.storage),
      this.#options.liveness?.liveEngineIds?.() ?? Promise.resolve(undefined),
    ]);
    return Promise.all(
      records.map(async (record): Promise<EngineRecord> => {
        let alive: boolean | null = null;
        if (live) alive = live.has(record.engineId);
        else if (live === undefined && this.#options.liveness)
          alive = !(await this.#options.liveness.isDead(record.engineId).catch(() => false));
        return { ...record, alive, thisTab: record.engineId === this.engineId };
      }),
    );
  }

  #shutdownOnce(): Promise<ShutdownReport> {
    this.#shutdown ??= this.#stop();
    return this.#shutdown;
  }

  async #stop(): Promise<ShutdownReport> {
    this.#setStatus({ state: 'stopping', since: this.#now() });
    await this.#started;
    let report: ShutdownReport = { claimsReleased: 0, leaseReleased: false };
    const engine = await this.#engine?.catch(() => null);
    if (engine) report = await engine.shutdown();
    await this.#presence?.write({ status: 'stopped', claimsHeld: 0 });
    this.#setStatus({ state: 'stopped', since: this.#now() });
    return report;
  }

  async dispose(): Promise<void> {
    if (this.#config) await this.#shutdownOnce().catch(() => undefined);
    this.#disposed = true;
    clearInterval(this.#heartbeat);
    if (this.#pushTimer !== null) clearTimeout(this.#pushTimer);
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    this.#stopListening();
    await this.#storage?.close().catch(() => undefined);
  }
}

/** An error named for people: why this tab's engine cannot serve requests. */
function unavailableError(message: string): Error {
  return Object.assign(new Error(message), { name: 'EngineUnavailableError' });
}

/** An error about the conversation itself (wrong order, wrong config). */
function protocolMisuse(message: string): Error {
  return Object.assign(new Error(message), { name: 'ProtocolError' });
}
