/**
 * `WebLocksLiveness`: the engine's liveness oracle in the browser, built on the Web Locks API.
 *
 * Each engine's worker holds the exclusive lock `shuttle-engine:<engineId>` for the engine's lifetime. The
 * browser releases a lock when the context holding it goes away — tens of milliseconds after its tab is
 * closed, crashes, or its worker is terminated — so `navigator.locks.query()` is a reliable list of the
 * engines of this origin that are alive.
 *
 * Guarantees:
 * - `hold(engineId)` resolves only once the lock is granted, with a function that releases it. Holding the
 *   same id again from this instance shares the one lock (the lock is released when every hold is).
 * - `isDead(engineId)` is true only when the engine's lock is certainly not held in exclusive mode. Pending
 *   requests do not count (a request is not a life), and neither do `shared` holds: those are other engines'
 *   death watches (death-watch.ts), which queue a shared request behind the exclusive lock and are granted
 *   when its holder dies. When the browser cannot answer (the query fails), it says "not dead": the oracle
 *   may only make a takeover earlier, never cause one that the claim's TTL would not.
 * - A frozen tab keeps its lock, so it stays alive here; the claim TTL is the fallback for that case.
 * - `markGone(engineId)` counts an engine dead before its lock is released: its tab announced it is going
 *   away. Only that tab can announce it, and its engine is about to die; should it still write meanwhile,
 *   the epoch fence refuses the write, as for any deposed engine.
 * - `openTabEngineIds()` lists the engines whose tab's page holds `shuttle-tab:<engineId>`: the page is open
 *   and hosts that engine (its current one, or the one it crashed and can still restart).
 */
import type { EngineLiveness } from '../engine';
import { tabLockPrefix } from '../protocol';

/** A lock as `navigator.locks.query()` describes it. */
export type LockInfoLike = { name?: string | undefined; mode?: 'exclusive' | 'shared' | undefined };

/** The part of the Web Locks API the studio uses (`navigator.locks`). */
export type LockManagerLike = {
  request(
    name: string,
    options: { mode: 'exclusive' | 'shared'; signal?: AbortSignal },
    callback: () => Promise<void> | void,
  ): Promise<unknown>;
  query(): Promise<{ held?: readonly LockInfoLike[]; pending?: readonly LockInfoLike[] }>;
};

/** Prefix of the lock names; the full name is `shuttle-engine:<engineId>`. */
export const engineLockPrefix = 'shuttle-engine:';

/** The name of the Web Lock an engine holds while it is alive. */
export function engineLockName(engineId: string): string {
  return engineLockPrefix + engineId;
}

type Hold = { count: number; granted: Promise<void>; release: () => void };

export class WebLocksLiveness implements EngineLiveness {
  /**
   * A lock is released only when its worker ends (or its tab announced it is going away, and its worker is
   * then terminated): an engine reported dead never writes again.
   */
  readonly deathIsFinal = true;
  readonly #locks: LockManagerLike;
  readonly #holds = new Map<string, Hold>();
  /** Engines whose tab announced it is going away, in announcement order (bounded). */
  readonly #gone = new Set<string>();

  /** @param locks The lock manager. Default: `navigator.locks`. */
  constructor(locks?: LockManagerLike) {
    const fallback = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
    const manager = locks ?? fallback;
    if (!manager)
      throw new Error(
        'This browser has no Web Locks API (navigator.locks), which the studio uses to tell live engines from dead ones. Use a current browser.',
      );
    this.#locks = manager;
  }

  /** Whether this environment offers Web Locks. */
  static isSupported(): boolean {
    return Boolean((globalThis as { navigator?: { locks?: unknown } }).navigator?.locks);
  }

  async hold(engineId: string): Promise<() => void> {
    let hold = this.#holds.get(engineId);
    if (!hold) hold = this.#acquire(engineId);
    hold.count++;
    await hold.granted;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const current = this.#holds.get(engineId);
      if (current !== hold) return;
      current.count--;
      if (current.count === 0) {
        this.#holds.delete(engineId);
        current.release();
      }
    };
  }

  #acquire(engineId: string): Hold {
    let release!: () => void;
    const releasedSignal = new Promise<void>((resolve) => (release = resolve));
    let granted!: () => void;
    let failed!: (error: unknown) => void;
    const grantedSignal = new Promise<void>((resolve, reject) => {
      granted = resolve;
      failed = reject;
    });
    const hold: Hold = { count: 0, granted: grantedSignal, release };
    this.#holds.set(engineId, hold);
    this.#locks
      .request(engineLockName(engineId), { mode: 'exclusive' }, () => {
        granted();
        return releasedSignal;
      })
      .catch((error: unknown) => {
        if (this.#holds.get(engineId) === hold) this.#holds.delete(engineId);
        failed(error);
      });
    return hold;
  }

  async isDead(engineId: string): Promise<boolean> {
    if (this.#gone.has(engineId)) return true;
    const live = await this.liveEngineIds();
    return live !== null && !live.has(engineId);
  }

  /** Counts `engineId` dead from now on, whatever its lock says (its tab announced it is going away). */
  markGone(engineId: string): void {
    if (this.#holds.has(engineId)) return; // never this instance's own engine
    this.#gone.add(engineId);
    if (this.#gone.size > 1_000) this.#gone.delete(this.#gone.values().next().value!);
  }

  /**
   * The ids of every engine of this origin whose lock is held (in exclusive mode: by the engine itself), or
   * null when the browser cannot tell (the query failed).
   */
  liveEngineIds(): Promise<ReadonlySet<string> | null> {
    return this.#heldIds(engineLockPrefix, (mode) => mode !== 'shared');
  }

  /**
   * The ids of every engine whose tab's page is open and hosts it: the page holds `shuttle-tab:<engineId>`
   * (client.ts) from its engine's first answer until the page closes or replaces that engine. An engine whose
   * tab announced it is going away is not listed. Null when the browser cannot tell.
   */
  openTabEngineIds(): Promise<ReadonlySet<string> | null> {
    return this.#heldIds(tabLockPrefix, () => true);
  }

  /** The engine ids named by held locks `<prefix><engineId>` in a mode `accept` takes, less the gone ones. */
  async #heldIds(
    prefix: string,
    accept: (mode: string | undefined) => boolean,
  ): Promise<ReadonlySet<string> | null> {
    let snapshot: Awaited<ReturnType<LockManagerLike['query']>>;
    try {
      snapshot = await this.#locks.query();
    } catch {
      return null;
    }
    const ids = new Set<string>();
    for (const lock of snapshot.held ?? [])
      if (lock.name?.startsWith(prefix) && accept(lock.mode)) ids.add(lock.name.slice(prefix.length));
    for (const engineId of this.#gone) ids.delete(engineId);
    return ids;
  }
}
