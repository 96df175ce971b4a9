/**
 * The PostgreSQL half of the `queues` part (bench/README.md, Queues): workflow queues (issue #34) on a
 * throwaway PostgreSQL server started here as the server part does (`startLocalPostgres({ durable: true })`:
 * fsync, full_page_writes and synchronous_commit on), everything measured side by side in this one run.
 *
 * - Shuttle: one engine in this process set up as the server part's and a `shuttle worker`'s (PostgresStorage on
 *   a schema of its own, `workflow-lease` with the host's claim timings, PostgresLiveness), declaring the queue
 *   `bench-q` (concurrency 10); the latency samples and the throughput runs of bench/queues-workload.ts.
 * - DBOS Transact, in processes of its own (bench/server/dbos-queue-peer.ts), each in its own database on the
 *   same server: a `WorkflowQueue` of concurrency 10 polled every 20 ms (the step delay), and one polled at
 *   DBOS's default interval (1,000 ms); the same 50 workflows of the same steps in the same rounds.
 *
 * Commits: the server's write transactions during each run (transaction ids assigned), whoever wrote them.
 * Run by scripts/bench.mjs as `node --import tsx bench/queues.ts`; prints one JSON line `{ figures, details }`
 * on stdout, progress on stderr.
 */
import os from 'node:os';
import pg from 'pg';
import { createEngine } from '../src/engine';
import { hostClaimTimings } from '../src/protocol';
import { startLocalPostgres, type LocalPostgres } from '../src/server/local-postgres';
import { PostgresLiveness } from '../src/server/postgres-liveness';
import { PostgresStorage } from '../src/storage/postgres';
import { halfDetails, halfFigures, peerFigures, runQueueRounds, type RunSample } from './queues-rounds';
import type { QueuesInput } from './queues-results';
import { benchQueues, latencySample, queueWork, throughputRun, type QueueWorkload } from './queues-workload';
import { FixtureProcess } from './server/child';
import { writeTransactions } from './server/raw-cas';

const quick = process.env.SHUTTLE_BENCH_QUICK === '1';
const options = {
  rounds: Number(process.env.SHUTTLE_BENCH_QUEUES_ROUNDS ?? (quick ? 2 : 7)),
  latencySamples: quick ? 10 : 40,
  warmUpLatencySamples: quick ? 2 : 5,
  workload: { workflows: 50, batch: 10, steps: 2, delayMs: 20 } satisfies QueueWorkload,
  /** DBOS's queue polling interval for the tuned peer: the step delay. */
  dbosPollMs: 20,
  /** DBOS's default (`WFQueueRunner.defaultMinPollingIntervalMs`). */
  dbosDefaultPollMs: 1_000,
};

function log(message: string): void {
  process.stderr.write(`[bench:queues] ${message}\n`);
}

function load(): number[] {
  return os.loadavg().map((value) => Math.round(value * 100) / 100);
}

async function createDatabase(server: LocalPostgres, database: string): Promise<string> {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  return server.url.replace(/\/postgres$/, `/${database}`);
}

async function main(): Promise<void> {
  const started = Date.now();
  const loads: Record<string, number[]> = { before: load() };
  log('starting a throwaway PostgreSQL server (durable: fsync on)');
  const server = await startLocalPostgres({ durable: true });
  const peers: { name: string; process: FixtureProcess; pollIntervalMs: number }[] = [];
  const peerInfo: Record<string, unknown> = { package: '@dbos-inc/dbos-sdk' };
  try {
    const shuttleUrl = await createDatabase(server, 'bench_queues_shuttle');
    const counter = new pg.Client({ connectionString: shuttleUrl, application_name: 'bench:xid' });
    await counter.connect();
    const storage = await PostgresStorage.open({ connectionString: shuttleUrl, schema: 'bench_queues' });
    const liveness = new PostgresLiveness({ connectionString: shuttleUrl, schema: 'bench_queues' });
    const engine = await createEngine({
      storage,
      workflows: [queueWork],
      queues: benchQueues,
      ownership: 'workflow-lease',
      workflowClaimTtlMs: hostClaimTimings.ttlMs,
      workflowClaimRenewIntervalMs: hostClaimTimings.renewIntervalMs,
      liveness,
      onWarning: (warning) => log(`engine warning: ${warning.name}: ${warning.message}`),
    });
    for (const [name, pollIntervalMs, database] of [
      ['dbos', options.dbosPollMs, 'bench_queues_dbos'],
      ['dbosDefaultPoll', options.dbosDefaultPollMs, 'bench_queues_dbos_default'],
    ] as const) {
      try {
        const url = await createDatabase(server, database);
        const process = await FixtureProcess.dbosQueue(
          url,
          pollIntervalMs === options.dbosDefaultPollMs ? undefined : pollIntervalMs,
        );
        const ready = process.messages.find((message) => message.event === 'ready')!;
        peerInfo.version = ready.version;
        peerInfo[name] = { launchMs: ready.launchMs, pollIntervalMs: ready.pollIntervalMs };
        peers.push({ name, process, pollIntervalMs: Number(ready.pollIntervalMs) });
      } catch (error) {
        peerInfo[`${name}Error`] = error instanceof Error ? error.message : String(error);
        log(`DBOS (${name}) could not run: ${String(peerInfo[`${name}Error`])}`);
      }
    }

    const counted = async (
      kind: string,
      run: () => Promise<Omit<RunSample, 'commits' | 'commitsPerSecond'>>,
    ) => {
      const before = await writeTransactions(counter);
      const sample = await run();
      const commits = (await writeTransactions(counter)) - before;
      return {
        ...sample,
        kind,
        commits,
        commitsPerSecond: Math.round((commits / sample.elapsedMs) * 1000),
      } satisfies RunSample;
    };
    const result = await runQueueRounds(
      {
        latency: (mode) => latencySample(engine, mode),
        throughput: (mode) =>
          counted(mode, async () => {
            const run = await throughputRun(engine, mode, options.workload);
            if (run.audit.incomplete > 0 || run.audit.badSlots > 0)
              throw new Error(
                `${mode}: ${run.audit.incomplete} timelines without a start or an end, ${run.audit.badSlots} admissions without a slot of the queue`,
              );
            return {
              kind: mode,
              workflows: run.workflows,
              elapsedMs: run.elapsedMs,
              workflowsPerSecond: run.workflowsPerSecond,
              maxConcurrent: run.audit.maxConcurrent,
              extra: { storageTransactions: run.storageTransactions, audit: run.audit },
            };
          }),
        peers: Object.fromEntries(
          peers.map(({ name, process }) => [
            name,
            () =>
              counted(name, async () => {
                const answer = await process.request({ op: 'run', ...options.workload }, 'ran', 120_000);
                const elapsedMs = Number(answer.elapsedMs);
                return {
                  kind: name,
                  workflows: Number(answer.workflows),
                  elapsedMs,
                  workflowsPerSecond: Math.round((Number(answer.workflows) / elapsedMs) * 1000 * 100) / 100,
                  maxConcurrent: Number(answer.maxConcurrent),
                  extra: {
                    bodiesMs: answer.bodiesMs,
                    maxBodies: answer.maxBodies,
                    waitedMs: answer.waitedMs,
                  },
                };
              }),
          ]),
        ),
      },
      { ...options, log },
    );
    loads.after = load();
    await engine.shutdown();
    await storage.close();
    await liveness.close();
    await counter.end();

    const peerPoll = (name: string) => peers.find((peer) => peer.name === name)?.pollIntervalMs ?? null;
    const figures: NonNullable<QueuesInput['postgres']> = {
      ...halfFigures(result),
      dbos: peers.some((peer) => peer.name === 'dbos')
        ? peerFigures(result, 'dbos', peerPoll('dbos')!)
        : null,
      dbosDefaultPoll: peers.some((peer) => peer.name === 'dbosDefaultPoll')
        ? peerFigures(result, 'dbosDefaultPoll', peerPoll('dbosDefaultPoll')!)
        : null,
    };
    const details = {
      quick,
      options,
      claimTimings: hostClaimTimings,
      peer: peerInfo,
      ...halfDetails(result, ['queued', 'batched', ...peers.map((peer) => peer.name)]),
      loadAverage: loads,
      totalMs: Date.now() - started,
    };
    console.log(JSON.stringify({ figures, details }));
  } finally {
    for (const { process } of peers) {
      process.send({ op: 'stop' });
      await Promise.race([process.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      await process.stop();
    }
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
