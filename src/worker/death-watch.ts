/**
 * The death watch: learns that another engine died the moment it dies, instead of at the next poll.
 *
 * Each engine holds the Web Lock `shuttle-engine:<engineId>` exclusively while it lives (WebLocksLiveness).
 * For every other live engine it hears of (through presence records), a worker queues a `shared` request
 * for that lock. The request can only be granted once the exclusive holder is gone — its tab closed or
 * crashed, or its worker was terminated — and the browser grants it within moments of that. The watcher
 * then releases the lock at once and reports the death, and the host runs a maintenance pass: since the
 * liveness oracle now reports the holder dead, its claims are taken over immediately instead of after the
 * claim TTL. Shared requests never block each other, so every watcher learns of a death at the same time,
 * and the liveness oracle ignores shared holds, so a watcher holding the lock for an instant never makes a
 * dead engine look alive.
 *
 * Guarantees:
 * - `onDeath` is called at most once per engine id, and never for this engine itself.
 * - Only engines whose lock is held when they are first observed are watched; an engine that says it runs
 *   (`running`, `frozen`) or `crashed` but holds no lock is reported dead at once; one still `starting`
 *   without its lock yet is looked at again on the next observation; a `stopped` engine released its claims
 *   itself and is left alone.
 * - A request that fails (not aborted by `close`) is forgotten, so the next observation watches again.
 * - `close` aborts every queued request: nothing stays queued after the engine stops.
 */
import type { EngineDeathWatch, ObservedEngine } from '../host/death-watch';
import { engineLockName, type LockManagerLike } from './web-locks-liveness';

export type { EngineDeathWatch, ObservedEngine } from '../host/death-watch';

/** Options of `DeathWatch`. */
export type DeathWatchOptions = {
  /** The lock manager (`navigator.locks`). */
  locks: LockManagerLike;
  /** This engine's id: never watched. */
  selfId: string;
  /** Called once for each engine found dead. */
  onDeath(engineId: string): void;
};

export class DeathWatch implements EngineDeathWatch {
  readonly #options: DeathWatchOptions;
  readonly #watching = new Map<string, AbortController>();
  readonly #dead = new Set<string>();
  #closed = false;

  constructor(options: DeathWatchOptions) {
    this.#options = options;
  }

  /** Engines with a queued request. */
  get watching(): ReadonlySet<string> {
    return new Set(this.#watching.keys());
  }

  /** Engines reported dead (and not yet forgotten). */
  get dead(): ReadonlySet<string> {
    return this.#dead;
  }

  observe(engines: readonly ObservedEngine[], held: ReadonlySet<string>): void {
    if (this.#closed) return;
    const listed = new Set(engines.map((engine) => engine.engineId));
    // A dead engine whose record is gone (pruned) can never come back: forget it.
    for (const engineId of this.#dead) if (!listed.has(engineId)) this.#dead.delete(engineId);
    for (const { engineId, status } of engines) {
      if (engineId === this.#options.selfId || this.#dead.has(engineId) || this.#watching.has(engineId))
        continue;
      if (held.has(engineId)) this.#watch(engineId);
      else if (status !== 'starting' && status !== 'stopped') this.#died(engineId);
    }
  }

  covers(engineId: string): boolean {
    return this.#watching.has(engineId) || this.#dead.has(engineId);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const controller of this.#watching.values()) controller.abort();
    this.#watching.clear();
  }

  #watch(engineId: string): void {
    const controller = new AbortController();
    this.#watching.set(engineId, controller);
    this.#options.locks
      .request(engineLockName(engineId), { mode: 'shared', signal: controller.signal }, () => {
        // Granted: the engine's exclusive hold is gone. Returning releases the lock at once.
        if (this.#watching.get(engineId) === controller) this.#watching.delete(engineId);
        this.#died(engineId);
      })
      .catch(() => {
        // Aborted by close, or the browser refused: forget it, so the next observation can watch again.
        if (this.#watching.get(engineId) === controller) this.#watching.delete(engineId);
      });
  }

  #died(engineId: string): void {
    if (this.#closed || this.#dead.has(engineId)) return;
    this.#dead.add(engineId);
    try {
      this.#options.onDeath(engineId);
    } catch (error) {
      console.error('[shuttle worker] a death-watch listener threw', error);
    }
  }
}
