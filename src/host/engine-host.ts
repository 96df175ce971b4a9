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
 * - Authored definitions (`def:<name>:<version>`) are registered before the engine recovers anything: the
 *   engine is created with `recover: false`, every saved definition is compiled and registered (one that
 *   fails is reported with its problems, never fatal); the engine then serves requests and reports `running`
 *   while `recoverAll` runs in the background (a big database never keeps a new tab silent). A definition saved later, in
 *   any tab, is registered the moment the change feed reports it, and a reclaim pass follows, so workflows of
 *   a type this engine did not know are claimed at once. Their activities start only when no storage call of
 *   this worker is in flight (activity-guard.ts), so a runaway activity stalls only this engine.
 * - Sources are compiled in the compile sandbox before they are saved (compile-sandbox.ts): a module that
 *   never finishes loading is refused there, not evaluated by the engines of every tab.
 * - Viewer mode creates an observer engine (`claimWorkflows: false`, `recover: false`): it reads, signals
 *   and starts workflows that other tabs run, and never claims one (`reclaim` is refused with
 *   `ObserverCannotClaimError`; `claimHolder` answers as anywhere).
 * - Failures of the worker itself (the database blocked, deleted or full, the engine refusing to start)
 *   become a `failed` status with a readable message, pushed to the page, never a silent death.
 * - Engine events and store change notices are pushed in batches, at most one of each per `pushIntervalMs`;
 *   a heartbeat is pushed and the presence record refreshed every `heartbeatIntervalMs`. An engine found
 *   dead (no write tells of it: its lock vanished) is pushed as a change of area `engines` too.
 * - `shutdown` stops the engine gracefully: every claim is released (other tabs take over at once) and the
 *   presence record says `stopped`.
 * - The presence record carries, besides identity and status, the engine's result waiters (pending first,
 *   then the 20 most recently settled), its counters, and its protocol version; it is refreshed every
 *   heartbeat and soon after a result waiter registers or settles.
 * - A tab going away announces it (`engineExiting`, forwarded from the control channel): its engine counts as
 *   dead for the liveness oracle from then on, and the same maintenance passes run at once.
 * - Every heartbeat the host surveys the other engines' records: it feeds the death watch (so a dead
 *   engine's claims are taken over the moment its Web Lock is released: a maintenance pass runs at once, and
 *   again while the dead engine still holds claims, at most three times), warns once per engine that runs
 *   another protocol version (a tab of another build), and every 30 s deletes records of engines dead for
 *   over 10 minutes.
 * - `freeze` (chaos) stalls the worker's event loop with a busy-wait, like a frozen tab. It waits for a good
 *   moment first: just after a claim renewal, with no turn in progress, so the stall begins a whole renew
 *   interval before the next renewal; and it stalls only at the start of a task with no storage call in
 *   flight (storage-activity.ts), since a transaction left open across the stall would block every tab's
 *   database. It marks its presence `frozen`, pushes the status, answers, then
 *   stalls; afterwards it carries on and pushes `running`. Its engine then finds its claims taken over: the
 *   activity that completes first tries to commit and is refused by the epoch fence.
 */
import {
  createEngine,
  hostKeys,
  previewCron,
  serializeError,
  type AnyWorkflowDefinition,
  type Engine,
  type EngineEvent,
  type EngineLiveness,
  type SerializedError,
  type ShutdownReport,
} from '../engine';
import type { Storage } from '../storage/types';
import { startActivitiesWhenQuiet } from './authoring/activity-guard';
import { AuthoredDefinitions, type LoadedDefinition } from './authoring/authored-definitions';
import { compileHere, type CompileReport, type CompileSandbox } from './authoring/compile-sandbox';
import {
  deleteDefinition,
  listStoredDefinitions,
  saveDefinition,
  type BuiltInInfo,
} from './authoring/definition-store';
import type { EngineDeathWatch } from './death-watch';
import {
  PresenceWriter,
  allocateEngineIdentity,
  emptyCounters,
  engineStatusOf,
  isPresenceExpired,
  prunePresence,
  readStoredPresence,
  recordCrash,
  presenceKey,
  presencePrefix,
  type EngineIdentity,
  type StoredPresence,
  waitersForPresence,
} from './presence';
import {
  PROTOCOL_VERSION,
  studioClaimTimings,
  isProtocolError,
  parseRequest,
  type DefinitionInfo,
  type EngineCounters,
  type EngineRecord,
  type HelloResult,
  type HostState,
  type HostStatus,
  type FleetActionOutcome,
  type FleetActionType,
  type FleetProcess,
  type HostWarning,
  type Method,
  type Params,
  type Result,
  type KeepLabel,
  type WorkerConfig,
  type WorkerMessage,
} from '../protocol';
import { purgeFinished } from './purge-finished';
import { StorageActivity } from './storage-activity';
import { StoreChangeCoalescer } from './store-changes';

/** How the host talks to its page. */
export type HostPort = {
  /** Sends one message to the page. May throw (e.g. `DataCloneError`); the host handles that. */
  post(message: WorkerMessage): void;
  /** Calls `listener` with every message from the page; returns the function that stops listening. */
  listen(listener: (data: unknown) => void): () => void;
};

/**
 * A liveness oracle that can also list every live engine at once, and count an engine dead before the
 * oracle itself would know (its tab announced it is going away). `WebLocksLiveness` can do both.
 */
export type HostLiveness = EngineLiveness & {
  liveEngineIds?(): Promise<ReadonlySet<string> | null>;
  markGone?(engineId: string): void;
};

/** Options of `serveEngineHost`. */
export type EngineHostOptions = {
  /** The page that talks to this host (a tab's worker port); more can join with `connect`. */
  port?: HostPort;
  /**
   * Start at once with this config, without waiting for a page's `hello` (a server process). A `hello` then
   * learns what the host serves instead of choosing it. Default: the first `hello` chooses.
   */
  config?: WorkerConfig;
  /**
   * Opens the storage of a database. Called once, on the first `hello` (or at once with `config`).
   * `onUnavailable` must be called if the database becomes unusable later (deleted or upgraded in another
   * tab, closed by the browser, its server gone for good).
   */
  openStorage(databaseName: string, onUnavailable: (error: Error) => void): Promise<Storage>;
  /**
   * Who closes that storage. `host` (default): `dispose` closes it (a tab's worker opened its IndexedDB for
   * this host alone). `caller`: whoever passed `openStorage` keeps it open past `dispose` and closes it
   * itself (a server process, whose store may serve its studio and several engines at once).
   */
  storageOwner?: 'host' | 'caller';
  /** What the studio calls the store, e.g. `IndexedDB 'shuttle'` or `PostgreSQL db.internal:5432/shuttle`. */
  storeLabel?: (databaseName: string) => string;
  /** Where the host runs: a browser tab (default) or a server process, with its host name and pid. */
  runtime?: { kind: 'tab' } | { kind: 'server'; hostName: string; pid: number };
  /**
   * Takes this engine's label and colour. Default `allocateEngineIdentity` (`Tab A`, `Tab B`, …); server
   * processes pass their own (`worker-1`, …).
   */
  allocateIdentity?: (storage: Storage, engineId: string) => Promise<EngineIdentity>;
  /**
   * Whether definitions saved in the studio are loaded (compiled, evaluated, registered) by this engine.
   * Default true (a tab runs what its own user wrote). A server passes false unless its operator opted in:
   * the browser must not make a server run code; the studio then shows definitions read-only.
   */
  loadAuthoredDefinitions?: boolean;
  /** Whether the chaos `freeze` (a stall of this event loop) is served. Default true (tabs). */
  allowFreeze?: boolean;
  /** The definitions every engine registers (the built-in demos). Their names are reserved. */
  workflows: readonly AnyWorkflowDefinition[];
  /** What the studio shows of each built-in (source, title, child-only), by type name. Default: nothing. */
  builtInInfo?: ReadonlyMap<string, BuiltInInfo>;
  /**
   * Where authored sources are compiled before they are saved or checked (a throwaway worker in the
   * browser: see compile-sandbox.ts). Default: in this worker.
   */
  compileSandbox?: Pick<CompileSandbox, 'check' | 'dispose'>;
  /** Liveness oracle (Web Locks in the browser). Default: none (claims then expire by TTL only). */
  liveness?: HostLiveness;
  /**
   * Creates the death watch of this engine (`DeathWatch` over Web Locks in the browser), which calls
   * `onDeath` the moment another engine dies. Default: none (a dead engine's claims are then found by the
   * engine's own reclaim pass, within a renew interval when the liveness oracle knows, else after the TTL).
   */
  deathWatch?: (selfId: string, onDeath: (engineId: string) => void) => EngineDeathWatch;
  /** Claim TTL, in ms. Default 6,000. */
  workflowClaimTtlMs?: number;
  /** Claim renewal interval, in ms. Default 1,000. */
  workflowClaimRenewIntervalMs?: number;
  /**
   * How long a finished run is kept, in ms after it ended, for types whose definition sets no `retentionMs`
   * of its own (the engine's `retentionMs`). Default: kept forever.
   */
  retentionMs?: number;
  /** How often the presence record is refreshed and a heartbeat pushed, in ms. Default 1,000. */
  heartbeatIntervalMs?: number;
  /** Shortest interval between two pushes of events or store changes, in ms. Default 16. */
  pushIntervalMs?: number;
  /** Current time in epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Mints this engine's id. Default `crypto.randomUUID`. */
  randomUUID?: () => string;
  /** The fleet this host's server controls, if any: its pages may kill, freeze, thaw, stop and start workers. */
  fleet?: FleetControl;
  /** Receives the host's warnings besides the pages (a server logs them). */
  onWarning?: (warning: HostWarning) => void;
  /** Receives every engine event besides the pages (a server logs claims, takeovers, fenced writes). */
  onEvent?: (event: EngineEvent) => void;
};

/** The worker processes a server controls (`shuttle dev`), for the studio's chaos on processes. */
export type FleetControl = {
  list(): FleetProcess[];
  /** Acts on the process running `engineId` (or, for `start`, starts one more). */
  act(engineId: string | null, action: FleetActionType, seconds?: number): Promise<FleetActionOutcome>;
};

/** A running host. */
export type EngineHost = {
  readonly engineId: string;
  /** A page (a tab's worker port, a WebSocket) joins: it may send requests and receives every push. */
  connect(port: HostPort): () => void;
  /** The engine, once it runs (a server process drives it without a page). */
  engine(): Promise<Engine>;
  /** Shuts the engine down gracefully (every claim let go), as the `shutdown` request does. */
  shutdown(): Promise<ShutdownReport>;
  /** The host's state now (starting, running, frozen, stopping, stopped, failed). */
  status(): HostStatus;
  /** This engine's label and colour (a placeholder until the store is open). */
  identity(): EngineIdentity;
  /** Reports an error nobody caught inside the worker to the page, as a warning. */
  reportUncaught(error: unknown): void;
  /**
   * Shuts the engine down (if it started), stops every timer, stops listening, and closes the storage unless
   * its caller owns it (`storageOwner: 'caller'`).
   */
  dispose(): Promise<void>;
};

const fleetActions: readonly FleetActionType[] = ['kill', 'freeze', 'thaw', 'stop', 'start'];

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

type Handler<M extends Method> = (params: Params<M>, port: HostPort) => Promise<Result<M>>;

/** One handler per method of the protocol: the whole surface a page can reach, typed by method. */
type Handlers = { readonly [M in Method]: Handler<M> };

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
  #survey: Promise<void> | null = null;
  #surveyAgain = false;
  #lastPruneAt = 0;
  readonly #versionWarned = new Set<string>();
  #workflowsCompleted = 0;
  /** Runs synchronously right after the next response is posted (the freeze stall). */
  #afterResponse: (() => void) | null = null;
  /** Counts this worker's storage calls in flight, so the freeze never stalls with a transaction open. */
  #activity: StorageActivity | null = null;
  /** The saved definitions this engine loaded (set once the engine exists). */
  #authored: AuthoredDefinitions | null = null;
  #reclaimAfterRegister: Promise<void> | null = null;
  #reclaimAgain = false;

  constructor(options: EngineHostOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.engineId = (options.randomUUID ?? (() => crypto.randomUUID()))();
    this.#status = { state: 'starting', since: this.#now() };
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

  /** The protocol's methods, each served by one typed handler. */
  #createHandlers(): Handlers {
    /** Runs `act` on the engine once it is there (requests sent right behind the first hello wait). */
    const withEngine =
      <M extends Method>(act: (engine: Engine, params: Params<M>) => Promise<Result<M>>): Handler<M> =>
      async (params) =>
        act(await this.#requireEngine(), params);
    return {
      hello: (params) => this.#hello(params),
      engines: () => this.#engines(),
      shutdown: () => {
        if (this.#options.config)
          throw protocolMisuse(
            "This engine belongs to the server, not to the page: it stops with the server (Ctrl-C where 'shuttle serve' runs).",
          );
        return this.#shutdownOnce();
      },
      recordCrash: (params) => this.#recordCrash(params),
      engineExiting: async ({ engineId }) => this.#engineExiting(engineId),
      freeze: ({ seconds }) => this.#freeze(seconds),
      compileDefinition: ({ source }) => this.#check(source),
      start: withEngine(async (engine, { workflowType, input, options }) => {
        const handle = await engine.start(workflowType, input, options ?? {});
        return { workflowId: handle.workflowId, run: handle.run!, started: handle.started };
      }),
      signalWithStart: withEngine(async (engine, { workflowType, input, signalName, payload, options }) => {
        const handle = await engine.signalWithStart(workflowType, input, signalName, payload, options);
        return { workflowId: handle.workflowId, run: handle.run!, started: handle.started };
      }),
      completeActivity: withEngine(async (engine, { token, result }) => {
        await engine.completeActivity(token, result);
        return null;
      }),
      failActivity: withEngine(async (engine, { token, error }) => {
        await engine.failActivity(token, error);
        return null;
      }),
      signal: withEngine(async (engine, { workflowId, name, payload }) => {
        await engine.signal(workflowId, name, payload);
        return null;
      }),
      query: withEngine(
        async (engine, { workflowId, name, arg }) => (await engine.query(workflowId, name, arg)) ?? null,
      ),
      update: withEngine(
        async (engine, { workflowId, name, arg, timeoutMs }) =>
          (await engine.update(workflowId, name, arg, timeoutMs === undefined ? {} : { timeoutMs })) ?? null,
      ),
      cancel: withEngine(async (engine, { workflowId, reason }) => {
        await engine.cancel(workflowId, reason);
        return null;
      }),
      terminate: withEngine(async (engine, { workflowId, reason }) => {
        await engine.terminate(workflowId, reason);
        return null;
      }),
      suspend: withEngine(async (engine, { workflowId }) => {
        await engine.suspend(workflowId);
        return null;
      }),
      resume: withEngine(async (engine, { workflowId }) => {
        await engine.resume(workflowId);
        return null;
      }),
      result: withEngine(
        async (engine, { workflowId, run }) =>
          (await engine.handle(workflowId, run === undefined ? {} : { run }).result()) ?? null,
      ),
      describe: withEngine((engine, { workflowId, run }) =>
        engine.describe(workflowId, run === undefined ? {} : { run }),
      ),
      runs: withEngine((engine, { workflowId }) => engine.runs(workflowId)),
      list: withEngine((engine, { filter }) => engine.list(filter ?? {})),
      timeline: withEngine((engine, { workflowId, run, after, limit }) =>
        engine.timeline(workflowId, {
          ...(run === undefined ? {} : { run }),
          ...(after === undefined ? {} : { after }),
          ...(limit === undefined ? {} : { limit }),
        }),
      ),
      // The engine checks that exactly one of `pos` and `updateId` is given, and what they hold.
      operationOutcome: withEngine((engine, { workflowId, ...of }) =>
        engine.operationOutcome(workflowId, of as Parameters<Engine['operationOutcome']>[1]),
      ),
      purge: withEngine((engine, { workflowId, run }) =>
        engine.purge(workflowId, run === undefined ? {} : { run }),
      ),
      purgeFinished: withEngine((engine, { filter, dryRun }) =>
        purgeFinished(engine, filter ?? {}, dryRun ?? false),
      ),
      storageUsage: async () => {
        const storage = this.#storage;
        if (!storage) throw unavailableError('The store is not open yet.');
        return (
          (await storage.usage?.()) ?? { source: 'this store cannot measure itself', bytes: 0, parts: [] }
        );
      },
      schedules: withEngine((engine) => engine.schedules()),
      describeSchedule: withEngine((engine, { name }) => engine.describeSchedule(name)),
      createSchedule: withEngine((engine, { name, spec, replace }) =>
        engine.schedule(name, spec, replace === undefined ? {} : { replace }),
      ),
      pauseSchedule: withEngine((engine, { name }) => engine.pauseSchedule(name)),
      resumeSchedule: withEngine((engine, { name }) => engine.resumeSchedule(name)),
      triggerSchedule: withEngine(async (engine, { name }) => {
        const handle = await engine.triggerSchedule(name);
        return { workflowId: handle.workflowId, run: (await handle.describe()).run };
      }),
      deleteSchedule: withEngine(async (engine, { name }) => {
        await engine.deleteSchedule(name);
        return null;
      }),
      // Pure (no engine needed): croner through the engine's own validation and messages.
      previewSchedule: async ({ cron, timezone, count }) =>
        previewCron(cron, timezone, this.#now(), Math.max(1, Math.min(count ?? 5, 20))),
      claims: withEngine((engine) => engine.claims()),
      claimHolder: withEngine(async (engine, { workflowId }) => {
        const holder = await engine.claimHolder(workflowId);
        // Nobody holds it: say so only of a workflow that exists (a mistyped id is an error, not "nobody").
        if (holder === null) await engine.runs(workflowId);
        return holder;
      }),
      reclaim: withEngine((engine, { workflowId }) => {
        if (this.#config?.mode === 'viewer') throw this.#observerCannotClaim(workflowId);
        return engine.reclaim(workflowId);
      }),
      fenceRejections: withEngine((engine, { workflowId }) => engine.fenceRejections(workflowId)),
      resultWaiters: withEngine(async (engine) => engine.resultWaiters()),
      metrics: withEngine(async (engine) => engine.metrics()),
      definitions: withEngine(() => this.#definitions()),
      saveDefinition: withEngine((engine, { source, force }) =>
        this.#saveDefinition(engine, source, force ?? false),
      ),
      deleteDefinition: withEngine(async (engine, { name, version }) => {
        this.#assertAuthoring('delete a definition');
        const outcome = await deleteDefinition(this.#storage!, engine, name, version);
        if (outcome.ok) await this.#authored?.reload([hostKeys.definition(name, version)]);
        return outcome;
      }),
      ownedWorkflows: withEngine(async (engine) => engine.ownedWorkflows()),
      fleet: async () => ({
        controlled: this.#options.fleet !== undefined,
        processes: this.#options.fleet?.list() ?? [],
      }),
      fleetAction: async ({ engineId, action, seconds }) => {
        const fleet = this.#options.fleet;
        if (!fleet)
          throw protocolMisuse(
            'This studio controls no worker processes: kill, freeze and start them where they run (shuttle dev controls the fleet it starts).',
          );
        if (!fleetActions.includes(action as FleetActionType))
          throw protocolMisuse(`Unknown fleet action '${action}'; use one of ${fleetActions.join(', ')}.`);
        if (action === 'freeze' && !(seconds !== undefined && seconds > 0 && seconds <= 600))
          throw protocolMisuse('freeze needs seconds above 0 and at most 600.');
        if (action !== 'start' && !engineId)
          throw protocolMisuse(`${action} needs the engineId of a worker.`);
        return fleet.act(engineId ?? null, action as FleetActionType, seconds);
      },
    };
  }

  /**
   * The refusal of `reclaim` by an engine that claims nothing: a viewer tab's, or the studio server's
   * observer. Says where the workflow can be taken over instead.
   */
  #observerCannotClaim(workflowId: string): Error {
    const server = this.#options.runtime?.kind === 'server';
    const message = server
      ? `This studio server's engine is an observer: it claims no workflow, so it cannot take '${workflowId}' over. The worker processes (shuttle worker) take it over by themselves once its holder is expired or dead; start one if none runs.`
      : `This tab is a viewer (?engine=off): its engine claims no workflow, so it cannot take '${workflowId}' over. Take it over from a tab that runs an engine (open the studio without ?engine=off); such a tab also takes it over by itself once its holder is expired or dead.`;
    return Object.assign(new Error(message), {
      name: 'ObserverCannotClaimError',
      workflowId,
      engineId: this.engineId,
    });
  }

  /** Refuses to change definitions from a page of a host that does not load them (a server). */
  #assertAuthoring(what: string): void {
    if (this.#options.loadAuthoredDefinitions ?? true) return;
    throw Object.assign(
      new Error(
        `This studio is connected to a server, which does not load definitions sent from the browser: it cannot ${what}. Deploy definitions with the worker processes (shuttle worker --workflows <file>), or start a worker with --load-studio-definitions to run definitions saved in the studio.`,
      ),
      { name: 'AuthoringDisabledError' },
    );
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
        ttlMs: this.#options.workflowClaimTtlMs ?? studioClaimTimings.ttlMs,
        renewIntervalMs: this.#options.workflowClaimRenewIntervalMs ?? studioClaimTimings.renewIntervalMs,
        graceMs: 2 * (this.#options.workflowClaimRenewIntervalMs ?? studioClaimTimings.renewIntervalMs),
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
          this.#changes.add(keys);
          this.#schedulePush();
          this.#noticeNewEngines(keys);
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
        ownership: 'workflow-lease',
        workflowClaimTtlMs: this.#options.workflowClaimTtlMs ?? studioClaimTimings.ttlMs,
        workflowClaimRenewIntervalMs:
          this.#options.workflowClaimRenewIntervalMs ?? studioClaimTimings.renewIntervalMs,
        ...(this.#options.liveness ? { liveness: this.#options.liveness } : {}),
        ...(this.#options.retentionMs !== undefined ? { retentionMs: this.#options.retentionMs } : {}),
        claimWorkflows: !viewer,
        // Recovery waits until the saved definitions are registered (below).
        recover: false,
        onWarning: (warning) => this.#warn(warning),
        onEvent: (event) => this.#engineEvent(event),
      });
    } catch (error) {
      this.#fail('This tab’s engine could not start.', error);
      throw error;
    }
    this.#engineNow = engine;
    await this.#loadAuthored(storage, engine);
    if (!viewer && this.#options.deathWatch && !this.#disposed)
      this.#deathWatch = this.#options.deathWatch(
        this.engineId,
        (engineId) => void this.#reclaimFrom(engineId),
      );
    if (this.#setStatus({ state: 'running', since: this.#now() }))
      void this.#presence?.write({ status: 'running', ...this.#presenceFacts() });
    void this.#surveyOnce();
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

  // -------------------------------------------------------------------------------------------------------
  // Authored definitions

  /** Registers every saved definition, and from now on each one the change feed reports. */
  async #loadAuthored(storage: Storage, engine: Engine): Promise<void> {
    if (!(this.#options.loadAuthoredDefinitions ?? true)) return;
    const activity = this.#activity;
    const authored = new AuthoredDefinitions({
      storage,
      register: (definition) => engine.register(definition),
      reservedNames: new Set(this.#options.workflows.map((definition) => definition.name)),
      ...(activity
        ? { prepare: (definition) => startActivitiesWhenQuiet(definition, (run) => activity.whenQuiet(run)) }
        : {}),
      onRegistered: () => void this.#reclaimNewTypes(),
      onLoaded: (keys) => {
        this.#changes.add(keys);
        this.#schedulePush();
      },
      onProblem: (loaded) => this.#warnDefinition(loaded),
    });
    this.#authored = authored;
    if (storage.watch)
      this.#unsubscribe.push(
        storage.watch(hostKeys.definitionsPrefix, (keys) => {
          authored.reload(keys).catch((error: unknown) => this.#warnDefinitionRead(error));
        }),
      );
    await authored.loadAll().catch((error: unknown) => this.#warnDefinitionRead(error));
  }

  /**
   * New definitions were registered: claim the workflows of those types that nobody runs (a full reclaim
   * pass). Passes do not overlap; registrations during one run one more pass after it.
   */
  async #reclaimNewTypes(): Promise<void> {
    if (this.#reclaimAfterRegister) {
      this.#reclaimAgain = true;
      return this.#reclaimAfterRegister;
    }
    const run = async () => {
      do {
        this.#reclaimAgain = false;
        const engine = this.#engineNow;
        if (!engine || this.#config?.mode !== 'engine' || this.#status.state !== 'running' || this.#disposed)
          return;
        await engine.recoverAll().catch(() => undefined); // stopping, or storage trouble: the passes retry
      } while (this.#reclaimAgain);
    };
    this.#reclaimAfterRegister = run().finally(() => {
      this.#reclaimAfterRegister = null;
    });
    return this.#reclaimAfterRegister;
  }

  #warnDefinition(loaded: LoadedDefinition): void {
    const first = loaded.problems?.[0];
    this.#warn({
      name: 'DefinitionWarning',
      message: `The saved definition '${loaded.name}' version ${loaded.version} could not be loaded${first ? ` (line ${first.line}, column ${first.column}): ${first.message}` : '.'}`,
    });
  }

  #warnDefinitionRead(error: unknown): void {
    this.#warn({
      name: 'DefinitionWarning',
      message: `Could not read the saved definitions: ${error instanceof Error ? error.message : String(error)}`,
    });
  }

  /** Compiles a source without saving it: in the sandbox when there is one. */
  async #check(source: string): Promise<CompileReport> {
    this.#assertAuthoring('compile a definition');
    assertSourceSize(source);
    const sandbox = this.#options.compileSandbox;
    return sandbox ? sandbox.check(source, 'definition.ts') : compileHere(source, 'definition.ts');
  }

  async #saveDefinition(engine: Engine, source: string, force: boolean): Promise<Result<'saveDefinition'>> {
    this.#assertAuthoring('save a definition');
    const checked = await this.#check(source);
    if (!checked.ok) return { ok: false, reason: 'invalid', diagnostics: checked.diagnostics };
    const storage = this.#storage;
    if (!storage) throw unavailableError('The database is not open.');
    const now = this.#now();
    const { outcome, compiled } = await saveDefinition(storage, engine, source, {
      savedBy: this.engineId,
      reservedNames: new Set(this.#options.workflows.map((definition) => definition.name)),
      force,
      now,
    });
    if (outcome.ok && compiled.ok)
      this.#authored?.noteSaved(
        { name: outcome.name, version: outcome.version, source, savedAt: now, savedBy: this.engineId },
        compiled.definition,
      );
    return outcome;
  }

  /**
   * The built-in (or deployed) definitions, then every saved one: as loaded by this engine, or — where saved
   * definitions are not loaded (a server) — as stored, read-only and unregistered.
   */
  async #definitions(): Promise<DefinitionInfo[]> {
    const describe = (definition: AnyWorkflowDefinition) => ({
      name: definition.name,
      version: definition.version,
      description: definition.description ?? null,
      sampleInput: definition.sampleInput ?? null,
      queries: Object.keys(definition.queries ?? {}),
      updates: Object.keys(definition.updates ?? {}),
    });
    const builtIns = this.#options.workflows.map((definition): DefinitionInfo => {
      const info = this.#options.builtInInfo?.get(definition.name);
      return {
        ...describe(definition),
        builtIn: true,
        title: info?.title ?? null,
        childOnly: info?.childOnly ?? false,
        source: info?.source ?? null,
        savedAt: null,
        savedBy: null,
        registered: true,
        loadProblems: null,
      };
    });
    if (!(this.#options.loadAuthoredDefinitions ?? true)) {
      const stored = this.#storage ? await listStoredDefinitions(this.#storage) : [];
      return [
        ...builtIns,
        ...stored.map((definition): DefinitionInfo => ({
          name: definition.name,
          version: definition.version,
          description: null,
          sampleInput: null,
          queries: [],
          updates: [],
          builtIn: false,
          title: null,
          childOnly: false,
          source: definition.source,
          savedAt: definition.savedAt,
          savedBy: definition.savedBy,
          registered: false,
          loadProblems: null,
        })),
      ];
    }
    const authored = (this.#authored?.list() ?? []).map((loaded): DefinitionInfo => ({
      ...(loaded.definition
        ? describe(loaded.definition)
        : {
            name: loaded.name,
            version: loaded.version,
            description: null,
            sampleInput: null,
            queries: [],
            updates: [],
          }),
      builtIn: false,
      title: null,
      childOnly: false,
      source: loaded.stored?.source ?? null,
      savedAt: loaded.stored?.savedAt ?? null,
      savedBy: loaded.stored?.savedBy ?? null,
      registered: loaded.definition !== null,
      loadProblems: loaded.problems,
    }));
    return [...builtIns, ...authored];
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
  #presenceFacts(): {
    claimsHeld: number;
    resultWaiters: ReturnType<Engine['resultWaiters']>;
    counters: EngineCounters;
  } {
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
    if (state === 'running') void this.#surveyOnce();
  }

  // -------------------------------------------------------------------------------------------------------
  // Other engines: death watch, build mismatches, pruning

  /**
   * The presence record of an engine the death watch does not cover yet was written (a tab just opened, or
   * its engine now holds its lock): survey now, so a crash of a tab opened a moment ago is noticed at once
   * rather than after the next heartbeat's survey.
   */
  #noticeNewEngines(keys: readonly string[]): void {
    const watch = this.#deathWatch;
    if (!watch || this.#status.state !== 'running') return;
    const uncovered = keys.some(
      (key) =>
        key.startsWith(presencePrefix) &&
        key !== presenceKey(this.engineId) &&
        !watch.covers(key.slice(presencePrefix.length)),
    );
    if (uncovered) void this.#surveyOnce();
  }

  /**
   * Surveys the other engines, or — when a survey is already reading — once more after it: a presence
   * record written while a survey reads (an engine that was `starting` turning `running`) may be missing from
   * what that survey read, and would otherwise wait for the next heartbeat's survey to be watched.
   */
  #surveyOnce(): Promise<void> {
    if (this.#survey) {
      this.#surveyAgain = true;
      return this.#survey;
    }
    this.#survey = this.#surveyEngines()
      .catch((error: unknown) => {
        console.warn('[shuttle worker] could not survey the other engines', error);
      })
      .finally(() => {
        this.#survey = null;
        if (this.#surveyAgain && !this.#disposed) {
          this.#surveyAgain = false;
          void this.#surveyOnce();
        }
      });
    return this.#survey;
  }

  async #surveyEngines(): Promise<void> {
    const storage = this.#storage;
    if (!storage || this.#disposed) return;
    // Presence first, then the locks: an engine writes `running` only once it holds its lock, so a record
    // read as running is in the lock snapshot taken after it, and a tab that is just starting is never
    // mistaken for a dead one (both at once could pair a fresh `running` with an older snapshot).
    const entries = await readStoredPresence(storage);
    const live = await this.#liveEngineIds();
    if (live && this.#deathWatch)
      this.#deathWatch.observe(
        entries.map(({ presence }) => presence),
        live,
      );
    const now = this.#now();
    for (const { presence } of entries) {
      if (presence.engineId === this.engineId || presence.protocolVersion === PROTOCOL_VERSION) continue;
      const alive = live ? live.has(presence.engineId) : null;
      if (
        engineStatusOf(presence, alive, now) === 'dead' ||
        presence.status === 'stopped' ||
        presence.status === 'crashed'
      )
        continue;
      if (this.#versionWarned.has(presence.engineId)) continue;
      this.#versionWarned.add(presence.engineId);
      this.#warn({
        name: 'VersionMismatchWarning',
        engineId: presence.engineId,
        message: `${presence.label} runs a different build of the studio (protocol version ${presence.protocolVersion}; this tab runs ${PROTOCOL_VERSION}). Reload ${presence.label} so that every tab runs the same build.`,
      });
    }
    if (now - this.#lastPruneAt >= 30_000) {
      this.#lastPruneAt = now;
      await prunePresence(storage, this.#withAlive(entries, live), now);
    }
  }

  /** Live engine ids from the liveness oracle; null when it cannot list them (or there is none). */
  async #liveEngineIds(): Promise<ReadonlySet<string> | null> {
    return (await this.#options.liveness?.liveEngineIds?.().catch(() => null)) ?? null;
  }

  #withAlive(entries: readonly StoredPresence[], live: ReadonlySet<string> | null) {
    return entries.map((entry) => ({ ...entry, alive: live ? live.has(entry.presence.engineId) : null }));
  }

  /**
   * Another engine died (its Web Lock was released): take over its claims now. The first pass may be one
   * that began before the death (passes are shared), so run again while the dead engine still holds claims.
   */
  async #reclaimFrom(engineId: string): Promise<void> {
    // The page's list of engines is stale now (nothing was written: a lock vanished), so say so.
    this.#changes.add([presenceKey(engineId)]);
    this.#schedulePush();
    for (let pass = 0; pass < 3; pass++) {
      const engine = this.#engineNow;
      if (!engine || this.#status.state !== 'running' || this.#disposed) return;
      try {
        await engine.reclaim();
        const claims = await engine.claims();
        if (!claims.some((claim) => claim.holder?.engineId === engineId)) return;
      } catch {
        return; // the engine is stopping, or storage failed: its own passes carry on
      }
    }
  }

  /** Another tab is going away: count its engine dead now and take its workflows over. */
  #engineExiting(engineId: string): null {
    if (engineId === this.engineId || !this.#options.liveness?.markGone) return null;
    this.#options.liveness.markGone(engineId);
    if (this.#config?.mode === 'engine') void this.#reclaimFrom(engineId);
    return null;
  }

  async #recordCrash(params: Params<'recordCrash'>): Promise<null> {
    const started = await this.#started;
    if (!started || params.engineId === this.engineId) return null;
    await recordCrash(started.storage, params.engineId, params.at);
    return null;
  }

  // -------------------------------------------------------------------------------------------------------
  // Chaos: freeze

  async #freeze(seconds: number): Promise<Result<'freeze'>> {
    if (!(this.#options.allowFreeze ?? true))
      throw protocolMisuse(
        'This engine runs in a server process: freeze it as a process (SIGSTOP) from the fleet, not from inside.',
      );
    if (!(seconds > 0 && seconds <= 600))
      throw protocolMisuse(`freeze: seconds must be above 0 and at most 600, not ${seconds}.`);
    const engine = await this.#requireEngine();
    if (this.#status.state !== 'running')
      throw Object.assign(
        new Error(`Only a running engine can be frozen; this one is ${this.#status.state}.`),
        {
          name: 'InvalidWorkflowStateError',
        },
      );
    const renewIntervalMs = this.#options.workflowClaimRenewIntervalMs ?? studioClaimTimings.renewIntervalMs;
    // Start just after a renewal, so the whole stall counts against the claim TTL and the next renewal is
    // a full interval away (the activity in flight then finishes first when the stall ends).
    if (engine.metrics().claimsHeld > 0) await this.#nextEvent(engine, 'claim.renewed', renewIntervalMs * 2);
    await withTimeout(engine.idle({ activities: false }), renewIntervalMs / 2);
    const since = this.#now();
    const frozenUntil = since + Math.round(seconds * 1_000);
    if (!this.#setStatus({ state: 'frozen', since, frozenUntil }))
      throw Object.assign(
        new Error(`The engine stopped before it could be frozen (${this.#status.state}).`),
        {
          name: 'InvalidWorkflowStateError',
        },
      );
    await this.#presence?.write({ status: 'frozen', frozenUntil, ...this.#presenceFacts() });
    const activity = this.#activity;
    this.#afterResponse = () =>
      activity ? activity.whenQuiet(() => this.#stall(frozenUntil)) : this.#stall(frozenUntil);
    return { frozenUntil };
  }

  /** Busy-waits until `until` (nothing else of this worker runs meanwhile), then carries on. */
  #stall(until: number): void {
    while (this.#now() < until) {
      // frozen on purpose: no timers, no renewals, no messages, no storage transaction open
    }
    if (this.#setStatus({ state: 'running', since: this.#now() }))
      void this.#presence?.write({ status: 'running', ...this.#presenceFacts() });
  }

  /** Resolves at the engine's next event of `type`, or after `timeoutMs`. */
  #nextEvent(engine: Engine, type: EngineEvent['type'], timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      };
      const unsubscribe = engine.subscribe((event) => {
        if (event.type === type) done();
      });
      const timer = setTimeout(done, timeoutMs);
    });
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
    const liveness = this.#options.liveness;
    const [entries, live] = await Promise.all([
      readStoredPresence(started.storage),
      liveness?.liveEngineIds ? this.#liveEngineIds() : Promise.resolve(undefined),
    ]);
    const now = this.#now();
    const listed = await Promise.all(
      entries.map(async (entry) => {
        const { presence } = entry;
        let alive: boolean | null = null;
        if (live) alive = live.has(presence.engineId);
        else if (live === undefined && liveness)
          alive = !(await liveness.isDead(presence.engineId).catch(() => false));
        return { ...entry, alive };
      }),
    );
    const expired = listed.filter(({ presence, alive }) => isPresenceExpired(presence, alive, now));
    if (expired.length > 0) void prunePresence(started.storage, expired, now).catch(() => undefined);
    return listed
      .filter((entry) => !expired.includes(entry))
      .map(({ presence, alive }): EngineRecord => {
        const thisTab = presence.engineId === this.engineId;
        const status = engineStatusOf(presence, alive, now);
        const record: EngineRecord = {
          ...presence,
          status,
          alive,
          thisTab,
          // A stopped, crashed or dead engine renews nothing: whatever its last record said, it holds no
          // claim it could keep (the claims table shows the ones not taken over yet).
          ...(status === 'stopped' || status === 'crashed' || status === 'dead' ? { claimsHeld: 0 } : {}),
        };
        if (thisTab && this.#engineNow) {
          const facts = this.#presenceFacts();
          record.claimsHeld = facts.claimsHeld;
          record.resultWaiters = waitersForPresence(facts.resultWaiters);
          record.counters = facts.counters;
        }
        return record;
      });
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

/** Resolves when `promise` settles or after `ms`, whichever comes first; never rejects. */
function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}

/** Longest definition source the studio accepts, in characters. */
const maxSourceLength = 200_000;

function assertSourceSize(source: string): void {
  if (source.length > maxSourceLength)
    throw Object.assign(
      new Error(
        `The definition is ${source.length.toLocaleString('en')} characters long; the studio accepts at most ${maxSourceLength.toLocaleString('en')}. Split it, or move data out of the source.`,
      ),
      { name: 'PayloadTooLargeError' },
    );
}

/** An error named for people: why this tab's engine cannot serve requests. */
function unavailableError(message: string): Error {
  return Object.assign(new Error(message), { name: 'EngineUnavailableError' });
}

/** An error about the conversation itself (wrong order, wrong config). */
function protocolMisuse(message: string): Error {
  return Object.assign(new Error(message), { name: 'ProtocolError' });
}

/** A `keepLabel` the page sent, if it is well formed (anything else is ignored: a label is only a name). */
function keepLabelOf(value: unknown): KeepLabel | null {
  if (typeof value !== 'object' || value === null) return null;
  const { label, previousEngineId } = value as Record<string, unknown>;
  return typeof label === 'string' && label.length <= 40 && typeof previousEngineId === 'string'
    ? { label, previousEngineId }
    : null;
}
