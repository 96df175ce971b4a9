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
import { createEngine, type Engine, type TimelineEntry } from '../src/engine';
import { keys } from '../src/engine/keys';
import { studioClaimTimings } from '../src/host/protocol';
import { startLocalPostgres, type LocalPostgres } from '../src/server/local-postgres';
import { PostgresLiveness } from '../src/server/postgres-liveness';
import { PostgresStorage } from '../src/storage/postgres';
import { encodeKey } from '../src/storage/postgres-sql';
import type { ServerFigures } from './server-results';
import { FixtureProcess } from './server/child';
import { median, roundTo, spreadOf, summarize, type SampleSummary } from './stats';
import { countDuplicateCommits, findTakeover } from './timeline-audit';
import { createCasTable, rate, rawTransactions, type Rate } from './server/raw-cas';
import { steps } from './steps-workflow';

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

/** The engines' claim timings: the studio's and a worker process's defaults (`studioClaimTimings`). */
const claimTimings = {
  workflowClaimTtlMs: studioClaimTimings.ttlMs,
  workflowClaimRenewIntervalMs: studioClaimTimings.renewIntervalMs,
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
    workflows: [steps],
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

/** `workflows` × `stepsEach` new workflows on `bench`'s engine; elapsed = first start → last result. */
async function shuttleSteps(
  { engine }: ShuttleBench,
  workflows: number,
  stepsEach: number,
): Promise<EngineRun> {
  const before = engine.metrics();
  const started = performance.now();
  const handles = await Promise.all(
    Array.from({ length: workflows }, () => engine.start(steps, { steps: stepsEach })),
  );
  const results = await Promise.all(handles.map((handle) => handle.result()));
  const elapsedMs = performance.now() - started;
  const after = engine.metrics();
  const expected = (stepsEach * (stepsEach - 1)) / 2;
  if (results.some((result) => result !== expected))
    throw new Error(`a bench-steps workflow returned ${JSON.stringify(results[0])}, expected ${expected}`);
  let duplicates = 0;
  for (const handle of handles)
    duplicates += countDuplicateCommits(await handle.timeline(), {
      kind: 'activity-completed',
      count: stepsEach,
    }).duplicates;
  return {
    ...rate(workflows * stepsEach, elapsedMs),
    workflows,
    stepsPerWorkflow: stepsEach,
    storageTransactions: after.storageTransactions - before.storageTransactions,
    groupedBatches: after.groupedBatches - before.groupedBatches,
    duplicates,
  };
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

type Round = {
  round: number;
  order: string[];
  loadAverage: number[];
  /** Every ceiling window of the round, in order (one before, between and after the measurements). */
  rawWindows: Rate[];
  /** The round's ceiling: the mean rate of its windows. */
  raw: Rate;
  sequential: EngineRun;
  parallel: EngineRun;
  peerSequential: PeerRun | null;
  peerParallel: PeerRun | null;
  /** Each measurement's own ceiling: the mean of the windows just before and just after it. */
  ceilings: Record<string, number>;
  stepRatio: number;
  parallelRatio: number;
  /** Shuttle ÷ peer, each first divided by its own ceiling (drift-corrected: the figure). */
  peerStepRatio: number | null;
  peerParallelRatio: number | null;
  /** Shuttle ÷ peer, plain rates. */
  peerStepRatioPlain: number | null;
  peerParallelRatioPlain: number | null;
};

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, Math.round(value)));

async function throughput(server: LocalPostgres): Promise<{ rounds: Round[]; peer: PeerInfo }> {
  const rawUrl = await createDatabase(server, 'bench_raw');
  const shuttleUrl = await createDatabase(server, 'bench_shuttle');
  const raw = new pg.Client({ connectionString: rawUrl, application_name: 'bench:raw' });
  await raw.connect();
  await createCasTable(raw);

  const peerInfo: PeerInfo = { name: 'DBOS Transact', package: '@dbos-inc/dbos-sdk', version: null };
  let peer: FixtureProcess | null = null;
  try {
    peer = await FixtureProcess.dbos(databaseUrl(server, 'bench_dbos'));
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
  // run: bench/README.md), so a short warm-up measured the compiler, not the engine. The peer gets the same.
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
  const warmParallel = await warmUp(
    (n) => shuttle(options.parallelWorkflows, n),
    options.parallelWorkflows,
    20,
  );
  if (peer) {
    await warmUp((n) => peerSteps(peer!, 1, n), 1, 200);
    await warmUp((n) => peerSteps(peer!, options.parallelWorkflows, n), options.parallelWorkflows, 20);
  }
  let sequentialSteps = clamp((warmSequential.perSecond * options.measureMs) / 1000, 100, 20_000);
  let parallelSteps = clamp(
    (warmParallel.perSecond * options.measureMs) / 1000 / options.parallelWorkflows,
    5,
    2_000,
  );

  const rounds: Round[] = [];
  const kinds = ['sequential', 'parallel', 'peer-sequential', 'peer-parallel'] as const;
  try {
    for (let round = 0; round < options.rounds; round++) {
      const order = kinds.map((_, index) => kinds[(index + round) % kinds.length]!);
      const measured: Partial<Record<(typeof kinds)[number], Rate>> = {};
      const ceilings: Record<string, number> = {};
      // The ceiling is measured before, between and after the measurements, and each measurement is judged
      // against the mean of the windows on either side of it: fsync latency on this shared machine drifts
      // from second to second, and a ceiling taken further away would carry that drift into the ratio.
      const rawWindows: Rate[] = [await rawTransactions(raw, options.ceilingWindowMs)];
      for (const kind of order) {
        if (kind === 'sequential') measured.sequential = await shuttle(1, sequentialSteps);
        else if (kind === 'parallel')
          measured.parallel = await shuttle(options.parallelWorkflows, parallelSteps);
        else if (peer && kind === 'peer-sequential')
          measured['peer-sequential'] = await peerSteps(peer, 1, sequentialSteps);
        else if (peer && kind === 'peer-parallel')
          measured['peer-parallel'] = await peerSteps(peer, options.parallelWorkflows, parallelSteps);
        else continue;
        rawWindows.push(await rawTransactions(raw, options.ceilingWindowMs));
        ceilings[kind] = (rawWindows.at(-2)!.perSecond + rawWindows.at(-1)!.perSecond) / 2;
      }
      const rawOperations = rawWindows.reduce((sum, window) => sum + window.operations, 0);
      const rawRate = rate(
        rawOperations,
        rawWindows.reduce((sum, window) => sum + window.elapsedMs, 0),
      );
      const sequential = measured.sequential as EngineRun;
      const parallel = measured.parallel as EngineRun;
      const peerSequential = (measured['peer-sequential'] as PeerRun | undefined) ?? null;
      const peerParallel = (measured['peer-parallel'] as PeerRun | undefined) ?? null;
      const relative = (kind: string, value: Rate) => value.perSecond / ceilings[kind]!;
      const result: Round = {
        round,
        order: [...order],
        loadAverage: load(),
        rawWindows: rawWindows.map((window) => ({ ...window, perSecond: Math.round(window.perSecond) })),
        raw: { ...rawRate, perSecond: Math.round(rawRate.perSecond) },
        sequential: { ...sequential, perSecond: Math.round(sequential.perSecond) },
        parallel: { ...parallel, perSecond: Math.round(parallel.perSecond) },
        peerSequential: peerSequential && {
          ...peerSequential,
          perSecond: Math.round(peerSequential.perSecond),
        },
        peerParallel: peerParallel && { ...peerParallel, perSecond: Math.round(peerParallel.perSecond) },
        ceilings: Object.fromEntries(
          Object.entries(ceilings).map(([kind, value]) => [kind, Math.round(value)]),
        ),
        stepRatio: roundTo(relative('sequential', sequential), 3)!,
        parallelRatio: roundTo(relative('parallel', parallel), 3)!,
        peerStepRatio:
          peerSequential &&
          roundTo(relative('sequential', sequential) / relative('peer-sequential', peerSequential), 3),
        peerParallelRatio:
          peerParallel &&
          roundTo(relative('parallel', parallel) / relative('peer-parallel', peerParallel), 3),
        peerStepRatioPlain: peerSequential && roundTo(sequential.perSecond / peerSequential.perSecond, 3),
        peerParallelRatioPlain: peerParallel && roundTo(parallel.perSecond / peerParallel.perSecond, 3),
      };
      rounds.push(result);
      log(
        `round ${round + 1}/${options.rounds}: raw ${rawWindows.map((window) => Math.round(window.perSecond)).join(' ')}/s; ` +
          `shuttle ${result.sequential.perSecond} (×${result.stepRatio}) and ${result.parallel.perSecond} ` +
          `(×${result.parallelRatio}) steps/s; peer ${result.peerSequential?.perSecond ?? '—'} and ` +
          `${result.peerParallel?.perSecond ?? '—'} steps/s (shuttle ÷ peer ${result.peerStepRatio ?? '—'}, ` +
          `${result.peerParallelRatio ?? '—'})`,
      );
      sequentialSteps = clamp((sequential.perSecond * options.measureMs) / 1000, 100, 20_000);
      parallelSteps = clamp(
        (parallel.perSecond * options.measureMs) / 1000 / options.parallelWorkflows,
        5,
        2_000,
      );
    }
  } finally {
    await raw.end();
    await closeShuttle(shuttleUrl, shuttleEngine).catch((error: unknown) =>
      log(`closing the engine: ${error}`),
    );
    if (peer) {
      peer.send({ op: 'stop' });
      await Promise.race([peer.exited, sleep(10_000)]);
      await peer.stop();
    }
  }
  return { rounds, peer: peerInfo };
}

type PeerInfo = {
  name: string;
  package: string;
  version: string | null;
  launchMs?: number;
  error?: string;
};

function ratios(values: (number | null)[]): SampleSummary {
  return summarize(
    values.filter((value): value is number => value !== null),
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
    const median0 = (values: number[]) => roundTo(median(values));
    const peerSequential = rounds.flatMap((round) =>
      round.peerSequential ? [round.peerSequential.perSecond] : [],
    );
    const peerParallel = rounds.flatMap((round) =>
      round.peerParallel ? [round.peerParallel.perSecond] : [],
    );
    const spreads = {
      rawTransactionsPerSecond: summarize(rounds.map((round) => round.raw.perSecond)),
      engineStepsPerSecond: summarize(rounds.map((round) => round.sequential.perSecond)),
      parallelEngineStepsPerSecond: summarize(rounds.map((round) => round.parallel.perSecond)),
      stepRatio: ratios(rounds.map((round) => round.stepRatio)),
      parallelRatio: ratios(rounds.map((round) => round.parallelRatio)),
      peerStepsPerSecond: summarize(peerSequential),
      peerParallelStepsPerSecond: summarize(peerParallel),
      peerStepRatio: ratios(rounds.map((round) => round.peerStepRatio)),
      peerParallelRatio: ratios(rounds.map((round) => round.peerParallelRatio)),
      peerStepRatioPlain: ratios(rounds.map((round) => round.peerStepRatioPlain)),
      peerParallelRatioPlain: ratios(rounds.map((round) => round.peerParallelRatioPlain)),
      peerCeilingRatio: ratios(
        rounds.map((round) =>
          round.peerSequential
            ? roundTo(round.peerSequential.perSecond / round.ceilings['peer-sequential']!, 3)
            : null,
        ),
      ),
      peerParallelCeilingRatio: ratios(
        rounds.map((round) =>
          round.peerParallel
            ? roundTo(round.peerParallel.perSecond / round.ceilings['peer-parallel']!, 3)
            : null,
        ),
      ),
    };
    const figures: ServerFigures = {
      rawTransactionsPerSecond: median0(rounds.map((round) => round.raw.perSecond)),
      engineStepsPerSecond: median0(rounds.map((round) => round.sequential.perSecond)),
      stepRatio: spreads.stepRatio.p50,
      parallelEngineStepsPerSecond: median0(rounds.map((round) => round.parallel.perSecond)),
      parallelRatio: spreads.parallelRatio.p50,
      peerStepsPerSecond: median0(peerSequential),
      peerStepRatio: spreads.peerStepRatio.p50,
      peerParallelStepsPerSecond: median0(peerParallel),
      peerParallelRatio: spreads.peerParallelRatio.p50,
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
          ? rounds.reduce((sum, round) => sum + round.sequential.duplicates + round.parallel.duplicates, 0) +
            (handoff?.duplicates ?? 0)
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
      throughput: { spreads, rounds },
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
