/**
 * The rounds of the `queues` part, the same over PostgreSQL (bench/queues.ts) and in Chromium
 * (bench/studio/queues.ts), and their summary into latest.json's `queues.postgres` / `queues.browser` figures
 * (queues-results.ts) and details.json. Each half gives a `QueueBenchTarget`: how to take one latency sample
 * and one throughput run on its engine (and, over PostgreSQL, the DBOS runs beside them).
 *
 * Order: a warm-up (discarded: a few latency samples of each mode, one throughput run of each kind), then the
 * latency samples, queued and direct alternating one by one, then the throughput rounds, the kinds' order
 * rotating from round to round. The throughput ratio is the median of the per-round ratios (queued ÷ batched;
 * Shuttle's queued ÷ the peer's), never a ratio of medians.
 */
import { benchQueue, type LatencyMode, type LatencySample, type ThroughputMode } from './queues-workload';
import type { QueuesHalfInput, QueuesPeerFigures } from './queues-results';
import { median, roundTo, summarize, type SampleSummary } from './stats';

/** One throughput run as the rounds keep it: the rate, the commits, and the audit's peak. */
export type RunSample = {
  kind: string;
  workflows: number;
  elapsedMs: number;
  workflowsPerSecond: number;
  /** Durable commits during the run: the server's write transactions (PostgreSQL) or the engine's (browser). */
  commits: number;
  commitsPerSecond: number;
  /** The most workflows running at once (from the timelines, or the peer's own records). */
  maxConcurrent: number | null;
  /** Whatever else the half records (storage transactions, audit, …). */
  extra?: Record<string, unknown>;
};

export type QueueBenchTarget = {
  latency(mode: LatencyMode): Promise<LatencySample>;
  throughput(mode: ThroughputMode): Promise<RunSample>;
  /** Other kinds measured in the same rounds (the DBOS peers), by name. */
  peers?: Record<string, () => Promise<RunSample>>;
};

export type QueueRoundsOptions = {
  latencySamples: number;
  warmUpLatencySamples: number;
  rounds: number;
  log: (message: string) => void;
};

export type QueueRound = { round: number; order: string[]; runs: Record<string, RunSample> };

export type QueueRoundsResult = {
  latency: { samples: LatencySample[]; queued: SampleSummary; direct: SampleSummary };
  rounds: QueueRound[];
  failures: string[];
};

/** Runs the warm-up, the latency samples and the throughput rounds on `target`. */
export async function runQueueRounds(
  target: QueueBenchTarget,
  options: QueueRoundsOptions,
): Promise<QueueRoundsResult> {
  const { log } = options;
  const failures: string[] = [];
  const kinds: Record<string, () => Promise<RunSample>> = {
    queued: () => target.throughput('queued'),
    batched: () => target.throughput('batched'),
    ...target.peers,
  };
  log('warm-up (discarded)');
  for (let i = 0; i < options.warmUpLatencySamples; i++)
    for (const mode of ['queued', 'direct'] as const) await target.latency(mode);
  for (const [kind, run] of Object.entries(kinds))
    await run().catch((error: unknown) => failures.push(`warm-up ${kind}: ${String(error)}`));

  const samples: LatencySample[] = [];
  for (let i = 0; i < options.latencySamples; i++) {
    const order: LatencyMode[] = i % 2 === 0 ? ['queued', 'direct'] : ['direct', 'queued'];
    for (const mode of order) {
      try {
        samples.push(await target.latency(mode));
      } catch (error) {
        failures.push(`latency ${mode} ${i}: ${String(error)}`);
      }
    }
  }
  const of = (mode: LatencyMode) =>
    summarize(
      samples.filter((sample) => sample.mode === mode).map((sample) => sample.fromReturnMs),
      2,
    );
  const queued = of('queued');
  const direct = of('direct');
  log(
    `latency (start returned → first activity), ${queued.n} + ${direct.n} samples: queued p50 ${queued.p50} · p95 ${queued.p95} ms, direct p50 ${direct.p50} · p95 ${direct.p95} ms`,
  );

  const names = Object.keys(kinds);
  const rounds: QueueRound[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const order = names.map((_, index) => names[(index + round) % names.length]!);
    const runs: Record<string, RunSample> = {};
    for (const kind of order) {
      try {
        runs[kind] = await kinds[kind]!();
      } catch (error) {
        failures.push(`round ${round + 1} ${kind}: ${String(error)}`);
        log(`round ${round + 1} ${kind} failed: ${String(error)}`);
      }
    }
    rounds.push({ round: round + 1, order, runs });
    log(
      `round ${round + 1}/${options.rounds}: ` +
        order
          .map((kind) => {
            const run = runs[kind];
            return run
              ? `${kind} ${run.workflowsPerSecond} workflows/s (${run.commitsPerSecond} commits/s, at most ${run.maxConcurrent} at once)`
              : `${kind} failed`;
          })
          .join('; '),
    );
  }
  return { latency: { samples, queued, direct }, rounds, failures };
}

/** The median of the numbers among `values` (null when there are none), rounded to `digits`. */
function medianOf(values: readonly (number | null | undefined)[], digits = 2): number | null {
  return roundTo(
    median(values.filter((value): value is number => typeof value === 'number' && Number.isFinite(value))),
    digits,
  );
}

/** Per-round `a ÷ b` of workflows/s, where both ran. */
function perRoundRatios(rounds: readonly QueueRound[], a: string, b: string): number[] {
  return rounds.flatMap((round) => {
    const x = round.runs[a];
    const y = round.runs[b];
    return x && y && y.workflowsPerSecond > 0
      ? [roundTo(x.workflowsPerSecond / y.workflowsPerSecond, 3)!]
      : [];
  });
}

/** The highest peak of `kind` over the rounds (null when it never ran or had no audit). */
function peakOf(rounds: readonly QueueRound[], kind: string): number | null {
  const peaks = rounds.flatMap((round) => {
    const peak = round.runs[kind]?.maxConcurrent;
    return typeof peak === 'number' ? [peak] : [];
  });
  return peaks.length > 0 ? Math.max(...peaks) : null;
}

function rateOf(rounds: readonly QueueRound[], kind: string) {
  const list = rounds.map((round) => round.runs[kind]);
  return {
    workflowsPerSecond: medianOf(list.map((run) => run?.workflowsPerSecond)),
    commitsPerSecond: medianOf(
      list.map((run) => run?.commitsPerSecond),
      0,
    ),
  };
}

/** A half's figures (latest.json) from its rounds. */
export function halfFigures(result: QueueRoundsResult): QueuesHalfInput {
  const { queued, direct } = result.latency;
  return {
    latencyMs: {
      queued: { p50: queued.p50, p95: queued.p95, count: queued.n },
      direct: { p50: direct.p50, p95: direct.p95, count: direct.n },
    },
    throughput: {
      queued: rateOf(result.rounds, 'queued'),
      batched: rateOf(result.rounds, 'batched'),
      ratio: medianOf(perRoundRatios(result.rounds, 'queued', 'batched'), 3),
      maxConcurrent: peakOf(result.rounds, 'queued'),
    },
  };
}

/** A peer's figures beside Shuttle's queued runs. */
export function peerFigures(
  result: QueueRoundsResult,
  kind: string,
  pollIntervalMs: number,
): QueuesPeerFigures {
  return {
    ...rateOf(result.rounds, kind),
    shuttleRatio: medianOf(perRoundRatios(result.rounds, 'queued', kind), 3),
    pollIntervalMs,
    maxConcurrent: peakOf(result.rounds, kind),
  };
}

/** details.json's view of a half: spreads, the per-round ratios and whether the limit held in every run. */
export function halfDetails(result: QueueRoundsResult, kinds: readonly string[]) {
  const spread = (kind: string) =>
    summarize(
      result.rounds.flatMap((round) => {
        const run = round.runs[kind];
        return run ? [run.workflowsPerSecond] : [];
      }),
      2,
    );
  const queuedPeaks = result.rounds.flatMap((round) => {
    const peak = round.runs.queued?.maxConcurrent;
    return typeof peak === 'number' ? [peak] : [];
  });
  return {
    limit: benchQueue.concurrency,
    limitHeld: queuedPeaks.length > 0 && queuedPeaks.every((peak) => peak <= benchQueue.concurrency),
    queuedPeaks,
    workflowsPerSecond: Object.fromEntries(kinds.map((kind) => [kind, spread(kind)])),
    ratios: Object.fromEntries(
      kinds
        .filter((kind) => kind !== 'queued')
        .map((kind) => [`queued/${kind}`, perRoundRatios(result.rounds, 'queued', kind)]),
    ),
    latency: {
      queued: result.latency.queued,
      direct: result.latency.direct,
      fromCall: {
        queued: summarize(
          result.latency.samples.filter((s) => s.mode === 'queued').map((s) => s.fromCallMs),
          2,
        ),
        direct: summarize(
          result.latency.samples.filter((s) => s.mode === 'direct').map((s) => s.fromCallMs),
          2,
        ),
      },
      startMs: {
        queued: summarize(
          result.latency.samples.filter((s) => s.mode === 'queued').map((s) => s.startMs),
          2,
        ),
        direct: summarize(
          result.latency.samples.filter((s) => s.mode === 'direct').map((s) => s.startMs),
          2,
        ),
      },
      waitedMs: summarize(
        result.latency.samples.flatMap((s) => (s.waitedMs === null ? [] : [s.waitedMs])),
        0,
      ),
    },
    rounds: result.rounds,
    failures: result.failures,
  };
}
