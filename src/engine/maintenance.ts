/**
 * Background work: what runs, in which order, and when.
 *
 * `run(now)` is one host-driven pass (`engine.runMaintenance`), in the order docs/ownership.md gives:
 * construction gates (idempotent), renew every held claim, the reclaim scan, the signal and update polls,
 * queue admission,
 * the activity slot poll (waiters of limited activity groups read their slots again),
 * pending result waiters, due durable timers, due schedule slots, the retention sweep, expired update
 * responses (and, in manual
 * mode, activity attempt deadlines). Overlapping calls share the pass in flight.
 *
 * In automatic mode one renew-interval timer drives four independent, single-flight passes — renew,
 * reclaim, signal poll, update poll — so a slow reclaim scan never delays renewal; result polls, the timer
 * scheduler's backstop, the schedules' backstop and the update-response sweep run on a second timer. A pass that fails is reported as
 * a warning and simply runs again next time.
 */
import type { Clock } from './clock';
import type { EngineWarning } from './events';

export type MaintenancePasses = {
  gates(): Promise<void>;
  renew(): Promise<void>;
  reclaim(): Promise<void>;
  pollSignals(): Promise<void>;
  pollUpdates(): Promise<void>;
  /** Admission from every declared queue, with the stale-slot check (queues/queues.ts). */
  pollQueues(): Promise<void>;
  /** Waiters for activity slots read their groups' slots again (activity-limits.ts). */
  pollActivitySlots(): Promise<void>;
  pollResults(now: number): Promise<void>;
  fireTimers(now: number): Promise<void>;
  /** Starts the workflows of schedules whose slots are due (src/engine/schedules). */
  fireSchedules(now: number): Promise<void>;
  /** Finishes interrupted purges and purges runs past their retention (purge.ts), a bounded batch a pass. */
  sweepRetention(now: number): Promise<void>;
  expireUpdateResponses(now: number): Promise<void>;
  checkDeadlines(now: number): void;
};

type PassName = Exclude<keyof MaintenancePasses, 'gates' | 'checkDeadlines'>;

export class Maintenance {
  readonly #passes: MaintenancePasses;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #isOpen: () => boolean;
  readonly #warn: (warning: EngineWarning) => void;
  readonly #inFlight = new Map<PassName, Promise<void>>();
  #full: Promise<void> | null = null;
  #handles = new Set<unknown>();

  constructor(deps: {
    passes: MaintenancePasses;
    clock: Clock;
    intervalMs: number;
    isOpen: () => boolean;
    warn: (warning: EngineWarning) => void;
  }) {
    this.#passes = deps.passes;
    this.#clock = deps.clock;
    this.#intervalMs = deps.intervalMs;
    this.#isOpen = deps.isOpen;
    this.#warn = deps.warn;
  }

  /** The full pass in flight, if any. */
  get running(): Promise<void> | null {
    return this.#full;
  }

  /** Background passes in flight (for shutdown to wait on). */
  get inFlight(): Promise<void>[] {
    return [...this.#inFlight.values()];
  }

  /** One full pass, in order; overlapping calls share it. */
  run(now?: number): Promise<void> {
    this.#full ??= this.#runAll(now).finally(() => {
      this.#full = null;
    });
    return this.#full;
  }

  async #runAll(now?: number): Promise<void> {
    const at = () => now ?? this.#clock.now();
    await this.#passes.gates();
    await this.single('renew');
    await this.single('reclaim');
    await this.single('pollSignals');
    await this.single('pollUpdates');
    await this.single('pollQueues');
    await this.single('pollActivitySlots');
    await this.single('pollResults', at());
    await this.single('fireTimers', at());
    await this.single('fireSchedules', at());
    await this.single('sweepRetention', at());
    await this.single('expireUpdateResponses', at());
    this.#passes.checkDeadlines(at());
  }

  /** Runs one pass unless it is already running (then shares it). Never rejects. */
  single(name: PassName, now?: number): Promise<void> {
    const running = this.#inFlight.get(name);
    if (running) return running;
    const started = (async () => this.#passes[name](now ?? this.#clock.now()))()
      .catch((error: unknown) =>
        this.#warn({
          name: 'StorageWarning',
          message: `Background ${name} pass failed (will run again): ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
        }),
      )
      .finally(() => this.#inFlight.delete(name));
    this.#inFlight.set(name, started);
    return started;
  }

  /** Automatic mode: starts the two interval timers. */
  start(): void {
    this.#every(() => {
      void this.single('renew');
      void this.single('reclaim');
      void this.single('pollSignals');
      void this.single('pollUpdates');
      void this.single('pollQueues');
      void this.single('pollActivitySlots');
    });
    this.#every(() => {
      void this.single('pollResults');
      void this.single('fireTimers');
      void this.single('fireSchedules');
      void this.single('sweepRetention');
      void this.single('expireUpdateResponses');
    });
  }

  #every(task: () => void): void {
    const tick = () => {
      this.#handles.delete(handle);
      if (!this.#isOpen()) return;
      task();
      handle = this.#clock.setTimeout(tick, this.#intervalMs);
      this.#handles.add(handle);
    };
    let handle = this.#clock.setTimeout(tick, this.#intervalMs);
    this.#handles.add(handle);
  }

  stop(): void {
    for (const handle of this.#handles) this.#clock.clearTimeout(handle);
    this.#handles.clear();
  }
}
