/**
 * Server benchmarks (docs/quality.md, Benchmarks): Shuttle engines over PostgresStorage on a throwaway
 * PostgreSQL server started here with `startLocalPostgres({ durable: true })` (fsync, full_page_writes and
 * synchronous_commit on: every commit waits for its disk flush), everything measured side by side in this one
 * run, so each figure can be read beside its ceiling and its peer on this shared, noisy machine.
 *
 * 1. Throughput, in rounds (5, or 2 when quick), the order rotating within each round:
 *    - the ceiling: raw conditional single-row UPDATE transactions on one connection (autocommit);
 *    - Shuttle: one `bench-steps` workflow of N sequential activities, then 50 at once, new workflows each
 *      time, on one engine (`workflow-lease`, TTL 6 s / renew 1 s, PostgresLiveness) on a schema of its own,
 *      opened before the warm-up and kept through the rounds, as the peer's process is;
 *    - the peer, DBOS Transact, in its own process and its own database on the same server: the same
 *      workflows (N sequential steps; 50 at once).
 *    Ratios are taken within each round and the median of the per-round ratios is reported.
 * 2. Handoff across OS processes (engine-process.ts): `kill -9` and `SIGTERM` of the owner of a running
 *    countdown → the survivor's first commit after its claim; a signal sent from this process → the
 *    owner's `signal-consumed` commit. The durable timeline's `at` stamps are the end points.
 * 3. Holding: one process parks many workflows on durable timers three days away (as many concurrent starts
 *    as it takes, within a time budget), another parks 1,000; both are watched for the same window while a
 *    third process joins the big store: storage calls per renewal pass at both sizes, every claim still
 *    live, no takeover, and how long the newcomer takes to serve.
 *
 * Run by scripts/bench.mjs as `node --import tsx bench/server.ts`; prints one JSON line
 * `{ figures, details }` on stdout, progress on stderr.
 */
import os from 'node:os';
import pg from 'pg';
import { createEngine, type AnyWorkflowDefinition, type Engine, type TimelineEntry } from '../src/engine';
import { keys } from '../src/engine/keys';
import { hostClaimTimings } from '../src/protocol';
import { startLocalPostgres, type LocalPostgres } from '../src/server/local-postgres';
import { PostgresLiveness } from '../src/server/postgres-liveness';
import { PostgresStorage } from '../src/storage/postgres';
import { encodeKey } from '../src/storage/postgres-sql';
import type { ServerFigures } from './server-results';
import { FixtureProcess } from './server/child';
import { median, roundTo, spreadOf, summarize, type SampleSummary } from './stats';
import { countDuplicateCommits, findTakeover } from './timeline-audit';
import {
  batchedWrites,
  blindWrites,
  createCasTable,
  pipelinedClient,
  rate,
  truncateLog,
  writeTransactions,
  type CeilingRate,
  type Rate,
} from './server/raw-cas';
import { ioSteps, ioWorkload, steps } from './steps-workflow';

const quick = process.env.SHUTTLE_BENCH_QUICK === '1';
const options = {
  rounds: Number(process.env.SHUTTLE_BENCH_SERVER_ROUNDS ?? (quick ? 2 : 5)),
  /** How long each throughput measurement should last (N is sized from the previous round). */
  measureMs: quick ? 1_000 : 2_000,
  /** How long each kind is run before the first round (discarded; see the warm-up). */
  warmUpMs: quick ? 3_000 : 8_000,
  /** Each ceiling window (one before, between and after the round's measurements). */
  ceilingWindowMs: quick ? 500 : 1_000,
  parallelWorkflows: 50,
  handoffRuns: quick ? 3 : 7,
  signalRuns: quick ? 3 : 10,
  countdownFrom: 60,
  tickMs: 20,
  /** Parked workflows the holding process aims for, and how long it may spend starting them. */
  parkedTarget: Number(process.env.SHUTTLE_BENCH_PARKED ?? (quick ? 10_000 : 100_000)),
  parkBudgetMs: Number(process.env.SHUTTLE_BENCH_PARK_BUDGET_MS ?? (quick ? 40_000 : 300_000)),
  parkedSmall: 1_000,
  parkConcurrency: 100,
  holdWindowMs: quick ? 20_000 : 60_000,
  parkSleepMs: 3 * 24 * 3600_000,
  /**
   * Which of the part's three sections run (`SHUTTLE_BENCH_SERVER_PARTS=handoff`, for diagnosing one of them
   * alone): `throughput`, `handoff`, `holding`; default all. The figures of the others are null.
   */
  sections: (process.env.SHUTTLE_BENCH_SERVER_PARTS ?? 'throughput,handoff,holding').split(','),
};

/** The engines' claim timings: the studio's and a worker process's defaults (`hostClaimTimings`). */
const claimTimings = {
  workflowClaimTtlMs: hostClaimTimings.ttlMs,
  workflowClaimRenewIntervalMs: hostClaimTimings.renewIntervalMs,
} as const;

function log(message: string): void {
  process.stderr.write(`[bench:server] ${message}\n`);
}

function load(): number[] {
  return os.loadavg().map((value) => Math.round(value * 100) / 100);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { intervalMs = 20, timeoutMs = 20_000 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

function databaseUrl(server: LocalPostgres, database: string): string {
  return server.url.replace(/\/postgres$/, `/${database}`);
}

async function createDatabase(server: LocalPostgres, database: string): Promise<string> {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  return databaseUrl(server, database);
}

// -----------------------------------------------------------------------------------------------------------
// 1. Throughput

type EngineRun = Rate & {
  workflows: number;
  stepsPerWorkflow: number;
  storageTransactions: number;
  groupedBatches: number;
  duplicates: number;
};

/** A Shuttle engine of the throughput section, on a schema of its own, kept for every round of its kind. */
type ShuttleBench = { engine: Engine; storage: PostgresStorage; liveness: PostgresLiveness; schema: string };

async function openShuttle(url: string, schema: string): Promise<ShuttleBench> {
  const storage = await PostgresStorage.open({ connectionString: url, schema });
  const liveness = new PostgresLiveness({ connectionString: url, schema });
  const engine = await createEngine({
    storage,
    workflows: [steps, ioSteps],
    ownership: 'workflow-lease',
    ...claimTimings,
    liveness,
  });
  return { engine, storage, liveness, schema };
}

async function closeShuttle(url: string, { engine, storage, liveness, schema }: ShuttleBench): Promise<void> {
  await engine.shutdown();
  await storage.close();
  await liveness.close();
  await dropSchema(url, schema);
}

/** Starts `inputs` on `bench`'s engine at once; elapsed = first start → last result. */
async function shuttleRun<I>(
  { engine }: ShuttleBench,
  definition: AnyWorkflowDefinition,
  inputs: I[],
  check: (result: unknown, index: number) => boolean,
  activities: number,
): Promise<EngineRun> {
  const before = engine.metrics();
  const started = performance.now();
  const handles = await Promise.all(inputs.map((input) => engine.start(definition, input as never)));
  const results = await Promise.all(handles.map((handle) => handle.result()));
  const elapsedMs = performance.now() - started;
  const after = engine.metrics();
  if (results.some((result, index) => !check(result, index)))
    throw new Error(`a ${definition.name} workflow returned ${JSON.stringify(results[0])}`);
  let duplicates = 0;
  for (const [index, handle] of handles.entries())
    duplicates += countDuplicateCommits(await handle.timeline(), {
      kind: 'activity-completed',
      count: activities === -1 ? (inputs[index] as { delays: number[] }).delays.length : activities,
    }).duplicates;
  const total =
    activities === -1
      ? inputs.reduce((sum, input) => sum + (input as { delays: number[] }).delays.length, 0)
      : inputs.length * activities;
  return {
    ...rate(total, elapsedMs),
    workflows: inputs.length,
    stepsPerWorkflow: activities === -1 ? total / inputs.length : activities,
    storageTransactions: after.storageTransactions - before.storageTransactions,
    groupedBatches: after.groupedBatches - before.groupedBatches,
    duplicates,
  };
}

/** `workflows` × `stepsEach` new `bench-steps` workflows. */
function shuttleSteps(bench: ShuttleBench, workflows: number, stepsEach: number): Promise<EngineRun> {
  const expected = (stepsEach * (stepsEach - 1)) / 2;
  return shuttleRun(
    bench,
    steps,
    Array.from({ length: workflows }, () => ({ steps: stepsEach })),
    (result) => result === expected,
    stepsEach,
  );
}

/** The I/O-bound workload (`ioWorkload`): one `bench-io-steps` workflow per list of delays. */
function shuttleIo(bench: ShuttleBench, workload: number[][]): Promise<EngineRun> {
  return shuttleRun(
    bench,
    ioSteps,
    workload.map((delays) => ({ delays })),
    (result, index) => result === workload[index]!.length,
    -1,
  );
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

type PeerRun = Rate & { workflows: number; stepsPerWorkflow: number };

async function peerSteps(peer: FixtureProcess, workflows: number, stepsEach: number): Promise<PeerRun> {
  const answer = await peer.request({ op: 'run', workflows, steps: stepsEach }, 'ran', 300_000);
  return {
    ...rate(workflows * stepsEach, Number(answer.elapsedMs)),
    workflows,
    stepsPerWorkflow: stepsEach,
  };
}

async function peerIo(peer: FixtureProcess, workload: number[][]): Promise<PeerRun> {
  const answer = await peer.request({ op: 'run-io', delays: workload }, 'ran-io', 300_000);
  const total = workload.reduce((sum, delays) => sum + delays.length, 0);
  return {
    ...rate(total, Number(answer.elapsedMs)),
    workflows: workload.length,
    stepsPerWorkflow: total / workload.length,
  };
}

/** The kinds of measurement of a round, rotated from round to round. */
const kinds = [
  'sequential',
  'parallel',
  'io',
  'peer-sequential',
  'peer-parallel',
  'peer-io',
  'peer-tuned-parallel',
  'peer-tuned-io',
] as const;
type Kind = (typeof kinds)[number];

/** Which ceiling a kind is compared with (the I/O workload has none: its steps wait on simulated I/O). */
const ceilingOf: Record<Kind, 'one' | 'batched' | null> = {
  sequential: 'one',
  'peer-sequential': 'one',
  parallel: 'batched',
  'peer-parallel': 'batched',
  'peer-tuned-parallel': 'batched',
  io: null,
  'peer-io': null,
  'peer-tuned-io': null,
};

/** One measurement: its rate, and the write transactions the server committed meanwhile. */
type Measurement = Rate & {
  workflows: number;
  stepsPerWorkflow: number;
  /** Write transactions committed on the server during it (transaction ids assigned: `writeTransactions`). */
  commits: number;
  commitsPerSecond: number;
  stepsPerCommit: number;
  /** The mean of the ceiling windows right before and after it (rows per second), when it has a ceiling. */
  ceiling: number | null;
  /** Its rate divided by that ceiling. */
  ratio: number | null;
  /** Shuttle's own: storage transactions, batches that shared one, duplicate commits found in the audit. */
  storageTransactions?: number;
  groupedBatches?: number;
  duplicates?: number;
};

type Round = {
  round: number;
  order: Kind[];
  loadAverage: number[];
  /** Every ceiling window of the round, in order. */
  windows: (CeilingRate & { kind: 'one' | 'batched' })[];
  /** The group size of the batched ceiling this round (Shuttle's steps per commit, fifty workflows). */
  groupSize: number;
  measured: Partial<Record<Kind, Measurement>>;
  /** Shuttle ÷ peer, plain rates measured back to back in this round. */
  peer: {
    sequential: number | null;
    parallel: number | null;
    io: number | null;
    tunedParallel: number | null;
    tunedIo: number | null;
  };
};

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, Math.round(value)));

type PeerInfo = {
  name: string;
  package: string;
  version: string | null;
  /** DBOS's system-database pool: its default, and the tuned process's (one connection per workflow). */
  poolSize: { default: number; tuned: number };
  launchMs?: number;
  error?: string;
};

/** DBOS's default system-database pool size (its `systemDatabasePoolSize`). */
const dbosDefaultPool = 10;

async function startPeer(
  server: LocalPostgres,
  database: string,
  poolSize?: number,
): Promise<FixtureProcess> {
  return FixtureProcess.dbos(databaseUrl(server, database), poolSize);
}

async function throughput(server: LocalPostgres): Promise<{
  rounds: Round[];
  peer: PeerInfo;
  ioWorkload: { workflows: number; steps: number; seed: number };
}> {
  const rawUrl = await createDatabase(server, 'bench_raw');
  const shuttleUrl = await createDatabase(server, 'bench_shuttle');
  const raw = new pg.Client({ connectionString: rawUrl, application_name: 'bench:raw' });
  await raw.connect();
  await createCasTable(raw);
  const pipelined = await pipelinedClient(rawUrl);
  const workload = ioWorkload(20261206, options.parallelWorkflows);
  const ioTotal = workload.reduce((sum, delays) => sum + delays.length, 0);

  const peerInfo: PeerInfo = {
    name: 'DBOS Transact',
    package: '@dbos-inc/dbos-sdk',
    version: null,
    poolSize: { default: dbosDefaultPool, tuned: options.parallelWorkflows },
  };
  let peer: FixtureProcess | null = null;
  let tuned: FixtureProcess | null = null;
  try {
    peer = await startPeer(server, 'bench_dbos');
    tuned = await startPeer(server, 'bench_dbos_tuned', options.parallelWorkflows);
    const ready = peer.messages.find((message) => message.event === 'ready')!;
    peerInfo.version = String(ready.version);
    peerInfo.launchMs = Number(ready.launchMs);
  } catch (error) {
    peerInfo.error = error instanceof Error ? error.message : String(error);
    log(`the peer could not run: ${peerInfo.error}`);
  }

  // One Shuttle engine, opened here and kept through the warm-up and every round of both kinds — as the
  // peer's process is: the figures describe a worker that is running, not one starting (its pool's
  // connections, each a server process to start, and their first plans; bench/README.md). One, not one per
  // kind: every listening session of a database is woken by every commit's NOTIFY, whatever its channel.
  const shuttleEngine = await openShuttle(shuttleUrl, 'bench_steps');
  const shuttle = (workflows: number, stepsEach: number) => shuttleSteps(shuttleEngine, workflows, stepsEach);

  // Warm-up (discarded), each kind run again and again for `warmUpMs`, sized to about a measurement: V8 takes
  // thousands of steps to optimise the hot paths (one engine went from 570 µs of CPU a step in its first 2,000
  // steps to 160 µs by its third 2,000, and fifty workflows from 6,300 to 10,600 steps/s by their fourth
  // run: bench/README.md), so a short warm-up measured the compiler, not the engine. The peers get the same.
  log('throughput warm-up');
  const warmUp = async (
    run: (stepsEach: number) => Promise<Rate>,
    workflows: number,
    first: number,
  ): Promise<Rate> => {
    const started = performance.now();
    let last = await run(first);
    while (performance.now() - started < options.warmUpMs)
      last = await run(clamp((last.perSecond * options.measureMs) / 1000 / workflows, 5, 20_000));
    return last;
  };
  const warmSequential = await warmUp((n) => shuttle(1, n), 1, 200);
  let lastParallel: EngineRun | null = null;
  const warmParallel = await warmUp(
    async (n) => (lastParallel = await shuttle(options.parallelWorkflows, n)),
    options.parallelWorkflows,
    20,
  );
  await shuttleIo(shuttleEngine, workload);
  for (const process of [peer, tuned]) {
    if (!process) continue;
    await warmUp((n) => peerSteps(process, 1, n), 1, 200);
    await warmUp((n) => peerSteps(process, options.parallelWorkflows, n), options.parallelWorkflows, 20);
    await peerIo(process, workload);
  }
  let sequentialSteps = clamp((warmSequential.perSecond * options.measureMs) / 1000, 100, 20_000);
  let parallelSteps = clamp(
    (warmParallel.perSecond * options.measureMs) / 1000 / options.parallelWorkflows,
    5,
    2_000,
  );
  const stepsPerTransaction = (run: EngineRun | null) =>
    run && run.storageTransactions > 0 ? run.operations / run.storageTransactions : 1;
  let groupSize = Math.max(1, Math.round(stepsPerTransaction(lastParallel)));

  const rounds: Round[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const order = kinds.map((_, index) => kinds[(index + round) % kinds.length]!);
      const windows: Round['windows'] = [];
      const measured: Round['measured'] = {};
      await truncateLog(raw);
      const window = async (kind: 'one' | 'batched') => {
        const measuredWindow =
          kind === 'one'
            ? await blindWrites(raw, options.ceilingWindowMs)
            : await batchedWrites(pipelined, options.ceilingWindowMs, groupSize);
        const entry = { ...measuredWindow, kind };
        windows.push(entry);
        return entry;
      };
      for (const kind of order) {
        const ceilingKind = ceilingOf[kind];
        const previous = windows.at(-1);
        const before =
          ceilingKind === null ? null : previous?.kind === ceilingKind ? previous : await window(ceilingKind);
        const xidBefore = await writeTransactions(raw);
        let run: (Rate & { workflows: number; stepsPerWorkflow: number } & Partial<EngineRun>) | null = null;
        if (kind === 'sequential') run = await shuttle(1, sequentialSteps);
        else if (kind === 'parallel') run = await shuttle(options.parallelWorkflows, parallelSteps);
        else if (kind === 'io') run = await shuttleIo(shuttleEngine, workload);
        else {
          const process = kind.startsWith('peer-tuned') ? tuned : peer;
          if (!process) continue;
          if (kind === 'peer-sequential') run = await peerSteps(process, 1, sequentialSteps);
          else if (kind.endsWith('parallel'))
            run = await peerSteps(process, options.parallelWorkflows, parallelSteps);
          else run = await peerIo(process, workload);
        }
        const commits = (await writeTransactions(raw)) - xidBefore;
        const after = ceilingKind === null ? null : await window(ceilingKind);
        const ceiling = before && after ? (before.perSecond + after.perSecond) / 2 : null;
        measured[kind] = {
          ...run,
          perSecond: Math.round(run.perSecond),
          commits,
          commitsPerSecond: Math.round((commits / run.elapsedMs) * 1000),
          stepsPerCommit: roundTo(run.operations / Math.max(1, commits), 2)!,
          ceiling: ceiling === null ? null : Math.round(ceiling),
          ratio: ceiling === null ? null : roundTo(run.perSecond / ceiling, 3),
        };
      }
      const plain = (shuttleKind: Kind, peerKind: Kind) => {
        const a = measured[shuttleKind];
        const b = measured[peerKind];
        return a && b ? roundTo(a.perSecond / b.perSecond, 3) : null;
      };
      const result: Round = {
        round,
        order: [...order],
        loadAverage: load(),
        windows: windows.map((entry) => ({
          ...entry,
          perSecond: Math.round(entry.perSecond),
          commitsPerSecond: Math.round(entry.commitsPerSecond),
        })),
        groupSize,
        measured,
        peer: {
          sequential: plain('sequential', 'peer-sequential'),
          parallel: plain('parallel', 'peer-parallel'),
          io: plain('io', 'peer-io'),
          tunedParallel: plain('parallel', 'peer-tuned-parallel'),
          tunedIo: plain('io', 'peer-tuned-io'),
        },
      };
      rounds.push(result);
      const m = (kind: Kind) => measured[kind];
      log(
        `round ${round + 1}/${options.rounds}: ` +
          `1 workflow ${m('sequential')?.perSecond} steps/s (×${m('sequential')?.ratio} of ${m('sequential')?.ceiling}); ` +
          `50 ${m('parallel')?.perSecond} steps/s, ${m('parallel')?.commitsPerSecond} commits/s (×${m('parallel')?.ratio} of ${m('parallel')?.ceiling} at ${groupSize} a commit); ` +
          `io ${m('io')?.perSecond} steps/s; DBOS ${m('peer-sequential')?.perSecond ?? '—'}, ${m('peer-parallel')?.perSecond ?? '—'} (tuned ${m('peer-tuned-parallel')?.perSecond ?? '—'}), io ${m('peer-io')?.perSecond ?? '—'} (tuned ${m('peer-tuned-io')?.perSecond ?? '—'})`,
      );
      const sequential = measured.sequential!;
      const parallel = measured.parallel!;
      sequentialSteps = clamp((sequential.perSecond * options.measureMs) / 1000, 100, 20_000);
      parallelSteps = clamp(
        (parallel.perSecond * options.measureMs) / 1000 / options.parallelWorkflows,
        5,
        2_000,
      );
      groupSize = Math.max(
        1,
        Math.round(parallel.operations / Math.max(1, parallel.storageTransactions ?? 1)),
      );
    }
  } finally {
    await raw.end();
    await pipelined.end();
    await closeShuttle(shuttleUrl, shuttleEngine).catch((error: unknown) =>
      log(`closing the engine: ${error}`),
    );
    for (const process of [peer, tuned]) {
      if (!process) continue;
      process.send({ op: 'stop' });
      await Promise.race([process.exited, sleep(10_000)]);
      await process.stop();
    }
  }
  return {
    rounds,
    peer: peerInfo,
    ioWorkload: { workflows: workload.length, steps: ioTotal, seed: 20261206 },
  };
}

function ratios(values: (number | null | undefined)[]): SampleSummary {
  return summarize(
    values.filter((value): value is number => typeof value === 'number'),
    3,
  );
}

// -----------------------------------------------------------------------------------------------------------
// 2. Handoff across processes

type HandoffKind = 'kill' | 'sigterm';

type HandoffRun = {
  kind: HandoffKind;
  run: number;
  workflowId: string;
  ownerEngineId: string;
  exitAt: number;
  newOwnerEngineId: string | null;
  claimKind: string | null;
  claimReason: string | null;
  claimLatencyMs: number | null;
  firstStepKind: string | null;
  /** Exit → the successor's first commit after its claim: the figure. */
  latencyMs: number | null;
  /** Exit → PostgresLiveness first reports the owner dead (polled every 5 ms from this process). */
  deadAfterMs: number | null;
  duplicates: number | null;
  error?: string;
};

async function observerEngine(
  url: string,
  schema: string,
): Promise<{ engine: Engine; close: () => Promise<void> }> {
  const storage = await PostgresStorage.open({ connectionString: url, schema });
  const engine = await createEngine({
    storage,
    ownership: 'workflow-lease',
    ...claimTimings,
    claimWorkflows: false,
  });
  return {
    engine,
    close: async () => {
      await engine.shutdown();
      await storage.close();
    },
  };
}

function ticksBy(timeline: readonly TimelineEntry[], engineId: string): number {
  return timeline.filter((entry) => entry.kind === 'timer-fired' && entry.engineId === engineId).length;
}

async function handoffRun(
  url: string,
  schema: string,
  observer: Engine,
  liveness: PostgresLiveness,
  kind: HandoffKind,
  run: number,
): Promise<HandoffRun> {
  const owner = await FixtureProcess.engine(`owner-${kind}-${run}`, url, schema);
  const workflowId = `handoff-${kind}-${run}`;
  const record: HandoffRun = {
    kind,
    run,
    workflowId,
    ownerEngineId: owner.engineId,
    exitAt: 0,
    newOwnerEngineId: null,
    claimKind: null,
    claimReason: null,
    claimLatencyMs: null,
    firstStepKind: null,
    latencyMs: null,
    deadAfterMs: null,
    duplicates: null,
  };
  try {
    await owner.request(
      {
        op: 'start',
        workflow: 'countdown',
        id: workflowId,
        input: { from: options.countdownFrom, tickMs: options.tickMs },
      },
      'started',
      20_000,
    );
    await pollUntil('the owner to commit 3 ticks', async () => {
      const timeline = await observer.timeline(workflowId);
      return ticksBy(timeline, owner.engineId) >= 3 ? true : undefined;
    });
    record.exitAt = Date.now();
    owner.kill(kind === 'kill' ? 'SIGKILL' : 'SIGTERM');
    // When the oracle starts to report the owner dead (for kill -9: when PostgreSQL has dropped its lock).
    const deadAt = pollUntil(
      'the oracle to report the owner dead',
      async () => ((await liveness.isDead(owner.engineId)) ? Date.now() : undefined),
      { intervalMs: 5, timeoutMs: 10_000 },
    ).catch(() => null);
    const takeover = await pollUntil(
      'the survivor to commit a step',
      async () => {
        const found = findTakeover(await observer.timeline(workflowId), owner.engineId);
        return found?.firstStep ? found : undefined;
      },
      { intervalMs: 20, timeoutMs: 30_000 },
    );
    record.newOwnerEngineId = takeover.engineId;
    record.claimKind = takeover.claim.kind;
    record.claimReason =
      takeover.claim.kind === 'claim-taken-over' ? String(takeover.claim.detail.reason) : 'released';
    record.claimLatencyMs = takeover.claim.at - record.exitAt;
    record.firstStepKind = takeover.firstStep!.kind;
    record.latencyMs = takeover.firstStep!.at - record.exitAt;
    const dead = await deadAt;
    record.deadAfterMs = dead === null ? null : dead - record.exitAt;
    const result = await observer.handle(workflowId).result();
    if ((result as { counted?: number }).counted !== options.countdownFrom)
      throw new Error(`the countdown returned ${JSON.stringify(result)}`);
    record.duplicates = countDuplicateCommits(await observer.timeline(workflowId), {
      kind: 'timer-fired',
      count: options.countdownFrom,
    }).duplicates;
  } catch (error) {
    record.error = error instanceof Error ? error.message : String(error);
  } finally {
    await owner.stop();
  }
  return record;
}

type SignalRun = { run: number; sentAt: number; consumedAt: number | null; latencyMs: number | null };

async function handoffs(server: LocalPostgres) {
  const url = await createDatabase(server, 'bench_handoff');
  const schema = 'shuttle';
  // The schema exists before any process races to create it.
  await (await PostgresStorage.open({ connectionString: url, schema })).close();
  const observer = await observerEngine(url, schema);
  const liveness = new PostgresLiveness({ connectionString: url, schema });
  const survivor = await FixtureProcess.engine('survivor', url, schema);
  const runs: HandoffRun[] = [];
  const signals: SignalRun[] = [];
  try {
    for (const kind of ['kill', 'sigterm'] as const)
      for (let run = 0; run < options.handoffRuns; run++) {
        const result = await handoffRun(url, schema, observer.engine, liveness, kind, run);
        runs.push(result);
        log(
          `handoff ${kind} ${run + 1}/${options.handoffRuns}: ${result.latencyMs ?? result.error} ms` +
            ` (oracle: dead after ${result.deadAfterMs ?? '—'} ms)` +
            (result.claimReason ? ` (${result.claimKind}, ${result.claimReason})` : ''),
        );
      }

    // A signal sent from this process to a workflow the survivor process owns.
    const workflowId = 'signal-pings';
    await survivor.request(
      { op: 'start', workflow: 'bench-pings', id: workflowId, input: { count: options.signalRuns } },
      'started',
      20_000,
    );
    const consumed = async () =>
      (await observer.engine.timeline(workflowId)).filter((entry) => entry.kind === 'signal-consumed');
    // The run parks on its first signal wait: its claim and first turn are committed.
    await pollUntil('the pings workflow to wait', async () => {
      const description = await observer.engine.describe(workflowId);
      return description.status === 'running' && description.owner?.engineId === survivor.engineId
        ? true
        : undefined;
    });
    await sleep(200);
    for (let run = 0; run < options.signalRuns; run++) {
      const sentAt = Date.now();
      await observer.engine.signal(workflowId, 'ping', { run });
      const entry = await pollUntil('the owner to consume the signal', async () => (await consumed())[run], {
        intervalMs: 10,
        timeoutMs: 10_000,
      }).catch(() => null);
      signals.push({
        run,
        sentAt,
        consumedAt: entry?.at ?? null,
        latencyMs: entry ? entry.at - sentAt : null,
      });
      await sleep(100);
    }
    log(`cross-process signal: ${signals.map((signal) => signal.latencyMs).join(', ')} ms`);
  } finally {
    await survivor.stop();
    await observer.close();
    await liveness.close();
  }
  const latencies = (kind: HandoffKind) =>
    summarize(runs.filter((run) => run.kind === kind && run.latencyMs !== null).map((run) => run.latencyMs!));
  const claimLatencies = (kind: HandoffKind) =>
    summarize(
      runs
        .filter((run) => run.kind === kind && run.claimLatencyMs !== null)
        .map((run) => run.claimLatencyMs!),
    );
  return {
    kill: latencies('kill'),
    sigterm: latencies('sigterm'),
    claimLatencyMs: { kill: claimLatencies('kill'), sigterm: claimLatencies('sigterm') },
    signal: summarize(signals.filter((run) => run.latencyMs !== null).map((run) => run.latencyMs!)),
    deadAfterMs: {
      kill: summarize(
        runs.filter((run) => run.kind === 'kill' && run.deadAfterMs !== null).map((run) => run.deadAfterMs!),
      ),
      sigterm: summarize(
        runs
          .filter((run) => run.kind === 'sigterm' && run.deadAfterMs !== null)
          .map((run) => run.deadAfterMs!),
      ),
    },
    duplicates: runs.reduce((sum, run) => sum + (run.duplicates ?? 0), 0),
    runs,
    signals,
  };
}

// -----------------------------------------------------------------------------------------------------------
// 3. Holding

type Stats = {
  calls: Record<string, number>;
  metrics: {
    renewals: number;
    claimsHeld: number;
    claimsLost: number;
    claimAttempts: Record<string, number>;
  };
  owned: number;
  cpuMs: number;
  memory: number;
};

async function stats(process: FixtureProcess): Promise<Stats> {
  return (await process.request({ op: 'stats' }, 'stats', 30_000)) as unknown as Stats;
}

function totalCalls(calls: Record<string, number>): number {
  return Object.values(calls).reduce((sum, count) => sum + count, 0);
}

function callsDelta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([method, count]) => [method, count - (before[method] ?? 0)]),
  );
}

/** Transactions committed in `database` so far (pg_stat_database; every statement in autocommit is one). */
async function transactionsOf(client: pg.Client, database: string): Promise<number> {
  await client.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await client.query<{ xact_commit: string; xact_rollback: string }>(
    'SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  return Number(rows[0]?.xact_commit ?? 0) + Number(rows[0]?.xact_rollback ?? 0);
}

/** How long until the holder's session (and so every claim it holds) stops being live, in ms; -1 if it is not. */
async function sessionHeadroomMs(reader: PostgresStorage, engineId: string): Promise<number> {
  const raw = await reader.get(keys.session(engineId));
  const session = raw ? (JSON.parse(raw) as { expiresAt: number; endedAt?: number }) : null;
  if (!session || session.endedAt !== undefined) return -1;
  return session.expiresAt + 2 * claimTimings.workflowClaimRenewIntervalMs - Date.now();
}

async function parkedStore(server: LocalPostgres, database: string, count: number, budgetMs: number) {
  const url = await createDatabase(server, database);
  const holder = await FixtureProcess.engine(`holder-${database}`, url, 'shuttle');
  const reader = await PostgresStorage.open({ connectionString: url, schema: 'shuttle', maxConnections: 1 });
  const begun = Date.now();
  let parked = 0;
  let parking = true;
  // The holder's session while it starts workflows: its renewal shares the commit queue with the starts.
  let minHeadroomMs = Number.POSITIVE_INFINITY;
  const sampler = (async () => {
    while (parking) {
      minHeadroomMs = Math.min(minHeadroomMs, await sessionHeadroomMs(reader, holder.engineId));
      await sleep(250);
    }
  })();
  const batches: { parked: number; ms: number; startsPerSecond: number }[] = [];
  let startFailures = 0;
  const failureSamples: string[] = [];
  let attempted = 0;
  try {
    // Batches of at most 5,000 starts, until the count or the time budget is reached.
    while (attempted < count && Date.now() - begun < budgetMs) {
      const batch = Math.min(5_000, count - attempted);
      if (batch <= 0) break;
      attempted += batch;
      const batchBegun = Date.now();
      const answer = await holder.request(
        {
          op: 'park',
          count: batch,
          concurrency: options.parkConcurrency,
          prefix: `p${String((attempted - batch) / 1000).padStart(3, '0')}k-`,
          sleepMs: options.parkSleepMs,
        },
        'parked',
        30 * 60_000,
      );
      // What the holder holds is the count (a failed start is not retried, see engine-process.ts).
      parked = Number(answer.claimsHeld);
      startFailures += Number(answer.failed);
      if (Number(answer.failed) > 0) failureSamples.push(...(answer.firstFailures as string[]));
      const ms = Date.now() - batchBegun;
      batches.push({ parked, ms, startsPerSecond: Math.round((batch / ms) * 1000) });
      log(
        `${database}: ${parked.toLocaleString('en-US')} parked in ${Math.round((Date.now() - begun) / 1000)} s ` +
          `(last ${batch.toLocaleString('en-US')} at ${Math.round((batch / ms) * 1000)}/s)`,
      );
    }
  } finally {
    parking = false;
    await sampler;
    await reader.close();
  }
  return {
    url,
    holder,
    parked,
    startMs: Date.now() - begun,
    batches,
    startFailures,
    failureSamples: failureSamples.slice(0, 5),
    minSessionHeadroomDuringStartsMs: Math.round(minHeadroomMs),
  };
}

/** Counts rows of the holding store's timelines that record a takeover (the durable source of truth). */
async function takeoversRecorded(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM shuttle.entries
        WHERE key >= decode($1, 'hex') AND key < decode($2, 'hex') AND value LIKE '%"claim-taken-over"%'`,
      [encodeKey('wf-tl:'), encodeKey('wf-tl;')],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

async function holding(server: LocalPostgres) {
  const big = await parkedStore(server, 'bench_hold', options.parkedTarget, options.parkBudgetMs);
  const small = await parkedStore(server, 'bench_hold_small', options.parkedSmall, options.parkBudgetMs);
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  const sessionReader = await PostgresStorage.open({ connectionString: big.url, schema: 'shuttle' });
  let second: FixtureProcess | null = null;
  try {
    // Let the start-up work settle (the last starts' change notifications, timers armed).
    await sleep(3_000);
    const beforeBig = await stats(big.holder);
    const beforeSmall = await stats(small.holder);
    const xactBig = await transactionsOf(admin, 'bench_hold');
    const xactSmall = await transactionsOf(admin, 'bench_hold_small');
    const windowStarted = Date.now();

    // A second live process joins the big store: createEngine resolved, then one workflow served.
    const secondSpawned = Date.now();
    second = await FixtureProcess.engine('second', big.url, 'shuttle', {
      serveCheck: true,
      timeoutMs: 120_000,
    });
    const ready = second.messages.find((message) => message.event === 'ready')!;
    const served = await second.next('served', 60_000);
    const secondProcess = {
      readyMs: ready.at - secondSpawned,
      processStartMs: Number(ready.startedAt) - secondSpawned,
      createEngineMs: Number(ready.createEngineMs),
      servedMs: served.at - secondSpawned,
    };
    log(
      `second process: createEngine resolved ${secondProcess.readyMs} ms after spawn, served ${secondProcess.servedMs} ms after spawn`,
    );

    // Watch the holder's session: how close did it come to expiring?
    let minHeadroomMs = Number.POSITIVE_INFINITY;
    let sessionSamples = 0;
    while (Date.now() - windowStarted < options.holdWindowMs) {
      minHeadroomMs = Math.min(minHeadroomMs, await sessionHeadroomMs(sessionReader, big.holder.engineId));
      sessionSamples++;
      await sleep(250);
    }
    const windowMs = Date.now() - windowStarted;
    const afterBig = await stats(big.holder);
    const afterSmall = await stats(small.holder);
    const secondStats = await stats(second);
    const xactBigAfter = await transactionsOf(admin, 'bench_hold');
    const xactSmallAfter = await transactionsOf(admin, 'bench_hold_small');

    const perPass = (before: Stats, after: Stats) => {
      const passes = after.metrics.renewals - before.metrics.renewals;
      const calls = callsDelta(after.calls, before.calls);
      return {
        passes,
        calls,
        callsPerPass: passes > 0 ? roundTo(totalCalls(calls) / passes, 1) : null,
        claimsHeld: after.metrics.claimsHeld,
        claimsLost: after.metrics.claimsLost - before.metrics.claimsLost,
        cpuMsPerPass: passes > 0 ? roundTo((after.cpuMs - before.cpuMs) / passes, 1) : null,
        heapBytes: after.memory,
      };
    };
    const bigPass = perPass(beforeBig, afterBig);
    const smallPass = perPass(beforeSmall, afterSmall);
    const recorded = await takeoversRecorded(big.url);
    return {
      parkedTarget: options.parkedTarget,
      parked: big.parked,
      parkedSmall: small.parked,
      startMs: big.startMs,
      startBatches: big.batches,
      startFailures: big.startFailures,
      startFailureSamples: big.failureSamples,
      minSessionHeadroomDuringStartsMs: big.minSessionHeadroomDuringStartsMs,
      startsPerSecond: roundTo((big.parked / big.startMs) * 1000),
      parkBudgetMs: options.parkBudgetMs,
      reachedTarget: big.parked >= options.parkedTarget,
      windowMs,
      big: { ...bigPass, transactionsPerSecond: roundTo(((xactBigAfter - xactBig) / windowMs) * 1000, 1) },
      small: {
        ...smallPass,
        transactionsPerSecond: roundTo(((xactSmallAfter - xactSmall) / windowMs) * 1000, 1),
      },
      sessionHeadroomMs: { min: Math.round(minHeadroomMs), samples: sessionSamples },
      secondProcess: {
        ...secondProcess,
        takeovers: secondStats.metrics.claimAttempts.takeover ?? 0,
        acquired: secondStats.metrics.claimAttempts.acquired ?? 0,
        owned: secondStats.owned,
      },
      takeoverEntriesRecorded: recorded,
    };
  } finally {
    await second?.stop(10_000);
    await big.holder.stop(30_000);
    await small.holder.stop(30_000);
    await sessionReader.close();
    await admin.end();
  }
}

// -----------------------------------------------------------------------------------------------------------

async function serverSettings(server: LocalPostgres): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    const settings: Record<string, string> = {};
    for (const name of [
      'server_version',
      'fsync',
      'synchronous_commit',
      'full_page_writes',
      'wal_sync_method',
      'shared_buffers',
      'max_connections',
    ])
      settings[name] = (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
    return settings;
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadBefore = load();
  log(`starting a throwaway PostgreSQL server (durable: fsync on)`);
  const server = await startLocalPostgres({ durable: true });
  const timingsMs: Record<string, number> = {};
  const failures: Record<string, string> = {};
  const timed = async <T>(label: string, action: () => Promise<T>): Promise<T | null> => {
    const begun = Date.now();
    try {
      return await action();
    } catch (error) {
      failures[label] = error instanceof Error ? (error.stack ?? error.message) : String(error);
      log(`${label} failed: ${failures[label]}`);
      return null;
    } finally {
      timingsMs[label] = Date.now() - begun;
    }
  };
  try {
    const settings = await serverSettings(server);
    log(
      `PostgreSQL ${settings.server_version}, fsync ${settings.fsync}, synchronous_commit ${settings.synchronous_commit}`,
    );
    const loads: Record<string, number[]> = { before: loadBefore };
    const section = <T>(label: string, action: () => Promise<T>): Promise<T | null> =>
      options.sections.includes(label) ? timed(label, action) : Promise.resolve(null);
    const tp = await section('throughput', () => throughput(server));
    loads.afterThroughput = load();
    const handoff = await section('handoff', () => handoffs(server));
    loads.afterHandoff = load();
    const hold = await section('holding', () => holding(server));
    loads.afterHolding = load();

    const rounds = tp?.rounds ?? [];
    const median0 = (values: (number | null | undefined)[]) =>
      roundTo(median(values.filter((value): value is number => typeof value === 'number')));
    const of = (kind: Kind) => rounds.map((round) => round.measured[kind]);
    /** A workload's figures: medians over rounds (ratio: the median of the per-round ratios). */
    const throughputFigure = (kind: Kind) => {
      const list = of(kind);
      const windows = rounds.flatMap((round) =>
        round.windows.filter((window) => window.kind === ceilingOf[kind]),
      );
      return {
        stepsPerSecond: median0(list.map((m) => m?.perSecond)),
        commitsPerSecond: median0(list.map((m) => m?.commitsPerSecond)),
        stepsPerCommit: roundTo(median(list.flatMap((m) => (m ? [m.stepsPerCommit] : []))), 2),
        ceilingPerSecond: median0(list.map((m) => m?.ceiling)),
        ceilingCommitsPerSecond: ceilingOf[kind]
          ? median0(windows.map((window) => window.commitsPerSecond))
          : null,
        ceilingGroupSize:
          ceilingOf[kind] === 'one'
            ? 1
            : ceilingOf[kind] === 'batched'
              ? median0(rounds.map((round) => round.groupSize))
              : null,
        ratio: ratios(list.map((m) => m?.ratio)).p50,
      };
    };
    const peerFigure = (kind: Kind, ratio: (round: Round) => number | null) => {
      const list = of(kind);
      return {
        stepsPerSecond: median0(list.map((m) => m?.perSecond)),
        commitsPerSecond: median0(list.map((m) => m?.commitsPerSecond)),
        stepsPerCommit: roundTo(median(list.flatMap((m) => (m ? [m.stepsPerCommit] : []))), 2),
        shuttleRatio: ratios(rounds.map(ratio)).p50,
      };
    };
    const spreads = Object.fromEntries(
      kinds.map((kind) => [
        kind,
        {
          stepsPerSecond: summarize(of(kind).flatMap((m) => (m ? [m.perSecond] : []))),
          commitsPerSecond: summarize(of(kind).flatMap((m) => (m ? [m.commitsPerSecond] : []))),
          ratio: ratios(of(kind).map((m) => m?.ratio)),
        },
      ]),
    );
    const figures: ServerFigures = {
      one: throughputFigure('sequential'),
      fifty: throughputFigure('parallel'),
      io: throughputFigure('io'),
      dbos: {
        one: peerFigure('peer-sequential', (round) => round.peer.sequential),
        fifty: peerFigure('peer-parallel', (round) => round.peer.parallel),
        io: peerFigure('peer-io', (round) => round.peer.io),
        tunedFifty: peerFigure('peer-tuned-parallel', (round) => round.peer.tunedParallel),
        tunedIo: peerFigure('peer-tuned-io', (round) => round.peer.tunedIo),
      },
      handoffMs: {
        kill: handoff ? spreadOf(handoff.kill) : { p50: null, p95: null },
        sigterm: handoff ? spreadOf(handoff.sigterm) : { p50: null, p95: null },
      },
      crossProcessSignalMs: handoff ? spreadOf(handoff.signal) : { p50: null, p95: null },
      holding: {
        parkedWorkflows: hold?.parked ?? null,
        startSeconds: hold ? roundTo(hold.startMs / 1000, 1) : null,
        callsPerPassAt1000: hold?.small.callsPerPass ?? null,
        callsPerPass: hold?.big.callsPerPass ?? null,
        claimsLost: hold?.big.claimsLost ?? null,
        takeovers: hold?.takeoverEntriesRecorded ?? null,
        secondProcessReadyMs: hold?.secondProcess.servedMs ?? null,
      },
      duplicateCommits:
        tp || handoff
          ? rounds.reduce(
              (sum, round) =>
                sum +
                (['sequential', 'parallel', 'io'] as const).reduce(
                  (inner, kind) => inner + (round.measured[kind]?.duplicates ?? 0),
                  0,
                ),
              0,
            ) + (handoff?.duplicates ?? 0)
          : null,
    };
    const details = {
      quick,
      options,
      claimTimings,
      postgres: { ...settings, durable: true, startedBy: 'startLocalPostgres({ durable: true })' },
      peer: tp?.peer ?? null,
      totalMs: Date.now() - started,
      timingsMs,
      loadAverage: loads,
      failures,
      throughput: { spreads, rounds, ioWorkload: tp?.ioWorkload ?? null },
      handoff,
      holding: hold,
    };
    console.log(JSON.stringify({ figures, details }));
  } finally {
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
