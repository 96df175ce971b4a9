import { IDBDatabase, IDBFactory, IDBKeyRange, forceCloseDatabase } from 'fake-indexeddb';
import { vi } from 'vitest';
import { describe, expect, it } from 'vitest';
import { describeStorageConformance } from './conformance.test-support';
import { isStorageError, type StorageError } from './errors';
import { IndexedDbStorage, channelWindowMs, mapIndexedDbError } from './indexeddb';

const indexedDB = new IDBFactory();
let databaseCount = 0;

function freshDatabaseName(): string {
  databaseCount++;
  return `shuttle-test-${databaseCount}`;
}

function openStorage(databaseName: string, options: { onUnavailable?: (error: StorageError) => void } = {}) {
  return new IndexedDbStorage({ databaseName, indexedDB, IDBKeyRange, ...options });
}

describeStorageConformance('IndexedDbStorage on fake-indexeddb', async () => {
  const databaseName = freshDatabaseName();
  return {
    storage: openStorage(databaseName),
    openPeer: async () => openStorage(databaseName),
    dispose: () => IndexedDbStorage.deleteDatabase(databaseName, { indexedDB }),
  };
});

async function rejection(call: () => Promise<unknown>): Promise<StorageError> {
  try {
    await call();
  } catch (error) {
    if (isStorageError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to reject');
}

/** Opens a plain IndexedDB connection, as another tab running other code would. */
function openRawConnection(
  databaseName: string,
  version: number,
  onUpgrade: (database: IDBDatabase) => void = () => undefined,
): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(databaseName, version);
    request.onupgradeneeded = () => onUpgrade(request.result);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function databaseNames(): Promise<string[]> {
  return (await indexedDB.databases()).map((info) => info.name ?? '');
}

describe('IndexedDbStorage', () => {
  it('posts a commit on the change channel at once, gathers the next few milliseconds of commits into one post, and posts what it gathered when closed', async () => {
    // Only the window's timer is faked; fake-indexeddb schedules with setImmediate, and so does `settle`.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const databaseName = freshDatabaseName();
    const storage = openStorage(databaseName);
    const posts: string[][] = [];
    const channel = new BroadcastChannel(`shuttle-storage-changes:${databaseName}`);
    channel.onmessage = (event: MessageEvent<{ keys: string[] }>) => posts.push([...event.data.keys].sort());
    const settle = async (count: number) => {
      for (let turn = 0; turn < 10_000 && posts.length < count; turn++)
        await new Promise((resolve) => setImmediate(resolve));
    };
    const put = (key: string) => storage.batch([{ type: 'put', key, value: key }]);
    try {
      await put('a');
      await settle(1);
      for (const key of ['b', 'c', 'd']) await put(key);
      vi.advanceTimersByTime(channelWindowMs);
      await settle(2);
      await put('e'); // the post of b, c and d opened another window
      await storage.close();
      await settle(3);
      expect(posts).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
    } finally {
      vi.useRealTimers();
      channel.close();
      await IndexedDbStorage.deleteDatabase(databaseName, { indexedDB });
    }
  });

  it('shares data between two instances on the same database, and not with another database', async () => {
    const name = freshDatabaseName();
    const first = openStorage(name);
    const second = openStorage(name);
    const elsewhere = openStorage(freshDatabaseName());
    await first.batch([{ type: 'put', key: 'k', value: 'v' }]);
    expect(await second.get('k')).toBe('v');
    expect(await elsewhere.get('k')).toBeNull();
    expect(first.databaseName).toBe(name);
    await Promise.all([first.close(), second.close(), elsewhere.close()]);
  });

  it('inserts "absent, then put" without a read, and a taken key refuses only its own group', async () => {
    const storage = openStorage(freshDatabaseName());
    await storage.batch([{ type: 'put', key: 'taken', value: 'first' }]);
    const results = await storage.commitGroups([
      {
        conditions: [{ key: 'taken', expected: null }],
        operations: [
          { type: 'put', key: 'taken', value: 'second' },
          { type: 'put', key: 'beside-taken', value: 'x' },
        ],
      },
      {
        conditions: [{ key: 'free', expected: null }],
        operations: [
          { type: 'put', key: 'free', value: 'mine' },
          { type: 'put', key: 'beside-free', value: 'y' },
        ],
      },
      // absent, then deleted and put: not an insert, decided by a read
      {
        conditions: [{ key: 'other', expected: null }],
        operations: [
          { type: 'delete', key: 'other' },
          { type: 'put', key: 'other', value: 'z' },
        ],
      },
    ]);
    expect(results).toEqual([false, true, true]);
    expect(await storage.getMany(['taken', 'beside-taken', 'free', 'beside-free', 'other'])).toEqual([
      'first',
      null,
      'mine',
      'y',
      'z',
    ]);
    expect(
      await storage.conditionalBatch(
        [{ key: 'free', expected: null }],
        [{ type: 'put', key: 'free', value: 'again' }],
      ),
    ).toBe(false);
    expect(await storage.get('free')).toBe('mine');
    await storage.close();
  });

  it('serves the reads asked for together from one readonly transaction, each with its own answer', async () => {
    const storage = openStorage(freshDatabaseName());
    await storage.batch([
      { type: 'put', key: 'a', value: '1' },
      { type: 'put', key: 'b', value: '2' },
      { type: 'put', key: 'sig:1', value: 's1' },
      { type: 'put', key: 'sig:2', value: 's2' },
    ]);
    const transaction = vi.spyOn(IDBDatabase.prototype, 'transaction');
    try {
      const readonly = () => transaction.mock.calls.filter(([, mode]) => mode !== 'readwrite').length;
      const together = await Promise.all([
        storage.get('a'),
        storage.getMany(['b', 'missing', 'a']),
        storage.scan('sig:'),
        storage.get('missing'),
      ]);
      expect(together).toEqual([
        '1',
        ['2', null, '1'],
        [
          { key: 'sig:1', value: 's1' },
          { key: 'sig:2', value: 's2' },
        ],
        null,
      ]);
      expect(readonly()).toBe(1);
      // A read asked for after a commit resolved sees it, in a transaction of its own.
      await storage.batch([{ type: 'put', key: 'a', value: '3' }]);
      expect(await storage.get('a')).toBe('3');
      expect(readonly()).toBe(2);
    } finally {
      transaction.mockRestore();
    }
    await storage.close();
  });

  it('keeps data across closing and reopening', async () => {
    const name = freshDatabaseName();
    const first = openStorage(name);
    await first.batch([{ type: 'put', key: 'k', value: 'v' }]);
    await first.close();
    const reopened = openStorage(name);
    expect(await reopened.get('k')).toBe('v');
    await reopened.close();
  });

  it('reports version-change, and never recreates the database, when it is deleted underneath', async () => {
    const name = freshDatabaseName();
    const reports: StorageError[] = [];
    const storage = openStorage(name, { onUnavailable: (error) => reports.push(error) });
    await storage.batch([{ type: 'put', key: 'k', value: 'v' }]);
    await IndexedDbStorage.deleteDatabase(name, { indexedDB });
    const error = await rejection(() => storage.get('k'));
    expect(error.code).toBe('version-change');
    expect(error.operation).toBe('get');
    expect(error.message).toMatch(/deleted.*reload the page/);
    expect((await rejection(() => storage.batch([]))).code).toBe('version-change');
    expect(reports.map((report) => report.code)).toEqual(['version-change']);
    expect(await databaseNames()).not.toContain(name);
    await storage.close();
    expect((await rejection(() => storage.get('k'))).code).toBe('closed');
  });

  it('reports version-change when another tab upgrades the database', async () => {
    const name = freshDatabaseName();
    const storage = openStorage(name);
    await storage.batch([{ type: 'put', key: 'k', value: 'v' }]);
    // Dexie stores schema version 1 as native version 10; a newer studio would open a higher one.
    const newer = await openRawConnection(name, 20);
    const error = await rejection(() => storage.get('k'));
    expect(error.code).toBe('version-change');
    expect(error.message).toMatch(/newer version.*reload the page/);
    newer.close();
    await storage.close();
  });

  it('reports blocked while an older version held open elsewhere blocks the upgrade, then recovers', async () => {
    const name = freshDatabaseName();
    // An "older tab" holding version 1 open and ignoring version-change requests.
    const older = await openRawConnection(name, 1);
    const storage = openStorage(name);
    const error = await rejection(() => storage.get('k'));
    expect(error.code).toBe('blocked');
    expect(error.message).toMatch(/close the other tabs/);
    expect((await rejection(() => storage.get('k'))).code).toBe('blocked');
    older.close();
    await expect.poll(() => storage.get('k').catch((caught: unknown) => caught)).toBeNull();
    await storage.batch([{ type: 'put', key: 'k', value: 'v' }]);
    expect(await storage.get('k')).toBe('v');
    await storage.close();
  });

  it('reports closed when the browser closes the connection unexpectedly', async () => {
    const name = freshDatabaseName();
    const connections: IDBDatabase[] = [];
    const capturing = new Proxy(indexedDB, {
      get(target, property) {
        if (property === 'open') {
          return (databaseName: string, version?: number) => {
            const request = target.open(databaseName, version);
            request.addEventListener('success', () => connections.push(request.result));
            return request;
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const reports: StorageError[] = [];
    const storage = new IndexedDbStorage({
      databaseName: name,
      indexedDB: capturing,
      IDBKeyRange,
      onUnavailable: (error) => reports.push(error),
    });
    await storage.open();
    expect(connections).toHaveLength(1);
    // fake-indexeddb declares the parameter as the class rather than an instance.
    forceCloseDatabase(connections[0] as unknown as Parameters<typeof forceCloseDatabase>[0]);
    await expect.poll(() => reports.length).toBe(1);
    const error = await rejection(() => storage.get('k'));
    expect(error.code).toBe('closed');
    expect(error.message).toMatch(/unexpectedly.*reload the page/);
    expect(reports).toHaveLength(1);
    expect(connections).toHaveLength(1); // it did not silently reopen
    await storage.close();
  });

  it('rejects every call with closed after close(), and stops reporting changes', async () => {
    const name = freshDatabaseName();
    const watcher = openStorage(name);
    const writer = openStorage(name);
    const seen: string[][] = [];
    watcher.watch('', (keys) => seen.push(keys));
    await watcher.close();
    await writer.batch([{ type: 'put', key: 'after-close', value: '1' }]);
    const probe = openStorage(name);
    const probeSeen: string[][] = [];
    probe.watch('', (keys) => probeSeen.push(keys));
    await writer.batch([{ type: 'put', key: 'second', value: '1' }]);
    await expect.poll(() => probeSeen).toEqual([['second']]);
    expect(seen).toEqual([]);
    expect((await rejection(() => watcher.scan(''))).code).toBe('closed');
    expect(() => watcher.watch('', () => undefined)).toThrow(/closed/);
    await Promise.all([writer.close(), probe.close()]);
  });

  it('maps IndexedDB and Dexie failures to StorageError codes with what to do', () => {
    const quota = mapIndexedDbError('batch', new DOMException('full', 'QuotaExceededError'));
    expect(quota.code).toBe('quota-exceeded');
    expect(quota.message).toMatch(/free space.*delete old workflows/);
    // Dexie reports a transaction aborted by the quota as an AbortError wrapping the DOMException.
    const aborted = {
      name: 'AbortError',
      message: 'aborted',
      inner: new DOMException('full', 'QuotaExceededError'),
    };
    expect(mapIndexedDbError('conditionalBatch', aborted).code).toBe('quota-exceeded');
    expect(mapIndexedDbError('get', { name: 'DatabaseClosedError', message: 'closed' }).code).toBe('closed');
    expect(mapIndexedDbError('get', { name: 'OpenFailedError', inner: { name: 'VersionError' } }).code).toBe(
      'version-change',
    );
    expect(mapIndexedDbError('get', { name: 'MissingAPIError', message: 'no indexedDB' }).message).toMatch(
      /not available/,
    );
    const unknown = mapIndexedDbError('scan', new TypeError('boom'));
    expect(unknown.code).toBe('unknown');
    expect(unknown.operation).toBe('scan');
    expect(unknown.message).toContain('TypeError: boom');
  });

  it('rejects with a readable error when no IndexedDB exists', async () => {
    const storage = new IndexedDbStorage({ databaseName: freshDatabaseName() });
    const error = await rejection(() => storage.get('k'));
    expect(error.operation).toBe('get');
    expect(error.message).toMatch(/IndexedDB is not available/);
    await storage.close();
  });
});

describe('IndexedDbStorage durability', () => {
  it("commits every read-write transaction with the durability asked for ('default' unless told)", async () => {
    const seen: string[] = [];
    const original = IDBDatabase.prototype.transaction;
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (
      this: IDBDatabase,
      ...args: Parameters<IDBDatabase['transaction']>
    ) {
      const transaction = original.apply(this, args);
      if (args[1] === 'readwrite') seen.push(transaction.durability);
      return transaction;
    });
    try {
      for (const durability of [undefined, 'strict', 'relaxed'] as const) {
        const storage = new IndexedDbStorage({
          databaseName: freshDatabaseName(),
          indexedDB,
          IDBKeyRange,
          ...(durability ? { durability } : {}),
        });
        seen.length = 0;
        await storage.batch([{ type: 'put', key: 'a', value: '1' }]);
        expect(
          await storage.conditionalBatch(
            [{ key: 'b', expected: null }],
            [{ type: 'put', key: 'b', value: '2' }],
          ),
        ).toBe(true);
        expect(
          await storage.conditionalBatch([{ key: 'a', expected: '1' }], [{ type: 'delete', key: 'a' }]),
        ).toBe(true);
        expect(seen.length).toBeGreaterThanOrEqual(3);
        expect(new Set(seen)).toEqual(new Set([durability ?? 'default']));
        await storage.close();
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses an unknown durability before opening anything', () => {
    expect(() => new IndexedDbStorage({ indexedDB, IDBKeyRange, durability: 'fast' as never })).toThrow(
      /durability must be one of 'default', 'relaxed', 'strict'; got "fast"/,
    );
  });
});
