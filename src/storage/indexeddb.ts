/**
 * `IndexedDbStorage`: the storage contract on IndexedDB. Dexie 4 opens the database and owns its schema and
 * versions (this is the only module that imports Dexie, and the only place that knows them); reads and
 * commits run as transactions on the raw `IDBDatabase` Dexie opened, since Dexie's promise-zone
 * transaction wrapper costs more than the requests themselves on the engine's hot paths (bench/README.md).
 *
 * Guarantees:
 * - One database (`databaseName`, default `shuttle`) with one table `kv` of `{ key, value }` rows keyed by
 *   `key`. Instances with the same name in one origin share data exactly as tabs do.
 * - `batch`, `conditionalBatch` and `commitGroups` each run in ONE `readwrite` transaction: read the condition
 *   keys, compare exact strings, then write. IndexedDB serialises overlapping `readwrite` transactions across
 *   every tab and worker, so two competing conditional batches can never both succeed, and an aborted
 *   transaction leaves nothing half-applied. Nothing is awaited inside a transaction (every request is issued
 *   at once, the outcome known when it completes); input is validated before it starts.
 * - Commit groups apply in order inside the one transaction; a group's conditions see the writes of earlier
 *   groups, and a group whose condition fails writes nothing and does not affect the others.
 * - `get` and `getMany` are one read transaction. A scan page is one request (`getAll`; a cursor when
 *   reverse) in one read transaction, returned fully in memory. Its bounds come from `scanRange`, which is
 *   exact for keys with any characters (including U+FFFF).
 * - `watch`: after each commit, this instance's own listeners are told directly, and the touched keys are
 *   posted on a `BroadcastChannel` named after the database, so instances in other tabs, workers, or the same
 *   process are told too. A post after a quiet moment goes at once; the commits of the next
 *   `channelWindowMs` are then gathered into one post at the end of that window (a post costs about as much
 *   as one IndexedDB request, and a lone workflow commits every millisecond). So another
 *   instance hears of a commit at most `channelWindowMs` later, and of every commit. `close()` posts what is
 *   gathered, then closes the channel so Node can exit.
 * - Failures reject with a `StorageError` whose message says what to do: `quota-exceeded` (free space or
 *   delete old workflows), `blocked` (close other tabs running an older version), `version-change` (the
 *   database was upgraded or deleted in another tab: reload the page), `closed`. After a version change or an
 *   unexpected close the instance never silently reopens (which could recreate an empty database); every
 *   later call rejects, and `onUnavailable` is called once.
 */

import Dexie from 'dexie';
import { ChangeFeed } from './change-feed';
import { StorageError, isStorageError, type StorageErrorCode } from './errors';
import { scanRange } from './key-range';
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
  describeKey,
  resolveMaxValueBytes,
  validateBatch,
  validateCommitGroups,
  validateConditionalBatch,
  validateKey,
  validateReadKeys,
  validateScan,
  type ValidationLimits,
} from './validation';

export type IndexedDbStorageOptions = {
  /** Database name; instances with the same name share data. Default `shuttle`. */
  databaseName?: string;
  /** The IndexedDB factory. Default: the global `indexedDB` (tests pass fake-indexeddb's). */
  indexedDB?: IDBFactory;
  /** The key range class matching `indexedDB`. Default: the global `IDBKeyRange`. */
  IDBKeyRange?: typeof IDBKeyRange;
  /** Largest value accepted, in UTF-8 bytes. Default `storageLimits.defaultMaxValueBytes` (1 MiB). */
  maxValueBytes?: number;
  /**
   * When a commit counts as done. `'default'` (the default) leaves it to the browser: Chromium commits
   * `relaxed` — a committed transaction survives the tab or the browser crashing, but not the operating
   * system crashing or the power going before the OS flushed its disk cache. `'strict'` waits for the flush
   * (every commit survives an OS crash), at a cost per commit (docs/storage.md has the measurement).
   */
  durability?: IndexedDbDurability;
  /**
   * Called once when the database becomes unusable underneath this instance (upgraded or deleted in another
   * tab, or closed by the browser), with the error every later call rejects with. Not called for `close()`.
   */
  onUnavailable?: (error: StorageError) => void;
};

type Row = { key: string; value: string };

/** `IDBTransactionOptions.durability` of every read-write transaction (`IndexedDbStorageOptions.durability`). */
export type IndexedDbDurability = 'default' | 'relaxed' | 'strict';

const durabilities: readonly IndexedDbDurability[] = ['default', 'relaxed', 'strict'];

/** The one object store, keyed by `key`. */
const tableName = 'kv';

type Unavailability = { code: StorageErrorCode; message: string };

/** The message posted on the change channel after a commit. */
type ChangeMessage = { type: 'shuttle-storage-changed'; keys: string[] };

/** How long, after a post on the change channel, the keys of later commits are gathered into the next one. */
export const channelWindowMs = 4;

const defaultDatabaseName = 'shuttle';

/**
 * Schema versions, oldest first. Dexie stores version N as native IndexedDB version N * 10. Add a version
 * (never edit an old one) to change the schema; its `upgrade` runs inside the version-change transaction.
 */
function declareSchema(db: Dexie): void {
  db.version(1).stores({ [tableName]: 'key' });
}

/** Name of the BroadcastChannel that carries the change feed of `databaseName`. */
function changeChannelName(databaseName: string): string {
  return `shuttle-storage-changes:${databaseName}`;
}

const messages = {
  closed: 'this IndexedDbStorage was closed; open a new one.',
  quota:
    "the browser's storage quota for this site is used up; free space on the device or delete old workflows, " +
    'then retry.',
  blocked:
    'the database upgrade is blocked by another tab still using an older version of the studio; close the ' +
    'other tabs of the studio (or reload them), then retry.',
  upgraded:
    'another tab upgraded the database to a newer version of the studio; reload the page to use the new version.',
  deleted: 'the database was deleted (in another tab or from the browser settings); reload the page.',
  closedUnexpectedly:
    'the browser closed the database unexpectedly (site data cleared, or the disk failed); reload the page.',
  missing:
    'IndexedDB is not available here (a private window or an old browser?); use a normal browser window.',
} as const;

/** A read waiting for the next shared `readonly` transaction (`IndexedDbStorage.read`). */
type PendingRead = {
  issue: (store: IDBObjectStore) => IDBRequest[];
  resolve: (results: unknown[]) => void;
  reject: (error: unknown) => void;
};

/**
 * Storage on IndexedDB.
 *
 * @example
 * const storage = new IndexedDbStorage({ databaseName: 'shuttle' });
 * const won = await storage.conditionalBatch([{ key: 'lock', expected: null }], [{ type: 'put', key: 'lock', value: 'me' }]);
 */
export class IndexedDbStorage implements Storage {
  readonly capabilities: StorageCapabilities;
  readonly databaseName: string;
  private readonly db: Dexie;
  private readonly keyRange: typeof IDBKeyRange;
  private readonly limits: ValidationLimits;
  private readonly feed = new ChangeFeed();
  private readonly onUnavailable: ((error: StorageError) => void) | undefined;
  /** The options of every read-write transaction. */
  private readonly writeOptions: IDBTransactionOptions;
  private channel: BroadcastChannel | undefined;
  /** Keys committed since the last post, while its window is open (`announce`). */
  private gathered: Set<string> | undefined;
  private channelWindow: ReturnType<typeof setTimeout> | undefined;
  private opening: Promise<void> | undefined;
  private isBlocked = false;
  private readonly blockedWaiters = new Set<() => void>();
  private closedByCaller = false;
  private unavailable: Unavailability | undefined;
  /** Reads asked for since the last read transaction began (`read`). */
  private pendingReads: PendingRead[] = [];

  constructor(options: IndexedDbStorageOptions = {}) {
    this.databaseName = options.databaseName ?? defaultDatabaseName;
    if (typeof this.databaseName !== 'string' || this.databaseName.length === 0) {
      throw new StorageError('open', 'invalid-input', 'databaseName must be a non-empty string.');
    }
    this.limits = { maxValueBytes: resolveMaxValueBytes(options.maxValueBytes) };
    this.onUnavailable = options.onUnavailable;
    const durability = options.durability ?? 'default';
    if (!durabilities.includes(durability))
      throw new StorageError(
        'open',
        'invalid-input',
        `durability must be one of ${durabilities.map((d) => `'${d}'`).join(', ')}; got ${JSON.stringify(durability)}.`,
      );
    this.writeOptions = { durability };
    this.capabilities = {
      conditionalBatch: true,
      durable: true,
      changeFeed: typeof BroadcastChannel !== 'undefined',
      groupCommit: true,
    };
    const globals = globalThis as { indexedDB?: IDBFactory; IDBKeyRange?: typeof IDBKeyRange };
    this.keyRange = (options.IDBKeyRange ?? globals.IDBKeyRange)!;
    this.db = new Dexie(this.databaseName, {
      indexedDB: options.indexedDB ?? globals.indexedDB,
      IDBKeyRange: this.keyRange,
      cache: 'disabled',
    });
    declareSchema(this.db);
    this.db.on('versionchange', (event: IDBVersionChangeEvent) => {
      const deleted = event.newVersion === null || event.newVersion === 0;
      this.becomeUnavailable({
        code: 'version-change',
        message: deleted ? messages.deleted : messages.upgraded,
      });
      return false; // replaces Dexie's default, which would reopen (and could recreate a deleted database)
    });
    this.db.on('blocked', () => {
      this.isBlocked = true;
      for (const reject of [...this.blockedWaiters]) reject();
      return false; // replaces Dexie's console warning: the callers get a StorageError instead
    });
  }

  /**
   * Deletes a database (tests, "reset" in the studio). Open instances on it see a `version-change`. Resolves
   * once the database is gone.
   */
  static deleteDatabase(databaseName: string, options: { indexedDB?: IDBFactory } = {}): Promise<void> {
    const factory = options.indexedDB ?? (globalThis as { indexedDB?: IDBFactory }).indexedDB;
    if (!factory) return Promise.reject(new StorageError('deleteDatabase', 'unknown', messages.missing));
    return new Promise((resolve, reject) => {
      const request = factory.deleteDatabase(databaseName);
      request.onsuccess = () => resolve();
      request.onerror = () =>
        reject(mapIndexedDbError('deleteDatabase', request.error ?? new Error('deleteDatabase failed')));
    });
  }

  /** Opens the database now rather than on the first call, so open failures surface early. */
  async open(): Promise<void> {
    await this.ensureOpen('open');
  }

  async get(key: string): Promise<string | null> {
    validateKey('get', key, 'the key');
    await this.ensureOpen('get');
    try {
      const [row] = await this.read((store) => [store.get(key)]);
      return readValue('get', row as Row | undefined, key);
    } catch (error) {
      throw this.toError('get', error);
    }
  }

  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    validateReadKeys('getMany', keys);
    await this.ensureOpen('getMany');
    if (keys.length === 0) return [];
    try {
      const rows = await this.read((store) => keys.map((key) => store.get(key)));
      return rows.map((row, index) => readValue('getMany', row as Row | undefined, keys[index] as string));
    } catch (error) {
      throw this.toError('getMany', error);
    }
  }

  async scan(prefix: string, options: ScanOptions = {}): Promise<Entry[]> {
    validateScan('scan', prefix, options);
    await this.ensureOpen('scan');
    const { after, limit, reverse = false } = options;
    const range = scanRange(prefix, after, reverse);
    if (!range || limit === 0) return [];
    const bounds =
      range.upper === undefined
        ? this.keyRange.lowerBound(range.lower, range.lowerOpen)
        : this.keyRange.bound(range.lower, range.upper, range.lowerOpen, true);
    try {
      const rows = reverse
        ? limit === 1
          ? await this.readLast(bounds)
          : await this.readBackwards(bounds, limit)
        : ((await this.read((store) => [store.getAll(bounds, limit)]))[0] as Row[]);
      return rows.map((row) => ({ key: row.key, value: readValue('scan', row, row.key) as string }));
    } catch (error) {
      throw this.toError('scan', error);
    }
  }

  async batch(operations: readonly Operation[]): Promise<void> {
    validateBatch('batch', operations, this.limits);
    await this.commit('batch', [{ conditions: [], operations }]);
  }

  async conditionalBatch(
    conditions: readonly Condition[],
    operations: readonly Operation[],
  ): Promise<boolean> {
    validateConditionalBatch('conditionalBatch', conditions, operations, this.limits);
    const [applied] = await this.commit('conditionalBatch', [{ conditions, operations }]);
    return applied as boolean;
  }

  async commitGroups(groups: readonly CommitGroup[]): Promise<boolean[]> {
    validateCommitGroups('commitGroups', groups, this.limits);
    if (groups.length === 0) {
      await this.ensureOpen('commitGroups');
      return [];
    }
    return this.commit('commitGroups', groups);
  }

  watch(prefix: string, listener: (keys: string[]) => void): () => void {
    this.assertUsable('watch');
    const unsubscribe = this.feed.subscribe(prefix, listener);
    this.ensureChannel();
    return unsubscribe;
  }

  /**
   * The browser's estimate for this origin (`navigator.storage.estimate()`): everything the origin stores,
   * IndexedDB included, and its quota. Zero where the platform has no estimate.
   */
  async usage(): Promise<StorageUsage> {
    this.assertUsable('usage');
    const estimate = (await globalThis.navigator?.storage?.estimate?.()) ?? {};
    return {
      source: 'browser storage of this origin',
      bytes: estimate.usage ?? 0,
      ...(estimate.quota !== undefined ? { quotaBytes: estimate.quota } : {}),
      parts: [],
    };
  }

  /** Idempotent. Closes the connection and the change channel; later calls reject with code `closed`. */
  async close(): Promise<void> {
    this.closedByCaller = true;
    this.feed.clear();
    this.closeChannel();
    this.db.close();
  }

  /**
   * A commit of conditional groups (`batch` is one group without conditions): `commitOptimistic`, and when a
   * condition fails there, `commitRaw`, which decides each group on its own.
   *
   * The transactions run on the raw `IDBDatabase` Dexie opened (Dexie still owns opening, the schema and
   * upgrades). Commits are the engine's hot path, where Dexie's promise-zone transaction wrapper costs more
   * than the requests themselves (bench/README.md): here every request is issued at once and the result is
   * known when the transaction completes, with no promise turn in between. A commit is first tried
   * optimistically (`commitOptimistic`: reads and writes in one round trip, aborted if a condition fails), so
   * the common case costs one round trip.
   */
  private async commit(operation: string, groups: readonly CommitGroup[]): Promise<boolean[]> {
    await this.ensureOpen(operation);
    let results: boolean[];
    let touched: string[];
    try {
      // Optimistic first: every request issued at once, the transaction aborted if a condition fails (then
      // nothing was written) and the commit redone the careful way, which decides each group on its own.
      [results, touched] = (await this.commitOptimistic(groups)) ?? (await this.commitRaw(groups));
    } catch (error) {
      throw this.toError(operation, error);
    }
    this.announce(touched);
    return results;
  }

  /**
   * The common case in one round trip: for each group in order, its condition reads and then its writes are
   * all issued at once (requests of a transaction run in order, so each read sees exactly the writes of the
   * groups before it, as in `commitRaw`). The first read that does not match aborts the transaction, so
   * nothing is written, and resolves null: the caller then runs `commitRaw`, which applies the groups whose
   * conditions hold. Conditions almost always hold (a lost race or a deposed engine is the exception), and
   * the careful path waits for every read before it writes: a second round trip per commit.
   *
   * A condition that a key is absent, in a group whose only operation on that key is a put, needs no read:
   * the put is issued as `add`, which fails if the key exists, and that failure aborts the transaction like
   * a read that does not match. (The engine's run commits are conditioned this way: workflow-writes.ts.)
   */
  private commitOptimistic(groups: readonly CommitGroup[]): Promise<[boolean[], string[]] | null> {
    return new Promise((resolve, reject) => {
      // A throw here (the connection closed underneath) rejects the promise.
      const transaction = this.db.backendDB().transaction(tableName, 'readwrite', this.writeOptions);
      const store = transaction.objectStore(tableName);
      let refused = false;
      const refuse = () => {
        if (refused) return;
        refused = true;
        transaction.abort();
      };
      const touched = new Set<string>();
      for (const { conditions, operations } of groups) {
        let inserts: Set<string> | undefined;
        for (const { key, expected } of conditions) {
          if (expected === null && isOnlyPut(operations, key)) {
            (inserts ??= new Set()).add(key);
            continue;
          }
          const request = store.get(key);
          request.onsuccess = () => {
            const row = request.result as Row | undefined;
            if ((row === undefined ? null : row.value) !== expected) refuse();
          };
        }
        for (const item of operations) {
          if (item.type === 'delete') store.delete(item.key);
          else if (inserts?.has(item.key)) {
            // "absent, then put": one `add`, which fails (ConstraintError) if the key exists.
            const request = store.add({ key: item.key, value: item.value } satisfies Row);
            request.onerror = refuse;
          } else store.put({ key: item.key, value: item.value } satisfies Row);
          touched.add(item.key);
        }
      }
      transaction.oncomplete = () => resolve([groups.map(() => true), [...touched]]);
      transaction.onerror = (event) => {
        if (refused) event.preventDefault();
      };
      transaction.onabort = () => {
        if (refused) resolve(null);
        else
          reject(
            transaction.error ?? new DOMException('the IndexedDB transaction was aborted', 'AbortError'),
          );
      };
    });
  }

  /**
   * One `readwrite` transaction: read every condition key once, then walk the groups in order against an
   * overlay of the values as earlier groups left them, then write the net changes of the applied groups.
   */
  private commitRaw(groups: readonly CommitGroup[]): Promise<[boolean[], string[]]> {
    return new Promise((resolve, reject) => {
      // A throw here (the connection closed underneath) rejects the promise.
      const transaction = this.db.backendDB().transaction(tableName, 'readwrite', this.writeOptions);
      const store = transaction.objectStore(tableName);
      const conditionKeys = [...new Set(groups.flatMap((group) => group.conditions.map(({ key }) => key)))];
      // A row whose value is not a string (not written by us) matches no condition.
      const overlay = new Map<string, unknown>();
      let applied: boolean[] = [];
      let touched: string[] = [];
      const write = () => {
        const changes = new Map<string, string | null>();
        applied = groups.map(({ conditions, operations }) => {
          if (!conditions.every(({ key, expected }) => overlay.get(key) === expected)) return false;
          for (const item of operations) {
            const value = item.type === 'put' ? item.value : null;
            overlay.set(item.key, value);
            changes.set(item.key, value);
          }
          return true;
        });
        for (const [key, value] of changes) {
          if (value === null) store.delete(key);
          else store.put({ key, value } satisfies Row);
        }
        touched = [...changes.keys()];
      };
      if (conditionKeys.length === 0) write();
      else {
        let remaining = conditionKeys.length;
        for (const key of conditionKeys) {
          const request = store.get(key);
          request.onsuccess = () => {
            const row = request.result as Row | undefined;
            overlay.set(key, row === undefined ? null : row.value);
            if (--remaining === 0) write();
          };
        }
      }
      transaction.oncomplete = () => resolve([applied, touched]);
      transaction.onerror = () => reject(transaction.error ?? new Error('the IndexedDB transaction failed'));
      transaction.onabort = () =>
        reject(transaction.error ?? new DOMException('the IndexedDB transaction was aborted', 'AbortError'));
    });
  }

  /**
   * Reads share `readonly` transactions on the raw `IDBDatabase` (like commits: Dexie's transaction wrapper
   * costs more than the read): every read asked for in the same turn of the event loop — a workflow's load
   * asks for its record, checkpoint, owner, cancel request and pending signals at once, and fifty runs load
   * together — is issued in one transaction (`flushReads`), the way the engine's group commit shares write
   * transactions. Each transaction is a round trip to the browser's storage process; its requests are not.
   * Resolves with the results of the requests `issue` makes, in order, once they all succeeded.
   */
  private read(issue: (store: IDBObjectStore) => IDBRequest[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      this.pendingReads.push({ issue, resolve, reject });
      // Two microtask turns: the reads one caller starts together (after each awaited `ensureOpen`) all join.
      if (this.pendingReads.length === 1) queueMicrotask(() => queueMicrotask(() => this.flushReads()));
    });
  }

  /**
   * One `readonly` transaction for every read waiting. A request that fails rejects its own read only (its
   * error is kept from aborting the transaction); a transaction that aborts (the connection closed
   * underneath) rejects every read still waiting in it.
   */
  private flushReads(): void {
    const reads = this.pendingReads;
    this.pendingReads = [];
    let store: IDBObjectStore;
    let transaction: IDBTransaction;
    try {
      transaction = this.db.backendDB().transaction(tableName, 'readonly');
      store = transaction.objectStore(tableName);
    } catch (error) {
      for (const read of reads) read.reject(error);
      return;
    }
    const waiting = new Set<PendingRead>();
    for (const read of reads) {
      let requests: IDBRequest[];
      try {
        requests = read.issue(store);
      } catch (error) {
        read.reject(error);
        continue;
      }
      if (requests.length === 0) {
        read.resolve([]);
        continue;
      }
      waiting.add(read);
      let remaining = requests.length;
      for (const request of requests) {
        request.onsuccess = () => {
          if (--remaining > 0) return;
          waiting.delete(read);
          read.resolve(requests.map((each) => each.result as unknown));
        };
        request.onerror = (event) => {
          event.preventDefault(); // the other reads of the transaction go on
          event.stopPropagation();
          if (!waiting.delete(read)) return;
          read.reject(request.error ?? new Error('the IndexedDB read failed'));
        };
      }
    }
    const failAll = (error: unknown) => {
      for (const read of waiting) read.reject(error);
      waiting.clear();
    };
    transaction.onerror = () => failAll(transaction.error ?? new Error('the IndexedDB read failed'));
    transaction.onabort = () =>
      failAll(transaction.error ?? new DOMException('the IndexedDB read was aborted', 'AbortError'));
  }

  /**
   * The last row of `bounds`, read with the other reads of this turn (`read`): the cursor's first position
   * is all it needs, and its value stays readable after the transaction moves on.
   */
  private async readLast(bounds: IDBKeyRange): Promise<Row[]> {
    const [cursor] = (await this.read((store) => [
      store.openCursor(bounds, 'prev'),
    ])) as (IDBCursorWithValue | null)[];
    return cursor ? [cursor.value as Row] : [];
  }

  /** Rows of `bounds` in descending key order, up to `limit`, with a cursor (`getAll` reads forward only). */
  private readBackwards(bounds: IDBKeyRange, limit: number | undefined): Promise<Row[]> {
    return new Promise((resolve, reject) => {
      const transaction = this.db.backendDB().transaction(tableName, 'readonly');
      const request = transaction.objectStore(tableName).openCursor(bounds, 'prev');
      const rows: Row[] = [];
      request.onsuccess = () => {
        const cursor = request.result;
        if (!cursor || (limit !== undefined && rows.length >= limit)) return resolve(rows);
        rows.push(cursor.value as Row);
        if (limit !== undefined && rows.length >= limit) return resolve(rows);
        cursor.continue();
      };
      transaction.onerror = () => reject(transaction.error ?? new Error('the IndexedDB read failed'));
      transaction.onabort = () =>
        reject(transaction.error ?? new DOMException('the IndexedDB read was aborted', 'AbortError'));
    });
  }

  /** Tells this instance's listeners and every other instance on the database which keys a commit touched. */
  private announce(keys: string[]): void {
    if (keys.length === 0 || this.closedByCaller) return;
    this.feed.publish(keys);
    if (this.channelWindow === undefined) return this.post(keys);
    this.gathered ??= new Set();
    for (const key of keys) this.gathered.add(key);
  }

  /** Posts `keys` on the change channel and opens a window that gathers the keys of later commits. */
  private post(keys: string[]): void {
    const channel = this.ensureChannel();
    if (!channel) return;
    channel.postMessage({ type: 'shuttle-storage-changed', keys } satisfies ChangeMessage);
    const window = setTimeout(() => {
      this.channelWindow = undefined;
      const gathered = this.takeGathered();
      if (gathered && this.channel) this.post(gathered);
    }, channelWindowMs);
    (window as { unref?: () => void }).unref?.();
    this.channelWindow = window;
  }

  /** The keys the open window gathered (emptied), or undefined when it gathered none. */
  private takeGathered(): string[] | undefined {
    const gathered = this.gathered;
    this.gathered = undefined;
    return gathered && [...gathered];
  }

  /** Posts what the open window gathered, now, and closes the channel. */
  private closeChannel(): void {
    clearTimeout(this.channelWindow);
    this.channelWindow = undefined;
    const gathered = this.takeGathered();
    if (gathered && this.channel)
      this.channel.postMessage({ type: 'shuttle-storage-changed', keys: gathered } satisfies ChangeMessage);
    this.channel?.close();
    this.channel = undefined;
  }

  private ensureChannel(): BroadcastChannel | undefined {
    if (this.channel || this.closedByCaller || typeof BroadcastChannel === 'undefined') return this.channel;
    const channel = new BroadcastChannel(changeChannelName(this.databaseName));
    channel.onmessage = (event: MessageEvent<unknown>) => {
      if (isChangeMessage(event.data)) this.feed.publish(event.data.keys);
    };
    // Node: a channel must not keep the process alive on its own.
    (channel as { unref?: () => void }).unref?.();
    this.channel = channel;
    return channel;
  }

  /** Opens the database if needed; rejects at once while an upgrade is blocked. */
  private async ensureOpen(operation: string): Promise<void> {
    this.assertUsable(operation);
    if (this.db.isOpen()) return;
    if (this.isBlocked) throw new StorageError(operation, 'blocked', messages.blocked);
    this.opening ??= this.db.open().then(
      () => {
        this.isBlocked = false;
        this.watchConnection();
      },
      (error: unknown) => {
        this.opening = undefined;
        throw error;
      },
    );
    const opening = this.opening;
    try {
      await new Promise<void>((resolve, reject) => {
        const onBlocked = () => reject(new StorageError(operation, 'blocked', messages.blocked));
        this.blockedWaiters.add(onBlocked);
        opening.then(resolve, reject).finally(() => this.blockedWaiters.delete(onBlocked));
      });
    } catch (error) {
      throw this.toError(operation, error);
    }
    this.assertUsable(operation);
  }

  /** Notices the browser closing the connection underneath (site data cleared, disk failure). */
  private watchConnection(): void {
    this.db.backendDB().addEventListener('close', () => {
      this.becomeUnavailable({ code: 'closed', message: messages.closedUnexpectedly });
    });
  }

  private becomeUnavailable(reason: Unavailability): void {
    if (this.unavailable || this.closedByCaller) return;
    this.unavailable = reason;
    this.db.close(); // and never reopen automatically
    this.closeChannel();
    this.onUnavailable?.(new StorageError('open', reason.code, reason.message));
  }

  private assertUsable(operation: string): void {
    if (this.closedByCaller) throw new StorageError(operation, 'closed', messages.closed);
    if (this.unavailable) throw new StorageError(operation, this.unavailable.code, this.unavailable.message);
  }

  private toError(operation: string, error: unknown): StorageError {
    if (isStorageError(error)) return error;
    if (this.closedByCaller) return new StorageError(operation, 'closed', messages.closed, { cause: error });
    if (this.unavailable) {
      return new StorageError(operation, this.unavailable.code, this.unavailable.message, { cause: error });
    }
    return mapIndexedDbError(operation, error);
  }
}

/** Whether the only operation of `operations` on `key` is a single put. */
function isOnlyPut(operations: readonly Operation[], key: string): boolean {
  let puts = 0;
  for (const item of operations) {
    if (item.key !== key) continue;
    if (item.type !== 'put') return false;
    puts++;
  }
  return puts === 1;
}

/** A stored row's value; a row that is not a string value was not written by this adapter. */
function readValue(operation: string, row: Row | undefined, key: string): string | null {
  if (row === undefined) return null;
  if (typeof row.value === 'string') return row.value;
  throw new StorageError(
    operation,
    'unknown',
    `the record under key ${describeKey(key)} is not a string value; it was not written by Shuttle. Delete the ` +
      'database or the record.',
  );
}

function isChangeMessage(data: unknown): data is ChangeMessage {
  if (typeof data !== 'object' || data === null) return false;
  const { type, keys } = data as { type?: unknown; keys?: unknown };
  return (
    type === 'shuttle-storage-changed' && Array.isArray(keys) && keys.every((key) => typeof key === 'string')
  );
}

/** Names of an error and of the errors it wraps (Dexie's `inner`, standard `cause`). */
function errorNames(error: unknown): string[] {
  const names: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { name, inner, cause } = current as { name?: unknown; inner?: unknown; cause?: unknown };
    if (typeof name === 'string') names.push(name);
    current = inner ?? cause;
  }
  return names;
}

/** Maps a Dexie or IndexedDB failure to a `StorageError` with a message that says what to do. */
export function mapIndexedDbError(operation: string, error: unknown): StorageError {
  if (isStorageError(error)) return error;
  const names = errorNames(error);
  const has = (...candidates: string[]) => candidates.some((name) => names.includes(name));
  if (has('QuotaExceededError'))
    return new StorageError(operation, 'quota-exceeded', messages.quota, { cause: error });
  if (has('VersionError', 'VersionChangeError')) {
    return new StorageError(operation, 'version-change', messages.upgraded, { cause: error });
  }
  if (has('DatabaseClosedError', 'InvalidStateError')) {
    return new StorageError(operation, 'closed', messages.closedUnexpectedly, { cause: error });
  }
  if (has('MissingAPIError'))
    return new StorageError(operation, 'unknown', messages.missing, { cause: error });
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new StorageError(operation, 'unknown', `IndexedDB failed (${detail}); retry, or reload the page.`, {
    cause: error,
  });
}
