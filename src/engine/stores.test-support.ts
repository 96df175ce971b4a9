/**
 * The stores engine tests run over: MemoryStorage, and PostgresStorage on a throwaway PostgreSQL database
 * (a fresh schema per `open`); `indexedDbStore` adds IndexedDbStorage on fake-indexeddb. Use with
 * `describe.each(testStores())` and close the stores in `afterAll`.
 */
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { IndexedDbStorage } from '../storage/indexeddb';
import { MemoryStorage } from '../storage/memory';
import { PostgresStorage } from '../storage/postgres';
import { createTestDatabase, freshSchema, type TestDatabase } from '../storage/postgres.test-support';
import type { Storage } from '../storage/types';

export type TestStore = { name: string; open(): Promise<Storage>; close(): Promise<void> };

export function testStores(options: { maxConnections?: number } = {}): TestStore[] {
  let database: TestDatabase | null = null;
  const opened: PostgresStorage[] = [];
  return [
    { name: 'MemoryStorage', open: async () => new MemoryStorage(), close: async () => undefined },
    {
      name: 'PostgresStorage',
      open: async () => {
        database ??= await createTestDatabase();
        const storage = await PostgresStorage.open({
          connectionString: database.url,
          schema: freshSchema(),
          maxConnections: options.maxConnections ?? 4,
        });
        opened.push(storage);
        return storage;
      },
      close: async () => {
        await Promise.all(opened.splice(0).map((storage) => storage.close()));
        await database?.drop();
        database = null;
      },
    },
  ];
}

/** IndexedDbStorage on fake-indexeddb, a fresh database per `open` (as src/storage/indexeddb.test.ts opens it). */
export function indexedDbStore(): TestStore {
  const indexedDB = new IDBFactory();
  const opened: IndexedDbStorage[] = [];
  let count = 0;
  return {
    name: 'IndexedDbStorage',
    open: async () => {
      const storage = new IndexedDbStorage({ databaseName: `test-${++count}`, indexedDB, IDBKeyRange });
      opened.push(storage);
      return storage;
    },
    close: async () => {
      await Promise.all(opened.splice(0).map((storage) => storage.close()));
    },
  };
}
