/**
 * The main-thread client of a tab's engine worker: promise-returning methods over the protocol, and a
 * subscription to what the worker pushes. The studio's UI uses it through query hooks, and it is exposed as
 * `window.shuttle`, the console API, so everything here is documented for people typing in devtools.
 *
 * Guarantees:
 * - Every call settles. It resolves with the worker's value, or rejects with an `Error` whose `name`,
 *   `message` and detail fields (`workflowId`, `heldBy`, …) are those the engine raised in the worker.
 * - A call the worker does not answer in time rejects with `RequestTimeoutError`; calls that legitimately
 *   wait (`result`, `waitFor`) have no fixed limit but still fail when the worker dies.
 * - The worker is considered stopped when it crashes (its `error` event) or, once it has spoken, stays silent
 *   longer than `unresponsiveAfterMs` (it sends a heartbeat every second). Every pending call then rejects with
 *   `EngineWorkerStoppedError` ("the engine worker of this tab stopped; reload the tab"), and so does every
 *   later call until it speaks again.
 * - Push listeners are called in arrival order; a throwing listener does not affect the others.
 * - A worker that announced a freeze (`status` push `frozen` with `frozenUntil`) is allowed to stay silent
 *   until then, plus `unresponsiveAfterMs`.
 * - The tab's engine can be replaced: `restartThisTab()` (or a chaos `restart` from any tab) terminates the
 *   worker and starts a new one with a new engine id, on the same client object. Calls pending on the old
 *   worker reject with `EngineWorkerStoppedError`; `onEngineChange` listeners get the new engine's `hello`.
 * - `chaos` acts on any engine of the database: this tab's directly, another tab's through the control
 *   channel (control-channel.ts), each call resolving when the hosting tab has done it.
 */
import type {
  ClaimHolder,
  ClaimInfo,
  EngineMetrics,
  FenceRejection,
  ListFilter,
  ListPage,
  OperationOutcome,
  PurgeReport,
  ReclaimOutcome,
  ResultWaiterInfo,
  RunSummary,
  ScheduleInfo,
  ScheduleSpecInput,
  SerializedError,
  ShutdownReport,
  StartOptions,
  TimelineEntry,
  WorkflowDescription,
  WorkflowStatus,
} from '../engine';
import {
  PROTOCOL_VERSION,
  parseWorkerMessage,
  type CompileReport,
  type DeleteOutcome,
  type SaveOutcome,
  type DefinitionInfo,
  type EngineRecord,
  type HelloResult,
  type Method,
  type ControlAction,
  type ControlOutcome,
  type ControlOutcomes,
  type HostStatus,
  type Params,
  type PushMessage,
  type RequestMessage,
  type Result,
  type SchedulePreview,
  type KeepLabel,
  type WorkerConfig,
} from '../protocol';
import { isTerminal } from '../engine/vocabulary';
import { ControlChannel, type BroadcastPort } from './control-channel';

/** The parts of a `Worker` the client uses. */
export type WorkerLike = {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
  addEventListener(type: 'error', listener: (event: Event) => void): void;
  removeEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
  removeEventListener(type: 'error', listener: (event: Event) => void): void;
  terminate(): void;
};

/** The state of the link between this page and its worker (not of the engine: see `HostStatus`). */
export type ClientConnection =
  | { state: 'connecting' }
  | { state: 'ready' }
  | { state: 'unresponsive'; since: number; message: string }
  | { state: 'crashed'; since: number; message: string }
  | { state: 'closed'; since: number; message: string };

/** Options of `createShuttleClient`. */
export type ShuttleClientOptions = WorkerConfig & {
  /** How long an ordinary call may wait for its answer, in ms. Default 30,000. */
  requestTimeoutMs?: number;
  /** Silence (no message, not even a heartbeat) after which the worker counts as stopped, in ms. Default 10,000. */
  unresponsiveAfterMs?: number;
  /**
   * Starts a new engine worker for this tab. Needed by `restartThisTab` and chaos `restart`; without it
   * they reject.
   */
  spawnWorker?: () => WorkerLike;
  /**
   * The database's control channel (`new BroadcastChannel(controlChannelName(databaseName))`). Without it,
   * `chaos` can act on this tab's engine only.
   */
  controlPort?: BroadcastPort;
  /** How long chaos calls wait for the tab hosting an engine to acknowledge, in ms. Default 2,000. */
  controlAckTimeoutMs?: number;
  /**
   * The "worker" is a studio server (`shuttle serve`), not this tab's: chaos acts on its worker processes
   * (kill, freeze, thaw, stop, start) through the protocol, and a lost connection is said as such.
   */
  server?: boolean;
};

/**
 * Chaos actions on any engine of the database, for drills and demos. Each resolves once the tab hosting the
 * engine has done it, and rejects with `ControlTargetNotFoundError` when no open tab hosts that engine (no
 * answer within 2 s).
 */
export type ChaosControls = {
  /**
   * Stalls the engine's worker for `seconds` (0 < seconds ≤ 600), like a frozen tab: no renewals, no turns.
   * It keeps its Web Lock, so other tabs take its workflows over only after the claim TTL (6 s + 2 s grace);
   * when it wakes up, its next write is refused by the epoch fence. Resolves when the stall begins.
   *
   * @example
   * await shuttle.chaos.freeze(engineId, 10);
   */
  freeze(engineId: string, seconds: number): Promise<ControlOutcomes['freeze']>;
  /**
   * Terminates the engine's worker at once (`worker.terminate()`), like a crashed tab. Its Web Lock goes
   * with it, so other tabs take its workflows over within moments. Its tab stays open without an engine,
   * until `restart`.
   */
  crash(engineId: string): Promise<ControlOutcomes['crash']>;
  /** Shuts the engine down gracefully: every claim is released and other tabs take over at once. */
  shutdown(engineId: string): Promise<ControlOutcomes['shutdown']>;
  /**
   * Terminates the engine's worker (if it still runs) and starts a new one in the same tab, with a new
   * engine id. Works on a crashed engine too, as long as its tab is open. Resolves with the new id.
   */
  restart(engineId: string): Promise<ControlOutcomes['restart']>;
  /**
   * Has the engine start a workflow, so that engine claims and runs it — from its own tab, like that tab's
   * `start` (the engine validates it). With `notBefore` (epoch ms) the hosting tab waits until then (at most
   * 5 s), so several engines can race to start one id at the same instant. Rejects with the error that
   * engine's start raised (name, message and fields such as `workflowId` kept). Tabs only: a studio server
   * cannot choose the worker process that runs a workflow.
   *
   * @example
   * const { workflowId } = await shuttle.chaos.start(engineId, 'countdown', { input: { from: 3, tickMs: 200 } });
   */
  start(
    engineId: string,
    workflowType: string,
    options?: { input?: unknown; options?: StartOptions; notBefore?: number },
  ): Promise<ControlOutcomes['start']>;
};

/** Options of `waitFor`. */
export type WaitForOptions = {
  /** Give up after this many ms. Default 60,000. */
  timeoutMs?: number;
};

/** The longest a control `start` waits for its `notBefore`, in ms. */
const maxStartDelayMs = 5_000;

const stoppedMessage = 'The engine worker of this tab stopped; reload the tab.';
const frozenAwayMessage =
  'The browser froze this tab: its engine was stopped and its workflows moved to other tabs. A new engine starts when the tab resumes.';
const serverLostMessage = 'The connection to the studio server was lost; reload the page to reconnect.';

type Pending = {
  method: Method;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout> | null;
  /** Where the call was made, for the rejection's stack. */
  origin: Error;
};

function namedError(name: string, message: string, fields: Record<string, unknown> = {}): Error {
  const error = new Error(message);
  error.name = name;
  return Object.assign(error, fields);
}

/** Rebuilds an error raised in the worker: its name, message and detail fields, with the caller's stack. */
export function rebuildError(serialized: SerializedError, origin?: Error): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  if (origin?.stack)
    error.stack = `${serialized.name}: ${serialized.message}\n${origin.stack.split('\n').slice(1).join('\n')}`;
  if (serialized.details) {
    Object.assign(error, serialized.details);
    Object.defineProperty(error, 'details', { value: serialized.details, enumerable: false });
  }
  if (serialized.stack)
    Object.defineProperty(error, 'workerStack', { value: serialized.stack, enumerable: false });
  return error;
}

/**
 * What lets a browser tab keep its engine label (`Tab A`) for its lifetime: the tab's `sessionStorage` (kept
 * across reloads of that tab, copied when the tab is duplicated) remembers the label of its engine, and
 * whether that engine has ended (the page was hidden for good, frozen away, or the engine restarted). Only
 * an ended engine's label is asked for again, so a duplicated tab, whose copy says its original still runs,
 * takes a new one. Best effort: without `sessionStorage` a tab gets a new label, as before.
 */
const tabLabels = {
  key: (config: WorkerConfig) => `shuttle.tab-label:${config.databaseName}`,
  read(config: WorkerConfig): { label: string; engineId: string; ended: boolean } | null {
    try {
      const value: unknown = JSON.parse(globalThis.sessionStorage?.getItem(this.key(config)) ?? 'null');
      if (typeof value !== 'object' || value === null) return null;
      const { label, engineId, ended } = value as Record<string, unknown>;
      return typeof label === 'string' && typeof engineId === 'string'
        ? { label, engineId, ended: ended === true }
        : null;
    } catch {
      return null;
    }
  },
  write(config: WorkerConfig, value: { label: string; engineId: string; ended: boolean }): void {
    try {
      globalThis.sessionStorage?.setItem(this.key(config), JSON.stringify(value));
    } catch {
      // Storage full or denied: the next engine of this tab gets a new label.
    }
  },
  wanted(config: WorkerConfig): KeepLabel | null {
    const stored = this.read(config);
    return stored?.ended ? { label: stored.label, previousEngineId: stored.engineId } : null;
  },
  remember(config: WorkerConfig, label: string, engineId: string): void {
    this.write(config, { label, engineId, ended: false });
  },
  ended(config: WorkerConfig): void {
    const stored = this.read(config);
    if (stored && !stored.ended) this.write(config, { ...stored, ended: true });
  },
};

/**
 * The studio's client of this tab's engine worker, also available in devtools as `window.shuttle`.
 * Run `shuttle.help()` for a summary.
 *
 * @example
 * const id = await shuttle.start('countdown', { from: 5, tickMs: 200 });
 * await shuttle.waitFor(id, 'completed');
 * console.table(await shuttle.timeline(id));
 */
export class ShuttleClient {
  #worker: WorkerLike | null;
  readonly #config: WorkerConfig;
  readonly #requestTimeoutMs: number;
  readonly #unresponsiveAfterMs: number;
  readonly #spawnWorker: (() => WorkerLike) | null;
  readonly #control: ControlChannel | null;
  readonly #pending = new Map<number, Pending>();
  readonly #pushListeners = new Set<(message: PushMessage) => void>();
  readonly #connectionListeners = new Set<() => void>();
  readonly #engineListeners = new Set<(engine: HelloResult) => void>();
  readonly #watchdog: ReturnType<typeof setInterval>;
  #nextId = 1;
  #connection: ClientConnection = { state: 'connecting' };
  #lastHeardAt = Date.now();
  #ready: Promise<HelloResult>;
  /** The engine this tab hosts now (from the last hello), or null when it hosts none. */
  #engineId: string | null = null;
  #label: string | null = null;
  #frozenUntil = 0;
  /** Engines of this tab terminated while no worker could record it: recorded by the next worker. */
  readonly #unrecordedCrashes: { engineId: string; at: number }[] = [];
  #restarting: Promise<HelloResult> | null = null;
  /** The browser froze this tab and `freezeTab()` terminated its engine: `resumeTab()` starts a new one. */
  #frozenAway = false;
  readonly #server: boolean;

  constructor(worker: WorkerLike, options: ShuttleClientOptions) {
    this.#worker = worker;
    this.#server = options.server ?? false;
    this.#config = { databaseName: options.databaseName, mode: options.mode };
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#unresponsiveAfterMs = options.unresponsiveAfterMs ?? 10_000;
    this.#spawnWorker = options.spawnWorker ?? null;
    this.#attach(worker);
    this.#watchdog = setInterval(() => this.#checkSilence(), Math.min(1_000, this.#unresponsiveAfterMs));
    this.#control = options.controlPort
      ? new ControlChannel({
          port: options.controlPort,
          localEngineId: () => this.engineId,
          formerEngineId: () => (this.#worker ? null : this.#engineId),
          perform: (action, engineId) => this.#perform(action, engineId),
          onEngineCrashed: (engineId, at) => this.#recordCrash(engineId, at),
          onEngineExiting: (engineId) => this.#engineExiting(engineId),
          ...(options.controlAckTimeoutMs === undefined ? {} : { ackTimeoutMs: options.controlAckTimeoutMs }),
        })
      : null;
    this.#ready = this.hello();
    this.#ready.catch(() => undefined);
  }

  /**
   * Settles with this tab's engine information once its worker answered the first `hello`. After a restart
   * it is the new engine's.
   */
  get ready(): Promise<HelloResult> {
    return this.#ready;
  }

  /** The id of the engine this tab hosts, once known; null before the first hello and after a crash. */
  get engineId(): string | null {
    return this.#worker ? this.#engineId : null;
  }

  /**
   * Chaos actions on any engine of the database (this tab's or another tab's): freeze, crash, shutdown,
   * restart. See `ChaosControls`.
   *
   * @example
   * const [, other] = await shuttle.engines();
   * await shuttle.chaos.freeze(other.engineId, 10);
   */
  readonly chaos: ChaosControls = {
    freeze: (engineId, seconds) => {
      if (typeof seconds !== 'number' || !(seconds > 0 && seconds <= 600))
        return Promise.reject(
          namedError(
            'InvalidArgumentError',
            `chaos.freeze: seconds must be a number above 0 and at most 600, not ${String(seconds)}.`,
          ),
        );
      return this.#controlRequest(engineId, { type: 'freeze', seconds });
    },
    crash: (engineId) => this.#controlRequest(engineId, { type: 'crash' }),
    shutdown: (engineId) => this.#controlRequest(engineId, { type: 'shutdown' }),
    restart: (engineId) => this.#controlRequest(engineId, { type: 'restart' }),
    start: (engineId, workflowType, { input, options, notBefore } = {}) => {
      if (typeof workflowType !== 'string' || workflowType.length === 0)
        return Promise.reject(
          namedError('InvalidArgumentError', 'chaos.start: workflowType must be a definition name.'),
        );
      if (notBefore !== undefined && (typeof notBefore !== 'number' || !Number.isFinite(notBefore)))
        return Promise.reject(
          namedError('InvalidArgumentError', 'chaos.start: notBefore must be a time (epoch ms).'),
        );
      return this.#controlRequest(engineId, {
        type: 'start',
        workflowType,
        ...(input === undefined ? {} : { input }),
        ...(options === undefined ? {} : { options }),
        ...(notBefore === undefined ? {} : { notBefore }),
      });
    },
  };

  /**
   * Replaces this tab's engine: terminates its worker (if it still runs) and starts a new one, which gets a
   * new engine id and label. Resolves with the new engine's `hello`; `onEngineChange` listeners get it too.
   * The old engine's claims are taken over by the engines still alive (the new one included) within moments,
   * since its Web Lock goes with its worker.
   */
  restartThisTab(): Promise<HelloResult> {
    this.#restarting ??= this.#restart().finally(() => {
      this.#restarting = null;
    });
    return this.#restarting;
  }

  /**
   * Calls `listener` with the new engine's `hello` whenever this tab's engine is replaced (a restart). The UI
   * should then replace everything it knows about "this tab's engine". Returns the function that unsubscribes.
   */
  onEngineChange(listener: (engine: HelloResult) => void): () => void {
    this.#engineListeners.add(listener);
    return () => this.#engineListeners.delete(listener);
  }

  // -------------------------------------------------------------------------------------------------------
  // Engine information

  /** This tab's engine: id, label, colour, mode (`engine` or `viewer`), database and current status. */
  async hello(): Promise<HelloResult> {
    const worker = this.#worker;
    const keepLabel = this.#server || this.#config.mode !== 'engine' ? null : tabLabels.wanted(this.#config);
    const hello = await this.call('hello', {
      protocolVersion: PROTOCOL_VERSION,
      ...this.#config,
      ...(keepLabel ? { keepLabel } : {}),
    });
    if (worker === this.#worker) {
      this.#engineId = hello.engineId;
      this.#label = hello.label;
      this.#noteStatus(hello.status);
      if (hello.mode === 'engine' && hello.runtime.kind === 'tab')
        tabLabels.remember(this.#config, hello.label, hello.engineId);
    }
    return hello;
  }

  /**
   * Every engine of this database, live or dead within the last 10 minutes, oldest first: identity, status
   * (`starting`, `running`, `frozen`, `stopped`, `crashed`, or `dead` when its tab vanished without a word),
   * whether its Web Lock is held (`alive`), claims held, its result waiters, its counters and its protocol
   * version.
   */
  engines(): Promise<EngineRecord[]> {
    return this.call('engines', {});
  }

  /**
   * Every definition: the built-in demos (`builtIn: true`, with their source), then each saved version of the
   * definitions authored in the studio (source, `savedAt`, `savedBy`, and `loadProblems` when this tab's
   * engine could not load it). `registered` says whether this tab can start it.
   */
  definitions(): Promise<DefinitionInfo[]> {
    return this.call('definitions', {});
  }

  /**
   * Compiles and loads a definition's TypeScript source without saving it: resolves with the name and version
   * it declares, or with its diagnostics (`{ kind, message, line, column }`).
   *
   * @example
   * await shuttle.compileDefinition("import { defineWorkflow } from 'shuttle';\nexport default 1;");
   * // { ok: false, diagnostics: [{ kind: 'export', message: 'The default export is not a workflow definition: …', line: 2, column: 1 }] }
   */
  compileDefinition(source: string): Promise<CompileReport> {
    return this.call('compileDefinition', { source });
  }

  /**
   * Saves a definition (`def:<name>:<version>`); every open tab's engine registers it at once. Resolves with
   * `{ ok: true, name, version, created }`, or a refusal with nothing written: `invalid` (with diagnostics),
   * `reserved` (a built-in's name), or `version-in-use` (unfinished workflows run this version and the body
   * changed: save it as `suggestedVersion`, or pass `{ force: true }` to save anyway).
   *
   * @example
   * const outcome = await shuttle.saveDefinition(source);
   * if (!outcome.ok && outcome.reason === 'version-in-use') console.log(outcome.message);
   */
  saveDefinition(source: string, options: { force?: boolean } = {}): Promise<SaveOutcome> {
    return this.call('saveDefinition', options.force ? { source, force: true } : { source });
  }

  /**
   * Deletes a saved version of a definition. Resolves with `{ ok: true }`, or `{ ok: false, reason: 'in-use'
   * | 'missing', message }` — a version stays while unfinished workflows use it.
   */
  deleteDefinition(name: string, version: number): Promise<DeleteOutcome> {
    return this.call('deleteDefinition', { name, version });
  }

  /** Ids of the workflows this tab's engine holds claims on. */
  ownedWorkflows(): Promise<string[]> {
    return this.call('ownedWorkflows', {});
  }

  /** Counters and gauges of this tab's engine (claims by outcome, renewals, wakes discarded, …). */
  metrics(): Promise<EngineMetrics> {
    return this.call('metrics', {});
  }

  // -------------------------------------------------------------------------------------------------------
  // Workflows

  /**
   * Starts a workflow of a registered type and resolves with its id. In a viewer tab the workflow is created
   * here and run by another tab's engine.
   *
   * @param workflowType A definition name, e.g. `'countdown'` (see `definitions()`).
   * @param input The workflow's input (plain JSON data).
   * @param options `{ id?, executionTimeoutMs?, startDelayMs?, idReuse?, idempotencyKey? }`. A finished id
   * may be started again (a new run; the earlier one stays readable with `describe(id, { run })`):
   * `idReuse` is `'same-type'` (default), `'any-type'` or `'never'`. A repeated `idempotencyKey` (within the
   * engine's window, 24 h by default) resolves with the id of the run it started, creating nothing
   * (`startRun` says which happened).
   * @example
   * const id = await shuttle.start('countdown', { from: 5, tickMs: 200 }, { id: 'demo-1' });
   */
  async start(workflowType: string, input?: unknown, options?: StartOptions): Promise<string> {
    const params: Params<'start'> = { workflowType };
    if (input !== undefined) params.input = input;
    if (options !== undefined) params.options = options;
    return (await this.call('start', params)).workflowId;
  }

  /**
   * Like `start`, but resolves with the id, the run number, and `started`: false when the `idempotencyKey`
   * had already started that run (nothing was created).
   * @example
   * const first = await shuttle.startRun('countdown', { from: 5 }, { idempotencyKey: 'order-42' });
   * const again = await shuttle.startRun('countdown', { from: 5 }, { idempotencyKey: 'order-42' });
   * // again.workflowId === first.workflowId, again.started === false
   */
  startRun(workflowType: string, input?: unknown, options?: StartOptions): Promise<Result<'start'>> {
    const params: Params<'start'> = { workflowType };
    if (input !== undefined) params.input = input;
    if (options !== undefined) params.options = options;
    return this.call('start', params);
  }

  /**
   * Signals workflow `options.id` if it is running; otherwise starts it (a finished id: a new run) with the
   * signal already buffered, in one commit. Resolves with the run that got the signal.
   * @example
   * await shuttle.signalWithStart('approval', { order: 7 }, 'approve', { by: 'ana' }, { id: 'approval-7' });
   */
  signalWithStart(
    workflowType: string,
    input: unknown,
    signalName: string,
    payload: unknown,
    options: StartOptions & { id: string },
  ): Promise<Result<'signalWithStart'>> {
    const params: Params<'signalWithStart'> = { workflowType, signalName, options };
    if (input !== undefined) params.input = input;
    if (payload !== undefined) params.payload = payload;
    return this.call('signalWithStart', params);
  }

  /**
   * Completes an external activity (`completion: 'external'`) with `result`, exactly once; its token is in
   * `describe(id).pending.leaves[i].completionToken`.
   * @example
   * await shuttle.completeActivity(token, { approved: true });
   */
  async completeActivity(token: string, result?: unknown): Promise<void> {
    await this.call('completeActivity', result === undefined ? { token } : { token, result });
  }

  /** Fails an external activity; its retry policy applies. */
  async failActivity(token: string, error: { name?: string; message: string } | string): Promise<void> {
    await this.call('failActivity', { token, error: typeof error === 'string' ? { message: error } : error });
  }

  /** Sends a signal; it is stored durably and consumed by the workflow's owner, in whichever tab. */
  async signal(workflowId: string, name: string, payload?: unknown): Promise<void> {
    await this.call('signal', payload === undefined ? { workflowId, name } : { workflowId, name, payload });
  }

  /** Runs a query handler over the workflow's last committed state. */
  query<T = unknown>(workflowId: string, name: string, arg?: unknown): Promise<T> {
    return this.call(
      'query',
      arg === undefined ? { workflowId, name } : { workflowId, name, arg },
    ) as Promise<T>;
  }

  /**
   * Sends an update: validated here, applied once by the owner; resolves with the handler's return value.
   *
   * @param options `{ timeoutMs }`: how long to wait for the owner to apply it. Default 60,000.
   */
  update<T = unknown>(
    workflowId: string,
    name: string,
    arg?: unknown,
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    const params: Params<'update'> = { workflowId, name };
    if (arg !== undefined) params.arg = arg;
    if (options.timeoutMs !== undefined) params.timeoutMs = options.timeoutMs;
    return this.call('update', params, (options.timeoutMs ?? 60_000) + 5_000) as Promise<T>;
  }

  /** Asks the workflow to cancel (cooperatively: it may run cleanup and ends `cancelled`). */
  async cancel(workflowId: string, reason?: string): Promise<void> {
    await this.call('cancel', reason === undefined ? { workflowId } : { workflowId, reason });
  }

  /** Ends the workflow at once as `terminated`, whichever tab owns it; no more of its code runs. */
  async terminate(workflowId: string, reason?: string): Promise<void> {
    await this.call('terminate', reason === undefined ? { workflowId } : { workflowId, reason });
  }

  /** Parks the workflow durably and releases its claim, until `resume`. */
  async suspend(workflowId: string): Promise<void> {
    await this.call('suspend', { workflowId });
  }

  /** Resumes a suspended workflow; this tab's engine claims it and continues from its checkpoint. */
  async resume(workflowId: string): Promise<void> {
    await this.call('resume', { workflowId });
  }

  /**
   * Waits for the workflow to finish and resolves with its result, or rejects with its error
   * (`WorkflowFailedError`, `WorkflowCancelledError`, …). Registers a result waiter on this tab's engine.
   */
  result<T = unknown>(workflowId: string, options: { run?: number } = {}): Promise<T> {
    return this.call('result', { workflowId, ...options }, null) as Promise<T>;
  }

  /**
   * Status, type, version, owner and epoch, what it waits on, state, input, result or error — of the latest
   * run, or of `{ run }`, an earlier run kept by run history.
   */
  describe(workflowId: string, options: { run?: number } = {}): Promise<WorkflowDescription> {
    return this.call('describe', { workflowId, ...options });
  }

  /** Every stored run of a workflow id, latest first: `{ run, status, workflowType, createdAt, latest, … }`. */
  runs(workflowId: string): Promise<RunSummary[]> {
    return this.call('runs', { workflowId });
  }

  /**
   * A page of workflow summaries.
   *
   * @param filter `{ status?, workflowType?, ownerEngineId?, idPrefix?, limit? (1–1000, default 100), cursor?,
   * allRuns? }`; `allRuns: true` lists earlier runs too, each after its workflow's latest run.
   */
  list(filter?: ListFilter): Promise<ListPage> {
    return this.call('list', filter === undefined ? {} : { filter });
  }

  /** The workflow's durable timeline: `{ seq, at, engineId, epoch, kind, detail }` entries in order. */
  timeline(
    workflowId: string,
    options: { run?: number; after?: number; limit?: number } = {},
  ): Promise<TimelineEntry[]> {
    return this.call('timeline', { workflowId, ...options });
  }

  /**
   * What the run's history recorded for one operation — the result or error of the operation at `pos`
   * (`member` inside all / race, default 0): an activity's or child's result, a signal's payload, a
   * `waitUntil`'s true or false — or, with `{ updateId }`, the workflow's state right after that update. Of
   * the latest run, or `{ run }`. Null while nothing is recorded (the operation has not finished). Timeline
   * entries name the operation in `detail.pos` / `detail.member` and carry no values.
   * @example
   * const done = (await shuttle.timeline(id)).find((entry) => entry.kind === 'activity-completed');
   * await shuttle.operationOutcome(id, { pos: done.detail.pos, member: done.detail.member })
   * // → { kind: 'activity', name: 'charge', pos: 1, ok: true, value: { chargeId: 'ch_A-1' } }
   */
  operationOutcome(
    workflowId: string,
    of: ({ pos: number; member?: number } | { updateId: string }) & { run?: number },
  ): Promise<OperationOutcome | null> {
    return this.call('operationOutcome', { workflowId, ...of });
  }

  // -------------------------------------------------------------------------------------------------------
  // Purge and storage

  /**
   * Deletes every run of a finished workflow (its id may be started again as run 1), or only the earlier
   * run `{ run }`. Refused for a workflow that is not finished.
   */
  purge(workflowId: string, options: { run?: number } = {}): Promise<PurgeReport> {
    return this.call('purge', { workflowId, ...options });
  }

  /**
   * Purges every finished workflow a list filter matches (`{ status?, workflowType?, idPrefix? }`; status
   * may name finished statuses only). `{ dryRun: true }` only counts them.
   * @example
   * await shuttle.purgeFinished({ workflowType: 'countdown' }, { dryRun: true }) // → { matched: 12, … }
   */
  purgeFinished(
    filter: ListFilter = {},
    options: { dryRun?: boolean } = {},
  ): Promise<Result<'purgeFinished'>> {
    return this.call('purgeFinished', { filter, ...options });
  }

  /** How much room the store takes: the browser's estimate for this origin, or PostgreSQL table sizes. */
  storageUsage(): Promise<Result<'storageUsage'>> {
    return this.call('storageUsage', {});
  }

  // -------------------------------------------------------------------------------------------------------
  // Schedules

  /**
   * Creates a schedule: `spec.workflow` starts once per cron slot, on whichever engine gets there first (one
   * workflow per slot, id `<name>@<slot ISO time>`). The same spec again changes nothing; a different one is
   * refused unless `{ replace: true }`.
   *
   * @param spec `{ cron, workflow, input?, timezone? ('UTC'), overlap? ('skip' | 'buffer-one' | 'allow'),
   * catchUp? ('latest' | 'all' | 'none'), startOptions? }`.
   * @example
   * await shuttle.schedule('tick-every-minute', { cron: '* * * * *', workflow: 'countdown', input: { from: 3 } });
   */
  schedule(
    name: string,
    spec: ScheduleSpecInput,
    options: { replace?: boolean } = {},
  ): Promise<ScheduleInfo> {
    return this.call('createSchedule', { name, spec, ...options });
  }

  /** Every schedule, with its next fire times and its last slots. */
  schedules(): Promise<ScheduleInfo[]> {
    return this.call('schedules', {});
  }

  describeSchedule(name: string): Promise<ScheduleInfo> {
    return this.call('describeSchedule', { name });
  }

  /** Stops a schedule firing; slots missed while paused follow its catch-up when it resumes. */
  pauseSchedule(name: string): Promise<ScheduleInfo> {
    return this.call('pauseSchedule', { name });
  }

  resumeSchedule(name: string): Promise<ScheduleInfo> {
    return this.call('resumeSchedule', { name });
  }

  /** Starts one run now, outside the slots; resolves with its id and run. */
  triggerSchedule(name: string): Promise<{ workflowId: string; run: number }> {
    return this.call('triggerSchedule', { name });
  }

  /** Deletes a schedule; the workflows it started are left alone. */
  async deleteSchedule(name: string): Promise<void> {
    await this.call('deleteSchedule', { name });
  }

  /**
   * The next `count` (default 5) fire times of `cron` in `timezone` (default UTC), or the engine's reason for
   * refusing it (`{ ok: false, field, message }`). Writes nothing.
   */
  previewSchedule(
    cron: string,
    options: { timezone?: string; count?: number } = {},
  ): Promise<SchedulePreview> {
    return this.call('previewSchedule', { cron, ...options });
  }

  // -------------------------------------------------------------------------------------------------------
  // Ownership

  /** Every claim holder record in the database: workflow, engine, epoch, claimed at, expires at. */
  claims(): Promise<ClaimInfo[]> {
    return this.call('claims', {});
  }

  /**
   * Who holds the workflow's claim — `{ engineId, epoch, claimedAt, expiresAt, live }` — or null when nobody
   * does (finished, suspended, pending, or between owners). `live: false` means its holder is expired (its
   * session lapsed past the grace), stopped, or dead (its Web Lock is gone): any engine may take it over.
   * Rejects with `WorkflowNotFoundError` for an unknown id.
   * @example
   * const holder = await shuttle.claimHolder('demo-1');
   * // { engineId: '…', epoch: 1, claimedAt: …, expiresAt: …, live: true }
   */
  claimHolder(workflowId: string): Promise<ClaimHolder | null> {
    return this.call('claimHolder', { workflowId });
  }

  /**
   * Takes one workflow over on this tab's engine now — when, and only when, its holder is expired or dead
   * (or it has none). Resolves with the engine's outcome: `{ outcome: 'taken-over' | 'acquired', epoch }`,
   * `{ outcome: 'already-held', epoch }` (this engine holds it), `{ outcome: 'held-live', holder }` (refused:
   * its holder is live), or `not-running` / `ineligible` / `lost-race` / `corrupt`. A viewer tab (or the
   * studio server) claims nothing: it rejects with `ObserverCannotClaimError`; `WorkflowNotFoundError` for
   * an unknown id.
   * @example
   * const outcome = await shuttle.reclaim('demo-1');
   * if (outcome.outcome === 'held-live') console.log('still held by', outcome.holder.engineId);
   */
  reclaim(workflowId: string): Promise<ReclaimOutcome> {
    return this.call('reclaim', { workflowId });
  }

  /** Writes of deposed engines that storage refused (for one workflow, or all). */
  fenceRejections(workflowId?: string): Promise<FenceRejection[]> {
    return this.call('fenceRejections', workflowId === undefined ? {} : { workflowId });
  }

  /**
   * This tab's `result()` waiters: pending first, then recently settled, with how and how fast. (Every
   * engine's waiters are in `engines()`.)
   */
  resultWaiters(): Promise<ResultWaiterInfo[]> {
    return this.call('resultWaiters', {});
  }

  /**
   * Stops this tab's engine gracefully: releases every claim (other tabs take its workflows over at once)
   * and marks it stopped. The page does this by itself when the tab is closed or reloaded.
   */
  shutdown(): Promise<ShutdownReport> {
    return this.call('shutdown', {});
  }

  /**
   * The worker processes of the fleet the studio server controls (`shuttle dev`); `controlled: false` in a
   * tab, or on a server that controls none.
   */
  fleet(): Promise<Result<'fleet'>> {
    return this.call('fleet', {});
  }

  /** Starts one more worker process of the controlled fleet; resolves once its engine runs. */
  startWorker(): Promise<Result<'fleetAction'>> {
    return this.call('fleetAction', { action: 'start' });
  }

  /**
   * Thaws a worker process of the controlled fleet that a chaos freeze stopped (SIGCONT) before its freeze
   * ends; its next write at an epoch it lost is refused.
   */
  thawWorker(engineId: string): Promise<Result<'fleetAction'>> {
    return this.call('fleetAction', { engineId, action: 'thaw' });
  }

  /** Whether this page talks to a studio server (and runs no engine of its own). */
  get isServer(): boolean {
    return this.#server;
  }

  /**
   * For the page's `pagehide`: the tab is going away. Tells the other tabs at once (they count this tab's
   * engine dead and take its workflows over: the browser kills the worker before a graceful release could
   * land, and releases its Web Lock only a tenth of a second or more later), then asks the worker to shut
   * down gracefully, best effort. Any write the dying engine still makes is refused by the epoch fence.
   */
  exitTab(): void {
    tabLabels.ended(this.#config);
    const engineId = this.engineId;
    if (engineId && this.#config.mode === 'engine') this.#control?.announceExit(engineId, Date.now());
    this.shutdown().catch(() => undefined);
  }

  /**
   * For the page's `freeze` (Page Lifecycle API: the browser is about to freeze this background tab, and its
   * worker with it). Does at once, synchronously, what a closing tab does: tells the other tabs (they count
   * this tab's engine dead and take its workflows over without waiting for its claims to lapse), then
   * terminates the worker. Terminating rather than shutting down gracefully: the page gets no time after
   * this handler, a graceful release would run in a worker about to be frozen — possibly frozen inside an
   * IndexedDB transaction, which would stall every tab's writes until this one thaws — while terminating
   * aborts anything in flight and frees the engine's Web Lock, and the old engine can never run (or write)
   * again. `resumeTab()` starts a fresh engine. Does nothing in a viewer or when no engine runs here.
   */
  freezeTab(): void {
    if (this.#server || this.#config.mode !== 'engine' || !this.#worker) return;
    const engineId = this.engineId;
    if (engineId) this.#control?.announceExit(engineId, Date.now());
    tabLabels.ended(this.#config);
    this.#terminate(frozenAwayMessage);
    this.#frozenAway = true;
  }

  /**
   * For the page's `resume`: a tab that `freezeTab()` emptied starts a fresh engine (a new engine id, like
   * `restartThisTab()`), so nothing the old engine held is written again: its epochs are fenced by the
   * takeovers. Resolves with the new engine's `hello`, or null when the tab was not frozen away.
   */
  resumeTab(): Promise<HelloResult | null> {
    if (!this.#frozenAway) return Promise.resolve(null);
    this.#frozenAway = false;
    return this.restartThisTab();
  }

  // -------------------------------------------------------------------------------------------------------
  // Helpers

  /**
   * Resolves with the workflow's description once its status is one of `status`; rejects if it ends in
   * another status, or after `timeoutMs`. Re-checks whenever the store reports the workflow changed, and
   * every second. A workflow that does not exist yet is waited for.
   *
   * @example
   * await shuttle.waitFor(id, 'completed', { timeoutMs: 30_000 });
   */
  waitFor(
    workflowId: string,
    status: WorkflowStatus | readonly WorkflowStatus[],
    options: WaitForOptions = {},
  ): Promise<WorkflowDescription> {
    const wanted = new Set<WorkflowStatus>(typeof status === 'string' ? [status] : status);
    const timeoutMs = options.timeoutMs ?? 60_000;
    return new Promise((resolve, reject) => {
      let last: WorkflowDescription | null = null;
      let checking = false;
      let again = false;
      let done = false;
      const finish = (settle: () => void) => {
        if (done) return;
        done = true;
        unsubscribe();
        clearInterval(poll);
        clearTimeout(timer);
        settle();
      };
      const check = async () => {
        if (checking) {
          again = true;
          return;
        }
        checking = true;
        try {
          do {
            again = false;
            const description = await this.describe(workflowId);
            last = description;
            if (wanted.has(description.status)) return finish(() => resolve(description));
            if (isTerminal(description.status))
              return finish(() =>
                reject(
                  namedError(
                    'WorkflowStatusError',
                    `Workflow '${workflowId}' ended ${description.status}${description.error ? ` (${description.error.name}: ${description.error.message})` : ''} while waiting for ${[...wanted].join(' or ')}.`,
                    { workflowId, status: description.status },
                  ),
                ),
              );
          } while (again && !done);
        } catch (error) {
          if ((error as Error).name !== 'WorkflowNotFoundError') finish(() => reject(error as Error));
        } finally {
          checking = false;
        }
      };
      const unsubscribe = this.subscribe((message) => {
        if (message.kind === 'store-changed' && (message.workflowIds?.includes(workflowId) ?? true))
          void check();
      });
      const poll = setInterval(() => void check(), 1_000);
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(
              namedError(
                'WaitTimeoutError',
                `Workflow '${workflowId}' was ${last ? last.status : 'not found'} after ${timeoutMs} ms of waiting for ${[...wanted].join(' or ')}.`,
                { workflowId, status: last?.status ?? null },
              ),
            ),
          ),
        timeoutMs,
      );
      void check();
    });
  }

  /**
   * Calls `listener` with every message the worker pushes: engine `events`, `store-changed` notices,
   * `status` changes, `warning`s and `heartbeat`s. Returns the function that unsubscribes.
   */
  subscribe(listener: (message: PushMessage) => void): () => void {
    this.#pushListeners.add(listener);
    return () => this.#pushListeners.delete(listener);
  }

  /** The state of the link to the worker: `connecting`, `ready`, `unresponsive`, `crashed` or `closed`. */
  get connection(): ClientConnection {
    return this.#connection;
  }

  /** Calls `listener` whenever `connection` changes. Returns the function that unsubscribes. */
  onConnectionChange(listener: () => void): () => void {
    this.#connectionListeners.add(listener);
    return () => this.#connectionListeners.delete(listener);
  }

  /**
   * The low-level form of every method: sends one protocol request and resolves with its result.
   *
   * @param timeoutMs How long to wait for the answer; `null` waits as long as the worker lives.
   */
  call<M extends Method>(
    method: M,
    params: Params<M>,
    timeoutMs: number | null = this.#requestTimeoutMs,
  ): Promise<Result<M>> {
    const origin = new Error();
    const stopped = this.#stoppedError();
    if (stopped) return Promise.reject(stopped);
    const id = this.#nextId++;
    return new Promise<Result<M>>((resolve, reject) => {
      const pending: Pending = {
        method,
        resolve: resolve as (value: unknown) => void,
        reject,
        origin,
        timer:
          timeoutMs === null
            ? null
            : setTimeout(() => {
                this.#pending.delete(id);
                reject(
                  namedError(
                    'RequestTimeoutError',
                    `The engine worker of this tab did not answer '${method}' within ${timeoutMs} ms; it may have stopped. Reload the tab if this keeps happening.`,
                    { method, timeoutMs },
                  ),
                );
              }, timeoutMs),
      };
      this.#pending.set(id, pending);
      const message = { kind: 'request', v: PROTOCOL_VERSION, id, method, params } as RequestMessage;
      try {
        if (!this.#worker) throw new Error('this tab has no engine worker');
        this.#worker.postMessage(message);
      } catch (error) {
        this.#settle(id);
        reject(
          namedError(
            'DataCloneError',
            `'${method}' could not be sent to the engine worker: ${(error as Error).message}. Pass plain data (no functions, DOM nodes or class instances).`,
          ),
        );
      }
    });
  }

  /** Prints a summary of the console API. */
  help(): void {
    console.log(
      [
        'shuttle — the console API of this tab’s Shuttle engine (every method returns a promise):',
        '  hello() · engines() · definitions() · ownedWorkflows() · metrics()',
        "  start(type, input?, { id?, executionTimeoutMs?, startDelayMs?, idReuse?, idempotencyKey? })   e.g. start('countdown', { from: 5, tickMs: 200 })",
        '  signalWithStart(type, input, signalName, payload, { id, …startOptions })',
        '  completeActivity(token, result?) · failActivity(token, message | { name?, message })   tokens: describe(id).pending.leaves',
        '  signal(id, name, payload?) · query(id, name, arg?) · update(id, name, arg?, { timeoutMs? })',
        '  cancel(id, reason?) · terminate(id, reason?) · suspend(id) · resume(id) · result(id, { run? })',
        '  describe(id, { run? }) · runs(id) · timeline(id, { run? }) · list({ status?, workflowType?, ownerEngineId?, idPrefix?, limit?, allRuns? })',
        '  operationOutcome(id, { pos, member?, run? } | { updateId, run? })   what history recorded for an operation: its result, payload or error',
        "  schedule(name, { cron, workflow, input?, timezone?, overlap?, catchUp? }, { replace? })   e.g. schedule('every-minute', { cron: '* * * * *', workflow: 'countdown' })",
        '  purge(id, { run? }) · purgeFinished({ status?, workflowType?, idPrefix? }, { dryRun? }) · storageUsage()',
        '  schedules() · describeSchedule(name) · pauseSchedule(name) · resumeSchedule(name) · triggerSchedule(name) · deleteSchedule(name)',
        '  claims() · fenceRejections(id?) · resultWaiters() · shutdown() · restartThisTab()',
        '  claimHolder(id)   who holds it: { engineId, epoch, expiresAt, live } or null',
        "  reclaim(id)   take it over here only if its holder is expired or dead, e.g. (await reclaim(id)).outcome === 'taken-over'",
        '  compileDefinition(source) · saveDefinition(source, { force? }) · deleteDefinition(name, version)',
        "      source: a TypeScript module, default export a defineWorkflow definition, imports from 'shuttle' only",
        "  waitFor(id, status | statuses, { timeoutMs? })   e.g. waitFor(id, 'completed')",
        '  chaos.freeze(engineId, seconds) · chaos.crash(engineId) · chaos.shutdown(engineId) · chaos.restart(engineId)',
        "      on any tab's engine, e.g. chaos.freeze((await engines())[1].engineId, 10)",
        '  chaos.start(engineId, type, { input?, options?, notBefore? })   have that tab’s engine start a workflow',
        '  subscribe(message => …) for pushed engine events and store changes · onEngineChange(hello => …)',
        '  engineId · connection · ready',
      ].join('\n'),
    );
  }

  /** Stops listening to the worker and fails pending calls (the worker itself is left running). */
  close(): void {
    if (this.#worker) this.#detach(this.#worker);
    this.#control?.close();
    clearInterval(this.#watchdog);
    this.#setConnection({ state: 'closed', since: Date.now(), message: 'This client was closed.' });
    this.#failPending(namedError('EngineWorkerStoppedError', 'This client was closed.'));
  }

  // -------------------------------------------------------------------------------------------------------
  // Internals

  readonly #onMessage = (event: MessageEvent<unknown>): void => {
    const message = parseWorkerMessage(event.data);
    if (!message) {
      console.warn(
        '[shuttle] ignored a message from the engine worker that is not a protocol message',
        event.data,
      );
      return;
    }
    this.#lastHeardAt = Date.now();
    if (this.#connection.state === 'connecting' || this.#connection.state === 'unresponsive')
      this.#setConnection({ state: 'ready' });
    if (message.kind === 'response') {
      const pending = this.#settle(message.id);
      if (!pending) return;
      if (message.ok) pending.resolve(message.value);
      else pending.reject(rebuildError(message.error, pending.origin));
      return;
    }
    if (message.kind === 'status') this.#noteStatus(message.status);
    for (const listener of [...this.#pushListeners]) {
      try {
        listener(message);
      } catch (error) {
        console.error('[shuttle] a push listener threw', error);
      }
    }
  };

  #noteStatus(status: HostStatus): void {
    this.#frozenUntil = status.state === 'frozen' ? (status.frozenUntil ?? 0) : 0;
  }

  #attach(worker: WorkerLike): void {
    worker.addEventListener('message', this.#onMessage);
    worker.addEventListener('error', this.#onError);
  }

  #detach(worker: WorkerLike): void {
    worker.removeEventListener('message', this.#onMessage);
    worker.removeEventListener('error', this.#onError);
  }

  /** Terminates the worker at once; the tab is left without an engine. Returns the terminated engine's id. */
  #terminate(message: string): string | null {
    const worker = this.#worker;
    const engineId = this.#engineId;
    if (!worker) return null;
    this.#detach(worker);
    worker.terminate();
    this.#worker = null;
    this.#frozenUntil = 0;
    this.#setConnection({ state: 'crashed', since: Date.now(), message });
    this.#failPending(namedError('EngineWorkerStoppedError', message));
    return engineId;
  }

  async #restart(): Promise<HelloResult> {
    if (!this.#spawnWorker)
      throw namedError(
        'UnsupportedError',
        'This client cannot start a new engine worker (it was created without spawnWorker). Reload the tab instead.',
      );
    this.#frozenAway = false;
    const oldEngine = this.#terminate(
      'This tab’s engine worker was terminated to restart it; a new engine is starting.',
    );
    if (oldEngine) this.#noteCrash(oldEngine, Date.now());
    tabLabels.ended(this.#config);
    const worker = this.#spawnWorker();
    this.#worker = worker;
    this.#engineId = null;
    this.#attach(worker);
    this.#lastHeardAt = Date.now();
    this.#setConnection({ state: 'connecting' });
    this.#ready = this.hello();
    this.#ready.catch(() => undefined);
    const hello = await this.#ready;
    for (const crash of this.#unrecordedCrashes.splice(0))
      this.call('recordCrash', crash).catch(() => undefined);
    for (const listener of [...this.#engineListeners]) {
      try {
        listener(hello);
      } catch (error) {
        console.error('[shuttle] an engine-change listener threw', error);
      }
    }
    return hello;
  }

  /** An engine of this tab was terminated: tell the other tabs, and remember it for this tab's next worker. */
  #noteCrash(engineId: string, at: number): void {
    this.#unrecordedCrashes.push({ engineId, at });
    this.#control?.announceCrash(engineId, at);
  }

  /** Another tab is going away: this tab's engine counts its engine dead and takes its workflows over. */
  #engineExiting(engineId: string): void {
    if (!this.#worker || this.#connection.state !== 'ready') return;
    this.call('engineExiting', { engineId }).catch(() => undefined);
  }

  /** Another tab terminated `engineId`: this tab's engine records it in that engine's presence record. */
  #recordCrash(engineId: string, at: number): void {
    if (!this.#worker || this.#connection.state !== 'ready') return;
    this.call('recordCrash', { engineId, at }).catch(() => undefined);
  }

  #controlRequest<A extends ControlAction>(engineId: string, action: A): Promise<ControlOutcomes[A['type']]> {
    if (typeof engineId !== 'string' || engineId.length === 0)
      return Promise.reject(
        namedError('InvalidArgumentError', `chaos.${action.type}: engineId must be an engine id string.`),
      );
    if (this.#server) return this.#fleetChaos(engineId, action) as Promise<ControlOutcomes[A['type']]>;
    if (this.#control) return this.#control.request(engineId, action);
    if (
      engineId === this.engineId ||
      (action.type === 'restart' && !this.#worker && engineId === this.#engineId)
    )
      return this.#perform(action, engineId) as Promise<ControlOutcomes[A['type']]>;
    return Promise.reject(
      namedError(
        'ControlTargetNotFoundError',
        `Engine ${engineId} is not this tab's, and this client has no control channel to reach other tabs.`,
        { engineId, action: action.type },
      ),
    );
  }

  /** Chaos on a worker process of the fleet the studio server controls (the server refuses if none). */
  async #fleetChaos(engineId: string, action: ControlAction): Promise<ControlOutcome> {
    switch (action.type) {
      case 'freeze':
        await this.call('fleetAction', { engineId, action: 'freeze', seconds: action.seconds });
        return { engineId, frozenUntil: Date.now() + action.seconds * 1000 };
      case 'crash':
        await this.call('fleetAction', { engineId, action: 'kill' });
        return { engineId, crashedAt: Date.now() };
      case 'shutdown':
        await this.call('fleetAction', { engineId, action: 'stop' });
        return { engineId, claimsReleased: 0 };
      case 'restart': {
        await this.call('fleetAction', { engineId, action: 'stop' });
        const started = await this.call('fleetAction', { action: 'start' });
        return { engineId, newEngineId: started.engineId ?? '' };
      }
      case 'start':
        throw namedError(
          'UnsupportedError',
          'chaos.start: a studio server cannot choose which worker process starts a workflow; use start().',
          { engineId, action: action.type },
        );
    }
  }

  /** Performs a chaos action on this tab's engine (asked by this tab or, through the channel, another). */
  async #perform(action: ControlAction, engineId: string): Promise<ControlOutcome> {
    const hosted = this.engineId === engineId;
    const former = !this.#worker && this.#engineId === engineId;
    if (!hosted && !(former && action.type === 'restart'))
      throw namedError(
        'ControlTargetNotFoundError',
        `This tab does not run engine ${engineId}${former ? ' any more (it crashed; it can only be restarted)' : ''}.`,
        { engineId, action: action.type },
      );
    switch (action.type) {
      case 'freeze': {
        if (this.#frozenUntil > Date.now())
          throw namedError(
            'InvalidWorkflowStateError',
            `${this.#label ?? 'This engine'} is already frozen until ${new Date(this.#frozenUntil).toISOString()}.`,
          );
        const { frozenUntil } = await this.call('freeze', { seconds: action.seconds });
        return { engineId, frozenUntil };
      }
      case 'crash': {
        const crashedAt = Date.now();
        this.#terminate(
          'This tab’s engine worker was crashed on purpose (chaos). Its workflows moved to other tabs; restart the engine or reload the tab.',
        );
        this.#noteCrash(engineId, crashedAt);
        return { engineId, crashedAt };
      }
      case 'shutdown': {
        const report = await this.shutdown();
        return { engineId, claimsReleased: report.claimsReleased };
      }
      case 'restart': {
        const hello = await this.restartThisTab();
        return { engineId, newEngineId: hello.engineId };
      }
      case 'start': {
        const delay = Math.min((action.notBefore ?? 0) - Date.now(), maxStartDelayMs);
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
        if (this.engineId !== engineId)
          throw namedError(
            'ControlTargetNotFoundError',
            `This tab does not run engine ${engineId} any more (it was replaced while the start waited).`,
            { engineId, action: action.type },
          );
        const workflowId = await this.start(action.workflowType, action.input, action.options);
        return { engineId, workflowId };
      }
    }
  }

  readonly #onError = (event: Event): void => {
    const detail = (event as ErrorEvent).message;
    const message = `${this.#server ? serverLostMessage : stoppedMessage}${detail ? ` (${detail})` : ''}`;
    this.#setConnection({ state: 'crashed', since: Date.now(), message });
    this.#failPending(namedError('EngineWorkerStoppedError', message));
  };

  #checkSilence(): void {
    // Only a worker that has spoken can fall silent; one still loading fails by its `error` event or timeouts.
    if (this.#connection.state !== 'ready') return;
    const silentMs = Date.now() - Math.max(this.#lastHeardAt, this.#frozenUntil);
    if (silentMs <= this.#unresponsiveAfterMs) return;
    const message = `${this.#server ? serverLostMessage : stoppedMessage} (it has not answered for ${Math.round(silentMs / 1000)} s)`;
    this.#setConnection({ state: 'unresponsive', since: Date.now(), message });
    this.#failPending(namedError('EngineWorkerStoppedError', message));
  }

  #stoppedError(): Error | null {
    const connection = this.#connection;
    return connection.state === 'crashed' ||
      connection.state === 'unresponsive' ||
      connection.state === 'closed'
      ? namedError('EngineWorkerStoppedError', connection.message)
      : null;
  }

  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    if (pending.timer !== null) clearTimeout(pending.timer);
    return pending;
  }

  #failPending(error: Error): void {
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(error);
  }

  #setConnection(next: ClientConnection): void {
    this.#connection = next;
    for (const listener of [...this.#connectionListeners]) {
      try {
        listener();
      } catch (error) {
        console.error('[shuttle] a connection listener threw', error);
      }
    }
  }
}

/**
 * Connects to an engine worker: sends `hello` with the database and mode, and returns the client.
 *
 * @example
 * const client = createShuttleClient(new Worker(url, { type: 'module' }), { databaseName: 'shuttle', mode: 'engine' });
 * const me = await client.ready;
 */
export function createShuttleClient(worker: WorkerLike, options: ShuttleClientOptions): ShuttleClient {
  return new ShuttleClient(worker, options);
}
