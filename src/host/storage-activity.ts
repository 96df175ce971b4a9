/**
 * Storage activity: a view of a `Storage` that counts the calls in flight, so the worker can tell when none
 * of its storage transactions is open.
 *
 * Why: an IndexedDB transaction stays open until its owner's event loop has run the callbacks of its last
 * request. A worker whose event loop stalls (the chaos freeze) with a transaction open would keep it open for
 * the whole stall — and every other tab's transactions on the same store would queue behind it, so nobody
 * could take the frozen engine's workflows over. The freeze therefore stalls only at the start of a task in
 * which no call is in flight (`whenQuiet`): every earlier transaction has then been handed back to the
 * browser to commit.
 *
 * The view behaves exactly like the storage it wraps; only promise-returning calls are counted.
 */
import type { Storage } from '../storage';

export class StorageActivity {
  /** The counted view of the storage: use it instead of the original. */
  readonly storage: Storage;
  #inFlight = 0;
  #waiters: (() => void)[] = [];

  constructor(storage: Storage) {
    this.storage = new Proxy(storage, {
      // Getters and methods run on the storage itself, never on the proxy (private fields need that).
      get: (target, property) => {
        const value = Reflect.get(target, property) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const result = (value as (...args: unknown[]) => unknown).apply(target, args);
          if (!(result instanceof Promise)) return result;
          this.#inFlight++;
          return result.finally(() => this.#settled());
        };
      },
    });
  }

  /** How many storage calls are in flight. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Calls `run` synchronously at the start of a task in which no storage call is in flight (waiting for the
   * calls in flight to settle, and for a new task after that).
   */
  whenQuiet(run: () => void): void {
    setTimeout(() => {
      if (this.#inFlight === 0) run();
      else this.#waiters.push(() => this.whenQuiet(run));
    }, 0);
  }

  #settled(): void {
    this.#inFlight--;
    if (this.#inFlight > 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter();
  }
}
