/**
 * The durable timer scheduler. Timers live in storage (`timer:<dueAt>:<id>:<name>`), written in the same
 * batch as the checkpoint that armed them, so a sleep, a retry backoff or a timeout survives crashes and
 * handoffs and fires on whichever engine owns the workflow then.
 *
 * One mechanism in both background modes: `fireDue(now)` scans the timers due at `now` and hands each to the
 * engine (which wakes its own workflows, leaves timers of workflows running elsewhere for their owner, and
 * collects timers of finished, suspended or missing workflows). In automatic mode the scheduler then sleeps
 * until the next timer due after `now`, and is woken early when a new, earlier timer is armed. In manual
 * mode, `runMaintenance` calls `fireDue`.
 */
import type { Storage } from '../storage/types';
import type { Clock } from './clock';
import { keys, parseTimerKey } from './keys';
import { decodeTimer, type TimerRecord } from './records';

const pageSize = 200;
/** Workflows whose due timers fire at the same time (each workflow's own timers fire in order). */
const fireConcurrency = 16;

export class TimerScheduler {
  #handle: unknown = undefined;
  #scheduledFor = Number.POSITIVE_INFINITY;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = false;

  constructor(
    private readonly deps: {
      storage: Storage;
      clock: Clock;
      automatic: boolean;
      fire: (key: string, timer: TimerRecord | null) => Promise<void>;
      onError: (error: unknown) => void;
    },
  ) {}

  /** A timer due at `dueAt` exists: make sure the scheduler wakes by then (automatic mode). */
  notify(dueAt: number): void {
    if (!this.deps.automatic || this.#stopped) return;
    if (dueAt >= this.#scheduledFor) return;
    this.#schedule(dueAt);
  }

  /** Fires every timer due at `now`. Overlapping calls share one pass (and run once more if asked). */
  fireDue(now = this.deps.clock.now()): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#pass(now).finally(() => {
      this.#running = null;
      if (this.#again && !this.#stopped) {
        this.#again = false;
        void this.fireDue();
      }
    });
    return this.#running;
  }

  async #pass(now: number): Promise<void> {
    try {
      let after: string | undefined;
      const bound = keys.timersDueAfter(now);
      for (;;) {
        const page = await this.deps.storage.scan(keys.timersPrefix, {
          ...(after ? { after } : {}),
          limit: pageSize,
        });
        const due = page.filter(({ key }) => key < bound);
        await this.#fireAll(due);
        if (this.#stopped) return;
        if (due.length < page.length || page.length < pageSize) break;
        after = page[page.length - 1]!.key;
      }
      if (this.deps.automatic && !this.#stopped) {
        const [next] = await this.deps.storage.scan(keys.timersPrefix, { after: bound, limit: 1 });
        const parsed = next ? parseTimerKey(next.key) : null;
        this.#scheduledFor = Number.POSITIVE_INFINITY;
        if (parsed) this.#schedule(parsed.dueAt);
      }
    } catch (error) {
      this.deps.onError(error);
    }
  }

  /**
   * Fires a page of due timers: one workflow's timers in order, different workflows' at once (a few at a
   * time), so that timers falling due together on workflows held elsewhere are claimed together — their
   * holder reads and claim commits share transactions — instead of one after another.
   */
  async #fireAll(due: readonly { key: string; value: string }[]): Promise<void> {
    const byWorkflow = new Map<string, { key: string; timer: TimerRecord | null }[]>();
    for (const { key, value } of due) {
      let timer: TimerRecord | null;
      try {
        timer = decodeTimer(key, value);
      } catch {
        timer = null;
      }
      const group = timer?.workflowId ?? `\u0000${key}`;
      const timers = byWorkflow.get(group) ?? [];
      timers.push({ key, timer });
      byWorkflow.set(group, timers);
    }
    const groups = [...byWorkflow.values()];
    const next = async (): Promise<void> => {
      for (let timers = groups.shift(); timers; timers = groups.shift())
        for (const { key, timer } of timers) {
          if (this.#stopped) return;
          await this.deps.fire(key, timer);
        }
    };
    await Promise.all(Array.from({ length: Math.min(fireConcurrency, groups.length) }, next));
  }

  #schedule(dueAt: number): void {
    if (this.#handle !== undefined) this.deps.clock.clearTimeout(this.#handle);
    this.#scheduledFor = dueAt;
    this.#handle = this.deps.clock.setTimeout(
      () => {
        this.#handle = undefined;
        this.#scheduledFor = Number.POSITIVE_INFINITY;
        void this.fireDue();
      },
      Math.max(0, dueAt - this.deps.clock.now()),
    );
  }

  stop(): void {
    this.#stopped = true;
    if (this.#handle !== undefined) this.deps.clock.clearTimeout(this.#handle);
    this.#handle = undefined;
  }
}

/**
 * When the earliest durable timer of the store due after `after` falls due (any workflow's: a sleep, a retry
 * wait, a timeout, a delayed start, an execution deadline), or null when none is armed. The test kit skips
 * time to it (a timer due already that a pass did not fire — its workflow is driven nowhere — is passed over).
 */
export async function nextTimerDue(storage: Storage, after: number): Promise<number | null> {
  const [first] = await storage.scan(keys.timersPrefix, { after: keys.timersDueAfter(after), limit: 1 });
  return first ? (parseTimerKey(first.key)?.dueAt ?? null) : null;
}
