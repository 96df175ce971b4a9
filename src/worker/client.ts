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
 */
import type {
  ClaimInfo,
  EngineMetrics,
  FenceRejection,
  ListFilter,
  ListPage,
  ResultWaiterInfo,
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
  type DefinitionInfo,
  type EngineRecord,
  type HelloResult,
  type Method,
  type Params,
  type PushMessage,
  type RequestMessage,
  type Result,
  type WorkerConfig,
} from './protocol';

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
};

/** Options of `waitFor`. */
export type WaitForOptions = {
  /** Give up after this many ms. Default 60,000. */
  timeoutMs?: number;
};

const terminalStatuses: ReadonlySet<WorkflowStatus> = new Set([
  'completed',
  'failed',
  'cancelled',
  'terminated',
  'timed-out',
]);

const stoppedMessage = 'The engine worker of this tab stopped; reload the tab.';

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
 * The studio's client of this tab's engine worker, also available in devtools as `window.shuttle`.
 * Run `shuttle.help()` for a summary.
 *
 * @example
 * const id = await shuttle.start('countdown', { from: 5, tickMs: 200 });
 * await shuttle.waitFor(id, 'completed');
 * console.table(await shuttle.timeline(id));
 */
export class ShuttleClient {
  /** Settles with this tab's engine information once the worker answered the first `hello`. */
  readonly ready: Promise<HelloResult>;
  readonly #worker: WorkerLike;
  readonly #config: WorkerConfig;
  readonly #requestTimeoutMs: number;
  readonly #unresponsiveAfterMs: number;
  readonly #pending = new Map<number, Pending>();
  readonly #pushListeners = new Set<(message: PushMessage) => void>();
  readonly #connectionListeners = new Set<() => void>();
  readonly #watchdog: ReturnType<typeof setInterval>;
  #nextId = 1;
  #connection: ClientConnection = { state: 'connecting' };
  #lastHeardAt = Date.now();

  constructor(worker: WorkerLike, options: ShuttleClientOptions) {
    this.#worker = worker;
    this.#config = { databaseName: options.databaseName, mode: options.mode };
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#unresponsiveAfterMs = options.unresponsiveAfterMs ?? 10_000;
    worker.addEventListener('message', this.#onMessage);
    worker.addEventListener('error', this.#onError);
    this.#watchdog = setInterval(() => this.#checkSilence(), Math.min(1_000, this.#unresponsiveAfterMs));
    this.ready = this.hello();
    this.ready.catch(() => undefined);
  }

  // -------------------------------------------------------------------------------------------------------
  // Engine information

  /** This tab's engine: id, label, colour, mode (`engine` or `viewer`), database and current status. */
  hello(): Promise<HelloResult> {
    return this.call('hello', { protocolVersion: PROTOCOL_VERSION, ...this.#config });
  }

  /** Every engine of this database (live or recently dead), from their presence records and Web Locks. */
  engines(): Promise<EngineRecord[]> {
    return this.call('engines', {});
  }

  /** The workflow definitions this tab's engine has registered, with descriptions and sample inputs. */
  definitions(): Promise<DefinitionInfo[]> {
    return this.call('definitions', {});
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
   * @param options `{ id?, executionTimeoutMs?, startDelayMs? }`.
   * @example
   * const id = await shuttle.start('countdown', { from: 5, tickMs: 200 }, { id: 'demo-1' });
   */
  async start(workflowType: string, input?: unknown, options?: StartOptions): Promise<string> {
    const params: Params<'start'> = { workflowType };
    if (input !== undefined) params.input = input;
    if (options !== undefined) params.options = options;
    return (await this.call('start', params)).workflowId;
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
  result<T = unknown>(workflowId: string): Promise<T> {
    return this.call('result', { workflowId }, null) as Promise<T>;
  }

  /** Status, type, version, owner and epoch, what it waits on, state, input, result or error. */
  describe(workflowId: string): Promise<WorkflowDescription> {
    return this.call('describe', { workflowId });
  }

  /**
   * A page of workflow summaries.
   *
   * @param filter `{ status?, workflowType?, ownerEngineId?, idPrefix?, limit? (1–1000, default 100), cursor? }`.
   */
  list(filter?: ListFilter): Promise<ListPage> {
    return this.call('list', filter === undefined ? {} : { filter });
  }

  /** The workflow's durable timeline: `{ seq, at, engineId, epoch, kind, detail }` entries in order. */
  timeline(workflowId: string, options: { after?: number; limit?: number } = {}): Promise<TimelineEntry[]> {
    return this.call('timeline', { workflowId, ...options });
  }

  // -------------------------------------------------------------------------------------------------------
  // Ownership

  /** Every claim holder record in the database: workflow, engine, epoch, claimed at, expires at. */
  claims(): Promise<ClaimInfo[]> {
    return this.call('claims', {});
  }

  /** Writes of deposed engines that storage refused (for one workflow, or all). */
  fenceRejections(workflowId?: string): Promise<FenceRejection[]> {
    return this.call('fenceRejections', workflowId === undefined ? {} : { workflowId });
  }

  /** This tab's `result()` waiters: pending first, then recently settled, with how and how fast. */
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
            if (terminalStatuses.has(description.status))
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
        "  start(type, input?, { id?, executionTimeoutMs?, startDelayMs? })   e.g. start('countdown', { from: 5, tickMs: 200 })",
        '  signal(id, name, payload?) · query(id, name, arg?) · update(id, name, arg?, { timeoutMs? })',
        '  cancel(id, reason?) · terminate(id, reason?) · suspend(id) · resume(id) · result(id)',
        '  describe(id) · list({ status?, workflowType?, ownerEngineId?, idPrefix?, limit? }) · timeline(id)',
        '  claims() · fenceRejections(id?) · resultWaiters() · shutdown()',
        "  waitFor(id, status | statuses, { timeoutMs? })   e.g. waitFor(id, 'completed')",
        '  subscribe(message => …) for pushed engine events and store changes',
      ].join('\n'),
    );
  }

  /** Stops listening to the worker and fails pending calls (the worker itself is left running). */
  close(): void {
    this.#worker.removeEventListener('message', this.#onMessage);
    this.#worker.removeEventListener('error', this.#onError);
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
    for (const listener of [...this.#pushListeners]) {
      try {
        listener(message);
      } catch (error) {
        console.error('[shuttle] a push listener threw', error);
      }
    }
  };

  readonly #onError = (event: Event): void => {
    const detail = (event as ErrorEvent).message;
    const message = `${stoppedMessage}${detail ? ` (${detail})` : ''}`;
    this.#setConnection({ state: 'crashed', since: Date.now(), message });
    this.#failPending(namedError('EngineWorkerStoppedError', message));
  };

  #checkSilence(): void {
    // Only a worker that has spoken can fall silent; one still loading fails by its `error` event or timeouts.
    if (this.#connection.state !== 'ready') return;
    const silentMs = Date.now() - this.#lastHeardAt;
    if (silentMs <= this.#unresponsiveAfterMs) return;
    const message = `${stoppedMessage} (it has not answered for ${Math.round(silentMs / 1000)} s)`;
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
