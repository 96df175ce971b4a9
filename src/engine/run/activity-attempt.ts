/**
 * One attempt of an activity function, run outside the generator.
 *
 * The attempt settles exactly once: with the function's result, with its error, or with the reason it was
 * aborted (timeout, cancellation, the workflow decided without it, this engine lost the workflow) —
 * whichever comes first. An abort settles the attempt at once even if the function ignores its signal; a
 * result that arrives later is dropped.
 *
 * The `AbortSignal` is created only when the function asks for it: most activities never read it, and an
 * `AbortController` per step is measurable on the hot path.
 *
 * An attempt of a limited activity group (activity-limits.ts) is made `waiting`: it is registered with its
 * run at once (so an abort reaches it) but its timeout and heartbeat deadlines start only at `begin`, when
 * it holds its slot.
 */
import type { Json } from '../codec';
import type { ActivityContext, ActivityFunction } from '../workflow';

export type AttemptOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class ActivityAttempt {
  readonly attempt: number;
  readonly startedAt: number;
  /** When the attempt times out (manual background tasks check it in runMaintenance); none while waiting. */
  deadline: number | undefined;
  readonly #timeoutMs: number | undefined;
  /** Waiting for a slot of its concurrency limit group: no deadline counts yet. */
  #waiting: boolean;
  /** A clock timer handle for the timeout, when the engine runs its own timers. */
  timeout: unknown = undefined;
  /** `heartbeatTimeoutMs`: the attempt is aborted when this long passes without a heartbeat. */
  readonly heartbeatTimeoutMs: number | undefined;
  /** When it last heartbeat (its start, before the first). */
  #lastBeat: number;
  /** A clock timer handle for the heartbeat timeout, when the engine runs its own timers. */
  heartbeatTimer: unknown = undefined;
  #controller: AbortController | null = null;
  #abortReason: unknown = undefined;
  #aborted = false;
  #settled = false;
  #awaitingCompletion = false;
  readonly #onSettled: (outcome: AttemptOutcome) => void;

  constructor(options: {
    attempt: number;
    startedAt: number;
    timeoutMs: number | undefined;
    heartbeatTimeoutMs?: number | undefined;
    /** It waits for a slot first: its deadlines start at `begin`. */
    waiting?: boolean;
    onSettled: (outcome: AttemptOutcome) => void;
  }) {
    this.attempt = options.attempt;
    this.startedAt = options.startedAt;
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs;
    this.#timeoutMs = options.timeoutMs;
    this.#waiting = options.waiting === true;
    this.#lastBeat = options.startedAt;
    this.deadline =
      options.timeoutMs === undefined || this.#waiting ? undefined : options.startedAt + options.timeoutMs;
    this.#onSettled = options.onSettled;
  }

  /** A waiting attempt took its slot at `now`: its timeout and heartbeat deadlines count from here. */
  begin(now: number): void {
    this.#waiting = false;
    this.#lastBeat = now;
    this.deadline = this.#timeoutMs === undefined ? undefined : now + this.#timeoutMs;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Whether the attempt has settled (or been aborted): nothing it does matters any more. */
  get over(): boolean {
    return this.#settled || this.#aborted;
  }

  /** When it is aborted for want of a heartbeat (undefined without `heartbeatTimeoutMs`). */
  get heartbeatDeadline(): number | undefined {
    return this.heartbeatTimeoutMs === undefined || this.#waiting
      ? undefined
      : this.#lastBeat + this.heartbeatTimeoutMs;
  }

  /** A heartbeat at `now`: the heartbeat deadline moves on. */
  beat(now: number): void {
    this.#lastBeat = now;
  }

  /**
   * An external activity whose function has returned: it waits for `completeActivity` / `failActivity`,
   * from outside — no work of this engine (`engine.idle()` does not wait for it).
   */
  get awaitingCompletion(): boolean {
    return this.#awaitingCompletion && !this.#settled;
  }

  get #signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** Calls the function; its outcome (or an earlier abort) settles the attempt. */
  /**
   * Calls the function; its outcome (or an earlier abort) settles the attempt. With a `completionToken`
   * (an external activity) only a failure settles it: its result comes later, through the run.
   */
  run(
    fn: ActivityFunction<unknown>,
    completionToken: string | undefined,
    heartbeat: (details?: Json) => void,
    /** An external activity's function returned: it now waits for its completion. */
    returned?: () => void,
    /** The last heartbeat details of an earlier attempt (`context.heartbeatDetails`). */
    heartbeatDetails?: Json,
  ): void {
    if (this.over) return; // aborted while its earlier heartbeat was being read
    const signal = () => this.#signal;
    const context: ActivityContext = {
      attempt: this.attempt,
      ...(heartbeatDetails === undefined ? {} : { heartbeatDetails }),
      get signal() {
        return signal();
      },
      heartbeat: (details) => {
        if (!this.#aborted && !this.#settled) heartbeat(details);
      },
      ...(completionToken === undefined ? {} : { completionToken }),
    };
    const external = completionToken !== undefined;
    let result: unknown;
    try {
      result = fn(context);
    } catch (error) {
      this.#settle({ ok: false, error });
      return;
    }
    if (
      result !== null &&
      typeof result === 'object' &&
      typeof (result as PromiseLike<unknown>).then === 'function'
    ) {
      (result as PromiseLike<unknown>).then(
        (value) => {
          if (!external) this.#settle({ ok: true, value });
          else this.#returned(returned);
        },
        (error: unknown) => this.#settle({ ok: false, error }),
      );
    } else if (!external) this.#settle({ ok: true, value: result });
    else this.#returned(returned);
  }

  #returned(returned: (() => void) | undefined): void {
    if (this.#settled) return;
    this.#awaitingCompletion = true;
    returned?.();
  }

  /** Aborts the attempt's signal and settles it with `reason` (unless it already settled). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
    this.#settle({ ok: false, error: reason });
  }

  #settle(outcome: AttemptOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#onSettled(outcome);
  }
}
