/**
 * The storage contract. Everything Shuttle guarantees about durability and ownership rests on one primitive:
 * an atomic batch whose writes apply only if every condition holds (compare-and-swap across several keys).
 * Everything else is ordinary ordered key-value access.
 *
 * Keys are strings ordered by UTF-16 code units (JavaScript `<`, IndexedDB string order). Values are strings;
 * callers encode JSON themselves. Conditions compare values exactly (string equality), never after decoding.
 *
 * Rules every adapter obeys (the conformance suite checks each):
 * 1. `batch`, `conditionalBatch` and `commitGroups` are atomic and isolated against every other writer
 *    sharing the store (other tabs, workers, processes).
 * 2. A failed condition is an answer (`false`), not an error. Errors reject with a `StorageError` and leave
 *    nothing half-applied.
 * 3. A scan page is read from one committed state and fully into memory before it is returned.
 * 4. Input is validated before anything is written (see `storageLimits`).
 * 5. `capabilities` tells the truth.
 */

export type Entry = { key: string; value: string };

export type Operation = { type: 'put'; key: string; value: string } | { type: 'delete'; key: string };

/** `expected: null` means the key must be absent. */
export type Condition = { key: string; expected: string | null };

/** One independent conditional group of a group commit. */
export type CommitGroup = { conditions: readonly Condition[]; operations: readonly Operation[] };

export type ScanOptions = {
  /** Exclusive lower bound (upper bound when `reverse`): only keys after this one are returned. */
  after?: string;
  /** Maximum number of entries in the page. */
  limit?: number;
  /** Return keys in descending order. */
  reverse?: boolean;
};

export type StorageCapabilities = {
  /** `conditionalBatch` is atomic against every other writer: fencing ownership modes require it. */
  conditionalBatch: boolean;
  /** Data survives the process (IndexedDB) rather than living in memory. */
  durable: boolean;
  /** `watch` reports commits made by anyone sharing the store. */
  changeFeed: boolean;
  /** `commitGroups` applies several independent conditional groups in one transaction. */
  groupCommit: boolean;
};

/** How much room a store takes: `bytes` in all, and where the adapter can tell, per part. */
export type StorageUsage = {
  /** What was measured, e.g. "IndexedDB (this origin)" or "PostgreSQL schema shuttle". */
  source: string;
  bytes: number;
  /** The most the store may use (the browser's quota), when known. */
  quotaBytes?: number;
  /** The largest parts (tables, or key areas), largest first. */
  parts: { name: string; bytes: number }[];
};

export interface Storage {
  readonly capabilities: StorageCapabilities;
  get(key: string): Promise<string | null>;
  /** Values in the order of `keys`; absent keys are `null`. */
  getMany(keys: readonly string[]): Promise<(string | null)[]>;
  /** Keys starting with `prefix`, in key order; `after` is exclusive; `limit` caps the page. */
  scan(prefix: string, options?: ScanOptions): Promise<Entry[]>;
  /** Apply all operations atomically. */
  batch(operations: readonly Operation[]): Promise<void>;
  /**
   * Atomically: if every condition holds, apply every operation and return true; otherwise change nothing
   * and return false.
   */
  conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]): Promise<boolean>;
  /** How much room the store takes (for the studio's storage panel). Optional. */
  usage?(): Promise<StorageUsage>;
  /**
   * Group commit: in one transaction, apply each group whose own conditions hold; a group whose condition
   * fails changes nothing and does not affect any other group. Returns one boolean per group, in order.
   * Present when `capabilities.groupCommit` is true. Limits apply per group.
   */
  commitGroups?(groups: readonly CommitGroup[]): Promise<boolean[]>;
  /**
   * Change feed: `listener` is called after commits (by anyone sharing the store) that touch keys under
   * `prefix`, with the touched keys. Returns an unsubscribe function. Present when `capabilities.changeFeed`.
   */
  watch?(prefix: string, listener: (keys: string[]) => void): () => void;
  /**
   * Resolves once every commit visible when it is called has been reported to this store's watchers.
   * Present on stores whose feed is asynchronous (PostgreSQL); a store that reports commits as they land
   * (memory, IndexedDB within one page) does not need it.
   */
  syncWatchers?(): Promise<void>;
  close(): Promise<void>;
}

/** Limits every adapter enforces before anything is written. */
export const storageLimits = {
  maxKeyBytes: 1024,
  maxOperationsPerBatch: 1000,
  maxConditionsPerBatch: 1000,
  defaultMaxValueBytes: 1024 * 1024,
} as const;
