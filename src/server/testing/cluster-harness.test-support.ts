/**
 * The cluster fault suite's machinery (Node only, root only; loaded by src/server/cluster.test.ts and
 * src/server/cluster.fault-soak.ts): three `shuttle worker` processes, each in its own network namespace
 * (cluster-network.test-support.ts), on a throwaway PostgreSQL server in the root namespace, sharing the
 * workflows of src/server/fixtures/cluster-workflows.ts while faults hit them — and the checks afterwards.
 *
 * A `Cluster` is the long-lived part (the server, the namespaces); `runSchedule` runs one `ClusterSchedule`
 * on it: a fresh database, three fresh workers, `orders` order workflows (each with a child), approvals sent
 * by the test at planned times, the planned faults, then — once everything is healed and every workflow
 * ended — the verification (`ScheduleReport.violations`, empty when all is well):
 *
 * - every workflow completed, with the result its input implies;
 * - the ledger matches the timelines: every ledger row (an activity body that ran) has an `activity-started`
 *   entry of that workflow, step and attempt; every `activity-completed` attempt, and every attempt that
 *   failed on purpose, has exactly one row; no attempt ran twice (the ledger's UNIQUE key, and the conflicts
 *   table the fixture fills when an insert meets it). Attempts started but interrupted may have a row or not;
 * - the ownership invariants (src/engine/invariants.ts) hold over every timeline and every refused write;
 * - every zombie (a worker stopped past the claim TTL in the middle of an activity that was its workflow's
 *   only pending operation) had a late write refused and recorded as a fence rejection;
 * - no worker exited on its own.
 *
 * Waits are on conditions observed in the store or the server (claims moved, locks held, workflows ended),
 * with budgets derived from the workers' claim TTL; the only fixed waits are the schedule's own timings.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import {
  checkOwnershipInvariants,
  type InvariantResult,
  type WorkflowEvidence,
} from '../../engine/invariants';
import { keys } from '../../engine/keys';
import type { Mutation } from '../../engine/mutations';
import {
  createEngine,
  entriesOf,
  isTerminal,
  type Engine,
  type FenceRejection,
  type TimelineEntry,
} from '../../engine';
import { isStorageError } from '../../storage/errors';
import { PostgresStorage } from '../../storage/postgres';
import { seededRandom } from '../../storage/seeded-random';
import { createClusterNetwork, type ClusterHost, type ClusterNetwork } from './cluster-network.test-support';
import {
  clusterOrder,
  clusterShip,
  expectedOrderResult,
  expectedShipResult,
  orderId,
  plannedFailure,
  shipId,
  type OrderInput,
} from '../fixtures/cluster-workflows';
import { startLocalPostgres, type LocalPostgres } from '../local-postgres';
import { PostgresLiveness } from '../postgres-liveness';
import { defaultWorkerTimings } from '../worker';

const bin = fileURLToPath(new URL('../../../bin/shuttle.mjs', import.meta.url));
const definitionFile = fileURLToPath(new URL('../fixtures/cluster-workflows.ts', import.meta.url));

// ---------------------------------------------------------------------------------------------------------
// Schedules

export type FaultKind = 'kill' | 'stop' | 'cut' | 'restart';
export const faultKinds: readonly FaultKind[] = ['kill', 'stop', 'cut', 'restart'];

export type PlannedFault = {
  kind: FaultKind;
  /**
   * Which worker it hits, ranked by the claims each holds when it starts (0: the one holding the most, 2: the
   * fewest) among those no other fault is hitting; ignored by `restart`, which hits the server under all.
   */
  target: number;
  /** Wait before it starts, in ms: after the previous fault ended, or after it started when that overlaps. */
  delayMs: number;
  /** `stop` and `cut` last this much longer than the claim TTL (+ grace) and the takeover of every claim. */
  extraMs: number;
  /** The next fault starts `delayMs` after this one started, while this one is still going on. */
  overlapNext: boolean;
  /** `restart`: PostgreSQL's stop mode (`immediate` is a crash). */
  mode: 'fast' | 'immediate';
  /**
   * `kill`: first wait (up to 15 s) until the worker holds an unfinished order whose `charge` completed — its
   * `ctx.all` with the child is then partly or wholly recorded, and its taker must replay it. A moment chosen by
   * state, not by time, for the run that shows a broken replay of `ctx.all` is caught.
   */
  afterCharge?: boolean;
};

export type ClusterSchedule = {
  seed: number;
  /** Order workflows (each starts one child: twice as many workflows in all). */
  orders: number;
  /** Order `n`'s input. */
  inputs: OrderInput[];
  /** When the test sends order `n` its `approve` signal, in ms after the orders were started. */
  approvalAtMs: number[];
  /** Wait after the orders were started before the first fault, in ms. */
  firstFaultAtMs: number;
  faults: PlannedFault[];
  /**
   * A deliberate defect in force in every worker (src/engine/mutations.ts), to show that the checks fail on
   * a broken engine (cluster.test.ts): the schedule must then report violations.
   */
  mutation?: Mutation;
};

export type ScheduleOptions = {
  seed: number;
  orders?: number;
  /** The faults: these kinds in this order (one fault each); default a random interleaving (see below). */
  kinds?: readonly FaultKind[];
  /** A deliberate defect in every worker (tests that show the checks can fail). */
  mutation?: Mutation;
  /** Every `kill` waits for its worker to hold an order whose charge completed (`PlannedFault.afterCharge`). */
  killAfterCharge?: boolean;
};

/**
 * The schedule of `seed`. Without `kinds`: the four kinds in a random order plus 0–3 more random faults,
 * random targets, random delays (0–4 s), random extra duration (0–3 s), and each fault overlapping the next
 * with probability 0.3.
 */
export function planSchedule(options: ScheduleOptions): ClusterSchedule {
  const random = seededRandom(options.seed);
  const between = (low: number, high: number) => Math.round(low + random() * (high - low));
  const orders = options.orders ?? 150;
  const prefix = `o${options.seed}-`;
  const inputs = Array.from({ length: orders }, (_, n): OrderInput => ({
    n,
    total: orders,
    prefix,
    sleepMs: between(300, 2_500),
    finalSleepMs: between(100, 1_200),
    activityMs: between(150, 400),
    failures: {
      reserve: random() < 0.3 ? between(1, 2) : 0,
      charge: random() < 0.25 ? 1 : 0,
      pack: random() < 0.25 ? 1 : 0,
    },
  }));
  let kinds: FaultKind[];
  const randomized = options.kinds === undefined;
  if (options.kinds) kinds = [...options.kinds];
  else {
    kinds = [...faultKinds];
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
    }
    const more = between(0, 3);
    for (let i = 0; i < more; i++) kinds.splice(between(0, kinds.length), 0, faultKinds[between(0, 3)]!);
  }
  const faults = kinds.map((kind, index): PlannedFault => ({
    kind,
    target: randomized ? between(0, 2) : 0,
    delayMs: randomized ? between(0, 4_000) : 0,
    extraMs: randomized ? between(0, 3_000) : 500,
    overlapNext: randomized && index < kinds.length - 1 && random() < 0.3,
    mode: random() < 0.5 ? 'fast' : 'immediate',
    ...(options.killAfterCharge && kind === 'kill' ? { afterCharge: true } : {}),
  }));
  // Approvals keep arriving while the faults happen, so workflows are mid-flight at every fault.
  const ttl = defaultWorkerTimings.claimTtlMs + 2 * defaultWorkerTimings.renewIntervalMs;
  const faultWindow = faults.reduce(
    (sum, fault) =>
      sum + fault.delayMs + (fault.kind === 'stop' || fault.kind === 'cut' ? ttl + fault.extraMs : 1_500),
    0,
  );
  const approvalWindow = Math.max(4_000, faultWindow);
  const approvalAtMs = inputs.map(() => between(0, approvalWindow));
  return {
    seed: options.seed,
    orders,
    inputs,
    approvalAtMs,
    firstFaultAtMs: between(1_500, 2_500),
    faults,
    ...(options.mutation ? { mutation: options.mutation } : {}),
  };
}

/** The schedule in words, for the log. */
export function describeSchedule(schedule: ClusterSchedule): string {
  const faults = schedule.faults
    .map(
      (fault) =>
        `+${fault.delayMs}ms ${fault.kind}${fault.kind === 'restart' ? `(${fault.mode})` : `(worker ${fault.target}${fault.kind === 'stop' || fault.kind === 'cut' ? `, +${fault.extraMs}ms` : ''})`}${fault.overlapNext ? ' ‖' : ''}`,
    )
    .join(', ');
  return `seed ${schedule.seed}: ${schedule.orders} orders (+${schedule.orders} children); first fault at ${schedule.firstFaultAtMs} ms; ${faults}`;
}

// ---------------------------------------------------------------------------------------------------------
// The cluster: a server and namespaces, shared by schedules

export type ClusterOptions = {
  /** Worker claim TTL and renew interval (the `shuttle worker` defaults unless given). */
  claimTtlMs?: number;
  renewIntervalMs?: number;
  /** Where progress lines go. Default: nowhere. */
  output?: (line: string) => void;
};

export type Cluster = {
  readonly server: LocalPostgres;
  readonly network: ClusterNetwork;
  readonly timings: { claimTtlMs: number; renewIntervalMs: number; graceMs: number };
  readonly output: (line: string) => void;
  /** Folder of the worker logs (a subfolder per schedule); removed by `stop` unless `keepLogs` was called. */
  readonly logDir: string;
  keepLogs(): void;
  /** Stops every worker left, the server and the namespaces. Idempotent. */
  stop(): Promise<void>;
};

/** Live worker processes of every cluster of this process (killed by the exit hook). */
const liveChildren = new Set<ChildProcess>();

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const claimTtlMs = options.claimTtlMs ?? defaultWorkerTimings.claimTtlMs;
  const renewIntervalMs = options.renewIntervalMs ?? defaultWorkerTimings.renewIntervalMs;
  const network = await createClusterNetwork(3);
  let server: LocalPostgres;
  try {
    server = await startLocalPostgres({
      listenAddresses: network.serverAddresses,
      trustedNetworks: [network.subnet],
      settings: {
        max_connections: '400',
        log_min_duration_statement: '1000',
        log_lock_waits: 'on',
        // A connection whose host is cut in the middle of its start-up holds its backend until this runs
        // out, and a fast shutdown (the `restart` fault) waits for that backend: at the default of 60 s a
        // restart that overlapped a cut took a minute (soak seed 20, 2026-12-04). Trust auth needs no time.
        authentication_timeout: '5s',
      },
    });
  } catch (error) {
    network.destroySync();
    throw error;
  }
  const onExit = () => {
    for (const child of liveChildren) child.kill('SIGKILL');
    network.destroySync();
  };
  process.on('exit', onExit);
  let stopped = false;
  let keep = false;
  const logDir = mkdtempSync(join(tmpdir(), 'shuttle-cluster-logs-'));
  return {
    server,
    network,
    logDir,
    keepLogs: () => (keep = true),
    timings: { claimTtlMs, renewIntervalMs, graceMs: 2 * renewIntervalMs },
    output: options.output ?? (() => undefined),
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off('exit', onExit);
      for (const child of liveChildren) child.kill('SIGKILL');
      await network.destroy();
      if (keep) cpSync(server.logFile, join(logDir, 'postgres.log'));
      await server.stop();
      if (!keep) rmSync(logDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Worker processes

type WorkerProcess = {
  slot: number;
  label: string;
  host: ClusterHost;
  child: ChildProcess;
  pid: number;
  engineId: string;
  exited: Promise<number | null>;
  hasExited: boolean;
  /** The last log lines (JSON), for failures. */
  log: string[];
  counts: { fencedOut: number; lostLocally: number; takenOver: number };
  /** Workflows it dropped on finding them taken over before any write of its own was refused (`claim lost`). */
  dropped: { workflowId: string; at: number }[];
  stopped: boolean;
};

/** Whether `worker` logged dropping the workflow of `activity` (`<workflow> <step>#<attempt>`) at or after `since`. */
function droppedAfter(
  worker: WorkerProcess | undefined,
  activity: string | null | undefined,
  since: number,
): boolean {
  const workflowId = activity?.split(' ')[0];
  return (
    workflowId !== undefined &&
    (worker?.dropped ?? []).some((entry) => entry.workflowId === workflowId && entry.at >= since)
  );
}

function spawnWorker(
  cluster: Cluster,
  host: ClusterHost,
  slot: number,
  label: string,
  database: string,
  logDir: string | null,
  mutation: Mutation | undefined,
): Promise<WorkerProcess> {
  const url = `postgres://postgres@${host.serverAddress}:${cluster.server.port}/${database}`;
  const child = spawn(
    'ip',
    [
      'netns',
      'exec',
      host.namespace,
      process.execPath,
      bin,
      'worker',
      '--database-url',
      url,
      '--workflows',
      definitionFile,
      '--label',
      label,
      '--claim-ttl-ms',
      String(cluster.timings.claimTtlMs),
      '--renew-interval-ms',
      String(cluster.timings.renewIntervalMs),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        SHUTTLE_CLUSTER_LEDGER_URL: url,
        SHUTTLE_CLUSTER_LABEL: label,
        ...(mutation ? { SHUTTLE_CLUSTER_MUTATION: mutation } : {}),
      },
    },
  );
  liveChildren.add(child);
  const log: string[] = [];
  let stderr = '';
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => {
      liveChildren.delete(child);
      resolve(code ?? (signal ? -1 : null));
    }),
  );
  return new Promise((resolve, reject) => {
    let buffer = '';
    let worker: WorkerProcess | null = null;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} did not start within 60 s: ${stderr}`));
    }, 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        log.push(line);
        if (log.length > 400) log.splice(0, log.length - 400);
        if (logDir) appendFileSync(join(logDir, `${label}.log`), `${line}\n`);
        let entry: {
          msg?: string;
          engineId?: string;
          epoch?: number;
          workflowId?: string;
          reason?: string;
          time?: string;
        };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          continue;
        }
        if (worker) {
          if (entry.msg === 'write fenced out') worker.counts.fencedOut++;
          else if (entry.msg === 'claim taken over') worker.counts.takenOver++;
          else if (entry.msg === 'claim lost') {
            if (entry.epoch === 0) worker.counts.lostLocally++;
            if (entry.workflowId && !entry.reason?.startsWith('deposed'))
              worker.dropped.push({ workflowId: entry.workflowId, at: Date.parse(entry.time ?? '') });
          }
        }
        if (entry.msg === 'worker started' && !worker) {
          clearTimeout(timer);
          worker = {
            slot,
            label,
            host,
            child,
            pid: child.pid!,
            engineId: entry.engineId!,
            exited,
            hasExited: false,
            log,
            counts: { fencedOut: 0, lostLocally: 0, takenOver: 0 },
            dropped: [],
            stopped: false,
          };
          const started = worker;
          void exited.then(() => (started.hasExited = true));
          resolve(worker);
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
      if (logDir) appendFileSync(join(logDir, `${label}.stderr`), chunk);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      if (!worker) reject(new Error(`${label} exited with ${code} before it started: ${stderr.trim()}`));
    });
  });
}

/**
 * Starts a killed worker's replacement as a process supervisor would: a worker refuses to start while the
 * store cannot be reached (a clear error and exit code 2, by design), so a replacement that meets PostgreSQL
 * restarting is started again, every 500 ms for up to 30 s. Any other failure to start fails the schedule.
 */
async function spawnReplacement(
  run: Run,
  host: ClusterHost,
  slot: number,
  label: string,
): Promise<WorkerProcess> {
  const deadline = Date.now() + 30_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnWorker(
        run.cluster,
        host,
        slot,
        label,
        run.database,
        run.logDir,
        run.schedule.mutation,
      );
    } catch (error) {
      const unreachable = error instanceof Error && /cannot reach PostgreSQL/.test(error.message);
      if (!unreachable || Date.now() > deadline) throw error;
      run.log(`${label} could not reach PostgreSQL (attempt ${attempt}); starting it again in 500 ms`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** SIGTERM (after SIGCONT if stopped); SIGKILL if it has not exited within 5 s. */
async function stopWorker(worker: WorkerProcess): Promise<void> {
  if (worker.hasExited) return;
  if (worker.stopped) worker.child.kill('SIGCONT');
  worker.child.kill('SIGTERM');
  const timer = setTimeout(() => worker.child.kill('SIGKILL'), 5_000);
  await worker.exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------------------
// Waiting

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Polls `check` until it returns a truthy value; throws after `budgetMs` naming `what`. */
async function until<T>(
  what: string,
  check: () => Promise<T | null | false | undefined>,
  budgetMs: number,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    let value: T | null | false | undefined = null;
    try {
      value = await check();
    } catch (error) {
      if (!isStorageError(error) && !isConnectionError(error)) throw error;
    }
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${budgetMs} ms`);
    await pause(everyMs);
  }
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  const message = error instanceof Error ? error.message : '';
  return (
    /^(57P0[1-3]|08\d\d\d|53300)$/.test(code) ||
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code) ||
    /Connection terminated|connection timeout|not queryable|the database system is (starting up|shutting down)/i.test(
      message,
    )
  );
}

/** Runs `call` until it does not fail for a storage or connection reason (a restart under it). */
async function persist<T>(what: string, call: () => Promise<T>, budgetMs = 60_000): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if ((!isStorageError(error) && !isConnectionError(error)) || Date.now() > deadline)
        throw new Error(`${what}: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      await pause(100);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Running a schedule

export type FaultRecord = {
  kind: FaultKind;
  label: string;
  engineId: string | null;
  startedAt: number;
  endedAt: number;
  /**
   * `stop`: the worker was stopped in the middle of an activity that is the only operation its workflow
   * waits on (so the activity's completion, when it continues, is a commit that storage must refuse).
   */
  inFlight?: boolean;
  /** `stop`: that activity, as `<workflow> <step>#<attempt>`. */
  inFlightActivity?: string;
  /** `stop`: when it was continued. `cut`: when the link was restored. */
  healedAt?: number;
  /** `cut`: when the server dropped its liveness lock (the cut was noticed), ms after the cut. */
  lockLostAfterMs?: number | null;
  /** `cut`, `restart`: when its lock (every live worker's) was held again, ms after healing. */
  lockBackAfterMs?: number | null;
  /** `restart`: how long the server was down, ms. */
  downMs?: number;
  mode?: 'fast' | 'immediate';
  /** Filled in by the verification: takeovers from this worker (or, for a restart, in the 15 s after it). */
  takeovers?: {
    count: number;
    firstAfterMs: number | null;
    lastAfterMs: number | null;
    reasons: Record<string, number>;
  };
  /**
   * `stop`: late writes of the zombie refused by storage (recorded fence rejections) after it was continued,
   * and writes it refused itself without a storage call (it had already dropped the claim).
   */
  rejections?: number;
  refusedLocally?: number;
  /**
   * `stop`: the zombie, continued, dropped the workflow of its in-flight activity itself (found it taken
   * over: its session lapsed, a wake guard, a claim it no longer held) before writing anything for it.
   */
  droppedInFlight?: boolean;
  /** `stop`: the worker's count of writes it refused itself, when it was continued. */
  refusedLocallyBefore?: number;
};

export type ScheduleReport = {
  seed: number;
  ok: boolean;
  violations: string[];
  invariants: InvariantResult[];
  faults: FaultRecord[];
  figures: {
    workflows: number;
    timelineEntries: number;
    ledgerRows: number;
    attemptsStarted: number;
    startedWithoutRow: number;
    rejections: number;
    takeovers: number;
    /**
     * The `stop` faults' zombies (stopped in the middle of their workflow's only pending activity), by how
     * each let its workflow go once continued: a late write refused by storage (`fenced`), or dropped by the
     * zombie itself before writing, having learnt it lost it (`selfDropped`: a notice, a lapsed session, a
     * wake guard, a load at another epoch).
     */
    zombies: { fenced: number; selfDropped: number };
    /** CPU seconds the workers still running at the end used (user + system). */
    workerCpuSeconds: number;
    /** The longest gap between two renewals of a worker's session outside its own stop and cut faults, ms. */
    maxRenewalGapMs: number;
    /** Which worker, and when (ms after the schedule began). */
    maxRenewalGapOf: string | null;
    maxRenewalGapAtMs: number | null;
    durationMs: number;
  };
};

type Run = {
  cluster: Cluster;
  schedule: ClusterSchedule;
  database: string;
  rootUrl: string;
  sql: pg.Pool;
  liveness: PostgresLiveness;
  observer: Engine;
  workers: (WorkerProcess | null)[];
  /** Every worker process of the run, replaced ones included. */
  everyWorker: WorkerProcess[];
  /** Slots hit by a fault now (a killed worker's slot: until its replacement has joined). */
  busy: Set<number>;
  /** Per slot, the start of the replacement of a killed worker (awaited before the checks). */
  joining: Map<number, Promise<void>>;
  /** How many worker processes the run has started (names replacements: host-a-3, …). */
  spawned: number;
  records: FaultRecord[];
  log: (line: string) => void;
  logDir: string;
  /** The schedule is over (background loops stop). */
  over: boolean;
  /** Per engine: every `renewedAt` of its session seen (polled every 250 ms). */
  renewals: Map<string, Set<number>>;
};

const labels = ['host-a', 'host-b', 'host-c'];

/** Runs one schedule on `cluster` and verifies it (the report's `violations` is empty when all held). */
export async function runSchedule(cluster: Cluster, schedule: ClusterSchedule): Promise<ScheduleReport> {
  const began = Date.now();
  const log = (line: string) =>
    cluster.output(`[seed ${schedule.seed} +${((Date.now() - began) / 1000).toFixed(1)}s] ${line}`);
  const database = `cluster_${schedule.seed}_${randomBytes(3).toString('hex')}`;
  const logDir = join(cluster.logDir, database);
  mkdirSync(logDir, { recursive: true });
  const serverUrl = cluster.server.url;
  const rootUrl = withDatabase(serverUrl, database);
  await runSql(serverUrl, `create database ${database}`);
  await runSql(
    rootUrl,
    `create table cluster_ledger (workflow_id text not null, step text not null, attempt int not null, pid int not null,
       label text, at timestamptz not null default clock_timestamp(), unique (workflow_id, step, attempt));
     create table cluster_ledger_conflicts (workflow_id text not null, step text not null, attempt int not null,
       pid int not null, label text, at timestamptz not null default clock_timestamp());`,
  );
  const sql = new pg.Pool({ connectionString: rootUrl, max: 4 });
  sql.on('error', () => undefined);
  const liveness = new PostgresLiveness({ connectionString: rootUrl });
  let observerStorage: PostgresStorage | null = null;
  let observer: Engine | null = null;
  let monitor: SessionMonitor | null = null;
  let current: Run | null = null;
  const workers: (WorkerProcess | null)[] = [null, null, null];
  const everyWorker: WorkerProcess[] = [];
  try {
    log(describeSchedule(schedule));
    const started = await Promise.all(
      cluster.network.hosts.map((host, slot) =>
        spawnWorker(cluster, host, slot, labels[slot]!, database, logDir, schedule.mutation),
      ),
    );
    started.forEach((worker, slot) => {
      workers[slot] = worker;
      everyWorker.push(worker);
    });
    log(
      `workers up: ${started.map((worker) => `${worker.label} pid ${worker.pid} engine ${worker.engineId.slice(0, 8)}`).join(', ')}`,
    );
    observerStorage = await PostgresStorage.open({ connectionString: rootUrl, maxConnections: 6 });
    observer = await createEngine({
      storage: observerStorage,
      workflows: [clusterOrder, clusterShip],
      ownership: 'workflow-lease',
      workflowClaimTtlMs: cluster.timings.claimTtlMs,
      workflowClaimRenewIntervalMs: cluster.timings.renewIntervalMs,
      claimWorkflows: false,
      onWarning: (warning) => {
        if (process.env.SHUTTLE_CLUSTER_DEBUG) log(`observer: ${warning.message}`);
      },
    });
    const run: Run = {
      cluster,
      schedule,
      database,
      rootUrl,
      sql,
      liveness,
      observer,
      workers,
      everyWorker,
      busy: new Set(),
      joining: new Map(),
      spawned: 3,
      records: [],
      log,
      logDir,
      renewals: new Map(),
      over: false,
    };
    current = run;
    const engine = observer;
    for (let start = 0; start < schedule.orders; start += 50)
      await Promise.all(
        schedule.inputs
          .slice(start, start + 50)
          .map((input) => engine.start(clusterOrder, input, { id: orderId(input.prefix, input.n) })),
      );
    monitor = watchSessions(observerStorage, run);
    const ordersAt = Date.now();
    log(`${schedule.orders} orders started`);
    const approvals = sendApprovals(run, ordersAt);
    approvals.catch(() => undefined); // awaited below; a fault that throws first must not leave it unhandled
    await pause(ordersAt + schedule.firstFaultAtMs - Date.now());
    await runFaults(run);
    await approvals;
    log('faults over, approvals sent; waiting for every workflow to end');
    const { claimTtlMs, graceMs } = cluster.timings;
    await until(
      'every workflow ended',
      async () => {
        const open = await engine.list({ status: ['pending', 'running', 'suspended'], limit: 1 });
        if (open.items.length > 0) return false;
        const all = await countWorkflows(engine);
        return all === 2 * schedule.orders;
      },
      90_000 + 4 * (claimTtlMs + graceMs),
      500,
    ).catch(async (error: unknown) => {
      log(`still open: ${await describeOpen(engine)}`);
      throw error;
    });
    await Promise.all(run.joining.values()); // a replacement that did not start fails the schedule
    log('every workflow ended; verifying');
    const report = await verify(run, began);
    // CPU time of the workers still running (user + system, from /proc): how much of the wall time was work.
    for (const worker of everyWorker)
      if (!worker.hasExited) {
        const fields = readFileSync(`/proc/${worker.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
        report.figures.workerCpuSeconds += (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
      }
    for (const worker of everyWorker) if (!worker.hasExited) await stopWorker(worker);
    return report;
  } catch (error) {
    cluster.keepLogs();
    log(`worker logs kept in ${logDir}`);
    for (const worker of everyWorker)
      if (!worker.hasExited)
        log(`${worker.label} (pid ${worker.pid}) last log lines:\n  ${worker.log.slice(-15).join('\n  ')}`);
    throw error;
  } finally {
    if (current) current.over = true;
    monitor?.stop();
    if (current) await Promise.allSettled(current.joining.values());
    for (const worker of everyWorker) if (!worker.hasExited) await stopWorker(worker);
    // A schedule that failed in the middle of a cut leaves the link down: the next one needs it.
    for (const host of cluster.network.hosts)
      if (cluster.network.isCut(host.index))
        await cluster.network.restore(host.index).catch((error: unknown) => log(String(error)));
    await observer?.shutdown().catch(() => undefined);
    await observerStorage?.close().catch(() => undefined);
    await liveness.close();
    await sql.end().catch(() => undefined);
    await runSql(serverUrl, `drop database if exists ${database} with (force)`).catch(() => undefined);
  }
}

async function countWorkflows(engine: Engine): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const page = await engine.list({ limit: 1000, ...(cursor ? { cursor } : {}) });
    count += page.items.length;
    cursor = page.nextCursor;
  } while (cursor);
  return count;
}

async function describeOpen(engine: Engine): Promise<string> {
  try {
    const open = await engine.list({ status: ['pending', 'running', 'suspended'], limit: 10 });
    return (
      open.items
        .map(
          (item) =>
            `${item.workflowId} ${item.status} on ${item.owner?.engineId.slice(0, 8) ?? 'nobody'} epoch ${item.epoch} waiting on ${item.waitingOn}`,
        )
        .join('; ') || 'none'
    );
  } catch (error) {
    return `(could not list: ${String(error)})`;
  }
}

/** Sends each order its `approve` signal at its planned time (retrying through a restart). */
async function sendApprovals(run: Run, ordersAt: number): Promise<void> {
  const order = run.schedule.inputs
    .map((input, index) => ({ input, at: ordersAt + run.schedule.approvalAtMs[index]! }))
    .sort((a, b) => a.at - b.at);
  for (const { input, at } of order) {
    await pause(at - Date.now());
    if (run.over) return;
    await persist(`approve ${orderId(input.prefix, input.n)}`, () =>
      run.observer.signal(orderId(input.prefix, input.n), 'approve', { by: 'the test' }),
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// Sessions: how regularly each healthy worker renews (a gap longer than TTL + grace lets others take over
// from a live worker)

type SessionMonitor = { stop(): void };

function watchSessions(storage: PostgresStorage, run: Run): SessionMonitor {
  let stopped = false;
  const poll = async () => {
    while (!stopped) {
      try {
        for (const { value } of await storage.scan(keys.sessionsPrefix)) {
          const session = JSON.parse(value) as { engineId: string; renewedAt: number };
          const seen = run.renewals.get(session.engineId) ?? new Set<number>();
          seen.add(session.renewedAt);
          run.renewals.set(session.engineId, seen);
        }
      } catch {
        // a restart: try again
      }
      await pause(250);
    }
  };
  void poll();
  return { stop: () => (stopped = true) };
}

/**
 * The longest time between two renewals of a worker's session, outside the faults that stopped or cut that
 * worker (and the TTL after them); null when no two renewals were seen.
 */
function longestRenewalGap(run: Run): { engineId: string; from: number; to: number } | null {
  let longest: { engineId: string; from: number; to: number } | null = null;
  for (const [engineId, seen] of run.renewals) {
    const silenced = run.records
      .filter((record) => record.engineId === engineId && (record.kind === 'stop' || record.kind === 'cut'))
      .map((record) => ({ from: record.startedAt, to: (record.healedAt ?? record.endedAt) + 2_000 }));
    const times = [...seen].sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) {
      const gap = { engineId, from: times[i - 1]!, to: times[i]! };
      if (silenced.some((interval) => gap.from < interval.to && gap.to > interval.from)) continue;
      if (!longest || gap.to - gap.from > longest.to - longest.from) longest = gap;
    }
  }
  return longest;
}

// ---------------------------------------------------------------------------------------------------------
// Faults

/**
 * Runs the schedule's faults. When one fails, the faults overlapping it still run to their end (each is
 * bounded by its budgets) before the failure is thrown, so that none is left acting on the server, a link or
 * a worker while the schedule is torn down (or the next one runs).
 */
async function runFaults(run: Run): Promise<void> {
  const going: Promise<void>[] = [];
  const settle = async () => {
    const failed = (await Promise.allSettled(going.splice(0))).find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  };
  for (const fault of run.schedule.faults) {
    await pause(fault.delayMs);
    const slot = await pickSlot(run, fault);
    const injected = injectFault(run, fault, slot).finally(() => {
      if (slot === null) return;
      const release = () => run.busy.delete(slot);
      const joining = run.joining.get(slot);
      if (joining) joining.then(release, release);
      else release();
    });
    injected.catch(() => undefined); // settled below; a failure meanwhile must not count as unhandled
    going.push(injected);
    if (!fault.overlapNext) await settle();
  }
  await settle();
}

/** The fault's slot, or another free one; at least one worker stays unfaulted (it must take over). */
async function pickSlot(run: Run, fault: PlannedFault): Promise<number | null> {
  if (fault.kind === 'restart') return null;
  for (;;) {
    const free = [0, 1, 2].filter((slot) => !run.busy.has(slot));
    if (free.length >= 2) {
      const held = new Map<string, number>();
      try {
        for (const claim of await run.observer.claims())
          if (claim.holder) held.set(claim.holder.engineId, (held.get(claim.holder.engineId) ?? 0) + 1);
      } catch {
        // unreadable now (a restart): rank them all equal
      }
      const ranked = [...free].sort(
        (a, b) =>
          (held.get(run.workers[b]!.engineId) ?? 0) - (held.get(run.workers[a]!.engineId) ?? 0) || a - b,
      );
      const slot = ranked[Math.min(fault.target, ranked.length - 1)]!;
      run.busy.add(slot);
      run.log(
        `${fault.kind} hits ${run.workers[slot]!.label} (claims held: ${ranked.map((candidate) => `${run.workers[candidate]!.label} ${held.get(run.workers[candidate]!.engineId) ?? 0}`).join(', ')})`,
      );
      return slot;
    }
    await pause(100);
  }
}

function claimsOf(run: Run, engineId: string): Promise<number> {
  return run.observer
    .claims()
    .then((claims) => claims.filter((claim) => claim.holder?.engineId === engineId).length);
}

/** The longest a healthy worker may take to move a silent worker's claims: TTL + grace + a few passes. */
function takeoverBudget(run: Run): number {
  const { claimTtlMs, graceMs, renewIntervalMs } = run.cluster.timings;
  return claimTtlMs + graceMs + 10 * renewIntervalMs + 15_000;
}

async function injectFault(run: Run, fault: PlannedFault, slot: number | null): Promise<void> {
  const { claimTtlMs, graceMs } = run.cluster.timings;
  if (fault.kind === 'restart') {
    const startedAt = Date.now();
    run.log(`restart PostgreSQL (${fault.mode})`);
    await run.cluster.server.restart({ mode: fault.mode });
    const upAt = Date.now();
    const live = run.workers.filter(
      (worker): worker is WorkerProcess =>
        !!worker && !worker.hasExited && !worker.stopped && !run.cluster.network.isCut(worker.slot),
    );
    const back = await until(
      'every running worker holds its liveness lock again',
      async () => {
        const held = await run.liveness.liveEngineIds();
        return held && live.every((worker) => held.has(worker.engineId)) && Date.now();
      },
      takeoverBudget(run),
      50,
    ).catch(() => null);
    run.records.push({
      kind: 'restart',
      label: 'postgres',
      engineId: null,
      startedAt,
      endedAt: Date.now(),
      downMs: upAt - startedAt,
      lockBackAfterMs: back === null ? null : back - upAt,
      mode: fault.mode,
    });
    run.log(
      `PostgreSQL back after ${upAt - startedAt} ms; locks held again ${back === null ? 'not within the budget' : `${back - upAt} ms later`}`,
    );
    return;
  }
  const worker = run.workers[slot!]!;
  const engineId = worker.engineId;
  if (fault.kind === 'kill') {
    if (fault.afterCharge) {
      const order = await until(
        `${worker.label} holds an unfinished order whose charge completed`,
        async () => {
          const held = (await run.observer.claims())
            .filter((claim) => claim.holder?.engineId === engineId && !claim.workflowId.includes('.'))
            .map((claim) => claim.workflowId);
          for (const id of held) {
            const timeline = await run.observer.timeline(id);
            const charged = timeline.some(
              (entry) => entry.kind === 'activity-completed' && entry.detail.name === 'charge',
            );
            if (charged && !timeline.some((entry) => isTerminal(entry.kind))) return id;
          }
          return null;
        },
        15_000,
        50,
      ).catch(() => null);
      run.log(
        order
          ? `${worker.label} holds ${order}, its charge recorded`
          : `no order of ${worker.label} was charged`,
      );
    }
    const startedAt = Date.now();
    worker.child.kill('SIGKILL');
    await worker.exited;
    run.log(`kill -9 ${worker.label} (pid ${worker.pid})`);
    await until(
      `${worker.label}'s claims taken over after kill -9`,
      async () => (await claimsOf(run, engineId)) === 0,
      takeoverBudget(run),
    );
    run.log(`${worker.label}'s claims moved after ${Date.now() - startedAt} ms; starting its replacement`);
    run.records.push({ kind: 'kill', label: worker.label, engineId, startedAt, endedAt: Date.now() });
    // The replacement starts while the schedule goes on; its slot stays busy until it has joined.
    const label = `${labels[slot!]}-${run.spawned++}`;
    const joined = spawnReplacement(run, worker.host, slot!, label).then((replacement) => {
      run.workers[slot!] = replacement;
      run.everyWorker.push(replacement);
      run.log(`${label} (pid ${replacement.pid}) joined`);
    });
    joined.catch(() => undefined); // awaited before the checks
    run.joining.set(slot!, joined);
    return;
  }
  if (fault.kind === 'stop') {
    // Stop it while an activity body runs (a ledger row of its process younger than 100 ms; bodies last
    // ≥ 150 ms), so that it has a late write to make when it continues. Not 'charge': it runs beside the
    // child (ctx.all), so its completion is a wake, which the engine's wake guard checks against the stored
    // holder first — a zombie may then drop it without writing at all, which is right but proves nothing.
    const inFlightActivity = await until(
      `${worker.label} runs an activity`,
      async () => {
        const { rows } = await run.sql.query<{ workflow_id: string; step: string; attempt: number }>(
          `select workflow_id, step, attempt from cluster_ledger
            where pid = $1 and step <> 'charge' and at > clock_timestamp() - interval '100 milliseconds' limit 1`,
          [worker.pid],
        );
        const row = rows[0];
        return row ? `${row.workflow_id} ${row.step}#${row.attempt}` : null;
      },
      5_000,
      10,
    ).catch(() => null);
    const inFlight = inFlightActivity !== null;
    const startedAt = Date.now();
    worker.child.kill('SIGSTOP');
    worker.stopped = true;
    run.log(
      `SIGSTOP ${worker.label} (pid ${worker.pid})${inFlight ? `, in the middle of ${inFlightActivity}` : ', no activity in flight'}`,
    );
    await until(
      `${worker.label}'s claims taken over while it is stopped`,
      async () => Date.now() - startedAt >= claimTtlMs + graceMs && (await claimsOf(run, engineId)) === 0,
      takeoverBudget(run),
    );
    await pause(fault.extraMs);
    const healedAt = Date.now();
    const refusedLocallyBefore = worker.counts.lostLocally;
    worker.child.kill('SIGCONT');
    worker.stopped = false;
    run.log(`SIGCONT ${worker.label} after ${healedAt - startedAt} ms`);
    if (inFlight)
      await until(
        `${worker.label}, continued, has a refused write recorded or dropped ${inFlightActivity} itself`,
        async () =>
          droppedAfter(worker, inFlightActivity, healedAt) ||
          (await run.observer.fenceRejections()).some(
            (rejection) => rejection.engineId === engineId && rejection.at >= healedAt,
          ),
        5_000 + 2 * claimTtlMs,
      ).catch(() => run.log(`${worker.label}: no refused write recorded after it continued`));
    run.records.push({
      refusedLocallyBefore,
      kind: 'stop',
      label: worker.label,
      engineId,
      startedAt,
      endedAt: Date.now(),
      healedAt,
      inFlight,
      ...(inFlightActivity !== null ? { inFlightActivity } : {}),
    });
    return;
  }
  // cut
  const startedAt = Date.now();
  await run.cluster.network.cut(worker.host.index);
  run.log(`cut ${worker.label}'s link (${worker.host.namespaceVeth} down)`);
  let lockLostAt: number | null = null;
  await until(
    `${worker.label}'s claims taken over while its link is cut`,
    async () => {
      if (lockLostAt === null) {
        const held = await run.liveness.liveEngineIds();
        if (held && !held.has(engineId)) lockLostAt = Date.now();
      }
      return Date.now() - startedAt >= claimTtlMs + graceMs && (await claimsOf(run, engineId)) === 0;
    },
    takeoverBudget(run),
  );
  await pause(fault.extraMs);
  await run.cluster.network.restore(worker.host.index);
  const healedAt = Date.now();
  run.log(
    `restored ${worker.label}'s link after ${healedAt - startedAt} ms (PostgreSQL dropped its lock ${lockLostAt === null ? 'never' : `${lockLostAt - startedAt} ms after the cut`})`,
  );
  const back = await until(
    `${worker.label} holds its liveness lock again`,
    async () => ((await run.liveness.liveEngineIds())?.has(engineId) ? Date.now() : null),
    takeoverBudget(run),
    50,
  ).catch(() => null);
  if (worker.hasExited) throw new Error(`${worker.label} exited while its link was cut`);
  run.log(
    `${worker.label} holds its lock again ${back === null ? 'not within the budget' : `${back - healedAt} ms after the link came back`}`,
  );
  run.records.push({
    kind: 'cut',
    label: worker.label,
    engineId,
    startedAt,
    endedAt: Date.now(),
    healedAt,
    lockLostAfterMs: lockLostAt === null ? null : lockLostAt - startedAt,
    lockBackAfterMs: back === null ? null : back - healedAt,
  });
}

// ---------------------------------------------------------------------------------------------------------
// Verification

type LedgerRow = { workflow_id: string; step: string; attempt: number; pid: number; label: string | null };

async function readAll<T>(
  what: string,
  ids: readonly string[],
  read: (id: string) => Promise<T>,
): Promise<Map<string, T>> {
  const out = new Map<string, T>();
  for (let start = 0; start < ids.length; start += 25) {
    const chunk = ids.slice(start, start + 25);
    const values = await Promise.all(chunk.map((id) => persist(`${what} ${id}`, () => read(id))));
    chunk.forEach((id, index) => out.set(id, values[index]!));
  }
  return out;
}

async function verify(run: Run, began: number): Promise<ScheduleReport> {
  const { observer, schedule } = run;
  const violations: string[] = [];
  const orderIds = schedule.inputs.map((input) => orderId(input.prefix, input.n));
  const shipIds = schedule.inputs.map((input) => shipId(input.prefix, input.n));
  const ids = [...orderIds, ...shipIds];
  const descriptions = await readAll('describe', ids, (id) => observer.describe(id));
  const timelines = await readAll('timeline', ids, (id) => observer.timeline(id));
  const rejections: FenceRejection[] = await persist('fence rejections', () => observer.fenceRejections());

  // Every workflow completed with its right result.
  schedule.inputs.forEach((input, n) => {
    const order = descriptions.get(orderIds[n]!)!;
    const ship = descriptions.get(shipIds[n]!)!;
    if (order.status !== 'completed')
      violations.push(`${orderIds[n]} ended ${order.status}${order.error ? `: ${order.error.message}` : ''}`);
    else if (!isDeepStrictEqual(order.result, expectedOrderResult(input)))
      violations.push(
        `${orderIds[n]} returned ${JSON.stringify(order.result)}, expected ${JSON.stringify(expectedOrderResult(input))}`,
      );
    if (ship.status !== 'completed')
      violations.push(`${shipIds[n]} ended ${ship.status}${ship.error ? `: ${ship.error.message}` : ''}`);
    else if (!isDeepStrictEqual(ship.result, expectedShipResult(n)))
      violations.push(
        `${shipIds[n]} returned ${JSON.stringify(ship.result)}, expected ${JSON.stringify(expectedShipResult(n))}`,
      );
  });

  // The ledger against the timelines.
  const { rows: ledger } = await run.sql.query<LedgerRow>(
    'select workflow_id, step, attempt, pid, label from cluster_ledger',
  );
  const { rows: conflicts } = await run.sql.query<LedgerRow>(
    'select workflow_id, step, attempt, pid, label from cluster_ledger_conflicts',
  );
  for (const conflict of conflicts)
    violations.push(
      `${conflict.workflow_id}: attempt ${conflict.attempt} of '${conflict.step}' ran twice (second run by ${conflict.label} pid ${conflict.pid})`,
    );
  const rows = new Map<string, LedgerRow[]>();
  for (const row of ledger) {
    const key = `${row.workflow_id}|${row.step}|${row.attempt}`;
    rows.set(key, [...(rows.get(key) ?? []), row]);
  }
  const started = new Set<string>();
  let startedWithoutRow = 0;
  for (const [id, timeline] of timelines) {
    for (const entry of entriesOf(timeline, 'activity-started')) {
      const key = `${id}|${entry.detail.name}|${entry.detail.attempt}`;
      started.add(key);
      if (!rows.has(key)) startedWithoutRow++;
    }
    for (const entry of entriesOf(timeline, 'activity-completed')) {
      const count = rows.get(`${id}|${entry.detail.name}|${entry.detail.attempt}`)?.length ?? 0;
      if (count !== 1)
        violations.push(
          `${id}: '${entry.detail.name}' attempt ${entry.detail.attempt} completed but the ledger has ${count} rows for it`,
        );
    }
    for (const entry of entriesOf(timeline, 'activity-failed')) {
      if (entry.detail.error.name !== plannedFailure) continue;
      const count = rows.get(`${id}|${entry.detail.name}|${entry.detail.attempt}`)?.length ?? 0;
      if (count !== 1)
        violations.push(
          `${id}: '${entry.detail.name}' attempt ${entry.detail.attempt} failed on purpose but the ledger has ${count} rows for it`,
        );
    }
  }
  for (const [key, list] of rows) {
    if (list.length > 1) violations.push(`ledger: ${key} has ${list.length} rows`);
    if (!started.has(key)) {
      const [workflowId, step, attempt] = key.split('|');
      violations.push(
        `${workflowId}: '${step}' attempt ${attempt} ran (by ${list[0]!.label} pid ${list[0]!.pid}) but no timeline records it started`,
      );
    }
  }

  // The ownership invariants over every timeline and every refused write.
  const evidence: WorkflowEvidence[] = ids.map((id) => ({
    workflowId: id,
    status: descriptions.get(id)!.status,
    timeline: timelines.get(id)!,
  }));
  const invariants = checkOwnershipInvariants(evidence, rejections);
  for (const invariant of invariants)
    if (!invariant.ok)
      violations.push(...invariant.violations.map((violation) => `${invariant.title}: ${violation}`));

  // Only a holder that was gone is taken over: killed, stopped, cut off, or under a database restart (then
  // every worker's liveness lock drops), within the time its claims take to expire after the fault healed.
  const { claimTtlMs, graceMs } = run.cluster.timings;
  const expiry = claimTtlMs + graceMs + 5_000; // and slack for the passes that notice it
  for (const [id, timeline] of timelines)
    for (const entry of entriesOf(timeline, 'claim-taken-over')) {
      const from = entry.detail.fromEngineId;
      if (from === null || from === entry.detail.toEngineId) continue;
      const justified = run.records.some(
        (record) =>
          (record.kind === 'restart' || record.engineId === from) &&
          entry.at >= record.startedAt - 1_000 &&
          (record.kind === 'kill' || entry.at <= (record.healedAt ?? record.endedAt) + expiry),
      );
      if (!justified)
        violations.push(
          `${id}: ${entry.detail.toEngineId} took it over from ${from} (reason '${entry.detail.reason}') at +${((entry.at - began) / 1000).toFixed(1)}s, while no fault hit ${from}: a live holder was taken over`,
        );
    }

  // Faults: takeovers, and the zombies' refused writes.
  const takeovers = [...timelines.values()].flatMap((timeline) => entriesOf(timeline, 'claim-taken-over'));
  const summarize = (list: Extract<TimelineEntry, { kind: 'claim-taken-over' }>[], from: number) => {
    const reasons: Record<string, number> = {};
    for (const entry of list) reasons[entry.detail.reason] = (reasons[entry.detail.reason] ?? 0) + 1;
    const times = list.map((entry) => entry.at - from).sort((a, b) => a - b);
    return { count: list.length, firstAfterMs: times[0] ?? null, lastAfterMs: times.at(-1) ?? null, reasons };
  };
  for (const record of run.records) {
    if (record.kind === 'restart') {
      record.takeovers = summarize(
        takeovers.filter((entry) => entry.at >= record.startedAt && entry.at <= record.endedAt + 15_000),
        record.startedAt,
      );
      continue;
    }
    record.takeovers = summarize(
      takeovers.filter(
        (entry) => entry.detail.fromEngineId === record.engineId && entry.at >= record.startedAt,
      ),
      record.startedAt,
    );
    if (record.kind === 'stop') {
      const worker = run.everyWorker.find((candidate) => candidate.engineId === record.engineId);
      record.rejections = rejections.filter(
        (rejection) => rejection.engineId === record.engineId && rejection.at >= record.healedAt!,
      ).length;
      record.refusedLocally = (worker?.counts.lostLocally ?? 0) - (record.refusedLocallyBefore ?? 0);
      record.droppedInFlight = droppedAfter(worker, record.inFlightActivity, record.healedAt!);
      // Continued, a zombie either writes for its in-flight activity and is refused (recorded), or finds
      // the workflow taken over first and drops it without writing; the invariants above check that nothing
      // it wrote landed either way. Neither is a violation; neither happening is.
      if (record.inFlight && record.rejections === 0 && !record.droppedInFlight)
        violations.push(
          `${record.label} (engine ${record.engineId}) was stopped in the middle of ${record.inFlightActivity}, but after it continued no late write of it was refused and recorded, nor did it drop that workflow itself`,
        );
    }
  }
  for (const worker of run.everyWorker)
    if (
      worker.hasExited &&
      !run.records.some((record) => record.kind === 'kill' && record.engineId === worker.engineId)
    )
      violations.push(`${worker.label} (pid ${worker.pid}) exited on its own`);

  const gap = longestRenewalGap(run);
  if (process.env.SHUTTLE_CLUSTER_DEBUG) {
    const name = (engineId: string | null) =>
      run.everyWorker.find((worker) => worker.engineId === engineId)?.label ??
      engineId?.slice(0, 8) ??
      'none';
    const matrix = new Map<string, number[]>();
    for (const entry of takeovers) {
      const key = `${name(entry.detail.fromEngineId)}→${name(entry.detail.toEngineId)} ${entry.detail.reason}`;
      matrix.set(key, [...(matrix.get(key) ?? []), entry.at - began]);
    }
    const odd = [...timelines].find(([, timeline]) =>
      entriesOf(timeline, 'claim-taken-over').some(
        (entry) => entry.detail.reason === 'orphaned' || entry.detail.reason === 'expired',
      ),
    );
    if (odd)
      run.log(
        `timeline of ${odd[0]}:\n${odd[1].map((entry) => `  #${entry.seq} ${((entry.at - began) / 1000).toFixed(3)} ${name(entry.engineId)} e${entry.epoch} ${entry.kind} ${JSON.stringify(entry.detail)}`).join('\n')}`,
      );
    for (const [key, times] of matrix)
      run.log(
        `takeovers ${key}: ${times.length} at ${times
          .slice(0, 12)
          .map((t) => (t / 1000).toFixed(1))
          .join(' ')}`,
      );
    const byEngine = new Map<string, number[]>();
    for (const rejection of rejections)
      byEngine.set(name(rejection.engineId), [
        ...(byEngine.get(name(rejection.engineId)) ?? []),
        rejection.at - began,
      ]);
    for (const [key, times] of byEngine)
      run.log(
        `rejections of ${key}: ${times.length} at ${times
          .slice(0, 12)
          .map((t) => (t / 1000).toFixed(1))
          .join(' ')} — ${rejections.find((r) => name(r.engineId) === key)?.what}`,
      );
  }
  const report: ScheduleReport = {
    seed: schedule.seed,
    ok: violations.length === 0,
    violations,
    invariants,
    faults: run.records,
    figures: {
      workflows: ids.length,
      timelineEntries: [...timelines.values()].reduce((sum, timeline) => sum + timeline.length, 0),
      ledgerRows: ledger.length,
      attemptsStarted: started.size,
      startedWithoutRow,
      rejections: rejections.length,
      takeovers: takeovers.length,
      zombies: {
        fenced: run.records.filter(
          (record) => record.kind === 'stop' && record.inFlight && record.rejections! > 0,
        ).length,
        selfDropped: run.records.filter(
          (record) =>
            record.kind === 'stop' && record.inFlight && record.rejections === 0 && record.droppedInFlight,
        ).length,
      },
      workerCpuSeconds: 0,
      maxRenewalGapMs: gap ? gap.to - gap.from : 0,
      maxRenewalGapOf: gap
        ? (run.everyWorker.find((worker) => worker.engineId === gap.engineId)?.label ?? null)
        : null,
      maxRenewalGapAtMs: gap ? gap.from - began : null,
      durationMs: Date.now() - began,
    },
  };
  run.log(describeReport(report));
  if (!report.ok) {
    run.cluster.keepLogs();
    // The evidence of the first workflows named by a violation, for whoever looks into it.
    const named = [
      ...new Set(
        violations.flatMap((violation) =>
          ids.filter((id) => violation.includes(`${id}:`) || violation.startsWith(id)),
        ),
      ),
    ].slice(0, 20);
    const labelOf = (engineId: string | null) =>
      run.everyWorker.find((worker) => worker.engineId === engineId)?.label ?? engineId;
    writeFileSync(
      join(run.logDir, 'violations.json'),
      JSON.stringify(
        {
          seed: schedule.seed,
          violations,
          faults: run.records,
          engines: Object.fromEntries(
            run.everyWorker.map((worker) => [worker.engineId, `${worker.label} pid ${worker.pid}`]),
          ),
          workflows: named.map((id) => ({
            ...descriptions.get(id),
            timeline: timelines
              .get(id)!
              .map((entry) => ({ ...entry, atMs: entry.at - began, by: labelOf(entry.engineId) })),
            rejections: rejections
              .filter((rejection) => rejection.workflowId === id)
              .map((rejection) => ({
                ...rejection,
                atMs: rejection.at - began,
                by: labelOf(rejection.engineId),
              })),
            ledger: ledger.filter((row) => row.workflow_id === id),
          })),
        },
        null,
        1,
      ),
    );
    run.log(`worker logs and violations.json kept in ${run.logDir}`);
  }
  return report;
}

/** The report in a few lines. */
export function describeReport(report: ScheduleReport): string {
  const f = report.figures;
  const lines = [
    `${report.ok ? 'OK' : 'FAILED'} in ${(f.durationMs / 1000).toFixed(1)} s: ${f.workflows} workflows, ${f.timelineEntries} timeline entries, ${f.attemptsStarted} attempts started, ${f.ledgerRows} ledger rows (${f.startedWithoutRow} started attempts never reached the ledger), ${f.takeovers} takeovers, ${f.rejections} refused writes; longest renewal gap ${f.maxRenewalGapMs} ms (${f.maxRenewalGapOf} at +${((f.maxRenewalGapAtMs ?? 0) / 1000).toFixed(1)} s)`,
    ...report.faults.map((record) => {
      const t = record.takeovers;
      const moved = t
        ? `${t.count} takeovers${
            t.count
              ? ` ${t.firstAfterMs}–${t.lastAfterMs} ms after (${Object.entries(t.reasons)
                  .map(([reason, n]) => `${reason} ${n}`)
                  .join(', ')})`
              : ''
          }`
        : '';
      switch (record.kind) {
        case 'kill':
          return `  kill -9 ${record.label}: ${moved}`;
        case 'stop':
          return `  SIGSTOP ${record.label} for ${record.healedAt! - record.startedAt} ms${record.inFlight ? ` (in the middle of ${record.inFlightActivity})` : ''}: ${moved}; ${record.rejections} late writes refused by storage, ${record.refusedLocally} refused by itself${record.droppedInFlight ? '; dropped the in-flight workflow itself before writing' : ''}`;
        case 'cut':
          return `  cut ${record.label} for ${record.healedAt! - record.startedAt} ms: lock dropped ${record.lockLostAfterMs ?? '—'} ms after the cut, back ${record.lockBackAfterMs ?? '—'} ms after restoring; ${moved}`;
        case 'restart':
          return `  restart (${record.mode}), down ${record.downMs} ms, locks back ${record.lockBackAfterMs ?? '—'} ms later: ${moved} within 15 s`;
      }
    }),
    ...report.violations.slice(0, 30).map((violation) => `  VIOLATION ${violation}`),
  ];
  if (report.violations.length > 30) lines.push(`  … and ${report.violations.length - 30} more`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// SQL helpers

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function runSql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
