/**
 * The ceiling of the browser figures: sequential IndexedDB `readwrite` transactions, each reading and
 * rewriting one small record, with the raw IndexedDB API and nothing else. A workflow that commits once per
 * step can at best match this rate, so the engine's figures are reported as ratios to it.
 *
 * The database mirrors IndexedDbStorage's layout (one object store `kv` of `{ key, value }` rows keyed by
 * `key`, the value a JSON string), so the only difference from the engine's commit is the engine itself
 * (and Dexie, which the variants measure separately).
 */
import Dexie from 'dexie';
import { IndexedDbStorage } from '../../src/storage';
import type { RateSample } from './protocol';

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
