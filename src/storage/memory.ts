/**
 * `MemoryStorage`: the reference semantics of the storage contract, in memory, for tests, benchmarks and
 * simulations (Node and browser).
 *
 * Guarantees:
 * - Every call is atomic and isolated: validation runs first, then the whole call (conditions checked and
 *   operations applied) runs synchronously, with no await in between, so no other caller can interleave.
 *   Several engines may share one instance to simulate a shared store.
 * - Commit groups apply in order, each group seeing the writes of the groups before it; a group whose
 *   condition fails changes nothing and does not affect the others.
 * - Keys are kept sorted (JavaScript `<`, UTF-16 code unit order) in a chunked sorted array, so inserts,
 *   deletes and the start of a prefix scan cost O(log n + chunk size) even with 100,000s of keys.
 * - `watch` reports each commit, after it is visible, on a later microtask (see `ChangeFeed`).
 * - With `faults`, calls pass through a seeded `FaultInjector` (see faults.ts) after validation; without it,
 *   nothing is drawn and nothing is awaited.
 * - After `close()` every call rejects with a `StorageError` of code `closed`, and hung calls reject too.
 */

import { ChangeFeed } from './change-feed';
import { StorageError } from './errors';
import { FaultInjector, type FaultOptions } from './faults';
import { scanRange, type KeyRange } from './key-range';
import type {
  CommitGroup,
  Condition,
  Entry,
  Operation,
  ScanOptions,
  Storage,
  StorageCapabilities,
} from './types';
import {
  resolveMaxValueBytes,
  validateBatch,
  validateCommitGroups,
  validateConditionalBatch,
  validateKey,
  validateReadKeys,
  validateScan,
  type ValidationLimits,
} from './validation';

export type MemoryStorageOptions = {
  /** Inject seeded faults into every call (see `FaultOptions`); reachable later as `storage.faults`. */
  faults?: FaultOptions;
  /** Largest value accepted, in UTF-8 bytes. Default `storageLimits.defaultMaxValueBytes` (1 MiB). */
  maxValueBytes?: number;
};

/** A chunk never grows past this many keys; a full chunk splits in two. */
const maxChunkLength = 1024;

/** First index in sorted `items` whose item is `>= target` (or `> target` when `strict`). */
function searchSorted(items: readonly string[], target: string, strict: boolean): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const item = items[middle] as string;
    if (strict ? item <= target : item < target) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A sorted set of keys stored as a list of sorted chunks, every key of a chunk below every key of the next. */
class SortedKeys {
  private readonly chunks: string[][] = [];

  /** Adds a key known to be absent. */
  add(key: string): void {
    const chunkIndex = Math.min(this.findChunk(key, false), this.chunks.length - 1);
    const chunk = this.chunks[chunkIndex];
    if (!chunk) {
      this.chunks.push([key]);
      return;
    }
    chunk.splice(searchSorted(chunk, key, false), 0, key);
    if (chunk.length > maxChunkLength)
      this.chunks.splice(chunkIndex + 1, 0, chunk.splice(chunk.length >>> 1));
  }

  /** Removes a key known to be present. */
  delete(key: string): void {
    const chunkIndex = this.findChunk(key, false);
    const chunk = this.chunks[chunkIndex];
    if (!chunk) return;
    const index = searchSorted(chunk, key, false);
    if (chunk[index] !== key) return;
    chunk.splice(index, 1);
    if (chunk.length === 0) this.chunks.splice(chunkIndex, 1);
  }

  /** Up to `limit` keys of `range`, ascending or descending. */
  collect(range: KeyRange, reverse: boolean, limit: number): string[] {
    const keys: string[] = [];
    if (limit <= 0) return keys;
    const { lower, lowerOpen, upper } = range;
    if (!reverse) {
      let chunkIndex = this.findChunk(lower, lowerOpen);
      let chunk = this.chunks[chunkIndex];
      let index = chunk ? searchSorted(chunk, lower, lowerOpen) : 0;
      while (chunk) {
        const key = chunk[index] as string;
        if (upper !== undefined && key >= upper) break;
        keys.push(key);
        if (keys.length >= limit) break;
        if (++index === chunk.length) {
          chunk = this.chunks[++chunkIndex];
          index = 0;
        }
      }
      return keys;
    }
    // Start just below the first key >= upper (or at the very end), and walk down.
    let chunkIndex = upper === undefined ? this.chunks.length : this.findChunk(upper, false);
    let chunk = this.chunks[chunkIndex];
    let index = chunk && upper !== undefined ? searchSorted(chunk, upper, false) : 0;
    while (true) {
      if (--index < 0) {
        chunk = this.chunks[--chunkIndex];
        if (!chunk) break;
        index = chunk.length - 1;
      }
      const key = (chunk as string[])[index] as string;
      if (lowerOpen ? key <= lower : key < lower) break;
      keys.push(key);
      if (keys.length >= limit) break;
    }
    return keys;
  }

  /** Index of the first chunk whose last key is `>= key` (`> key` when `strict`); `chunks.length` if none. */
  private findChunk(key: string, strict: boolean): number {
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const chunk = this.chunks[middle] as string[];
      const last = chunk[chunk.length - 1] as string;
      if (strict ? last <= key : last < key) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/**
 * In-memory storage with the reference semantics.
 *
 * @example
 * const shared = new MemoryStorage();
 * const flaky = new MemoryStorage({ faults: { seed: 7, writeFailureAfterApplyRate: 0.1 } });
 * flaky.faults?.setFaults({ hangRate: 0.01 });
 */
export class MemoryStorage implements Storage {
  readonly capabilities: StorageCapabilities = {
    conditionalBatch: true,
    durable: false,
    changeFeed: true,
    groupCommit: true,
  };
  /** The fault injector, when constructed with `faults`. */
  readonly faults: FaultInjector | undefined;
  private readonly values = new Map<string, string>();
  private readonly sortedKeys = new SortedKeys();
  private readonly feed = new ChangeFeed();
  private readonly limits: ValidationLimits;
  private closed = false;

  constructor(options: MemoryStorageOptions = {}) {
    this.limits = { maxValueBytes: resolveMaxValueBytes(options.maxValueBytes) };
    this.faults = options.faults ? new FaultInjector(options.faults) : undefined;
  }

  async get(key: string): Promise<string | null> {
    this.assertOpen('get');
    validateKey('get', key, 'the key');
    if (!this.faults) return this.values.get(key) ?? null;
    return this.faults.run('get', () => {
      this.assertOpen('get');
      return this.values.get(key) ?? null;
    });
  }

  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    this.assertOpen('getMany');
    validateReadKeys('getMany', keys);
    if (!this.faults) return keys.map((key) => this.values.get(key) ?? null);
    const snapshot = [...keys];
    return this.faults.run('getMany', () => {
      this.assertOpen('getMany');
      return snapshot.map((key) => this.values.get(key) ?? null);
    });
  }

  async scan(prefix: string, options: ScanOptions = {}): Promise<Entry[]> {
    this.assertOpen('scan');
    validateScan('scan', prefix, options);
    const { after, limit = Infinity, reverse = false } = options;
    const read = () => {
      const range = scanRange(prefix, after, reverse);
      if (!range) return [];
      return this.sortedKeys
        .collect(range, reverse, limit)
        .map((key) => ({ key, value: this.values.get(key) as string }));
    };
    if (!this.faults) return read();
    return this.faults.run('scan', () => {
      this.assertOpen('scan');
      return read();
    });
  }

  async batch(operations: readonly Operation[]): Promise<void> {
    this.assertOpen('batch');
    validateBatch('batch', operations, this.limits);
    if (!this.faults) {
      this.commit([{ conditions: [], operations }]);
      return;
    }
    const group = { conditions: [], operations: copyOperations(operations) };
    await this.faults.run('batch', () => {
      this.assertOpen('batch');
      this.commit([group]);
    });
  }

  async conditionalBatch(
    conditions: readonly Condition[],
    operations: readonly Operation[],
  ): Promise<boolean> {
    this.assertOpen('conditionalBatch');
    validateConditionalBatch('conditionalBatch', conditions, operations, this.limits);
    if (!this.faults) return this.commit([{ conditions, operations }])[0] as boolean;
    const group = { conditions: copyConditions(conditions), operations: copyOperations(operations) };
    return this.faults.run(
      'conditionalBatch',
      () => {
        this.assertOpen('conditionalBatch');
        return this.commit([group])[0] as boolean;
      },
      (applied) => applied,
    );
  }

  async commitGroups(groups: readonly CommitGroup[]): Promise<boolean[]> {
    this.assertOpen('commitGroups');
    validateCommitGroups('commitGroups', groups, this.limits);
    if (!this.faults) return this.commit(groups);
    const snapshot = groups.map((group) => ({
      conditions: copyConditions(group.conditions),
      operations: copyOperations(group.operations),
    }));
    return this.faults.run(
      'commitGroups',
      () => {
        this.assertOpen('commitGroups');
        return this.commit(snapshot);
      },
      (results) => results.some(Boolean),
    );
  }

  watch(prefix: string, listener: (keys: string[]) => void): () => void {
    this.assertOpen('watch');
    return this.feed.subscribe(prefix, listener);
  }

  /** Idempotent. Rejects hung calls; later calls reject with code `closed`. Listeners are dropped. */
  async close(): Promise<void> {
    this.closed = true;
    this.feed.clear();
    this.faults?.close();
  }

  /** Applies each group whose conditions hold, in order, synchronously; reports the touched keys once. */
  private commit(groups: readonly CommitGroup[]): boolean[] {
    const touched: string[] = [];
    const results = groups.map(({ conditions, operations }) => {
      if (!conditions.every(({ key, expected }) => (this.values.get(key) ?? null) === expected)) return false;
      for (const operation of operations) {
        touched.push(operation.key);
        if (operation.type === 'put') {
          if (!this.values.has(operation.key)) this.sortedKeys.add(operation.key);
          this.values.set(operation.key, operation.value);
        } else if (this.values.delete(operation.key)) {
          this.sortedKeys.delete(operation.key);
        }
      }
      return true;
    });
    this.feed.publish(touched);
    return results;
  }

  private assertOpen(operation: string): void {
    if (this.closed)
      throw new StorageError(operation, 'closed', 'this MemoryStorage is closed; create a new one.');
  }
}

/** Copies taken before an injected delay or hang, so a caller mutating its arrays cannot change the commit. */
function copyOperations(operations: readonly Operation[]): Operation[] {
  return operations.map((operation) => ({ ...operation }));
}

function copyConditions(conditions: readonly Condition[]): Condition[] {
  return conditions.map((condition) => ({ ...condition }));
}
