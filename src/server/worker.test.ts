/**
 * `shuttle worker` as real processes on a real PostgreSQL: workflows move at once when a process is killed
 * (its advisory lock goes with its connection) or stopped (it ends its session), every tick fires once,
 * and bad input stops a worker before it writes anything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, entriesOf, type Engine } from '../engine';
import { PostgresStorage } from '../storage/postgres';
import { createTestDatabase, runSql, type TestDatabase } from '../storage/postgres.test-support';
import { builtInWorkflows } from '../workflows';
import { defaultWorkerTimings } from './worker';

const bin = fileURLToPath(new URL('../../bin/shuttle.mjs', import.meta.url));
const { claimTtlMs, renewIntervalMs } = defaultWorkerTimings;

type Worker = { child: ChildProcess; engineId: string; exited: Promise<number | null>; log: string[] };

let database: TestDatabase;
let storage: PostgresStorage;
let observer: Engine;
const workers: Worker[] = [];

/** Runs `shuttle <args>` to its end: exit code and stderr. */
function runToEnd(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** Starts a worker process; resolves once its engine runs (its "worker started" log line). */
function startWorker(label: string): Promise<Worker> {
  const child = spawn(process.execPath, [bin, 'worker', '--database-url', database.url, '--label', label], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        log.push(line);
        const entry = JSON.parse(line) as { msg: string; engineId?: string };
        if (entry.msg === 'worker started') {
          const worker = { child, engineId: entry.engineId!, exited, log };
          workers.push(worker);
          resolve(worker);
        }
      }
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exited.then((code) => reject(new Error(`${label} exited with ${code}: ${stderr}`)));
  });
}

async function until<T>(what: string, check: () => Promise<T | null | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  database = await createTestDatabase();
  storage = await PostgresStorage.open({ connectionString: database.url });
  observer = await createEngine({
    storage,
    workflows: builtInWorkflows,
    ownership: 'workflow-lease',
    workflowClaimTtlMs: claimTtlMs,
    workflowClaimRenewIntervalMs: renewIntervalMs,
    claimWorkflows: false,
  });
}, 60_000);

afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await observer?.shutdown();
  await storage?.close();
  await database?.drop();
});

describe('shuttle worker processes on PostgreSQL', () => {
  it('moves the workflows of a process killed with kill -9 to another at once, firing every tick once', async () => {
    const [a, b] = await Promise.all([startWorker('worker-a'), startWorker('worker-b')]);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++)
      ids.push(
        (await observer.start('countdown', { from: 30, tickMs: 150 }, { id: `kill-${i}` })).workflowId,
      );
    // Either worker may claim all eight first (both reclaim passes race for them): the one holding some is
    // killed, the other must take them over.
    const { victim, survivor, held } = await until(
      'a worker holds some workflows',
      async () => {
        const claims = await observer.claims();
        const heldBy = (worker: Worker) =>
          claims
            .filter((claim) => claim.holder?.engineId === worker.engineId)
            .map((claim) => claim.workflowId);
        const [byA, byB] = [heldBy(a), heldBy(b)];
        if (byA.length > 0) return { victim: a, survivor: b, held: byA };
        if (byB.length > 0) return { victim: b, survivor: a, held: byB };
        return null;
      },
      10_000,
    );
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    for (const id of held) {
      const takeover = await until(
        `${id} taken over`,
        async () => entriesOf(await observer.timeline(id), 'claim-taken-over').at(-1) ?? null,
        claimTtlMs,
      );
      expect(takeover.detail).toMatchObject({
        fromEngineId: victim.engineId,
        toEngineId: survivor.engineId,
        reason: 'holder-dead',
      });
      expect(takeover.at - killedAt).toBeLessThan(claimTtlMs); // the lock, not the TTL, told
    }
    for (const id of ids) {
      expect(await observer.handle(id).result()).toEqual({ counted: 30 });
      const fired = entriesOf(await observer.timeline(id), 'timer-fired');
      expect(new Set(fired.map((entry) => entry.detail.pos)).size).toBe(fired.length); // none twice
    }
  }, 60_000);

  it('stops on SIGTERM within 2 s, ending its session so its workflows move at once', async () => {
    const [c] = await Promise.all([startWorker('worker-c'), startWorker('worker-d')]);
    const id = (await observer.start('countdown', { from: 200, tickMs: 100 }, { id: 'term-1' })).workflowId;
    const holder = await until(
      'term-1 claimed',
      async () => (await observer.describe(id)).owner?.engineId ?? null,
      10_000,
    );
    const stopping = holder === c.engineId ? c : workers.find((worker) => worker.engineId === holder)!;
    const signalledAt = Date.now();
    stopping.child.kill('SIGTERM');
    expect(await stopping.exited).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(2_000 + 1_000); // its own 2 s patience, plus process exit
    const takeover = await until(
      'term-1 taken over',
      async () => entriesOf(await observer.timeline(id), 'claim-taken-over').at(-1) ?? null,
      claimTtlMs,
    );
    const stopped = stopping.log.find((line) => line.includes('"msg":"worker stopped"'));
    expect(stopped).toBeDefined();
    // The worker hands its claims over when its shutdown ends within its patience (1.5 s): its session ended,
    // so the takeover says holder-stopped. On a machine so busy that the patience ran out first
    // (`claimsHandedOver: null`), the process exits anyway and its lock tells the others at once.
    const handedOver = (JSON.parse(stopped!) as { claimsHandedOver: number | null }).claimsHandedOver;
    expect(takeover.detail).toMatchObject({
      fromEngineId: stopping.engineId,
      reason: handedOver === null ? expect.stringMatching(/^holder-(stopped|dead)$/) : 'holder-stopped',
    });
    await observer.terminate(id);
  }, 60_000);
});

describe('shuttle worker refuses bad input before it writes anything', () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'shuttle-defs-'));
    writeFileSync(
      join(folder, 'broken.ts'),
      "import { defineWorkflow } from 'shuttle';\nexport default defineWorkflow({\n",
    );
    writeFileSync(join(folder, 'empty.ts'), 'export const answer = 42;\n');
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('an unknown flag, an unreachable database, a broken definition or a module without workflows: one line, exit 2', async () => {
    const fresh = await createTestDatabase();
    try {
      const flag = await runToEnd(['worker', '--no-such-flag']);
      expect(flag.code).toBe(2);
      expect(flag.stderr).toMatch(/Unknown option '--no-such-flag'/);
      const unreachable = await runToEnd(['worker', '--database-url', 'postgres://nobody@127.0.0.1:1/none']);
      expect(unreachable.code).toBe(2);
      expect(unreachable.stderr).toMatch(/Could not open the store at PostgreSQL 127\.0\.0\.1:1\/none/);
      const broken = await runToEnd([
        'worker',
        '--database-url',
        fresh.url,
        '--workflows',
        join(folder, 'broken.ts'),
      ]);
      expect(broken.code).toBe(2);
      expect(broken.stderr).toMatch(/broken\.ts:\d+:\d+ Syntax error/);
      const empty = await runToEnd([
        'worker',
        '--database-url',
        fresh.url,
        '--workflows',
        join(folder, 'empty.ts'),
      ]);
      expect(empty.code).toBe(2);
      expect(empty.stderr).toMatch(/exports no workflow definition/);
      // Nothing was written: the store's schema was never created.
      const { rows } = await runSql(
        fresh.url,
        "select count(*)::int as n from information_schema.schemata where schema_name = 'shuttle'",
      );
      expect(rows[0].n).toBe(0);
    } finally {
      await fresh.drop();
    }
  }, 60_000);
});
