/**
 * `startWorker({ activityLimits })` in a program of its own, over a real PostgreSQL: the worker's engine
 * declares the limits given in code and keeps them (one attempt at a time of a group with `concurrency: 1`,
 * the other waiting), and a process that declares none — the operator's `shuttle queue activity-limits` —
 * sees the slot held in the store and its holder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineWorkflow } from '../engine';
import { createTestDatabase, type TestDatabase } from '../storage/postgres.test-support';
import { createLogger } from './log';
import { openForOperator } from './operator/open';
import { exitCodes, runOperator } from './operator/operator';
import { startWorker } from './worker';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

async function until<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('startWorker({ activityLimits })', () => {
  it("declares the limits given in code: one attempt of the group at a time, the other waits; the operator's command shows the held slot", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const job = defineWorkflow({
      name: 'gated-job',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity('call-partner', () => gate.then(() => 'done'));
      },
    });
    const worker = await startWorker({
      databaseUrl: database.url,
      schema: 'act_limits',
      definitions: [job],
      activityLimits: { 'call-partner': { concurrency: 1 } },
      label: 'limits-worker',
      logger: createLogger({}, () => undefined),
    });
    try {
      const handles = [
        await worker.engine.start(job, undefined, { id: 'gated-1' }),
        await worker.engine.start(job, undefined, { id: 'gated-2' }),
      ];
      const group = await until(async () => {
        const [info] = await worker.engine.activityLimits();
        return info && info.running.length === 1 && info.waitingHere === 1 ? info : undefined;
      }, 'one attempt running and one waiting');
      expect(group).toMatchObject({ name: 'call-partner', concurrency: 1, perEngine: null, runningHere: 1 });
      expect(group.running[0]!.engineId).toBe(worker.engineId);

      let stdout = '';
      const code = await runOperator(
        'queue',
        ['activity-limits', '--database-url', database.url, '--schema', 'act_limits'],
        {
          stdout: (text) => (stdout += text),
          stderr: (text) => (stdout += text),
          now: () => Date.now(),
          open: openForOperator,
        },
      );
      expect(code).toBe(exitCodes.ok);
      expect(stdout).toMatch(
        new RegExp(`^call-partner\\s+\\?\\s+\\?\\s+1\\s+${group.running[0]!.workflowId}@limits-worker$`, 'm'),
      );

      open();
      expect(await Promise.all(handles.map((handle) => handle.result()))).toEqual(['done', 'done']);
    } finally {
      open();
      await worker.stop();
    }
  }, 60_000);
});
