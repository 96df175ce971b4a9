/**
 * From the bench worker's rounds to the browser throughput figures of latest.json (throughput-figures.ts).
 * Each figure is the median over rounds; each ratio is the median of the per-round ratios (engine rate ÷ the
 * ceiling measured around it in the same round), not a ratio of medians, so a round slowed down by load
 * elsewhere on the machine is compared with its own ceiling.
 */
import type { EngineSample, ThroughputRound } from './browser/protocol';
import { median, roundTo, summarize, type SampleSummary } from './stats';
import type { ThroughputFigure } from './throughput-figures';

export type BrowserThroughput = { one: ThroughputFigure; fifty: ThroughputFigure };

export type ThroughputSpreads = Record<
  'one' | 'fifty',
  { stepsPerSecond: SampleSummary; commitsPerSecond: SampleSummary; ratio: SampleSummary }
>;

const commitsPerSecond = (sample: EngineSample) =>
  sample.transactions === undefined ? null : (sample.transactions * 1000) / sample.elapsedMs;

/** The two throughput figures (rates rounded to whole numbers, ratios to 3 decimals). */
export function summarizeThroughput(
  rounds: readonly Pick<
    ThroughputRound,
    'sequential' | 'parallel' | 'ceilings' | 'stepRatio' | 'parallelRatio' | 'groupSize'
  >[],
): { figures: BrowserThroughput; spreads: ThroughputSpreads } {
  const figureOf = (kind: 'sequential' | 'parallel') => {
    const samples = rounds.map((round) => round[kind]);
    const ceilings = rounds.map((round) => round.ceilings[kind]);
    const ratios = rounds.map((round) => (kind === 'sequential' ? round.stepRatio : round.parallelRatio));
    const commits = samples.map(commitsPerSecond).filter((value): value is number => value !== null);
    const perCommit = samples.flatMap((sample) =>
      sample.transactions ? [sample.operations / sample.transactions] : [],
    );
    const figure: ThroughputFigure = {
      stepsPerSecond: roundTo(median(samples.map((sample) => sample.perSecond))),
      commitsPerSecond: roundTo(median(commits)),
      stepsPerCommit: roundTo(median(perCommit), 2),
      ceilingPerSecond: roundTo(median(ceilings.map((ceiling) => ceiling.perSecond))),
      ceilingCommitsPerSecond: roundTo(median(ceilings.map((ceiling) => ceiling.commitsPerSecond))),
      ceilingGroupSize: kind === 'sequential' ? 1 : roundTo(median(rounds.map((round) => round.groupSize))),
      ratio: roundTo(median(ratios), 3),
    };
    const spread = {
      stepsPerSecond: summarize(samples.map((sample) => sample.perSecond)),
      commitsPerSecond: summarize(commits),
      ratio: summarize(ratios, 3),
    };
    return { figure, spread };
  };
  const one = figureOf('sequential');
  const fifty = figureOf('parallel');
  return {
    figures: { one: one.figure, fifty: fifty.figure },
    spreads: { one: one.spread, fifty: fifty.spread },
  };
}
