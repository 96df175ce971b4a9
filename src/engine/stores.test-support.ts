/**
 * The stores engine tests run over: MemoryStorage, and PostgresStorage on a throwaway PostgreSQL database
 * (a fresh schema per `open`). Use with `describe.each(testStores())` and close the stores in `afterAll`.
 */
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
