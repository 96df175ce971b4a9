/**
 * The bench worker: a dedicated module worker, of the same kind as a studio tab's engine worker, that
 * measures the raw IndexedDB ceilings and the engine's step rates in the same worker, interleaved.
 *
 * A run is a short warm-up (which also sizes the first round) followed by `rounds` rounds. Each round takes
 * its two engine measurements (one workflow, then `parallelWorkflows` workflows, or the other way round,
 * alternating from round to round), each between two windows of its own ceilings (raw-transactions.ts: one
 * record per transaction; the engine's group size per transaction, two in flight); each engine figure's ratio
 * is taken against the two windows right before and after it together.
 */
import { measureEngineSteps } from './engine-steps';
import type {
  BenchReply,
  BenchRequest,
  CeilingSample,
  DurabilityRound,
  EngineSample,
  ProfileOptions,
  RawVariantName,
  RawVariantRound,
  RawVariants,
  ThroughputOptions,
  ThroughputResult,
  ThroughputRound,
  WorkerAudit,
} from './protocol';
import { median } from '../stats';
import {
  defaultDurability,
  deleteDatabase,
  clearCeilingRecords,
  measureBatchedWrites,
  measureConditionalBatches,
  measureDexieTransactions,
  measureRawTransactions,
  measureSingleWrites,
  openRawDatabase,
} from './raw-transactions';

/** The parts of `DedicatedWorkerGlobalScope` used here (the project's DOM typings describe a window). */
type WorkerScope = {
  postMessage(message: BenchReply): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<BenchRequest>) => void): void;
};

const scope = self as unknown as WorkerScope;

/** The order of the two engine measurements, alternating from round to round. */
const orders: ('sequential' | 'parallel')[][] = [
  ['sequential', 'parallel'],
  ['parallel', 'sequential'],
];

/** Several ceiling windows as one sample: all their rows and commits over all their time. */
function combine(samples: readonly CeilingSample[]): CeilingSample {
  const operations = samples.reduce((sum, sample) => sum + sample.operations, 0);
  const commits = samples.reduce((sum, sample) => sum + sample.commits, 0);
  const elapsedMs = samples.reduce((sum, sample) => sum + sample.elapsedMs, 0);
  return {
    operations,
    elapsedMs,
    perSecond: (operations * 1000) / elapsedMs,
    commits,
    commitsPerSecond: (commits * 1000) / elapsedMs,
    groupSize: samples[0]?.groupSize ?? 1,
  };
}

/** The engine's steps per storage transaction in a measurement (1 when it says nothing of them). */
function stepsPerTransaction(sample: EngineSample): number {
  return sample.transactions ? sample.operations / sample.transactions : 1;
}

/**
 * What `durability: 'strict'` costs the engine: each kind measured with the default and with strict, back to
 * back, `rounds` times (the same sizes as the main rounds' last).
 */
async function measureDurability(
  rounds: number,
  sizes: { sequential: number; parallel: number },
  parallel: number,
  audit: WorkerAudit,
  progress: (message: string) => void,
): Promise<NonNullable<ThroughputResult['durability']>> {
  const list: DurabilityRound[] = [];
  for (let round = 0; round < rounds; round++) {
    progress(`durability ${round + 1}/${rounds}: default and strict, 1 and ${parallel} workflows`);
    list.push({
      sequential: {
        default: await measureEngineSteps(1, sizes.sequential, audit),
        strict: await measureEngineSteps(1, sizes.sequential, audit, {}, 'strict'),
      },
      parallel: {
        default: await measureEngineSteps(parallel, sizes.parallel, audit),
        strict: await measureEngineSteps(parallel, sizes.parallel, audit, {}, 'strict'),
      },
    });
  }
  const cost = (kind: 'sequential' | 'parallel') =>
    median(list.map((entry) => entry[kind].strict.perSecond / entry[kind].default.perSecond));
  return {
    rounds: list,
    sequential: cost('sequential') ?? null,
    parallel: cost('parallel') ?? null,
  };
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, Math.round(value)));
}

const variantNames: RawVariantName[] = [
  'default',
  'strict',
  'relaxed',
  'dexie',
  'dexieChained',
  'conditionalBatch',
];

/** The same get + put committed in other ways, each against the raw default of the same round. */
async function measureVariants(
  db: IDBDatabase,
  stamp: string,
  options: ThroughputOptions,
  progress: (message: string) => void,
): Promise<RawVariants> {
  const durationMs = options.rawDurationMs / 2;
  const dexieName = `shuttle-bench-dexie-${stamp}`;
  const storageName = `shuttle-bench-storage-${stamp}`;
  const rounds: RawVariantRound[] = [];
  try {
    for (let round = 0; round < options.variantRounds; round++) {
      progress(`raw variants ${round + 1}/${options.variantRounds}: ${variantNames.join(', ')}`);
      rounds.push({
        default: await measureRawTransactions(db, durationMs),
        strict: await measureRawTransactions(db, durationMs, 'strict'),
        relaxed: await measureRawTransactions(db, durationMs, 'relaxed'),
        dexie: await measureDexieTransactions(dexieName, durationMs, 'async'),
        dexieChained: await measureDexieTransactions(dexieName, durationMs, 'chained'),
        conditionalBatch: await measureConditionalBatches(storageName, durationMs),
      });
    }
  } finally {
    await deleteDatabase(dexieName);
    await deleteDatabase(storageName);
  }
  const summary = Object.fromEntries(
    variantNames.map((name) => [
      name,
      {
        perSecond: Math.round(median(rounds.map((round) => round[name].perSecond))!),
        ratioToDefault:
          Math.round(median(rounds.map((round) => round[name].perSecond / round.default.perSecond))! * 1000) /
          1000,
      },
    ]),
  ) as RawVariants['summary'];
  return { rounds, summary };
}

async function runThroughput(
  options: ThroughputOptions,
  progress: (message: string) => void,
): Promise<ThroughputResult> {
  const started = performance.now();
  const stamp = Date.now().toString(36);
  const rawName = `shuttle-bench-raw-${stamp}`;
  const db = await openRawDatabase(rawName);
  const audit: WorkerAudit = { workflows: 0, duplicateCommits: 0, activityReruns: 0, findings: [] };
  const parallel = options.parallelWorkflows;
  try {
    const durability = defaultDurability(db);
    progress(`warm-up (default durability: ${durability})`);
    await measureRawTransactions(db, Math.min(500, options.rawDurationMs));
    // Long enough that the first round's sizes are near a measurement of `engineDurationMs`: a warm-up of a
    // few steps per workflow measures mostly the starts, and a round sized from it measures them again.
    let sequentialRate = (await measureEngineSteps(1, 300, audit)).perSecond;
    const warmParallel = await measureEngineSteps(parallel, 30, audit);
    let parallelRate = warmParallel.perSecond;
    const parallelGroup = stepsPerTransaction(warmParallel);

    let groupSize = Math.max(1, Math.round(parallelGroup));
    let sequentialSteps = 0;
    let parallelSteps = 0;
    const rounds: ThroughputRound[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const order = orders[round % orders.length]!;
      await clearCeilingRecords(db);
      const windows: ThroughputRound['windows'] = [];
      const window = async (kind: 'one' | 'batched') => {
        const sample =
          kind === 'one'
            ? await measureSingleWrites(db, options.rawDurationMs / 2)
            : await measureBatchedWrites(db, options.rawDurationMs / 2, groupSize);
        windows.push({ ...sample, kind });
        return sample;
      };
      let sequential: EngineSample | undefined;
      let concurrent: EngineSample | undefined;
      let sequentialCeiling: CeilingSample | undefined;
      let parallelCeiling: CeilingSample | undefined;
      for (const kind of order) {
        // The ceiling of each engine measurement is measured right before and right after it, so a burst of
        // load elsewhere that slows one moment weighs on an engine figure and on its own ceiling alike.
        const before = await window(kind === 'sequential' ? 'one' : 'batched');
        if (kind === 'sequential') {
          sequentialSteps = clamp((sequentialRate * options.engineDurationMs) / 1000, 20, 50_000);
          sequential = await measureEngineSteps(1, sequentialSteps, audit);
          sequentialRate = sequential.perSecond;
          sequentialCeiling = combine([before, await window('one')]);
        } else {
          parallelSteps = clamp((parallelRate * options.engineDurationMs) / 1000 / parallel, 10, 5_000);
          concurrent = await measureEngineSteps(parallel, parallelSteps, audit);
          parallelRate = concurrent.perSecond;
          parallelCeiling = combine([before, await window('batched')]);
        }
      }
      const measured: ThroughputRound = {
        round: round + 1,
        order: [...order],
        windows,
        groupSize,
        sequential: sequential!,
        parallel: concurrent!,
        ceilings: { sequential: sequentialCeiling!, parallel: parallelCeiling! },
        stepRatio: sequential!.perSecond / sequentialCeiling!.perSecond,
        parallelRatio: concurrent!.perSecond / parallelCeiling!.perSecond,
      };
      rounds.push(measured);
      progress(
        `round ${round + 1}/${options.rounds}: 1 workflow ${Math.round(sequential!.perSecond)} steps/s ` +
          `(${measured.stepRatio.toFixed(2)} of ${Math.round(sequentialCeiling!.perSecond)} one-record commits/s), ` +
          `${parallel} workflows ${Math.round(concurrent!.perSecond)} steps/s in ${concurrent!.transactions} ` +
          `transactions (${measured.parallelRatio.toFixed(2)} of ${Math.round(parallelCeiling!.perSecond)} ` +
          `records/s at ${groupSize} a commit, two in flight)`,
      );
      groupSize = Math.max(1, Math.round(stepsPerTransaction(concurrent!)));
    }

    const variants = options.variantRounds > 0 ? await measureVariants(db, stamp, options, progress) : null;
    const durabilityCost =
      options.variantRounds > 0
        ? await measureDurability(
            options.variantRounds,
            { sequential: sequentialSteps, parallel: parallelSteps },
            parallel,
            audit,
            progress,
          )
        : null;

    return {
      options,
      rounds,
      variants,
      durability: durabilityCost,
      audit,
      environment: {
        userAgent: navigator.userAgent,
        hardwareConcurrency: navigator.hardwareConcurrency,
        defaultDurability: durability,
      },
      totalMs: performance.now() - started,
    };
  } finally {
    db.close();
    await deleteDatabase(rawName);
  }
}

/**
 * The parallel measurement alone, for a CPU profile: one warm-up outside the profile, then `measurements`
 * runs, each profiled from its first start to its last result (engine set-up, shutdown and the audit are
 * left out) between `console.profile` and `console.profileEnd`: a DevTools client with the Profiler domain
 * enabled on this worker receives one profile per run (bench/browser/profile.ts).
 */
async function runProfile(
  options: ProfileOptions,
  progress: (message: string) => void,
): Promise<EngineSample[]> {
  const audit: WorkerAudit = { workflows: 0, duplicateCommits: 0, activityReruns: 0, findings: [] };
  progress('warm-up');
  await measureEngineSteps(options.workflows, Math.max(4, Math.round(options.steps / 4)), audit);
  const samples: EngineSample[] = [];
  for (let index = 0; index < options.measurements; index++) {
    const title = `shuttle-parallel-${index + 1}`;
    const sample = await measureEngineSteps(options.workflows, options.steps, audit, {
      started: () => console.profile(title),
      stopped: () => console.profileEnd(title),
    });
    samples.push(sample);
    progress(
      `profiled ${index + 1}/${options.measurements}: ${Math.round(sample.perSecond)} steps/s, ` +
        `${sample.transactions} transactions`,
    );
  }
  if (audit.duplicateCommits > 0 || audit.activityReruns > 0)
    throw new Error(`the profiled runs repeated work: ${audit.findings.join('; ')}`);
  return samples;
}

function replyFailure(error: unknown): void {
  const failure = error instanceof Error ? error : new Error(String(error));
  scope.postMessage({
    kind: 'failed',
    error: {
      name: failure.name,
      message: failure.message,
      ...(failure.stack ? { stack: failure.stack } : {}),
    },
  });
}

scope.addEventListener('message', (event) => {
  const request = event.data;
  const progress = (message: string) => scope.postMessage({ kind: 'progress', message });
  if (request?.kind === 'profile') {
    runProfile(request.options, progress).then(
      (samples) => scope.postMessage({ kind: 'profiled', samples }),
      replyFailure,
    );
    return;
  }
  if (request?.kind !== 'run') return;
  runThroughput(request.options, progress).then(
    (result) => scope.postMessage({ kind: 'done', result }),
    replyFailure,
  );
});
