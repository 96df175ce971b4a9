/**
 * The ceilings of the browser figures: the same writes as the engine's commits, with the raw IndexedDB API
 * and nothing else (bench/README.md, "Ceilings"):
 * - one workflow (`measureSingleWrites`): sequential `readwrite` transactions, each one `add` of a record of
 *   the engine's commit-record size (about 790 bytes: the record carrying its checkpoint) under a new key —
 *   what one engine step writes, nothing read;
 * - fifty workflows (`measureBatchedWrites`): transactions of `groupSize` such `put`s (the engine's own steps
 *   per commit in the measurement compared), two in flight at once, as the engine's group commit sends them.
 *
 * The earlier yardstick — a `get` then a dependent `put` of one small record per transaction
 * (`measureRawTransactions`) — stays as the variants' baseline (details only).
 *
 * The database mirrors IndexedDbStorage's layout (one object store `kv` of `{ key, value }` rows keyed by
 * `key`, the value a JSON string), so the only difference from the engine's commit is the engine itself
 * (and Dexie, which the variants measure separately).
 */
import Dexie from 'dexie';
import { IndexedDbStorage } from '../../src/storage';
import type { CeilingSample, RateSample } from './protocol';

const storeName = 'kv';
const recordKey = 'bench:record';

type Row = { key: string; value: string };

/** Opens (creating if needed) a raw database with IndexedDbStorage's layout. */
export function openRawDatabase(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(name, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(storeName, { keyPath: 'key' });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error(`could not open ${name}`));
    request.onblocked = () => reject(new Error(`opening ${name} is blocked`));
  });
}

/** Deletes a database; resolves when it is gone (or could not be deleted: the bench goes on). */
export function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => resolve();
    request.onblocked = () => resolve();
  });
}

/** The durability a transaction opened without options gets here (`default` means "the browser decides"). */
export function defaultDurability(db: IDBDatabase): string {
  const transaction = db.transaction(storeName, 'readonly');
  const durability = (transaction as IDBTransaction & { durability?: string }).durability ?? 'unsupported';
  transaction.abort();
  return durability;
}

function nextValue(row: Row | undefined): string {
  const count = row ? (JSON.parse(row.value) as { count: number }).count : 0;
  return JSON.stringify({ count: count + 1, note: 'a small record, like a claim or a checkpoint pointer' });
}

/** One `readwrite` transaction: get the record, put it back changed; resolves on `complete`. */
function rawTransaction(db: IDBDatabase, durability: IDBTransactionDurability | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const transaction =
      durability === undefined
        ? db.transaction(storeName, 'readwrite')
        : db.transaction(storeName, 'readwrite', { durability });
    const store = transaction.objectStore(storeName);
    const read = store.get(recordKey);
    read.onsuccess = () => {
      store.put({ key: recordKey, value: nextValue(read.result as Row | undefined) } satisfies Row);
    };
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error ?? new Error('transaction failed'));
    transaction.onabort = () => reject(transaction.error ?? new Error('transaction aborted'));
  });
}

/** A value of the engine's commit-record size (about 790 bytes of JSON). */
const recordValue = (n: number) => `{"t":[],"n":${n},"c":"${'x'.repeat(760)}"}`;

let keyCounter = 0;
const nextKey = () => `ceiling:${String(keyCounter++).padStart(10, '0')}`;

/** One `readwrite` transaction of `count` writes of fresh records (`add` when one, `put`s when several). */
function writeTransaction(db: IDBDatabase, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(storeName, 'readwrite');
    const store = transaction.objectStore(storeName);
    for (let i = 0; i < count; i++) {
      const row = { key: nextKey(), value: recordValue(i) } satisfies Row;
      if (count === 1) store.add(row);
      else store.put(row);
    }
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error ?? new Error('transaction failed'));
    transaction.onabort = () => reject(transaction.error ?? new Error('transaction aborted'));
  });
}

/** Empties the ceilings' records between windows (not timed), so the store does not grow through the run. */
export function clearCeilingRecords(db: IDBDatabase): Promise<void> {
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(storeName, 'readwrite');
    transaction.objectStore(storeName).delete(IDBKeyRange.bound('ceiling:', 'ceiling:\uffff'));
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error ?? new Error('transaction failed'));
  });
}

/** The one-workflow ceiling: one record per transaction, back to back, for `durationMs`. */
export async function measureSingleWrites(db: IDBDatabase, durationMs: number): Promise<CeilingSample> {
  const sample = await measureFor(durationMs, () => writeTransaction(db, 1));
  return { ...sample, commits: sample.operations, commitsPerSecond: sample.perSecond, groupSize: 1 };
}

/** The fifty-workflow ceiling: `groupSize` records per transaction, two transactions in flight. */
export async function measureBatchedWrites(
  db: IDBDatabase,
  durationMs: number,
  groupSize: number,
): Promise<CeilingSample> {
  const size = Math.max(1, Math.round(groupSize));
  let commits = 0;
  const started = performance.now();
  const send = async () => {
    while (performance.now() - started < durationMs) {
      await writeTransaction(db, size);
      commits++;
    }
  };
  await Promise.all([send(), send()]);
  const elapsedMs = performance.now() - started;
  return {
    operations: commits * size,
    elapsedMs,
    perSecond: (commits * size * 1000) / elapsedMs,
    commits,
    commitsPerSecond: (commits * 1000) / elapsedMs,
    groupSize: size,
  };
}

/** Runs `operation` back to back for `durationMs` and reports the rate. */
export async function measureFor(durationMs: number, operation: () => Promise<unknown>): Promise<RateSample> {
  let operations = 0;
  const started = performance.now();
  let elapsedMs = 0;
  while (elapsedMs < durationMs) {
    await operation();
    operations++;
    elapsedMs = performance.now() - started;
  }
  return { operations, elapsedMs, perSecond: (operations * 1000) / elapsedMs };
}

/**
 * Sequential raw transactions for `durationMs`: the ceiling. `durability` undefined opens the transaction
 * without options, exactly as Dexie (and so IndexedDbStorage) does.
 */
export function measureRawTransactions(
  db: IDBDatabase,
  durationMs: number,
  durability?: IDBTransactionDurability,
): Promise<RateSample> {
  return measureFor(durationMs, () => rawTransaction(db, durability));
}

/**
 * The same get + put in a Dexie `rw` transaction on a database of the same layout: `async` awaits inside the
 * transaction callback (as IndexedDbStorage does), `chained` chains Dexie's own promises without `await`.
 */
export async function measureDexieTransactions(
  databaseName: string,
  durationMs: number,
  style: 'async' | 'chained',
): Promise<RateSample> {
  const db = new Dexie(databaseName, { cache: 'disabled' });
  db.version(1).stores({ kv: 'key' });
  const table = db.table<Row, string>(storeName);
  await db.open();
  try {
    return await measureFor(durationMs, () =>
      style === 'async'
        ? db.transaction('rw', table, async () => {
            const row = await table.get(recordKey);
            await table.put({ key: recordKey, value: nextValue(row) });
          })
        : db.transaction('rw', table, () =>
            table.get(recordKey).then((row) => table.put({ key: recordKey, value: nextValue(row) })),
          ),
    );
  } finally {
    db.close();
  }
}

/** `IndexedDbStorage.conditionalBatch` with one condition and one put, chained on the last written value. */
export async function measureConditionalBatches(
  databaseName: string,
  durationMs: number,
): Promise<RateSample> {
  const storage = new IndexedDbStorage({ databaseName });
  await storage.open();
  try {
    let current = await storage.get(recordKey);
    return await measureFor(durationMs, async () => {
      const next = nextValue(current === null ? undefined : { key: recordKey, value: current });
      const applied = await storage.conditionalBatch(
        [{ key: recordKey, expected: current }],
        [{ type: 'put', key: recordKey, value: next }],
      );
      if (!applied) throw new Error('conditionalBatch: the bench record changed underneath');
      current = next;
    });
  } finally {
    await storage.close();
  }
}
