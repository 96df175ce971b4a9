/**
 * From the bench worker's rounds to the throughput figures of latest.json. Each figure is the median over
 * rounds; each ratio is the median of the per-round ratios (engine rate / raw rate measured in the same
 * round), not a ratio of medians, so a round slowed down by load elsewhere on the machine is compared with
 * its own ceiling.
 */
import type { ThroughputRound } from './browser/protocol';
import { median, roundTo, summarize, type SampleSummary } from './stats';

export type ThroughputFigures = {
  rawTransactionsPerSecond: number | null;
  engineStepsPerSecond: number | null;
  stepRatio: number | null;
  parallelEngineStepsPerSecond: number | null;
  parallelRatio: number | null;
};

export type ThroughputSpreads = {
  rawTransactionsPerSecond: SampleSummary;
  engineStepsPerSecond: SampleSummary;
  stepRatio: SampleSummary;
  parallelEngineStepsPerSecond: SampleSummary;
  parallelRatio: SampleSummary;
};

/** The five throughput figures (rates rounded to whole numbers, ratios to 3 decimals). */
export function summarizeThroughput(
  rounds: readonly Pick<ThroughputRound, 'raw' | 'sequential' | 'parallel' | 'stepRatio' | 'parallelRatio'>[],
): { figures: ThroughputFigures; spreads: ThroughputSpreads } {
  const raw = rounds.map((round) => round.raw.perSecond);
  const sequential = rounds.map((round) => round.sequential.perSecond);
  const parallel = rounds.map((round) => round.parallel.perSecond);
  const stepRatios = rounds.map((round) => round.stepRatio);
  const parallelRatios = rounds.map((round) => round.parallelRatio);
  return {
    figures: {
      rawTransactionsPerSecond: roundTo(median(raw)),
      engineStepsPerSecond: roundTo(median(sequential)),
      stepRatio: roundTo(median(stepRatios), 3),
      parallelEngineStepsPerSecond: roundTo(median(parallel)),
      parallelRatio: roundTo(median(parallelRatios), 3),
    },
    spreads: {
      rawTransactionsPerSecond: summarize(raw),
      engineStepsPerSecond: summarize(sequential),
      stepRatio: summarize(stepRatios, 3),
      parallelEngineStepsPerSecond: summarize(parallel),
      parallelRatio: summarize(parallelRatios, 3),
    },
  };
}
