/**
 * The liveness oracle: lets an engine learn that another engine is certainly gone, so its claims become
 * takeover-eligible at once instead of after the TTL. It only makes takeover earlier; the epoch fence
 * remains the only safety mechanism. A frozen engine is alive to the oracle, so the TTL stays the fallback.
 *
 * In the browser, `WebLocksLiveness` (src/worker) holds the Web Lock `shuttle-engine:<engineId>` for the
 * engine's lifetime. Node tests use `InMemoryLiveness`.
 */

export interface EngineLiveness {
  /** Marks `engineId` alive until the returned release function is called (or the process dies). */
  hold(engineId: string): Promise<() => void>;
  /** True only when `engineId` is certainly dead. Unknown engines count as dead only if the oracle is sure. */
  isDead(engineId: string): Promise<boolean>;
}

/** For tests: engines are alive while held; `kill(engineId)` simulates a crash. */
export class InMemoryLiveness implements EngineLiveness {
  readonly #alive = new Set<string>();
  readonly #known = new Set<string>();

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
