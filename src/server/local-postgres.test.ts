import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { findFreePort, findPostgresBinaries, startLocalPostgres } from './local-postgres';

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('startLocalPostgres', () => {
  it('starts a server in a fresh folder, keeps its data and port across a restart, and removes the folder on stop', async () => {
    const server = await startLocalPostgres();
    try {
      expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
      expect(existsSync(join(server.dir, 'data', 'PG_VERSION'))).toBe(true);
      const settings = await query(
        server.url,
        "select current_setting('server_encoding') as encoding, current_setting('fsync') as fsync, current_user as user_name",
      );
      expect(settings.rows[0]).toEqual({ encoding: 'UTF8', fsync: 'off', user_name: 'postgres' });
      await query(server.url, "create table kept (value text); insert into kept values ('before restart')");

      const held = new pg.Client({ connectionString: server.url });
      held.on('error', () => undefined); // the restart drops it
      await held.connect();
      await server.restart({ mode: 'immediate' });
      await expect(held.query('select 1')).rejects.toThrow();
      await held.end().catch(() => undefined);
      expect((await query(server.url, 'select value from kept')).rows).toEqual([{ value: 'before restart' }]);
    } finally {
      await server.stop();
    }
    expect(existsSync(server.dir)).toBe(false);
    await expect(query(server.url, 'select 1')).rejects.toThrow(/ECONNREFUSED/);
    await server.stop(); // idempotent
  });

  it('keeps a folder it was given, and starts on it again with the data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shuttle-local-postgres-test-'));
    try {
      const port = await findFreePort();
      const first = await startLocalPostgres({ dir, port, durable: true });
      expect(first.port).toBe(port);
      await query(first.url, "create table kept (value text); insert into kept values ('kept')");
      await first.stop();
      expect(existsSync(join(dir, 'data', 'PG_VERSION'))).toBe(true);
      const second = await startLocalPostgres({ dir });
      try {
        expect((await query(second.url, 'select value from kept')).rows).toEqual([{ value: 'kept' }]);
        expect((await query(second.url, "select current_setting('fsync') as fsync")).rows[0]).toEqual({
          fsync: 'off',
        });
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the PostgreSQL binaries, or says how to install them', () => {
    const previous = process.env.SHUTTLE_POSTGRES_BIN;
    try {
      expect(existsSync(join(findPostgresBinaries(), 'initdb'))).toBe(true);
      process.env.SHUTTLE_POSTGRES_BIN = '/nonexistent';
      expect(() => findPostgresBinaries()).toThrow(/SHUTTLE_POSTGRES_BIN=\/nonexistent has no initdb/);
    } finally {
      if (previous === undefined) delete process.env.SHUTTLE_POSTGRES_BIN;
      else process.env.SHUTTLE_POSTGRES_BIN = previous;
    }
  });
});
