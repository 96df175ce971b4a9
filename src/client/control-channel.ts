/**
 * The control channel: how one tab asks the tab that hosts another engine to act on it — freeze its worker,
 * crash it, shut it down, restart it, have it start a workflow (so that engine claims and runs it, at a
 * given instant if asked: chaos drills race several tabs' starts) — so a whole handoff demo can be driven
 * from one tab.
 *
 * It runs on the main thread of every tab (which owns the tab's worker, so it can still terminate a worker
 * whose event loop is stalled), over one `BroadcastChannel` per database (`shuttle-control:<database>`).
 *
 * Guarantees:
 * - A request for this tab's own engine is performed here directly; the channel is not involved.
 * - A tab whose engine was crashed still answers `restart` for that engine (`formerEngineId`), so a crashed
 *   engine can be restarted from any tab; every other action on it finds no host.
 * - A request for another engine is broadcast; only the tab whose current engine has that id answers. It
 *   acknowledges at once (`control-ack`), then acts, then replies with the outcome (`control-reply`).
 * - `request` settles exactly once: with the outcome, with the hosting tab's error, with a
 *   `ControlTargetNotFoundError` when no tab acknowledged within `ackTimeoutMs` (default 2 s: the engine's tab
 *   is closed, crashed, or runs no engine of that id any more), or with a `ControlTimeoutError` when the
 *   outcome does not arrive within `replyTimeoutMs` of the acknowledgement.
 * - Every message is validated with `parseControlMessage`; a malformed one is ignored, and one of another
 *   protocol version (a tab of a different build) is ignored with a warning. An action is plain data: the
 *   hosting tab's engine validates a `start` again.
 * - The hosting tab's error travels back with its name, message and detail fields (`workflowId`, …).
 * - `engine-crashed` notices tell every other tab that an engine's worker was terminated, so their engines
 *   record it in the crashed engine's presence record (a terminated worker writes nothing itself).
 * - `engine-exiting` notices tell every other tab that a tab is going away, so their engines count its
 *   engine dead and take its workflows over at once.
 */
import type { SerializedError } from '../engine';
import {
  PROTOCOL_VERSION,
  parseControlMessage,
  type ControlAction,
  type ControlMessage,
  type ControlOutcome,
  type ControlOutcomes,
} from '../protocol';
import { namedError } from './errors';

/** The parts of a `BroadcastChannel` the control channel uses. */
export type BroadcastPort = {
  postMessage(message: unknown): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
  removeEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
  close(): void;
};

/** Options of `ControlChannel`. */
export type ControlChannelOptions = {
  /** The database's control channel (`new BroadcastChannel(controlChannelName(db))`). */
  port: BroadcastPort;
  /** The id of the engine this tab hosts right now, or null when it hosts none (crashed, starting). */
  localEngineId(): string | null;
  /** The id of this tab's last engine while it hosts none (after a crash), else null. */
  formerEngineId?(): string | null;
  /**
   * Performs an action on this tab's engine `engineId` (its current one, or its former one for a `restart`);
   * rejects with a readable error when it cannot.
   */
  perform(action: ControlAction, engineId: string): Promise<ControlOutcome>;
  /** Another tab terminated the worker of `engineId` at `at`. */
  onEngineCrashed?(engineId: string, at: number): void;
  /** Another tab is going away with its engine `engineId`. */
  onEngineExiting?(engineId: string, at: number): void;
  /** How long to wait for the hosting tab's acknowledgement, in ms. Default 2,000. */
  ackTimeoutMs?: number;
  /** How long to wait for the outcome after the acknowledgement, in ms. Default 60,000. */
  replyTimeoutMs?: number;
  /** Mints request ids. Default `crypto.randomUUID`. */
  randomUUID?: () => string;
  /** Where warnings go (messages of another build). Default `console.warn`. */
  warn?: (message: string) => void;
};

type Waiting = {
  engineId: string;
  action: ControlAction;
  resolve: (value: ControlOutcome) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
  acknowledged: boolean;
};

function toSerialized(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  // A client error rebuilt from the worker keeps its detail fields in `details` (see `rebuildError`).
  const details: unknown = (error as Error & { details?: unknown }).details;
  return typeof details === 'object' && details !== null && !Array.isArray(details)
    ? { name: error.name, message: error.message, details: { ...(details as Record<string, unknown>) } }
    : { name: error.name, message: error.message };
}

/** Describes an action for messages: `freeze (9 s)`, `crash`, `start (countdown)`, … */
export function describeAction(action: ControlAction): string {
  if (action.type === 'freeze') return `freeze (${action.seconds} s)`;
  if (action.type === 'start') return `start (${action.workflowType})`;
  return action.type;
}

export class ControlChannel {
  readonly #options: ControlChannelOptions;
  readonly #ackTimeoutMs: number;
  readonly #replyTimeoutMs: number;
  readonly #waiting = new Map<string, Waiting>();
  readonly #warnedVersions = new Set<string>();
  #closed = false;

  constructor(options: ControlChannelOptions) {
    this.#options = options;
    this.#ackTimeoutMs = options.ackTimeoutMs ?? 2_000;
    this.#replyTimeoutMs = options.replyTimeoutMs ?? 60_000;
    options.port.addEventListener('message', this.#onMessage);
  }

  /**
   * Asks the tab hosting `engineId` to perform `action`, and resolves with the outcome.
   *
   * @example
   * const { frozenUntil } = await channel.request(engineId, { type: 'freeze', seconds: 9 });
   */
  request<A extends ControlAction>(engineId: string, action: A): Promise<ControlOutcomes[A['type']]> {
    if (this.#closed)
      return Promise.reject(
        namedError('ControlChannelClosedError', 'The control channel of this tab is closed.'),
      );
    if (this.#hosts(engineId, action))
      return this.#options.perform(action, engineId) as Promise<ControlOutcomes[A['type']]>;
    const requestId = (this.#options.randomUUID ?? (() => crypto.randomUUID()))();
    return new Promise<ControlOutcome>((resolve, reject) => {
      const timer = setTimeout(() => this.#notAcknowledged(requestId), this.#ackTimeoutMs);
      this.#waiting.set(requestId, { engineId, action, resolve, reject, timer, acknowledged: false });
      this.#post({
        kind: 'control-request',
        v: PROTOCOL_VERSION,
        requestId,
        engineId,
        action,
        from: this.#options.localEngineId(),
      });
    }) as Promise<ControlOutcomes[A['type']]>;
  }

  /** Tells every other tab that this tab terminated the worker of `engineId` at `at`. */
  announceCrash(engineId: string, at: number): void {
    this.#post({ kind: 'engine-crashed', v: PROTOCOL_VERSION, engineId, at });
  }

  /** Tells every other tab that this tab is going away with its engine `engineId`. */
  announceExit(engineId: string, at: number): void {
    this.#post({ kind: 'engine-exiting', v: PROTOCOL_VERSION, engineId, at });
  }

  /** Stops listening; pending requests reject. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#options.port.removeEventListener('message', this.#onMessage);
    for (const [requestId, waiting] of this.#waiting) {
      clearTimeout(waiting.timer);
      this.#waiting.delete(requestId);
      waiting.reject(namedError('ControlChannelClosedError', 'The control channel of this tab was closed.'));
    }
    this.#options.port.close();
  }

  /** Whether this tab is the one to perform `action` on `engineId`. */
  #hosts(engineId: string, action: ControlAction): boolean {
    if (engineId === this.#options.localEngineId()) return true;
    return action.type === 'restart' && engineId === (this.#options.formerEngineId?.() ?? null);
  }

  #post(message: ControlMessage): void {
    if (this.#closed) return;
    try {
      this.#options.port.postMessage(message);
    } catch (error) {
      console.error('[shuttle] could not post on the control channel', error);
    }
  }

  #notAcknowledged(requestId: string): void {
    const waiting = this.#waiting.get(requestId);
    if (!waiting || waiting.acknowledged) return;
    this.#waiting.delete(requestId);
    waiting.reject(
      namedError(
        'ControlTargetNotFoundError',
        `No open tab of this studio hosts engine ${waiting.engineId} (nobody answered '${describeAction(waiting.action)}' within ${this.#ackTimeoutMs} ms): its tab was closed, crashed or restarted with a new engine.`,
        { engineId: waiting.engineId, action: waiting.action.type },
      ),
    );
  }

  readonly #onMessage = (event: MessageEvent<unknown>): void => {
    const parsed = parseControlMessage(event.data);
    if (!parsed.ok) {
      if (parsed.reason === 'version') {
        const key = `${String(parsed.version)}:${parsed.kind}`;
        if (!this.#warnedVersions.has(key)) {
          this.#warnedVersions.add(key);
          (this.#options.warn ?? console.warn)(
            `[shuttle] ignored a control message (${parsed.kind}) of studio protocol version ${String(parsed.version)}; this tab speaks version ${PROTOCOL_VERSION}. A tab of another build of the studio is open: reload it.`,
          );
        }
      }
      return;
    }
    const message = parsed.message;
    switch (message.kind) {
      case 'control-request':
        if (this.#hosts(message.engineId, message.action)) void this.#serve(message);
        return;
      case 'control-ack': {
        const waiting = this.#waiting.get(message.requestId);
        if (!waiting || waiting.acknowledged) return;
        waiting.acknowledged = true;
        clearTimeout(waiting.timer);
        waiting.timer = setTimeout(() => {
          if (this.#waiting.get(message.requestId) !== waiting) return;
          this.#waiting.delete(message.requestId);
          waiting.reject(
            namedError(
              'ControlTimeoutError',
              `The tab hosting engine ${waiting.engineId} accepted '${describeAction(waiting.action)}' but did not report the outcome within ${this.#replyTimeoutMs} ms.`,
              { engineId: waiting.engineId, action: waiting.action.type },
            ),
          );
        }, this.#replyTimeoutMs);
        return;
      }
      case 'control-reply': {
        const waiting = this.#waiting.get(message.requestId);
        if (!waiting) return;
        this.#waiting.delete(message.requestId);
        clearTimeout(waiting.timer);
        if (message.ok) waiting.resolve(message.value);
        else {
          const error = namedError(message.error.name, message.error.message);
          if (message.error.details) Object.assign(error, message.error.details);
          waiting.reject(error);
        }
        return;
      }
      case 'engine-crashed':
        this.#options.onEngineCrashed?.(message.engineId, message.at);
        return;
      case 'engine-exiting':
        this.#options.onEngineExiting?.(message.engineId, message.at);
        return;
    }
  };

  async #serve(request: Extract<ControlMessage, { kind: 'control-request' }>): Promise<void> {
    const { requestId, engineId } = request;
    this.#post({ kind: 'control-ack', v: PROTOCOL_VERSION, requestId, engineId });
    try {
      const value = await this.#options.perform(request.action, engineId);
      this.#post({ kind: 'control-reply', v: PROTOCOL_VERSION, requestId, ok: true, value });
    } catch (error) {
      this.#post({
        kind: 'control-reply',
        v: PROTOCOL_VERSION,
        requestId,
        ok: false,
        error: toSerialized(error),
      });
    }
  }
}
