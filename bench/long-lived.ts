/**
 * The `long-lived` part (bench/README.md, Long-lived workflows): what continue-as-new buys a workflow that
 * loops for ever, and how fast `replay()` checks a recorded history. Node, memory store
 * (`MemoryStorage`, like bench/node.ts), `workflow-lease` ownership. Built by scripts/bench.mjs and run with
 * `node --expose-gc`; prints one JSON line `{ figures, details }` (figures in latest.json's `longLived`
 * shape, long-lived-results.ts) and progress on stderr.
 *
 * 1. Handoff of a long-lived workflow. `bench-ticker` records one operation (`ctx.now()`) per loop iteration,
 *    continues as new every `every` iterations and, at `total`, parks on the signal `stop`. Long: 1,000,000
 *    iterations, continue-as-new every 1,000 (a chain of 1,000 runs; the current one recorded 1,000
 *    operations). Short: 1,000 iterations in one run (1,000 operations). Each trial builds one of them on
 *    engine X over a fresh store, opens engine Y on the same store, then — the trigger — shuts X down
 *    gracefully (its session ends: every claim free at once), sends `stop` through Y and waits for Y to
 *    report the workflow completed. The handoff time is trigger → completed on Y: X's shutdown, Y's takeover
 *    (load and replay of the current run), the signal and the last turn. Long and short alternate in order
 *    from round to round; the figure is the p50 of each and the ratio long / short (target ≤ 1.2: the chain
 *    must not cost the handoff).
 * 2. Replay speed: `bench-mixed` (5,000 × an activity and a `ctx.now()`: 10,000 operations) run on an engine,
 *    its history read with `engine.history(id)`, then `replay([definition], history)` timed; operations
 *    replayed per second, p50 of the rounds, beside the rate at which the engine recorded the same workflow.
 *
 * Environment: `SHUTTLE_BENCH_QUICK=1` for fewer rounds (5 handoff rounds, 3 replay rounds; the same
 * 1,000,000 iterations); `SHUTTLE_BENCH_LONG_LIVED_ITERATIONS=n` changes the long workflow's total (latest.json
 * says which total was measured: `longLived.iterations`).
 */
import { createEngine, defineWorkflow, replay, type Engine } from '../src/engine';
import { MemoryStorage } from '../src/storage';
import type { LongLivedInput } from './long-lived-results';
import { countingReads, ticker, type Reads } from './long-lived-workflow';
import { summarize } from './stats';

const quick = process.env.SHUTTLE_BENCH_QUICK === '1';
const options = {
  /** The long workflow's iterations (the figure: 1,000,000). */
  longTotal: Number(process.env.SHUTTLE_BENCH_LONG_LIVED_ITERATIONS ?? 1_000_000),
  /** Iterations per run of the long workflow, and the short workflow's whole length. */
  every: 1_000,
  handoffRounds: quick ? 5 : 25,
  /** Operations of the replayed workflow: half activities, half `ctx.now()`. */
  replayOperations: 10_000,
  replayRounds: quick ? 3 : 7,
};

function log(message: string): void {
  console.error(`[long-lived] ${message}`);
}

/** `pairs` iterations of an activity then `ctx.now()`: 2 × pairs recorded operations. */
const mixed = defineWorkflow({
  name: 'bench-mixed',
  version: 1,
  *run(ctx, input: { pairs: number }) {
    let sum = 0;
    for (let i = 0; i < input.pairs; i++) {
      sum += yield* ctx.activity('step', () => i);
      yield* ctx.now();
    }
    return sum;
  },
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Waits until `id` is parked on its `stop` signal (its last run), polling `describe`. */
async function parked(engine: Engine, id: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const description = await engine.describe(id);
    if (description.status === 'running' && description.pending?.kind === 'signal') return description.run;
    if (description.status !== 'running')
      throw new Error(`${id} is ${description.status} before it parked (run ${description.run})`);
    if (Date.now() > deadline) throw new Error(`${id} did not park within ${timeoutMs} ms`);
    await sleep(5);
  }
}

type HandoffTrial = {
  which: 'long' | 'short';
  total: number;
  every: number;
  /** Start → parked on X. */
  buildMs: number;
  iterationsPerSecond: number;
  /** The run that parked (the chain's length). */
  runs: number;
  /** Operations the parked run recorded (its history length). */
  currentRunOperations: number;
  /** The trigger (X's shutdown called) → Y reports it completed. */
  handoffMs: number;
  /** X's graceful shutdown alone. */
  shutdownMs: number;
  /** `stop` sent through Y → Y reports it completed. */
  signalToCompletedMs: number;
  /** What Y read from the store from the trigger until it reported the workflow completed. */
  reads: Reads;
  /** How Y came to hold it: its `claim-taken-over` reason, or the ownership entry it wrote. */
  takeover: string | null;
};

async function handoffTrial(which: 'long' | 'short'): Promise<HandoffTrial> {
  const total = which === 'long' ? options.longTotal : options.every;
  const every = which === 'long' ? options.every : 1_000_000;
  const id = `ticker-${which}`;
  const storage = new MemoryStorage();
  const x = await createEngine({ storage, workflows: [ticker], ownership: 'workflow-lease' });
  const built = performance.now();
  await x.start(ticker, { done: 0, total, every }, { id });
  const runs = await parked(x, id, 600_000);
  const buildMs = performance.now() - built;
  const currentRunOperations = (await x.describe(id)).historyLength;
  const reads: Reads = { requests: 0, values: 0, chars: 0 };
  const y = await createEngine({
    storage: countingReads(storage, reads),
    workflows: [ticker],
    ownership: 'workflow-lease',
  });
  await y.idle();
  if ((await y.claimHolder(id))?.engineId !== x.id)
    throw new Error(`${id} is not held by X before the handoff`);
  collectGarbage();

  Object.assign(reads, { requests: 0, values: 0, chars: 0 });
  const trigger = performance.now();
  await x.shutdown();
  const shutdownMs = performance.now() - trigger;
  const signalled = performance.now();
  await y.signal(id, 'stop');
  const result = await y.handle<number>(id).result();
  const completed = performance.now();
  const readsDuringHandoff = { ...reads };
  if (result !== total) throw new Error(`${id} returned ${result}, not ${total}`);

  const timeline = await y.handle(id).timeline();
  const ownership = timeline.filter(
    (entry) =>
      entry.engineId === y.id && (entry.kind === 'claim-taken-over' || entry.kind === 'claim-acquired'),
  );
  const first = ownership[0];
  const takeover = !first
    ? null
    : first.kind === 'claim-taken-over'
      ? `taken-over (${(first.detail as { reason?: string }).reason ?? '?'})`
      : 'acquired';
  const chain = (await y.runs(id)).length;
  if (chain !== runs) throw new Error(`${id}: ${chain} runs listed, ${runs} parked`);
  await y.shutdown();
  return {
    which,
    total,
    every,
    buildMs: Math.round(buildMs),
    iterationsPerSecond: Math.round(total / (buildMs / 1000)),
    runs,
    currentRunOperations,
    handoffMs: Math.round((completed - trigger) * 100) / 100,
    shutdownMs: Math.round(shutdownMs * 100) / 100,
    signalToCompletedMs: Math.round((completed - signalled) * 100) / 100,
    reads: readsDuringHandoff,
    takeover,
  };
}

async function handoffs() {
  // Warm-up, discarded: the first trials measure V8 compiling the engine's hot path.
  await handoffTrial('short');
  await handoffTrial('short');
  const trials: HandoffTrial[] = [];
  for (let round = 0; round < options.handoffRounds; round++) {
    const order: ('long' | 'short')[] = round % 2 === 0 ? ['long', 'short'] : ['short', 'long'];
    for (const which of order) {
      const trial = await handoffTrial(which);
      trials.push(trial);
      log(
        `round ${round + 1}/${options.handoffRounds} ${which}: built ${trial.total.toLocaleString('en-US')} iterations in ${trial.buildMs} ms ` +
          `(${trial.runs} runs), handoff ${trial.handoffMs} ms (shutdown ${trial.shutdownMs}, stop → completed ${trial.signalToCompletedMs}; ${trial.takeover}; ` +
          `Y read ${trial.reads.values} values, ${trial.reads.chars} chars in ${trial.reads.requests} requests)`,
      );
    }
  }
  const of = (which: 'long' | 'short') => trials.filter((trial) => trial.which === which);
  const long = summarize(
    of('long').map((trial) => trial.handoffMs),
    1,
  );
  const short = summarize(
    of('short').map((trial) => trial.handoffMs),
    1,
  );
  const build = summarize(of('long').map((trial) => trial.iterationsPerSecond));
  return {
    long,
    short,
    ratio: long.p50 !== null && short.p50 ? Math.round((long.p50 / short.p50) * 100) / 100 : null,
    buildIterationsPerSecond: build,
    runs: of('long')[0]?.runs ?? null,
    currentRunOperations: {
      long: of('long')[0]?.currentRunOperations,
      short: of('short')[0]?.currentRunOperations,
    },
    shutdownMs: {
      long: summarize(
        of('long').map((trial) => trial.shutdownMs),
        1,
      ),
      short: summarize(
        of('short').map((trial) => trial.shutdownMs),
        1,
      ),
    },
    /** Y's reads from the trigger to completed (p50 of the trials): the same for both when the chain costs nothing. */
    reads: {
      long: {
        values: summarize(of('long').map((trial) => trial.reads.values)).p50,
        chars: summarize(of('long').map((trial) => trial.reads.chars)).p50,
      },
      short: {
        values: summarize(of('short').map((trial) => trial.reads.values)).p50,
        chars: summarize(of('short').map((trial) => trial.reads.chars)).p50,
      },
    },
    signalToCompletedMs: {
      long: summarize(
        of('long').map((trial) => trial.signalToCompletedMs),
        1,
      ),
      short: summarize(
        of('short').map((trial) => trial.signalToCompletedMs),
        1,
      ),
    },
    trials,
  };
}

async function replaySpeed() {
  const pairs = options.replayOperations / 2;
  const engine = await createEngine({ storage: new MemoryStorage(), workflows: [mixed] });
  // Warm-up run, discarded from the recording rate.
  await (await engine.start(mixed, { pairs: 500 }, { id: 'mixed-warm-up' })).result();
  const recordStarted = performance.now();
  const handle = await engine.start(mixed, { pairs }, { id: 'mixed' });
  await handle.result();
  const recordMs = performance.now() - recordStarted;
  const history = await engine.history('mixed');
  await engine.shutdown();
  const operations = history.entries.length;

  const first = replay([mixed], history); // warm-up, discarded
  if (!first.ok) throw new Error(`replay of the recorded history failed: ${JSON.stringify(first)}`);
  const samples: number[] = [];
  const samplesMs: number[] = [];
  for (let round = 0; round < options.replayRounds; round++) {
    collectGarbage();
    const started = performance.now();
    const report = replay([mixed], history);
    const ms = performance.now() - started;
    if (!report.ok || report.operations !== operations)
      throw new Error(`replay round ${round + 1}: ${JSON.stringify(report)}`);
    samplesMs.push(ms);
    samples.push(report.operations / (ms / 1000));
    log(
      `replay ${round + 1}/${options.replayRounds}: ${report.operations} operations in ${ms.toFixed(1)} ms`,
    );
  }
  return {
    operations,
    historyStatus: history.status,
    opsPerSecond: summarize(samples),
    replayMs: summarize(samplesMs, 1),
    /** The same workflow run on the engine (memory store, ownership none): operations recorded per second. */
    recordOpsPerSecond: Math.round(operations / (recordMs / 1000)),
    recordMs: Math.round(recordMs),
  };
}

async function main(): Promise<void> {
  log(
    `handoff: ${options.longTotal.toLocaleString('en-US')} iterations, continue-as-new every ${options.every.toLocaleString('en-US')}, ` +
      `vs ${options.every.toLocaleString('en-US')} in one run; ${options.handoffRounds} rounds`,
  );
  const handoff = await handoffs();
  const replayed = await replaySpeed();
  const figures = {
    handoffMs: {
      long: { p50: handoff.long.p50, p95: handoff.long.p95 },
      short: { p50: handoff.short.p50, p95: handoff.short.p95 },
    },
    iterations: options.longTotal,
    chainRuns: handoff.runs,
    buildIterationsPerSecond: handoff.buildIterationsPerSecond.p50,
    replayOpsPerSecond: replayed.opsPerSecond.p50,
    recordOpsPerSecond: replayed.recordOpsPerSecond,
  } satisfies LongLivedInput;
  const details = {
    quick,
    store: 'MemoryStorage',
    ownership: 'workflow-lease',
    trigger: 'graceful shutdown of X, then `stop` sent through Y',
    options,
    handoff,
    replay: replayed,
  };
  console.log(JSON.stringify({ figures, details }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
