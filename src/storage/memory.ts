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
 * - After `close()` every call rejects with a `StorageError` of code `closed`.
 *
 * Faults are injected (by tests) by wrapping any store, this one included, in `FaultInjectingStorage`
 * (faults.test-support.ts): one fault-injection path for every adapter.
 */

import { ChangeFeed } from './change-feed';
import { StorageError } from './errors';
import { scanRange, type KeyRange } from './key-range';
import type {
  CommitGroup,
  Condition,
  Entry,
  Operation,
  ScanOptions,
  Storage,
  StorageCapabilities,
  StorageUsage,
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
 * const flaky = new FaultInjectingStorage(shared, { seed: 7, writeFailureAfterApplyRate: 0.1 });
 */
export class MemoryStorage implements Storage {
  readonly capabilities: StorageCapabilities = {
    conditionalBatch: true,
    durable: false,
    changeFeed: true,
    groupCommit: true,
  };
  private readonly values = new Map<string, string>();
  private readonly sortedKeys = new SortedKeys();
  private readonly feed = new ChangeFeed();
  private readonly limits: ValidationLimits;
  private closed = false;

  constructor(options: MemoryStorageOptions = {}) {
    this.limits = { maxValueBytes: resolveMaxValueBytes(options.maxValueBytes) };
  }

  async get(key: string): Promise<string | null> {
    this.assertOpen('get');
    validateKey('get', key, 'the key');
    return this.values.get(key) ?? null;
  }

  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    this.assertOpen('getMany');
    validateReadKeys('getMany', keys);
    return keys.map((key) => this.values.get(key) ?? null);
  }

  async scan(prefix: string, options: ScanOptions = {}): Promise<Entry[]> {
    this.assertOpen('scan');
    validateScan('scan', prefix, options);
    const { after, limit = Infinity, reverse = false } = options;
    const range = scanRange(prefix, after, reverse);
    if (!range) return [];
    return this.sortedKeys
      .collect(range, reverse, limit)
      .map((key) => ({ key, value: this.values.get(key) as string }));
  }

  async batch(operations: readonly Operation[]): Promise<void> {
    this.assertOpen('batch');
    validateBatch('batch', operations, this.limits);
    this.commit([{ conditions: [], operations }]);
  }

  async conditionalBatch(
    conditions: readonly Condition[],
    operations: readonly Operation[],
  ): Promise<boolean> {
    this.assertOpen('conditionalBatch');
    validateConditionalBatch('conditionalBatch', conditions, operations, this.limits);
    return this.commit([{ conditions, operations }])[0] as boolean;
  }

  async commitGroups(groups: readonly CommitGroup[]): Promise<boolean[]> {
    this.assertOpen('commitGroups');
    validateCommitGroups('commitGroups', groups, this.limits);
    return this.commit(groups);
  }

  watch(prefix: string, listener: (keys: string[]) => void): () => void {
    this.assertOpen('watch');
    return this.feed.subscribe(prefix, listener);
  }

  /** The UTF-16 size of every key and value (what the strings take in memory, roughly). */
  async usage(): Promise<StorageUsage> {
    this.assertOpen('usage');
    let bytes = 0;
    for (const [key, value] of this.values) bytes += 2 * (key.length + value.length);
    return { source: 'memory (this process)', bytes, parts: [] };
  }

  /** Idempotent. Later calls reject with code `closed`. Listeners are dropped. */
  async close(): Promise<void> {
    this.closed = true;
    this.feed.clear();
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
