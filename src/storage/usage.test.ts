import { afterAll, describe, expect, it } from 'vitest';
import { MemoryStorage } from './memory';
import { PostgresStorage } from './postgres';
import { createTestDatabase, freshSchema, type TestDatabase } from './postgres.test-support';

describe('storage usage', () => {
  let database: TestDatabase | undefined;
  afterAll(() => database?.drop(), 60_000);

  it('memory: grows with what is stored', async () => {
    const storage = new MemoryStorage();
    const empty = await storage.usage();
    await storage.batch([{ type: 'put', key: 'k', value: 'x'.repeat(10_000) }]);
    expect((await storage.usage()).bytes - empty.bytes).toBeGreaterThanOrEqual(20_000);
  });

  it('PostgreSQL: the tables of its schema, largest first, growing with what is stored', async () => {
    database = await createTestDatabase();
    const storage = await PostgresStorage.open({ connectionString: database.url, schema: freshSchema() });
    try {
      const before = await storage.usage();
      expect(before.source).toContain(storage.schema);
      expect(before.parts.length).toBeGreaterThan(0);
      const value = Array.from({ length: 4000 }, (_, i) => (i * 7919).toString(36)).join('');
      await storage.batch(
        Array.from({ length: 200 }, (_, i) => ({
          type: 'put' as const,
          key: `k:${i}`,
          value: `${i}${value}`,
        })),
      );
      const after = await storage.usage();
      expect(after.bytes).toBeGreaterThan(before.bytes);
      expect(after.bytes).toBe(after.parts.reduce((sum, part) => sum + part.bytes, 0));
      const sizes = after.parts.map((part) => part.bytes);
      expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    } finally {
      await storage.close();
    }
  });
});
