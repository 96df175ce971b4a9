import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStorageConformance } from './conformance.test-support';
import { PostgresStorage } from './postgres';
import { freshSchema } from './postgres.test-support';

// One PGlite instance for the file (starting one takes seconds); every case gets its own schema in it.
let database: PGlite;
beforeAll(async () => {
  database = await PGlite.create();
});
afterAll(async () => {
  await database?.close();
});

describeStorageConformance('PostgresStorage on PGlite', async () => {
  const schema = freshSchema();
  const open = () => PostgresStorage.fromPglite(database, { schema });
  return {
    storage: await open(),
    openPeer: open,
    dispose: async () => {
      await database.exec(`drop schema if exists ${schema} cascade`);
    },
  };
});

describe('PostgresStorage on an in-memory PGlite', () => {
  it('declares itself not durable, and leaves the shared instance open on close', async () => {
    const storage = await PostgresStorage.fromPglite(database, { schema: freshSchema() });
    expect(storage.capabilities).toEqual({
      conditionalBatch: true,
      durable: false,
      changeFeed: true,
      groupCommit: true,
    });
    await storage.close();
    expect(database.closed).toBe(false);
  });
});
