/**
 * Benchmark fixture, run as its own OS process by bench/server.ts (`node --import tsx`): one Shuttle engine
 * over PostgresStorage with PostgresLiveness, `workflow-lease`, the studio's claim timings
 * (`hostClaimTimings`), run by `startWorker` exactly as a `shuttle worker` process runs it (the host, its
 * presence record and its death watch included), with the bench's own definitions.
 *
 * Arguments: `<connection string> <schema> [--serve-check]`. It prints JSON lines on stdout, every one with
 * `at` (`Date.now()` of this machine's one clock):
 * - `{ event: 'ready', engineId, createEngineMs, startedAt }` once `createEngine` resolved (`startedAt` is
 *   when this module began to run, so the runner can split process start-up from engine start-up);
 * - with `--serve-check`, then `{ event: 'served', ms }` once a one-activity workflow it started completed;
 * - one answer per command read from stdin (JSON lines): `start` (`{ op, workflow, id, input }`), `park`
 *   (`{ op, count, concurrency, prefix, sleepMs }`: starts `count` workflows parked on a durable timer,
 *   `concurrency` starts at a time, and waits until all have parked), `stats` (storage calls so far by
 *   method, the engine's metrics, claims held), `shutdown`.
 *
 * SIGTERM: the worker's graceful stop (the session ends, so every claim is free at once), then exit 0. SIGKILL is the crash.
 */
import { defineWorkflow, type Engine } from '../../src/engine';
import { hostClaimTimings } from '../../src/protocol';
import { createLogger } from '../../src/server/log';
import { PostgresLiveness } from '../../src/server/postgres-liveness';
import { startWorker } from '../../src/server/worker';
import { PostgresStorage } from '../../src/storage/postgres';
import type { Storage } from '../../src/storage/types';
import { countdown } from '../../src/workflows/countdown';

const startedAt = Date.now();
const [connectionString, schema, ...flags] = process.argv.slice(2);
if (!connectionString || !schema)
  throw new Error('usage: engine-process.ts <connection string> <schema> [--serve-check]');

/** Waits for `count` signals named `ping`, one after the other (the cross-process signal figure). */
const pings = defineWorkflow({
  name: 'bench-pings',
  version: 1,
  *run(ctx, input: { count: number }) {
    for (let i = 0; i < input.count; i++) yield* ctx.waitForSignal('ping');
    return input.count;
  },
});

/** Parked on one durable timer (days away, for the holding figure). */
const parked = defineWorkflow({
  name: 'bench-parked',
  version: 1,
  *run(ctx, input: { sleepMs: number }) {
    yield* ctx.sleep(input.sleepMs);
    return 'woke';
  },
});

/** One activity: what the serve check runs. */
const one = defineWorkflow({
  name: 'bench-one',
  version: 1,
  *run(ctx) {
    return yield* ctx.activity('only', () => 'done');
  },
});

const workflows = { countdown, 'bench-pings': pings, 'bench-parked': parked, 'bench-one': one };

function say(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...message, at: Date.now() })}\n`);
}

/** Counts every Storage call the engine makes, by method (the holding figure's "storage requests"). */
function counted(storage: PostgresStorage): { storage: Storage; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const methods = new Set(['get', 'getMany', 'scan', 'batch', 'conditionalBatch', 'commitGroups']);
  const proxy = new Proxy(storage, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (!methods.has(String(property))) return bound;
      return (...args: unknown[]) => {
        calls[String(property)] = (calls[String(property)] ?? 0) + 1;
        return bound(...args);
      };
    },
  });
  return { storage: proxy, calls };
}

const store = await PostgresStorage.open({ connectionString, schema, maxConnections: 10 });
const { storage, calls } = counted(store);
const liveness = new PostgresLiveness({ connectionString, schema });
const createStarted = Date.now();
// What `shuttle worker` runs (src/server/worker.ts): the engine behind the host a tab uses, with the polling
// death watch that makes another process's kill -9 reach this one within a fraction of a second. (A bare
// `createEngine` with the same oracle takes a dead engine's workflows at its next reclaim pass, up to one
// renew interval later: the handoff figure measured that until 2026-12-04.)
/** Closes what this process opened (the worker leaves a store it was given open). */
async function closeStore(): Promise<void> {
  await store.close().catch(() => undefined);
  await liveness.close();
}
const worker = await startWorker({
  store: { storage, liveness, label: `PostgreSQL schema ${schema}`, kind: 'postgres', close: closeStore },
  definitions: Object.values(workflows),
  label: `bench-${process.pid}`,
  claimTtlMs: hostClaimTimings.ttlMs,
  renewIntervalMs: hostClaimTimings.renewIntervalMs,
  // Only warnings reach the runner, as `warning` lines; the worker's other log lines are not the protocol's.
  logger: createLogger({}, (line) => {
    const entry = JSON.parse(line) as { level: string; msg: string; warning?: string };
    if (entry.level === 'warn')
      say({ event: 'warning', name: entry.warning ?? 'warning', message: entry.msg });
  }),
});
const engine: Engine = worker.engine;
say({ event: 'ready', engineId: engine.id, createEngineMs: Date.now() - createStarted, startedAt });

let stopping: Promise<void> | null = null;
function stop(): Promise<void> {
  stopping ??= (async () => {
    // The worker's own graceful stop ends the session (every claim free at once), then closes the store.
    const report = await worker.stop();
    say({ event: 'stopped', claimsReleased: report?.claimsReleased ?? null });
    await closeStore();
  })();
  return stopping;
}
process.on('SIGTERM', () => {
  void stop().then(() => process.exit(0));
});

if (flags.includes('--serve-check')) {
  const begun = Date.now();
  const handle = await engine.start(one, undefined);
  await handle.result();
  say({ event: 'served', ms: Date.now() - begun, workflowId: handle.workflowId });
}

type Command =
  | { op: 'start'; workflow: keyof typeof workflows; id: string; input?: unknown }
  | { op: 'park'; count: number; concurrency: number; prefix: string; sleepMs: number }
  | { op: 'stats' }
  | { op: 'shutdown' };

async function park(command: Extract<Command, { op: 'park' }>): Promise<void> {
  const begun = performance.now();
  let next = 0;
  const failures: string[] = [];
  const width = String(command.count).length;
  await Promise.all(
    Array.from({ length: Math.min(command.concurrency, command.count) }, async () => {
      while (next < command.count) {
        const index = next++;
        // A start that fails (e.g. the pool's wait for a connection timed out) is counted, not retried: it
        // may or may not have been written.
        await engine
          .start(
            parked,
            { sleepMs: command.sleepMs },
            { id: `${command.prefix}${String(index).padStart(width, '0')}` },
          )
          .catch((error: unknown) => failures.push(error instanceof Error ? error.message : String(error)));
      }
    }),
  );
  const startMs = performance.now() - begun;
  await engine.idle();
  say({
    event: 'parked',
    count: command.count,
    failed: failures.length,
    firstFailures: failures.slice(0, 3),
    startMs: Math.round(startMs),
    ms: Math.round(performance.now() - begun),
    claimsHeld: engine.metrics().claimsHeld,
  });
}

async function handle(command: Command): Promise<void> {
  switch (command.op) {
    case 'start': {
      await engine.start(workflows[command.workflow], command.input as never, { id: command.id });
      say({ event: 'started', id: command.id });
      return;
    }
    case 'park':
      return park(command);
    case 'stats':
      say({
        event: 'stats',
        calls: { ...calls },
        metrics: engine.metrics(),
        owned: engine.ownedWorkflows().length,
        memory: process.memoryUsage().heapUsed,
        cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
      });
      return;
    case 'shutdown':
      await stop();
      process.exit(0);
  }
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffered += chunk;
  for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
    const line = buffered.slice(0, newline).trim();
    buffered = buffered.slice(newline + 1);
    if (!line) continue;
    handle(JSON.parse(line) as Command).catch((error: unknown) =>
      say({ event: 'error', message: error instanceof Error ? error.message : String(error) }),
    );
  }
});
// The runner went away (its end of stdin closed): stop like a SIGTERM, so no engine outlives the benchmark.
process.stdin.on('end', () => {
  void stop().then(() => process.exit(0));
});
