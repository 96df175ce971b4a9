/**
 * Seeded fault injection for storage: failing, slow and hanging calls, and commits that fail after they did
 * or did not apply. Used by the ownership simulation and the engine's tests (`TestWorld`).
 *
 * Guarantees:
 * - Reproducible: every call made while faults are enabled draws exactly one number from a seeded PRNG
 *   (mulberry32) when it is made, whatever the rates are, so the same seed and the same sequence of calls
 *   give the same faults, even when rates change between calls.
 * - No real time: the wrapper never starts a timer. Slowness comes from the `delay` hook, which the caller
 *   resolves on its own (usually simulated) clock; a hung call waits until `releaseHung()` or `close()`.
 * - Honest errors: an injected failure is a `StorageError` with code `injected-fault` whose message says it
 *   was injected on purpose. `applied` says whether the failed commit in fact changed the store: `false` for
 *   `writeFailureRate` (rejected before applying), and for `writeFailureAfterApplyRate` whether the commit's
 *   writes landed (a `conditionalBatch` whose condition failed applied nothing).
 * - A hung call that is released then runs normally against the store as it is at release time; closing
 *   rejects every hung call with code `closed`.
 *
 * `FaultInjector` holds the knobs and decides; `FaultInjectingStorage` applies it around any `Storage`, the
 * one fault-injection path for every adapter.
 */

import { StorageError } from './errors';
import { seededRandom } from './seeded-random';
import type {
  CommitGroup,
  Condition,
  Entry,
  Operation,
  ScanOptions,
  Storage,
  StorageCapabilities,
} from './types';

/** The storage calls faults can be injected into. */
export type StorageOperationName = 'get' | 'getMany' | 'scan' | 'batch' | 'conditionalBatch' | 'commitGroups';

/** Probabilities (0 to 1, default 0) of each fault per call. */
export type FaultRates = {
  /** `get`, `getMany` and `scan` reject without reading. */
  readFailureRate: number;
  /** `batch`, `conditionalBatch` and `commitGroups` reject before applying anything (`applied: false`). */
  writeFailureRate: number;
  /** Writes apply, then reject anyway (`applied` says whether anything was written). */
  writeFailureAfterApplyRate: number;
  /** Any call hangs until `releaseHung()` (then runs normally) or until the store is closed (then rejects). */
  hangRate: number;
};

/** Awaited before every call while faults are enabled: resolve it later to make that call slow. */
export type FaultDelay = (operation: StorageOperationName) => Promise<void> | void;

/** Runtime changes for `setFaults`: any subset of the rates, and the delay hook (`undefined` removes it). */
export type FaultSettings = Partial<FaultRates> & { delay?: FaultDelay | undefined };

export type FaultOptions = FaultSettings & {
  /** PRNG seed (an integer). The same seed and the same calls give the same faults. Default 1. */
  seed?: number;
  /** Whether faults are injected from the start. Default true. */
  enabled?: boolean;
};

/** How many calls were seen and how many faults were injected since construction. */
export type FaultCounts = {
  /** Calls made while enabled (each drew one random number). */
  calls: number;
  readFailures: number;
  writeFailures: number;
  writeFailuresAfterApply: number;
  hangs: number;
};

export { seededRandom };

type Fault = 'none' | 'hang' | 'fail' | 'fail-after-apply';

type HungCall = { release: () => void; reject: () => void };

const readOperations: ReadonlySet<StorageOperationName> = new Set(['get', 'getMany', 'scan']);

function checkRate(name: keyof FaultRates, rate: number): number {
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
    throw new RangeError(`Fault rate ${name} must be a number from 0 to 1, got ${String(rate)}.`);
  }
  return rate;
}

/** Decides which calls fail, hang or slow down, and counts what it injected. */
export class FaultInjector {
  /** While false, calls pass straight through and draw nothing. */
  enabled: boolean;
  readonly seed: number;
  private readonly random: () => number;
  private currentRates: FaultRates = {
    readFailureRate: 0,
    writeFailureRate: 0,
    writeFailureAfterApplyRate: 0,
    hangRate: 0,
  };
  private delay: FaultDelay | undefined;
  private readonly injected: FaultCounts = {
    calls: 0,
    readFailures: 0,
    writeFailures: 0,
    writeFailuresAfterApply: 0,
    hangs: 0,
  };
  private readonly hung = new Set<HungCall>();
  private closed = false;

  constructor(options: FaultOptions = {}) {
    const { seed = 1, enabled = true, ...settings } = options;
    if (!Number.isInteger(seed)) throw new RangeError(`Fault seed must be an integer, got ${String(seed)}.`);
    this.seed = seed;
    this.random = seededRandom(seed);
    this.enabled = enabled;
    this.setFaults(settings);
  }

  /** Changes some rates and/or the delay hook; the others keep their values. */
  setFaults(settings: FaultSettings): void {
    const next = { ...this.currentRates };
    for (const name of Object.keys(next) as (keyof FaultRates)[]) {
      const rate = settings[name];
      if (rate !== undefined) next[name] = checkRate(name, rate);
    }
    this.currentRates = next;
    if ('delay' in settings) this.delay = settings.delay;
  }

  /** The current rates. */
  get rates(): FaultRates {
    return { ...this.currentRates };
  }

  /** A snapshot of the counters. */
  get counts(): FaultCounts {
    return { ...this.injected };
  }

  /** Calls currently hanging. */
  get hungCalls(): number {
    return this.hung.size;
  }

  /** Lets every hanging call run; returns how many there were. */
  releaseHung(): number {
    const calls = [...this.hung];
    this.hung.clear();
    for (const call of calls) call.release();
    return calls.length;
  }

  /** Rejects every hanging call (and any later hang) with code `closed`. */
  close(): void {
    this.closed = true;
    const calls = [...this.hung];
    this.hung.clear();
    for (const call of calls) call.reject();
  }

  /**
   * Runs `perform` with whatever fault the next random draw picks for `operation`. `wasApplied` tells, for
   * writes, whether a result means the commit changed the store (default: it did).
   */
  async run<T>(
    operation: StorageOperationName,
    perform: () => T | Promise<T>,
    wasApplied: (result: T) => boolean = () => true,
  ): Promise<T> {
    if (!this.enabled) return perform();
    this.injected.calls++;
    const fault = this.draw(operation);
    if (this.delay) await this.delay(operation);
    switch (fault) {
      case 'none':
        return perform();
      case 'hang':
        this.injected.hangs++;
        await this.hang(operation);
        return perform();
      case 'fail':
        if (readOperations.has(operation)) {
          this.injected.readFailures++;
          throw new StorageError(operation, 'injected-fault', 'fault injected on purpose (readFailureRate).');
        }
        this.injected.writeFailures++;
        throw new StorageError(
          operation,
          'injected-fault',
          'fault injected on purpose before the commit applied (writeFailureRate); nothing was written.',
          { applied: false },
        );
      case 'fail-after-apply': {
        const result = await perform();
        this.injected.writeFailuresAfterApply++;
        const applied = wasApplied(result);
        throw new StorageError(
          operation,
          'injected-fault',
          `fault injected on purpose after the commit ran (writeFailureAfterApplyRate); the commit ` +
            `${applied ? 'applied' : 'did not apply (a condition failed)'} but the caller is told it failed.`,
          { applied },
        );
      }
    }
  }

  private draw(operation: StorageOperationName): Fault {
    const roll = this.random();
    const { hangRate, readFailureRate, writeFailureRate, writeFailureAfterApplyRate } = this.currentRates;
    if (roll < hangRate) return 'hang';
    if (readOperations.has(operation)) return roll < hangRate + readFailureRate ? 'fail' : 'none';
    if (roll < hangRate + writeFailureRate) return 'fail';
    if (roll < hangRate + writeFailureRate + writeFailureAfterApplyRate) return 'fail-after-apply';
    return 'none';
  }

  private hang(operation: StorageOperationName): Promise<void> {
    if (this.closed) {
      return Promise.reject(new StorageError(operation, 'closed', 'the store is closed.'));
    }
    return new Promise<void>((resolve, reject) => {
      this.hung.add({
        release: resolve,
        reject: () =>
          reject(new StorageError(operation, 'closed', 'the store was closed while this call hung.')),
      });
    });
  }
}

/**
 * Wraps any `Storage` and injects seeded faults into its calls. Capabilities, `watch` and `commitGroups` are
 * those of the inner store; `watch` is forwarded without faults.
 *
 * @example
 * const storage = new FaultInjectingStorage(shared, { seed: 42, writeFailureAfterApplyRate: 0.05, closeInner: false });
 * storage.setFaults({ hangRate: 0.01 });
 */
export class FaultInjectingStorage implements Storage {
  readonly capabilities: StorageCapabilities;
  /** The knobs, counters and hung calls; also reachable through the methods below. */
  readonly faults: FaultInjector;
  readonly watch?: (prefix: string, listener: (keys: string[]) => void) => () => void;
  readonly commitGroups?: (groups: readonly CommitGroup[]) => Promise<boolean[]>;
  private readonly closeInner: boolean;
  private readonly unsubscribers = new Set<() => void>();
  private closed = false;

  /**
   * @param inner the store to wrap
   * @param options fault rates, seed and delay hook; `closeInner` (default true) says whether `close()` also
   *   closes `inner`. Pass false when several wrappers share one store (each engine of a simulation).
   */
  constructor(
    readonly inner: Storage,
    options: FaultOptions & { closeInner?: boolean } = {},
  ) {
    const { closeInner = true, ...faultOptions } = options;
    this.closeInner = closeInner;
    this.capabilities = { ...inner.capabilities };
    this.faults = new FaultInjector(faultOptions);
    const { watch, commitGroups } = inner;
    if (watch) {
      this.watch = (prefix, listener) => {
        this.assertOpen('watch');
        const unsubscribe = watch.call(inner, prefix, listener);
        const remove = () => {
          this.unsubscribers.delete(remove);
          unsubscribe();
        };
        this.unsubscribers.add(remove);
        return remove;
      };
    }
    if (commitGroups) {
      this.commitGroups = (groups) =>
        this.intercept(
          'commitGroups',
          () => commitGroups.call(inner, groups),
          (results) => results.some(Boolean),
        );
    }
  }

  /** While false, calls pass straight through. */
  get enabled(): boolean {
    return this.faults.enabled;
  }

  set enabled(enabled: boolean) {
    this.faults.enabled = enabled;
  }

  /** Changes some rates and/or the delay hook. */
  setFaults(settings: FaultSettings): void {
    this.faults.setFaults(settings);
  }

  /** A snapshot of the counters of injected faults. */
  get counts(): FaultCounts {
    return this.faults.counts;
  }

  /** Lets every hanging call run; returns how many there were. */
  releaseHung(): number {
    return this.faults.releaseHung();
  }

  get(key: string): Promise<string | null> {
    return this.intercept('get', () => this.inner.get(key));
  }

  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    return this.intercept('getMany', () => this.inner.getMany(keys));
  }

  scan(prefix: string, options?: ScanOptions): Promise<Entry[]> {
    return this.intercept('scan', () => this.inner.scan(prefix, options));
  }

  batch(operations: readonly Operation[]): Promise<void> {
    return this.intercept('batch', () => this.inner.batch(operations));
  }

  conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]): Promise<boolean> {
    return this.intercept(
      'conditionalBatch',
      () => this.inner.conditionalBatch(conditions, operations),
      (applied) => applied,
    );
  }

  /** Rejects hung calls, removes watchers added through this wrapper, and closes `inner` if it owns it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.faults.close();
    for (const unsubscribe of [...this.unsubscribers]) unsubscribe();
    if (this.closeInner) await this.inner.close();
  }

  private async intercept<T>(
    operation: StorageOperationName,
    perform: () => Promise<T>,
    wasApplied?: (result: T) => boolean,
  ): Promise<T> {
    this.assertOpen(operation);
    return this.faults.run(
      operation,
      () => {
        this.assertOpen(operation);
        return perform();
      },
      wasApplied,
    );
  }

  private assertOpen(operation: string): void {
    if (this.closed) {
      throw new StorageError(operation, 'closed', 'this storage wrapper is closed; open a new one.');
    }
  }
}
