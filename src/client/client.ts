/**
 * The main-thread client of a tab's engine worker (or of a studio server): `ShuttleClient`. The studio's UI
 * uses it through query hooks, and it is exposed as `window.shuttle`, the console API, so everything here
 * is documented for people typing in devtools.
 *
 * - `client.api` (api.ts): every method of the wire contract, one function each, derived from the
 *   protocol's declarations (src/protocol): a method declared there is callable here at once.
 * - The console's methods (console-methods.ts, inherited): positional arguments, one line each over `api`.
 * - Here: what runs on the page itself — the tab's engine (`hello`, `ready`, `engineId`), replacing it
 *   (`restartThisTab`, `freezeTab`, `resumeTab`, `exitTab`), `chaos` (chaos.ts), `waitFor` (wait-for.ts),
 *   and the link to the worker (`call`, `subscribe`, `connection`: worker-link.ts).
 *
 * Guarantees:
 * - Every call settles: with the worker's value, or with an `Error` carrying the engine's name, message and
 *   detail fields (`workflowId`, `heldBy`, …). A call the worker does not answer in time rejects with
 *   `RequestTimeoutError`; calls that legitimately wait (`result`, `update`, `waitFor`) have their own limits
 *   but still fail when the worker dies (`EngineWorkerStoppedError`, "reload the tab"). See worker-link.ts.
 * - The tab's engine can be replaced: `restartThisTab()` (or a chaos `restart` from any tab) terminates the
 *   worker and starts a new one with a new engine id, on the same client object. Calls pending on the old
 *   worker reject with `EngineWorkerStoppedError`; `onEngineChange` listeners get the new engine's `hello`.
 * - `chaos` acts on any engine of the database: this tab's directly, another tab's through the control
 *   channel (control-channel.ts), each call resolving when the hosting tab has done it.
 * - A tab's page holds the Web Lock `shuttle-tab:<engineId>` while that engine is its engine (from its first
 *   answer until the page closes or its next engine answers), so other tabs can tell a stopped engine of an
 *   open page (which can be restarted) from one whose page is gone.
 */
import type { WorkflowDescription, WorkflowStatus } from '../engine';
import {
  PROTOCOL_VERSION,
  tabLockName,
  type HelloResult,
  type Method,
  type Params,
  type PushMessage,
  type Result,
  type WorkerConfig,
} from '../protocol';
import { createApi, type ProtocolApi } from './api';
import { createChaosControls, performOnThisTab, type ChaosControls, type ChaosHost } from './chaos';
import { ConsoleMethods } from './console-methods';
import { ControlChannel, type BroadcastPort } from './control-channel';
import { namedError } from './errors';
import { labelEnded, labelToKeep, rememberLabel } from './label-keeper';
import { waitForStatus, type WaitForOptions } from './wait-for';
import { WorkerLink, type ClientConnection, type WorkerLike } from './worker-link';

export type { ProtocolApi } from './api';
export type { ChaosControls } from './chaos';
export { rebuildError } from './errors';
export type { WaitForOptions } from './wait-for';
export type { ClientConnection, WorkerLike } from './worker-link';

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

const frozenAwayMessage =
  'The browser froze this tab: its engine was stopped and its workflows moved to other tabs. A new engine starts when the tab resumes.';

/**
 * The studio's client of this tab's engine worker, also available in devtools as `window.shuttle`.
 * Run `shuttle.help()` for a summary.
 *
 * @example
 * const id = await shuttle.start('countdown', { from: 5, tickMs: 200 });
 * await shuttle.waitFor(id, 'completed');
 * console.table(await shuttle.timeline(id));
 */
export class ShuttleClient extends ConsoleMethods {
  readonly #link: WorkerLink;
  readonly #config: WorkerConfig;
  readonly #spawnWorker: (() => WorkerLike) | null;
  readonly #control: ControlChannel | null;
  readonly #engineListeners = new Set<(engine: HelloResult) => void>();
  readonly #server: boolean;
  #ready: Promise<HelloResult>;
  /** The engine this tab hosts now (from the last hello), or null when it hosts none. */
  #engineId: string | null = null;
  #label: string | null = null;
  /** Engines of this tab terminated while no worker could record it: recorded by the next worker. */
  readonly #unrecordedCrashes: { engineId: string; at: number }[] = [];
  #restarting: Promise<HelloResult> | null = null;
  /** The browser froze this tab and `freezeTab()` terminated its engine: `resumeTab()` starts a new one. */
  #frozenAway = false;
  /** The Web Lock `shuttle-tab:<engineId>` this page holds for its engine (see `#holdTabLock`). */
  #tabLock: { engineId: string; release: () => void } | null = null;

  /**
   * Every method of the wire contract, one function each, taking its params object and resolving with its
   * result — built from the protocol's declarations (src/protocol/methods.ts), so a method declared there is
   * here at once. Same request path as every other method (`call`).
   *
   * @example
   * await shuttle.api.describe({ workflowId: 'demo-1', run: 1 });
   * await shuttle.api.fenceRejections({});
   */
  override readonly api: ProtocolApi = createApi((method, params, timeoutMs) =>
    this.call(method, params, timeoutMs),
  );

  /**
   * Chaos actions on any engine of the database (this tab's or another tab's): freeze, crash, shutdown,
   * restart, start. See `ChaosControls`.
   *
   * @example
   * const [, other] = await shuttle.engines();
   * await shuttle.chaos.freeze(other.engineId, 10);
   */
  readonly chaos: ChaosControls;

  constructor(worker: WorkerLike, options: ShuttleClientOptions) {
    super();
    this.#server = options.server ?? false;
    this.#config = { databaseName: options.databaseName, mode: options.mode };
    this.#spawnWorker = options.spawnWorker ?? null;
    this.#link = new WorkerLink(worker, {
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      unresponsiveAfterMs: options.unresponsiveAfterMs ?? 10_000,
      server: this.#server,
    });
    const chaosHost = this.#chaosHost();
    this.chaos = createChaosControls(chaosHost);
    this.#control = options.controlPort
      ? new ControlChannel({
          port: options.controlPort,
          localEngineId: () => this.engineId,
          formerEngineId: () => this.#formerEngineId(),
          perform: (action, engineId) => performOnThisTab(chaosHost, action, engineId),
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
    return this.#link.worker ? this.#engineId : null;
  }

  /** Whether this page talks to a studio server (and runs no engine of its own). */
  get isServer(): boolean {
    return this.#server;
  }

  // -------------------------------------------------------------------------------------------------------
  // This tab's engine

  /** This tab's engine: id, label, colour, mode (`engine` or `viewer`), database and current status. */
  async hello(): Promise<HelloResult> {
    const worker = this.#link.worker;
    const keepLabel = this.#server || this.#config.mode !== 'engine' ? null : labelToKeep(this.#config);
    const hello = await this.api.hello({
      protocolVersion: PROTOCOL_VERSION,
      ...this.#config,
      ...(keepLabel ? { keepLabel } : {}),
    });
    if (worker === this.#link.worker) {
      this.#engineId = hello.engineId;
      this.#label = hello.label;
      this.#link.noteStatus(hello.status);
      if (hello.mode === 'engine' && hello.runtime.kind === 'tab')
        rememberLabel(this.#config, hello.label, hello.engineId);
      if (hello.runtime.kind === 'tab' && !this.#server) this.#holdTabLock(hello.engineId);
    }
    return hello;
  }

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

  /**
   * For the page's `pagehide`: the tab is going away. Tells the other tabs at once (they count this tab's
   * engine dead and take its workflows over: the browser kills the worker before a graceful release could
   * land, and releases its Web Lock only a tenth of a second or more later), then asks the worker to shut
   * down gracefully, best effort. Any write the dying engine still makes is refused by the epoch fence.
   */
  exitTab(): void {
    labelEnded(this.#config);
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
    if (this.#server || this.#config.mode !== 'engine' || !this.#link.worker) return;
    const engineId = this.engineId;
    if (engineId) this.#control?.announceExit(engineId, Date.now());
    labelEnded(this.#config);
    this.#link.terminate(frozenAwayMessage);
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
  // Helpers, pushes and the link to the worker

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
    return waitForStatus(this, workflowId, status, options);
  }

  /**
   * Calls `listener` with every message the worker pushes: engine `events`, `store-changed` notices,
   * `status` changes, `warning`s and `heartbeat`s. Returns the function that unsubscribes.
   */
  subscribe(listener: (message: PushMessage) => void): () => void {
    return this.#link.subscribe(listener);
  }

  /** The state of the link to the worker: `connecting`, `ready`, `unresponsive`, `crashed` or `closed`. */
  get connection(): ClientConnection {
    return this.#link.connection;
  }

  /** Calls `listener` whenever `connection` changes. Returns the function that unsubscribes. */
  onConnectionChange(listener: () => void): () => void {
    return this.#link.onConnectionChange(listener);
  }

  /**
   * The low-level form of every method: sends one protocol request and resolves with its result.
   *
   * @param timeoutMs How long to wait for the answer; `null` waits as long as the worker lives.
   */
  call<M extends Method>(method: M, params: Params<M>, timeoutMs?: number | null): Promise<Result<M>> {
    return this.#link.call(method, params, timeoutMs);
  }

  /** Stops listening to the worker and fails pending calls (the worker itself is left running). */
  close(): void {
    this.#tabLock?.release();
    this.#tabLock = null;
    this.#control?.close();
    this.#link.close('This client was closed.');
  }

  // -------------------------------------------------------------------------------------------------------
  // Internals

  /** The engine whose worker this tab terminated while it runs none (it can still be restarted), or null. */
  #formerEngineId(): string | null {
    return this.#link.worker ? null : this.#engineId;
  }

  /**
   * Holds the Web Lock `shuttle-tab:<engineId>` for as long as this page hosts `engineId` — until the page
   * goes (the browser releases a page's locks when it closes or crashes) or its next engine answers — and
   * lets go of the previous engine's. The other tabs' engines read it (`engines()`'s `tabOpen`): a held lock
   * means this page can still restart that engine, a released one that nothing can. Without Web Locks, no
   * lock is taken and the other tabs cannot tell.
   */
  #holdTabLock(engineId: string): void {
    if (this.#tabLock?.engineId === engineId) return;
    this.#tabLock?.release();
    this.#tabLock = null;
    const locks = (globalThis as { navigator?: { locks?: LockManager } }).navigator?.locks;
    if (!locks) return;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    locks.request(tabLockName(engineId), { mode: 'exclusive' }, () => held).catch(() => undefined);
    this.#tabLock = { engineId, release };
  }

  /** Terminates the worker at once; the tab is left without an engine. Returns the terminated engine's id. */
  #terminate(message: string): string | null {
    const engineId = this.#engineId;
    return this.#link.terminate(message) ? engineId : null;
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
    labelEnded(this.#config);
    const worker = this.#spawnWorker();
    this.#engineId = null;
    this.#link.replace(worker);
    this.#ready = this.hello();
    this.#ready.catch(() => undefined);
    const hello = await this.#ready;
    for (const crash of this.#unrecordedCrashes.splice(0)) this.api.recordCrash(crash).catch(() => undefined);
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
    if (!this.#link.worker || this.connection.state !== 'ready') return;
    this.api.engineExiting({ engineId }).catch(() => undefined);
  }

  /** Another tab terminated `engineId`: this tab's engine records it in that engine's presence record. */
  #recordCrash(engineId: string, at: number): void {
    if (!this.#link.worker || this.connection.state !== 'ready') return;
    this.api.recordCrash({ engineId, at }).catch(() => undefined);
  }

  /** What chaos (chaos.ts) may see and do of this tab's engine. */
  #chaosHost(): ChaosHost {
    return {
      api: this.api,
      server: this.#server,
      control: () => this.#control,
      engineId: () => this.engineId,
      formerEngineId: () => this.#formerEngineId(),
      frozenUntil: () => this.#link.frozenUntil,
      label: () => this.#label,
      terminate: (message) => void this.#terminate(message),
      noteCrash: (engineId, at) => this.#noteCrash(engineId, at),
      restartThisTab: () => this.restartThisTab(),
      start: (workflowType, input, options) => this.start(workflowType, input, options),
    };
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
