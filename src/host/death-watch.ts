/**
 * What a host needs of a death watch: learning that another engine died the moment it dies (or within a
 * fraction of a second), instead of at its next reclaim pass, so that the dead engine's workflows move at
 * once. A tab watches Web Locks (src/worker/death-watch.ts); a server process polls the liveness oracle
 * (`PollingDeathWatch` below, over PostgreSQL's advisory locks).
 *
 * Guarantees of both:
 * - `onDeath` is called at most once per engine id, and never for this engine itself.
 * - Only engines alive when first observed are watched; an engine that says it runs (`running`, `frozen`) or
 *   `crashed` but is not alive is reported dead at once; one still `starting` is looked at again next time;
 *   a `stopped` engine let its claims go itself and is left alone.
 * - `close` stops everything: nothing is watched after the engine stops.
 */
import type { PresenceStatus } from '../protocol';

/** An engine as the death watch needs to know it. */
export type ObservedEngine = { engineId: string; status: PresenceStatus };

export type EngineDeathWatch = {
  /**
   * Watches the engines of `engines` that are alive (in `held`), and reports dead at once those that say they
   * run but are not in `held`.
   */
  observe(engines: readonly ObservedEngine[], held: ReadonlySet<string>): void;
  /** Whether `engineId` is watched already, or was reported dead (either way, observing it again is moot). */
  covers(engineId: string): boolean;
  close(): void;
};

/** Options of `PollingDeathWatch`. */
export type PollingDeathWatchOptions = {
  /** Lists the engines alive now; null when it cannot tell this time. */
  liveEngineIds(): Promise<ReadonlySet<string> | null>;
  /** This engine's id: never watched. */
  selfId: string;
  /** Called once for each engine found dead. */
  onDeath(engineId: string): void;
  /** How often the watched engines are looked at, in ms. Default 200. */
  intervalMs?: number;
};

/** A death watch that asks the liveness oracle which engines are alive, a few times a second. */
export class PollingDeathWatch implements EngineDeathWatch {
  readonly #options: PollingDeathWatchOptions;
  readonly #watching = new Set<string>();
  readonly #dead = new Set<string>();
  readonly #timer: ReturnType<typeof setInterval>;
  #polling = false;
  #closed = false;

  constructor(options: PollingDeathWatchOptions) {
    this.#options = options;
    this.#timer = setInterval(() => void this.#poll(), options.intervalMs ?? 200);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  observe(engines: readonly ObservedEngine[], held: ReadonlySet<string>): void {
    if (this.#closed) return;
    const listed = new Set(engines.map((engine) => engine.engineId));
    for (const engineId of this.#dead) if (!listed.has(engineId)) this.#dead.delete(engineId);
    for (const { engineId, status } of engines) {
      if (engineId === this.#options.selfId || this.covers(engineId)) continue;
      if (held.has(engineId)) this.#watching.add(engineId);
      else if (status !== 'starting' && status !== 'stopped') this.#died(engineId);
    }
  }

  covers(engineId: string): boolean {
    return this.#watching.has(engineId) || this.#dead.has(engineId);
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#watching.clear();
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#closed || this.#watching.size === 0) return;
    this.#polling = true;
    try {
      const live = await this.#options.liveEngineIds().catch(() => null);
      if (!live || this.#closed) return;
      for (const engineId of [...this.#watching])
        if (!live.has(engineId)) {
          this.#watching.delete(engineId);
          this.#died(engineId);
        }
    } finally {
      this.#polling = false;
    }
  }

  #died(engineId: string): void {
    if (this.#closed || this.#dead.has(engineId)) return;
    this.#dead.add(engineId);
    try {
      this.#options.onDeath(engineId);
    } catch (error) {
      console.error('[shuttle] a death-watch listener threw', error);
    }
  }
}
