/**
 * Vitest global setup: one throwaway PostgreSQL server for the whole test run (see local-postgres.ts), or
 * the server named by `SHUTTLE_TEST_DATABASE_URL` when that is set (then nothing is started).
 *
 * Contract with the tests: it provides `shuttlePostgres`, either `{ url }` (a superuser connection string
 * to the `postgres` database, allowed to CREATE DATABASE) or `{ error }` when the server could not start.
 * A failure to start does not fail the run here: only the tests that need PostgreSQL fail, with that
 * message (see `testPostgresUrl` in src/storage/postgres.test-support.ts). The server is stopped, and its
 * folder removed, when the run ends.
 */

import type { TestProject } from 'vitest/node';
import type {} from '../storage/postgres.test-support';
import { startLocalPostgres } from './local-postgres';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const external = process.env.SHUTTLE_TEST_DATABASE_URL;
  if (external) {
    project.provide('shuttlePostgres', { url: external });
    return undefined;
  }
  try {
    const server = await startLocalPostgres();
    project.provide('shuttlePostgres', { url: server.url });
    return () => server.stop();
  } catch (error) {
    project.provide('shuttlePostgres', {
      error: `the test PostgreSQL server could not start: ${error instanceof Error ? error.message : String(error)}`,
    });
    return undefined;
  }
}
