/**
 * The link between a page and its engine worker (or a studio server's WebSocket, shaped like a worker:
 * server-connection.ts): the request path every call of the client takes, what the worker pushes, and
 * whether the worker is still there.
 *
 * Guarantees:
 * - Every call settles. It resolves with the worker's value, or rejects with an `Error` whose `name`,
 *   `message` and detail fields (`workflowId`, `heldBy`, …) are those the engine raised in the worker
 *   (`rebuildError`), with the caller's stack.
 * - A call the worker does not answer within its timeout rejects with `RequestTimeoutError`; a call without
 *   one (`timeoutMs: null`) still fails when the worker dies. What cannot be posted (not cloneable, or no
 *   worker) rejects with `DataCloneError` before it reaches the worker.
 * - The worker is considered stopped when it crashes (its `error` event) or, once it has spoken, stays silent
 *   longer than `unresponsiveAfterMs` (it sends a heartbeat every second). Every pending call then rejects with
 *   `EngineWorkerStoppedError` ("the engine worker of this tab stopped; reload the tab"), and so does every
 *   later call until it speaks again.
 * - A worker that announced a freeze (`status` push `frozen` with `frozenUntil`, or the same in `hello`'s
 *   answer: `noteStatus`) is allowed to stay silent until then, plus `unresponsiveAfterMs`.
 * - Push listeners are called in arrival order; a throwing listener does not affect the others.
 * - The worker can be terminated (`terminate`) and replaced (`replace`) on the same link.
 */
import {
  PROTOCOL_VERSION,
  parseWorkerMessage,
  type HostStatus,
  type Method,
  type Params,
  type PushMessage,
  type RequestMessage,
  type Result,
} from '../protocol';
import { namedError, rebuildError } from './errors';

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

/** Options of `WorkerLink`. */
export type WorkerLinkOptions = {
  /** How long an ordinary call may wait for its answer, in ms. */
  requestTimeoutMs: number;
  /** Silence (no message, not even a heartbeat) after which the worker counts as stopped, in ms. */
  unresponsiveAfterMs: number;
  /** The "worker" is a studio server: a lost link is said as such. */
  server: boolean;
};

const stoppedMessage = 'The engine worker of this tab stopped; reload the tab.';
const serverLostMessage = 'The connection to the studio server was lost; reload the page to reconnect.';

type Pending = {
  method: Method;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout> | null;
  /** Where the call was made, for the rejection's stack. */
  origin: Error;
};

/** Requests to one worker at a time, their answers, its pushes, and the state of the link. */
export class WorkerLink {
  #worker: WorkerLike | null;
  readonly #options: WorkerLinkOptions;
  readonly #pending = new Map<number, Pending>();
  readonly #pushListeners = new Set<(message: PushMessage) => void>();
  readonly #connectionListeners = new Set<() => void>();
  readonly #watchdog: ReturnType<typeof setInterval>;
  #nextId = 1;
  #connection: ClientConnection = { state: 'connecting' };
  #lastHeardAt = Date.now();
  #frozenUntil = 0;

  constructor(worker: WorkerLike, options: WorkerLinkOptions) {
    this.#worker = worker;
    this.#options = options;
    this.#attach(worker);
    this.#watchdog = setInterval(() => this.#checkSilence(), Math.min(1_000, options.unresponsiveAfterMs));
  }

  /** The worker, or null once it was terminated (until `replace`). */
  get worker(): WorkerLike | null {
    return this.#worker;
  }

  /** The state of the link to the worker: `connecting`, `ready`, `unresponsive`, `crashed` or `closed`. */
  get connection(): ClientConnection {
    return this.#connection;
  }

  /** Until when (epoch ms) the worker announced it is frozen; 0 when it is not. */
  get frozenUntil(): number {
    return this.#frozenUntil;
  }

  /** The worker's status, from a `status` push or `hello`'s answer: a freeze excuses its silence. */
  noteStatus(status: HostStatus): void {
    this.#frozenUntil = status.state === 'frozen' ? (status.frozenUntil ?? 0) : 0;
  }

  /**
   * Sends one protocol request and resolves with its result.
   *
   * @param timeoutMs How long to wait for the answer; `null` waits as long as the worker lives. Default: the
   * ordinary request timeout.
   */
  call<M extends Method>(
    method: M,
    params: Params<M>,
    timeoutMs: number | null = this.#options.requestTimeoutMs,
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
        // refused by the server connection before sending: the engine's own error name, as a tab's engine gives
        if ((error as Error).name === 'PayloadNotSerializableError') return reject(error as Error);
        reject(
          namedError(
            'DataCloneError',
            `'${method}' could not be sent to the engine worker: ${(error as Error).message}. Pass plain data (no functions, DOM nodes or class instances).`,
          ),
        );
      }
    });
  }

  /** Calls `listener` with every message the worker pushes. Returns the function that unsubscribes. */
  subscribe(listener: (message: PushMessage) => void): () => void {
    this.#pushListeners.add(listener);
    return () => this.#pushListeners.delete(listener);
  }

  /** Calls `listener` whenever `connection` changes. Returns the function that unsubscribes. */
  onConnectionChange(listener: () => void): () => void {
    this.#connectionListeners.add(listener);
    return () => this.#connectionListeners.delete(listener);
  }

  /**
   * Terminates the worker at once (the link is `crashed` with `message`, and pending calls reject). Returns
   * whether there was a worker to terminate.
   */
  terminate(message: string): boolean {
    const worker = this.#worker;
    if (!worker) return false;
    this.#detach(worker);
    worker.terminate();
    this.#worker = null;
    this.#frozenUntil = 0;
    this.#setConnection({ state: 'crashed', since: Date.now(), message });
    this.#failPending(namedError('EngineWorkerStoppedError', message));
    return true;
  }

  /** Links a new worker in place of the terminated one; the link is `connecting` until it speaks. */
  replace(worker: WorkerLike): void {
    this.#worker = worker;
    this.#attach(worker);
    this.#lastHeardAt = Date.now();
    this.#setConnection({ state: 'connecting' });
  }

  /** Stops listening to the worker and fails pending calls (the worker itself is left running). */
  close(message: string): void {
    if (this.#worker) this.#detach(this.#worker);
    clearInterval(this.#watchdog);
    this.#setConnection({ state: 'closed', since: Date.now(), message });
    this.#failPending(namedError('EngineWorkerStoppedError', message));
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
    if (message.kind === 'status') this.noteStatus(message.status);
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
    const message = `${this.#lostMessage()}${detail ? ` (${detail})` : ''}`;
    this.#setConnection({ state: 'crashed', since: Date.now(), message });
    this.#failPending(namedError('EngineWorkerStoppedError', message));
  };

  #attach(worker: WorkerLike): void {
    worker.addEventListener('message', this.#onMessage);
    worker.addEventListener('error', this.#onError);
  }

  #detach(worker: WorkerLike): void {
    worker.removeEventListener('message', this.#onMessage);
    worker.removeEventListener('error', this.#onError);
  }

  #lostMessage(): string {
    return this.#options.server ? serverLostMessage : stoppedMessage;
  }

  #checkSilence(): void {
    // Only a worker that has spoken can fall silent; one still loading fails by its `error` event or timeouts.
    if (this.#connection.state !== 'ready') return;
    const silentMs = Date.now() - Math.max(this.#lastHeardAt, this.#frozenUntil);
    if (silentMs <= this.#options.unresponsiveAfterMs) return;
    const message = `${this.#lostMessage()} (it has not answered for ${Math.round(silentMs / 1000)} s)`;
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
