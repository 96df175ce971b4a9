/**
 * What the bench page, its worker and the Node runner say to each other about the throughput benchmarks:
 * the options of a run, the measurements of each round, and the messages between page and worker. Types
 * only (plus the `window.shuttleBench` declaration), so the Node side can import them without pulling in
 * any browser code.
 */
import type {
  LatencyMode,
  LatencySample,
  QueueWorkload,
  ThroughputMode,
  ThroughputSample,
} from '../queues-workload';

/** Options of one throughput run (every figure below is measured in one dedicated worker). */
export type ThroughputOptions = {
  /** Rounds of interleaved raw / sequential engine / parallel engine measurements. */
  rounds: number;
  /** How long each raw IndexedDB measurement runs, in ms. */
  rawDurationMs: number;
  /**
   * Roughly how long each engine measurement runs, in ms: a round's step count is sized from the previous
   * round's rate (a short warm-up sizes the first).
   */
  engineDurationMs: number;
  /** How many workflows run at once in the parallel measurement (docs/quality.md: 50). */
  parallelWorkflows: number;
  /**
   * Rounds of the raw variants (explicit `strict` / `relaxed` durability, Dexie, IndexedDbStorage) after the
   * main rounds, each variant measured for `rawDurationMs / 2`; 0 skips them.
   */
  variantRounds: number;
};

/** One time-boxed or fixed-size measurement. */
export type RateSample = {
  /** Transactions (raw) or activity steps (engine) completed. */
  operations: number;
  elapsedMs: number;
  perSecond: number;
};

/** A ceiling window: rows written per second, and the commits (transactions) that carried them. */
export type CeilingSample = RateSample & { commits: number; commitsPerSecond: number; groupSize: number };

/** The engine measurement of one round. */
export type EngineSample = RateSample & {
  workflows: number;
  stepsPerWorkflow: number;
  /** From the first `start` call until every `start` resolved (the starts, committed), in ms. */
  startsMs?: number;
  /** Storage transactions the engine committed during the measurement, and how many carried several commits. */
  transactions?: number;
  groupedTransactions?: number;
  /** Commits carried by the grouped transactions. */
  groupedBatches?: number;
};

/**
 * One round: the two engine measurements in `order`, each between two windows of its own ceiling (one record
 * per transaction for one workflow; `groupSize` records per transaction, two in flight, for fifty), and the
 * ratios within the round: each engine rate divided by the windows right before and after it together.
 */
export type ThroughputRound = {
  round: number;
  order: ('sequential' | 'parallel')[];
  /** Every ceiling window of the round, in order. */
  windows: (CeilingSample & { kind: 'one' | 'batched' })[];
  /** Records per transaction of the batched ceiling: the engine's steps per commit in the round before. */
  groupSize: number;
  sequential: EngineSample;
  parallel: EngineSample;
  ceilings: { sequential: CeilingSample; parallel: CeilingSample };
  stepRatio: number;
  parallelRatio: number;
};

/** The engine with `durability: 'strict'` beside the default, measured back to back (details only). */
export type DurabilityRound = {
  sequential: { default: EngineSample; strict: EngineSample };
  parallel: { default: EngineSample; strict: EngineSample };
};

/** The ways of committing the same get + put that `variants` compares with the raw default. */
export type RawVariantName =
  /** The raw transaction opened without options (the ceiling's own setting). */
  | 'default'
  /** `{ durability: 'strict' }`: the commit waits for the data to reach the disk. */
  | 'strict'
  /** `{ durability: 'relaxed' }`. */
  | 'relaxed'
  /** A Dexie `rw` transaction with `await`s inside (what IndexedDbStorage does). */
  | 'dexie'
  /** A Dexie `rw` transaction chaining Dexie promises, no `await`. */
  | 'dexieChained'
  /** `IndexedDbStorage.conditionalBatch` with one condition and one put: the storage layer alone. */
  | 'conditionalBatch';

/** One round of the variants, measured back to back, each against the `default` of the same round. */
export type RawVariantRound = Record<RawVariantName, RateSample>;

/** The raw transaction under other settings, for comparison (details only). */
export type RawVariants = {
  rounds: RawVariantRound[];
  /** Per variant: median rate, and median of its per-round ratio to `default`. */
  summary: Record<RawVariantName, { perSecond: number; ratioToDefault: number }>;
};

/** Duplicate audit of every workflow the run started. */
export type WorkerAudit = {
  workflows: number;
  duplicateCommits: number;
  /** Activity invocations beyond one per step (an activity may legitimately rerun only after a crash). */
  activityReruns: number;
  findings: string[];
};

/** Everything a throughput run returns. */
export type ThroughputResult = {
  options: ThroughputOptions;
  rounds: ThroughputRound[];
  variants: RawVariants | null;
  /** What `durability: 'strict'` costs the engine: rounds, and the median strict ÷ default per kind. */
  durability: { rounds: DurabilityRound[]; sequential: number | null; parallel: number | null } | null;
  audit: WorkerAudit;
  environment: {
    userAgent: string;
    hardwareConcurrency: number;
    /** `IDBTransaction.durability` of a transaction opened without options (Chromium ≥ 121: relaxed). */
    defaultDurability: string;
  };
  totalMs: number;
};

/** What a profiled run measures: `measurements` runs of `workflows` workflows of `steps` steps each. */
export type ProfileOptions = { workflows: number; steps: number; measurements: number };

/** Page → worker. `profile` runs the parallel measurement only, between `console.profile` and `profileEnd`. */
export type BenchRequest =
  { kind: 'run'; options: ThroughputOptions } | { kind: 'profile'; options: ProfileOptions };

/** Worker → page. */
export type BenchReply =
  | { kind: 'progress'; message: string }
  | { kind: 'done'; result: ThroughputResult }
  | { kind: 'profiled'; samples: EngineSample[] }
  | { kind: 'failed'; error: { name: string; message: string; stack?: string } };

/** Node → a bench tab's long-lived worker (bench/browser/long-lived.worker.ts), one request at a time. */
export type LongLivedRequest =
  /** Opens this tab's engine over `databaseName`; `countReads` counts what it reads (the successor). */
  | { kind: 'open'; databaseName: string; countReads: boolean }
  /** Starts the ticker as `id` and waits until it parks on `stop`. */
  | { kind: 'build'; id: string; total: number; every: number; timeoutMs: number }
  /** Which engine holds `id`'s claim, once this engine is idle; counting of reads starts over after it. */
  | { kind: 'holder'; id: string }
  /** Shuts this tab's engine down gracefully (its claims are released), timed. */
  | { kind: 'shutdown' }
  /** Sends `stop` to `id` through this engine and waits for its result. */
  | { kind: 'stop-and-wait'; id: string }
  /** Shuts down and closes this tab's engine, if any, and deletes `deleteDatabase` if given. */
  | { kind: 'close'; deleteDatabase?: string };

/** A bench tab's long-lived worker → Node. */
export type LongLivedReply =
  | { kind: 'opened'; engineId: string }
  | { kind: 'built'; buildMs: number; runs: number; currentRunOperations: number }
  | { kind: 'holder'; engineId: string | null }
  /** `startedAt`: when the shutdown was called, as `performance.timeOrigin + performance.now()`. */
  | { kind: 'shut-down'; shutdownMs: number; startedAt: number }
  | {
      kind: 'completed';
      result: number;
      signalToCompletedMs: number;
      /** When the result arrived, on the same clock as `shut-down`'s `startedAt`. */
      completedAt: number;
      /** What this engine read since its `holder` request (just before the holder's shutdown). */
      reads: { requests: number; values: number; chars: number };
      /** How this engine came to hold the workflow (its first ownership entry in the timeline). */
      takeover: string | null;
      /** Runs listed for the id afterwards (the chain's length). */
      chain: number;
    }
  | { kind: 'closed' }
  | { kind: 'failed'; error: { name: string; message: string; stack?: string } };

/** Node → a bench tab's queues worker (bench/browser/queues.worker.ts), one request at a time. */
export type QueuesRequest =
  /** Opens this tab's engine (studio set-up, declaring `bench-q`) over `databaseName`. */
  | { kind: 'open'; databaseName: string }
  /** One latency sample (bench/queues-workload.ts `latencySample`). */
  | { kind: 'latency'; mode: LatencyMode }
  /** One throughput run (`throughputRun`). */
  | { kind: 'throughput'; mode: ThroughputMode; workload: QueueWorkload }
  /** Shuts down and closes this tab's engine, if any, and deletes `deleteDatabase` if given. */
  | { kind: 'close'; deleteDatabase?: string };

/** A bench tab's queues worker → Node. */
export type QueuesReply =
  | { kind: 'opened'; engineId: string }
  | { kind: 'latency'; sample: LatencySample }
  | { kind: 'throughput'; sample: ThroughputSample }
  | { kind: 'closed' }
  | { kind: 'failed'; error: { name: string; message: string; stack?: string } };

/** The bench page's API, as `window.shuttleBench`. */
export type BenchPageApi = {
  /** Runs the throughput benchmarks in the page's bench worker; rejects if the worker fails. */
  run(options: ThroughputOptions): Promise<ThroughputResult>;
  /**
   * Runs only the parallel engine measurement (after one unprofiled warm-up), between `console.profile` and
   * `console.profileEnd` in the bench worker, for `bench/browser/profile.ts`.
   */
  profile(options: ProfileOptions): Promise<EngineSample[]>;
  /**
   * Sends one request to this tab's long-lived worker (started on first use, kept for the tab's life) and
   * resolves with its reply; rejects with the worker's error when it fails.
   */
  longLived(request: LongLivedRequest): Promise<LongLivedReply>;
  /** The same for this tab's queues worker (bench/browser/queues.worker.ts). */
  queues(request: QueuesRequest): Promise<QueuesReply>;
};

declare global {
  interface Window {
    /** The bench page's API (bench.html only). */
    shuttleBench?: BenchPageApi;
  }
}
