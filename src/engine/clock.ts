/**
 * Time is injected. Nothing in the engine reads the platform clock directly: it asks its `Clock`. Tests use
 * `SimulatedClock`, which makes timing exact and instant (time moves only when the test says so).
 */

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The platform clock. */
export const systemClock: Clock = {
  // eslint-disable-next-line no-restricted-properties -- the one place that reads the platform clock
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, Math.max(0, ms)),
  clearTimeout: (handle) => (clearTimeout as (handle: unknown) => void)(handle),
};

// eslint-disable-next-line no-restricted-properties -- the one place that reads the platform random source
export const systemRandom: () => number = () => Math.random();

type Scheduled = { id: number; at: number; callback: () => void };

/**
 * A clock that moves only when told. `advance(ms)` runs every callback that falls due, in time order, and
 * lets promise continuations settle between them, so code awaiting storage after a timer fires proceeds.
 */
export class SimulatedClock implements Clock {
  #now: number;
  #nextId = 1;
  #scheduled: Scheduled[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const entry = { id: this.#nextId++, at: this.#now + Math.max(0, ms), callback };
    this.#scheduled.push(entry);
    return entry.id;
  }

  clearTimeout(handle: unknown): void {
    this.#scheduled = this.#scheduled.filter((entry) => entry.id !== handle);
  }

  /** Number of callbacks waiting. */
  get pendingTimers(): number {
    return this.#scheduled.length;
  }

  /** Sets the time without running callbacks (a clock jump). */
  set(time: number): void {
    this.#now = time;
  }

  /** Moves time forward by `ms`, running due callbacks in order and settling promises between them. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await settle();
      this.#scheduled.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.#scheduled[0];
      if (!next || next.at > target) break;
      this.#scheduled.shift();
      this.#now = Math.max(this.#now, next.at);
      next.callback();
    }
    this.#now = target;
    await settle();
  }
}

/** Lets pending promise continuations run (several macrotask-free turns of the microtask queue). */
export async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}
