/**
 * The PostgreSQL liveness oracle against a real server, with the lock held by a real process: an engine is
 * dead to the others the moment its process dies, never before, and never when it did not register.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../storage/postgres';
import { createTestDatabase, freshSchema, type TestDatabase } from '../storage/postgres.test-support';
import { PostgresLiveness } from './postgres-liveness';

const fixture = fileURLToPath(new URL('./fixtures/hold-liveness.ts', import.meta.url));

let database: TestDatabase;
let schema: string;
let oracle: PostgresLiveness;

beforeAll(async () => {
  database = await createTestDatabase();
  schema = freshSchema();
  const storage = await PostgresStorage.open({ connectionString: database.url, schema });
  await storage.close();
  oracle = new PostgresLiveness({ connectionString: database.url, schema });
});

afterAll(async () => {
  await oracle?.close();
  await database?.drop();
});

/** Starts a process that holds `engineId`'s lock; resolves once it holds it. */
function holdInProcess(engineId: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, database.url, schema, engineId], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`the holder exited with code ${code}`)));
  });
}

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now() - started;
}

describe('PostgresLiveness', () => {
  it('reports an engine alive while its process holds the lock, and dead at once after kill -9', async () => {
    const child = await holdInProcess('engine-killed');
    expect(await oracle.isDead('engine-killed')).toBe(false);
    expect([...((await oracle.liveEngineIds()) ?? [])]).toContain('engine-killed');
    child.kill('SIGKILL');
    const waited = await until(() => oracle.isDead('engine-killed'), 5_000);
    expect(waited).toBeLessThan(2_000); // the server dropped the lock with the connection, no TTL involved
  });

  it('never reports an engine dead that did not register with it', async () => {
    expect(await oracle.isDead('engine-never-seen')).toBe(false);
  });

  it('reports an engine dead once it lets its lock go', async () => {
    const release = await oracle.hold('engine-released');
    expect(await oracle.isDead('engine-released')).toBe(false);
    release();
    await until(() => oracle.isDead('engine-released'), 5_000);
  });
});
