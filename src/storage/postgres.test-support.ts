/**
 * Test helpers for `PostgresStorage` on a real PostgreSQL server: the server comes from the Vitest global
 * setup (src/server/postgres.global-setup.ts, which provides `shuttlePostgres`), and every test file gets
 * its own database (`createTestDatabase`), every conformance case its own schema inside it.
 */

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { StorageConformanceFactory } from './conformance-cases.test-support';
import { PostgresStorage, type PostgresStorageOptions } from './postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test PostgreSQL server: a superuser URL, or why it could not start. */
    shuttlePostgres: { url: string } | { error: string };
  }
}

/** The test server's superuser URL; throws the setup's error when the server could not start. */
export function testPostgresUrl(): string {
  const provided = inject('shuttlePostgres');
  if (!provided) {
    throw new Error(
      'No test PostgreSQL: run the tests with Vitest and the global setup in vite.config.ts, or set ' +
        'SHUTTLE_TEST_DATABASE_URL.',
    );
  }
  if ('error' in provided) throw new Error(provided.error);
  return provided.url;
}

/** `url` with its database replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Runs `sql` on a short-lived connection to `url`. */
export async function runSql(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

export type TestDatabase = {
  readonly name: string;
  /** Superuser URL of the database. */
  readonly url: string;
  /** Drops the database, disconnecting whoever is still connected. */
  drop(): Promise<void>;
};

/** A fresh, empty database with a random name on the test server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = testPostgresUrl();
  const name = `shuttle_test_${randomBytes(6).toString('hex')}`;
  await runSql(serverUrl, `create database ${name}`);
  return {
    name,
    url: withDatabase(serverUrl, name),
    drop: async () => {
      await runSql(serverUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

let schemaCount = 0;

/** A schema name not used before in this process. */
export function freshSchema(): string {
  schemaCount++;
  return `case_${schemaCount}_${randomBytes(3).toString('hex')}`;
}

/**
 * The conformance factory: each case gets a fresh schema in the database `databaseUrl()` returns (read when
 * the case runs), instances are separate adapters (own pool and listening connection) on that schema, and
 * the schema is dropped afterwards.
 */
export function postgresConformanceFactory(
  databaseUrl: () => string,
  options: Omit<PostgresStorageOptions, 'connectionString' | 'pool' | 'schema'> = {},
): StorageConformanceFactory {
  return async () => {
    const url = databaseUrl();
    const schema = freshSchema();
    const open = () => PostgresStorage.open({ connectionString: url, schema, maxConnections: 4, ...options });
    return {
      storage: await open(),
      openPeer: open,
      ...(options.maxValueBytes === undefined ? {} : { maxValueBytes: options.maxValueBytes }),
      dispose: async () => {
        await runSql(url, `drop schema if exists ${schema} cascade`);
      },
    };
  };
}
