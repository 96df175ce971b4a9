/**
 * PostgresStorage across a restart of the PostgreSQL server: a server of its own (not the shared one of the
 * test run), restarted as the cluster fault tests will restart it under running engines.
 */

import { describe, expect, it } from 'vitest';
import { startLocalPostgres } from './local-postgres';
import { isStorageError } from '../storage/errors';
import { PostgresStorage } from '../storage/postgres';

/** Retries `call` until it resolves; a storage call may only fail with a `StorageError` meanwhile. */
async function eventually<T>(call: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      if (error instanceof Error && error.name !== 'AssertionError' && !isStorageError(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('PostgresStorage across a server restart', () => {
  it('serves calls again after a crash-restart, loses no acknowledged commit, and its watch resumes', async () => {
    const server = await startLocalPostgres();
    const storage = await PostgresStorage.open({ connectionString: server.url, changeFeedHeartbeatMs: 500 });
    const writer = await PostgresStorage.open({ connectionString: server.url });
    try {
      const reported: string[] = [];
      storage.watch('k:', (keys) => reported.push(...keys));
      await writer.batch([{ type: 'put', key: 'k:before', value: '1' }]);
      await eventually(async () => expect(reported).toContain('k:before'));

      await server.restart({ mode: 'immediate' });
      // The first calls may meet connections the restart broke: they reject with a StorageError saying so.
      expect(await eventually(() => storage.get('k:before'))).toBe('1');
      await eventually(() => writer.batch([{ type: 'put', key: 'k:after', value: '2' }]));
      await eventually(async () => expect(reported).toContain('k:after'));
      expect(await storage.scan('k:')).toEqual([
        { key: 'k:after', value: '2' },
        { key: 'k:before', value: '1' },
      ]);
      expect(storage.changeFeedConnected).toBe(true);
    } finally {
      await storage.close();
      await writer.close();
      await server.stop();
    }
  });
});
