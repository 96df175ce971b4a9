/**
 * The liveness oracle: lets an engine learn that another engine is certainly gone, so its claims become
 * takeover-eligible at once instead of after the TTL. It only makes takeover earlier; the epoch fence
 * remains the only safety mechanism. A frozen engine is alive to the oracle, so the TTL stays the fallback.
 *
 * In the browser, `WebLocksLiveness` (src/worker) holds the Web Lock `shuttle-engine:<engineId>` for the
 * engine's lifetime. Node tests use `InMemoryLiveness`.
 */

export interface EngineLiveness {
  /**
   * Whether an engine this oracle reports dead can never write again (its worker or process is gone for
   * good): true for Web Locks, whose lock is released only when its worker ends. False, or absent, when
   * "dead" may be a live engine cut off from the oracle (PostgreSQL: a dropped lock connection): a takeover
   * then leaves the engine a notice (notices.ts), in case it is still running.
   */
  readonly deathIsFinal?: boolean;
  /** Marks `engineId` alive until the returned release function is called (or the process dies). */
  hold(engineId: string): Promise<() => void>;
  /** True only when `engineId` is certainly dead. Unknown engines count as dead only if the oracle is sure. */
  isDead(engineId: string): Promise<boolean>;
}

/**
 * For tests: engines are alive while held; `kill(engineId)` simulates a crash (final, by default), or — made
 * with `{ deathIsFinal: false }` — an engine that lost its hold while it runs on.
 */
export class InMemoryLiveness implements EngineLiveness {
  readonly #alive = new Set<string>();
  readonly #known = new Set<string>();
  readonly deathIsFinal: boolean;

  constructor(options: { deathIsFinal?: boolean } = {}) {
    this.deathIsFinal = options.deathIsFinal ?? true;
  }

  async hold(engineId: string): Promise<() => void> {
    this.#alive.add(engineId);
    this.#known.add(engineId);
    return () => this.#alive.delete(engineId);
  }

  async isDead(engineId: string): Promise<boolean> {
    return this.#known.has(engineId) && !this.#alive.has(engineId);
  }

  /** Simulates the engine's process dying: its hold is gone. */
  kill(engineId: string): void {
    this.#alive.delete(engineId);
  }

  isAlive(engineId: string): boolean {
    return this.#alive.has(engineId);
  }
}
