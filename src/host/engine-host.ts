/**
 * The worker host: everything one tab's engine worker does, behind a port, so it runs the same in the real
 * worker (engine.worker.ts), in a server process (src/server) and in Node tests (over MemoryStorage and a
 * fake port). This module is its lifecycle: messages in and out, start-up, status, presence, pushes and
 * shutdown. The rest is in modules of its own: the protocol's methods, one module per domain (handlers/);
 * authored definitions (host-definitions.ts); the other engines of the store (engine-survey.ts); the chaos
 * freeze (chaos-freeze.ts); the options (host-options.ts).
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
 * - The engine is created with `recover: false`; every saved definition is registered first
 *   (host-definitions.ts); the engine then serves requests and reports `running` while `recoverAll` runs in
 *   the background (a big database never keeps a new tab silent).
 * - Viewer mode creates an observer engine (`claimWorkflows: false`, `recover: false`): it reads, signals
 *   and starts workflows that other tabs run, and never claims one (`reclaim` is refused with
 *   `ObserverCannotClaimError`; `claimHolder` answers as anywhere).
 * - Failures of the worker itself (the database blocked, deleted or full, the engine refusing to start)
 *   become a `failed` status with a readable message, pushed to the page, never a silent death.
 * - Engine events and store change notices are pushed in batches, at most one of each per `pushIntervalMs`;
 *   a heartbeat is pushed, the presence record refreshed and the other engines surveyed (engine-survey.ts)
 *   every `heartbeatIntervalMs`.
 * - `shutdown` stops the engine gracefully: every claim is released (other tabs take over at once) and the
 *   presence record says `stopped`.
 * - The presence record carries, besides identity and status, the engine's result waiters (pending first,
 *   then the 20 most recently settled), its counters, and its protocol version; it is refreshed every
 *   heartbeat and soon after a result waiter registers or settles.
 */
import {
  createEngine,
  serializeError,
  type Engine,
  type EngineEvent,
  type SerializedError,
  type ShutdownReport,
} from '../engine';
import {
  PROTOCOL_VERSION,
  isProtocolError,
  parseRequest,
  hostClaimTimings,
  type EngineCounters,
  type HelloResult,
  type HostState,
  type HostStatus,
  type HostWarning,
  type KeepLabel,
  type Params,
  type WorkerConfig,
  type WorkerMessage,
} from '../protocol';
import type { Storage } from '../storage/types';
import { mapDefinitionStack } from './authoring/stack-map';
import { prepareFreeze } from './chaos-freeze';
import type { EngineDeathWatch } from './death-watch';
import { EngineSurvey, type PresenceFacts } from './engine-survey';
import {
  createHandlers,
  protocolMisuse,
  unavailableError,
  type FleetControl,
  type Handler,
  type Handlers,
  type HostPort,
} from './handlers';
import { HostDefinitions } from './host-definitions';
import { readEngineDirectory } from './engine-directory';
import { PresenceWriter, allocateEngineIdentity, emptyCounters, type EngineIdentity } from './presence';
import { StorageActivity } from './storage-activity';
import type { EngineHost, EngineHostOptions } from './host-options';
import { StoreChangeCoalescer } from './store-changes';

export type { FleetControl, HostPort };
export type { EngineHost, EngineHostOptions, HostLiveness } from './host-options';

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
  readonly #connections = new Map<HostPort, () => void>();
  readonly #handlers: Handlers;
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
  #deathWatch: EngineDeathWatch | null = null;
  readonly #survey: EngineSurvey;
  readonly #definitions: HostDefinitions;
  #workflowsCompleted = 0;
  /** Runs synchronously right after the next response is posted (the freeze stall). */
  #afterResponse: (() => void) | null = null;
  /** Counts this worker's storage calls in flight, so the freeze never stalls with a transaction open. */
  #activity: StorageActivity | null = null;

  constructor(options: EngineHostOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.engineId = (options.randomUUID ?? (() => crypto.randomUUID()))();
    this.#status = { state: 'starting', since: this.#now() };
    this.#definitions = new HostDefinitions({
      engineId: this.engineId,
      now: this.#now,
      workflows: options.workflows,
      builtInInfo: options.builtInInfo,
      authoring: options.loadAuthoredDefinitions ?? true,
      compileSandbox: options.compileSandbox,
      warn: (warning) => this.#warn(warning),
      loaded: (keys) => this.#changed(keys),
      reclaimingEngine: () =>
        this.#config?.mode === 'engine' && this.#status.state === 'running' && !this.#disposed
          ? this.#engineNow
          : null,
    });
    this.#survey = new EngineSurvey({
      engineId: this.engineId,
      now: this.#now,
      liveness: options.liveness,
      storage: () => this.#storage,
      engine: () => this.#engineNow,
      mode: () => this.#config?.mode ?? null,
      state: () => this.#status.state,
      disposed: () => this.#disposed,
      deathWatch: () => this.#deathWatch,
      presenceFacts: () => this.#presenceFacts(),
      warn: (warning) => this.#warn(warning),
      changed: (keys) => this.#changed(keys),
    });
    this.#handlers = this.#createHandlers();
    if (options.port) this.connect(options.port);
    this.#heartbeat = setInterval(() => this.#beat(), options.heartbeatIntervalMs ?? 1_000);
    (this.#heartbeat as { unref?: () => void }).unref?.();
    if (options.config) {
      this.#config = options.config;
      this.#started = this.#start(options.config);
    }
  }

  connect(port: HostPort): () => void {
    const stop = port.listen((data) => void this.#receive(port, data));
    this.#connections.set(port, stop);
    return () => {
      this.#connections.delete(port);
      stop();
    };
  }

  async engine(): Promise<Engine> {
    return this.#requireEngine();
  }

  shutdown(): Promise<ShutdownReport> {
    return this.#shutdownOnce();
  }

  status(): HostStatus {
    return this.#status;
  }

  identity(): EngineIdentity {
    return this.#identity;
  }

  // -------------------------------------------------------------------------------------------------------
  // Messages

  async #receive(port: HostPort, data: unknown): Promise<void> {
    const request = parseRequest(data);
    if (isProtocolError(request)) {
      if (request.id !== null) this.#respond(port, request.id, { ok: false, error: request.error });
      else this.#warn({ name: 'ProtocolWarning', message: `Ignored a message: ${request.error.message}` });
      return;
    }
    try {
      const handler = this.#handlers[request.method] as Handler<typeof request.method>;
      const value = await handler(request.params as never, port);
      this.#respond(port, request.id, { ok: true, value });
    } catch (error) {
      this.#respond(port, request.id, { ok: false, error: serializeError(error) });
    }
    const after = this.#afterResponse;
    this.#afterResponse = null;
    after?.();
  }

  #respond(
    port: HostPort,
    id: number,
    outcome: { ok: true; value: unknown } | { ok: false; error: SerializedError },
  ): void {
    const message: WorkerMessage = { kind: 'response', v: PROTOCOL_VERSION, id, ...outcome };
    try {
      port.post(message);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      port.post({
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
    for (const port of this.#connections.keys())
      try {
        port.post(message);
      } catch (error) {
        console.error('[shuttle] could not push a message to a page', error);
      }
  }

  /** The protocol's methods, each served by one typed handler (src/host/handlers, one module per domain). */
  #createHandlers(): Handlers {
    const options = this.#options;
    return createHandlers(
      {
        engineId: this.engineId,
        engine: () => this.#requireEngine(),
        storage: () => this.#storage,
        config: () => this.#config,
        now: this.#now,
        authoring: options.loadAuthoredDefinitions ?? true,
        runtime: options.runtime?.kind ?? 'tab',
      },
      {
        definitions: this.#definitions,
        fleet: {
          fleet: options.fleet,
          hello: (params) => this.#hello(params),
          engines: async () => this.#survey.engines(await this.#startedStorage()),
          engineDirectory: async () => readEngineDirectory(await this.#startedStorage()),
          shutdown: () => {
            if (options.config)
              throw protocolMisuse(
                "This engine belongs to the server, not to the page: it stops with the server (Ctrl-C where 'shuttle serve' runs).",
              );
            return this.#shutdownOnce();
          },
          freeze: (seconds) => this.#freeze(seconds),
          recordCrash: async (params) => {
            const started = await this.#started;
            return started ? this.#survey.recordCrash(started.storage, params) : null;
          },
          engineExiting: (engineId) => this.#survey.engineExiting(engineId),
        },
      },
    );
  }

  /** The store, once `hello` opened it. */
  async #startedStorage(): Promise<Storage> {
    const started = await this.#started;
    if (!started)
      throw this.#config
        ? unavailableError(this.#status.message ?? 'The engine failed.')
        : protocolMisuse('Send hello first: it tells the worker which database to open.');
    return started.storage;
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
      this.#started = this.#start(config, config.mode === 'engine' ? keepLabelOf(params.keepLabel) : null);
    } else if (
      !this.#options.config &&
      (this.#config.databaseName !== config.databaseName || this.#config.mode !== config.mode)
    )
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
      runtime: this.#options.runtime ?? { kind: 'tab' },
      store:
        this.#options.storeLabel?.(this.#config.databaseName) ?? `IndexedDB '${this.#config.databaseName}'`,
      claimTimings: {
        ttlMs: this.#options.workflowClaimTtlMs ?? hostClaimTimings.ttlMs,
        renewIntervalMs: this.#options.workflowClaimRenewIntervalMs ?? hostClaimTimings.renewIntervalMs,
        graceMs: 2 * (this.#options.workflowClaimRenewIntervalMs ?? hostClaimTimings.renewIntervalMs),
      },
      authoring: this.#options.loadAuthoredDefinitions ?? true,
    };
  }

  /** Opens storage and takes an identity; then starts the engine in the background. */
  async #start(config: WorkerConfig, keepLabel: KeepLabel | null = null): Promise<Started | null> {
    let storage: Storage;
    try {
      const opened = await this.#options.openStorage(config.databaseName, (error) =>
        this.#storageLost(error),
      );
      this.#activity = new StorageActivity(opened);
      storage = this.#activity.storage;
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
          this.#changed(keys);
          this.#survey.noticeNewEngines(keys);
        }),
      );
    try {
      this.#identity = this.#options.allocateIdentity
        ? await this.#options.allocateIdentity(storage, this.engineId)
        : await allocateEngineIdentity(
            storage,
            this.engineId,
            keepLabel
              ? {
                  ...keepLabel,
                  isAlive: async (engineId) => {
                    const dead = await this.#options.liveness?.isDead(engineId).catch(() => null);
                    return dead === undefined || dead === null ? null : !dead;
                  },
                }
              : undefined,
          );
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
      runtime: this.#options.runtime ?? { kind: 'tab' },
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
        ...(this.#options.queues === undefined ? {} : { queues: this.#options.queues }),
        ...(this.#options.activityLimits === undefined
          ? {}
          : { activityLimits: this.#options.activityLimits }),
        ownership: 'workflow-lease',
        workflowClaimTtlMs: this.#options.workflowClaimTtlMs ?? hostClaimTimings.ttlMs,
        workflowClaimRenewIntervalMs:
          this.#options.workflowClaimRenewIntervalMs ?? hostClaimTimings.renewIntervalMs,
        ...(this.#options.liveness ? { liveness: this.#options.liveness } : {}),
        ...(this.#options.retentionMs !== undefined ? { retentionMs: this.#options.retentionMs } : {}),
        ...(this.#options.tracer ? { tracer: this.#options.tracer } : {}),
        ...(this.#options.interceptors ? { interceptors: this.#options.interceptors } : {}),
        ...(this.#options.codec ? { codec: this.#options.codec } : {}),
        claimWorkflows: !viewer,
        // Recovery waits until the saved definitions are registered (below).
        recover: false,
        onWarning: (warning) => this.#warn(warning),
        onEvent: (event) => this.#engineEvent(event),
        // Recorded failures name the authored file and line, and mark the engine's frames (stack-map.ts).
        mapStack: this.#options.mapStack
          ? (stack) => this.#options.mapStack!(mapDefinitionStack(stack))
          : mapDefinitionStack,
      });
    } catch (error) {
      this.#fail('This tab’s engine could not start.', error);
      throw error;
    }
    this.#engineNow = engine;
    this.#unsubscribe.push(await this.#definitions.load(storage, engine, this.#activity));
    if (!viewer && this.#options.deathWatch && !this.#disposed)
      this.#deathWatch = this.#options.deathWatch(
        this.engineId,
        (engineId) => void this.#survey.reclaimFrom(engineId),
      );
    if (this.#setStatus({ state: 'running', since: this.#now() }))
      void this.#presence?.write({ status: 'running', ...this.#presenceFacts() });
    void this.#survey.surveyOnce();
    // The tab answers (lists, starts, signals) while recovery runs: recovery may have many workflows to look
    // at, and whatever it does not finish the engine's reclaim passes carry on.
    if (!viewer)
      void engine.recoverAll().catch((error: unknown) =>
        this.#warn({
          name: 'StorageWarning',
          message: `Recovering workflows at start-up failed; the engine's background passes will retry: ${error instanceof Error ? error.message : String(error)}`,
        }),
      );
    return engine;
  }

  /** Every engine event, from construction on (recovery included): pushed to the page, counted. */
  #engineEvent(event: EngineEvent): void {
    try {
      this.#options.onEvent?.(event);
    } catch {
      // a listener's failure is its own business
    }
    this.#events.push(event);
    this.#schedulePush();
    if (event.type === 'workflow.completed') this.#workflowsCompleted++;
    if (event.type === 'result-waiter.registered' || event.type === 'result-waiter.settled') {
      const state = this.#status.state;
      if (this.#presence && (state === 'running' || state === 'starting'))
        void this.#presence.write(this.#presenceFacts());
    }
  }

  /** What the presence record says about the engine's work, fresh from the engine. */
  #presenceFacts(): PresenceFacts {
    const engine = this.#engineNow;
    if (!engine) return { claimsHeld: 0, resultWaiters: [], counters: { ...emptyCounters } };
    return {
      claimsHeld: engine.metrics().claimsHeld,
      resultWaiters: engine.resultWaiters(),
      counters: this.#counters(engine),
    };
  }

  #counters(engine: Engine): EngineCounters {
    const metrics = engine.metrics();
    return {
      workflowsCompleted: this.#workflowsCompleted,
      claimsLost: metrics.claimsLost,
      writesFencedOut: metrics.writesFencedOut,
      wakesDiscarded: metrics.wakesDiscarded,
      takeovers: metrics.claimAttempts.takeover,
    };
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
    try {
      this.#options.onWarning?.(warning);
    } catch {
      // a host's own listener failing must not stop the warning reaching the pages
    }
    if (!this.#options.onWarning) console.warn(`[shuttle] ${warning.name}: ${warning.message}`);
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
      void this.#presence.write(this.#presenceFacts());
    if (state === 'running') void this.#survey.surveyOnce();
  }

  // -------------------------------------------------------------------------------------------------------
  // Chaos: freeze (chaos-freeze.ts)

  async #freeze(seconds: number): Promise<{ frozenUntil: number }> {
    const { frozenUntil, stall } = await prepareFreeze(
      {
        allowed: this.#options.allowFreeze ?? true,
        renewIntervalMs: this.#options.workflowClaimRenewIntervalMs ?? hostClaimTimings.renewIntervalMs,
        now: this.#now,
        engine: () => this.#requireEngine(),
        state: () => this.#status.state,
        setStatus: (next) => this.#setStatus(next),
        writePresence: (status, frozenUntil) =>
          this.#presence?.write({
            status,
            ...(frozenUntil === undefined ? {} : { frozenUntil }),
            ...this.#presenceFacts(),
          }),
        activity: () => this.#activity,
      },
      seconds,
    );
    this.#afterResponse = stall;
    return { frozenUntil };
  }

  /** Keys changed in the store: tell the pages (coalesced). */
  #changed(keys: readonly string[]): void {
    this.#changes.add(keys);
    this.#schedulePush();
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

  #shutdownOnce(): Promise<ShutdownReport> {
    this.#shutdown ??= this.#stop();
    return this.#shutdown;
  }

  async #stop(): Promise<ShutdownReport> {
    this.#setStatus({ state: 'stopping', since: this.#now() });
    await this.#started;
    let report: ShutdownReport = { claimsReleased: 0, leaseReleased: false };
    const engine = await this.#engine?.catch(() => null);
    this.#deathWatch?.close();
    if (engine) report = await engine.shutdown();
    await this.#presence?.write({ status: 'stopped', claimsHeld: 0 });
    this.#setStatus({ state: 'stopped', since: this.#now() });
    return report;
  }

  async dispose(): Promise<void> {
    if (this.#config) await this.#shutdownOnce().catch(() => undefined);
    this.#disposed = true;
    this.#deathWatch?.close();
    this.#options.compileSandbox?.dispose();
    clearInterval(this.#heartbeat);
    if (this.#pushTimer !== null) clearTimeout(this.#pushTimer);
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    for (const stop of this.#connections.values()) stop();
    this.#connections.clear();
    if ((this.#options.storageOwner ?? 'host') === 'host')
      await this.#storage?.close().catch(() => undefined);
  }
}

/** A `keepLabel` the page sent, if it is well formed (anything else is ignored: a label is only a name). */
function keepLabelOf(value: unknown): KeepLabel | null {
  if (typeof value !== 'object' || value === null) return null;
  const { label, previousEngineId } = value as Record<string, unknown>;
  return typeof label === 'string' && label.length <= 40 && typeof previousEngineId === 'string'
    ? { label, previousEngineId }
    : null;
}
