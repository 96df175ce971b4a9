/**
 * The `longLived` part of `bench/results/latest.json` and its rows in the printed table (results.ts includes
 * both): the handoff of a workflow that continued as new through a long chain, beside the same handoff of a
 * one-run workflow whose current run recorded as many operations; and replay speed beside the engine's own
 * rate recording the same workflow (bench/long-lived.ts measures them; bench/README.md says how). Pure:
 * building, checking and formatting only.
 *
 * Every key is always present; a figure that was not measured (the part did not run, its runner failed) is
 * null, never a made-up 0. The ratio is derived here from the two p50s, so it always matches them.
 */
import type { TableRow } from './results';
import type { Spread } from './stats';

/** latest.json's `longLived`. */
export type LongLivedFigures = {
  /**
   * Graceful shutdown of engine X → engine Y has the workflow completed (takeover, replay of the current run,
   * the `stop` signal, the last turn). `long`: `iterations` operations, continue-as-new every 1,000 (a chain
   * of `chainRuns` runs); `short`: 1,000 operations in one run.
   */
  handoffMs: { long: Spread; short: Spread };
  /** long p50 / short p50 (target ≤ 1.2). */
  handoffRatio: number | null;
  /** The long workflow's loop iterations (one recorded operation each): 1,000,000 unless configured. */
  iterations: number | null;
  /** Runs in the long workflow's chain when it parked. */
  chainRuns: number | null;
  /** Building the long workflow on one engine: iterations per second, p50 of the rounds. */
  buildIterationsPerSecond: number | null;
  /** `replay(definitions, history)` of a 10,000-operation history: operations per second, p50. */
  replayOpsPerSecond: number | null;
  /** The engine running that same workflow (memory store): operations recorded per second. */
  recordOpsPerSecond: number | null;
};

/** What the runner reports (bench/long-lived.ts), before null-filling; its own ratio is ignored. */
export type LongLivedInput = Partial<Omit<LongLivedFigures, 'handoffMs'>> & {
  handoffMs?: Partial<LongLivedFigures['handoffMs']>;
};

/** Every key of `longLived`, in order. */
export const longLivedKeys = [
  'handoffMs',
  'handoffRatio',
  'iterations',
  'chainRuns',
  'buildIterationsPerSecond',
  'replayOpsPerSecond',
  'recordOpsPerSecond',
] as const satisfies readonly (keyof LongLivedFigures)[];

const numberKeys = longLivedKeys.filter(
  (key): key is Exclude<(typeof longLivedKeys)[number], 'handoffMs'> => key !== 'handoffMs',
);

const handoffKinds = ['long', 'short'] as const;

/** The targets of the part (issue #33). */
export const longLivedTargets = {
  /** The long chain's handoff at most this multiple of the one-run workflow's. */
  handoffRatio: 1.2,
} as const;

function figure(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function spread(value: Partial<Spread> | null | undefined): Spread {
  return { p50: figure(value?.p50), p95: figure(value?.p95) };
}

/** `longLived` of latest.json from the runner's figures (all null when the part did not run). */
export function buildLongLivedFigures(input: LongLivedInput | null | undefined): LongLivedFigures {
  const part = input ?? {};
  const long = spread(part.handoffMs?.long);
  const short = spread(part.handoffMs?.short);
  const ratio =
    long.p50 !== null && short.p50 !== null && short.p50 > 0
      ? Math.round((long.p50 / short.p50) * 100) / 100
      : null;
  return {
    handoffMs: { long, short },
    handoffRatio: ratio,
    iterations: figure(part.iterations),
    chainRuns: figure(part.chainRuns),
    buildIterationsPerSecond: figure(part.buildIterationsPerSecond),
    replayOpsPerSecond: figure(part.replayOpsPerSecond),
    recordOpsPerSecond: figure(part.recordOpsPerSecond),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkNumber(where: string, value: unknown, problems: string[]): void {
  if (value !== null && (typeof value !== 'number' || !Number.isFinite(value)))
    problems.push(`${where} must be a finite number or null`);
}

function checkExactKeys(
  where: string,
  value: unknown,
  expected: readonly string[],
  problems: string[],
): value is Record<string, unknown> {
  if (!isRecord(value)) {
    problems.push(`${where} must be an object`);
    return false;
  }
  for (const key of expected) if (!(key in value)) problems.push(`${where}.${key} is missing`);
  for (const key of Object.keys(value))
    if (!expected.includes(key)) problems.push(`${where}.${key} is not in the schema`);
  return true;
}

/** Appends to `problems` every way `value` differs from the schema of `longLived`. */
export function checkLongLivedShape(value: unknown, problems: string[]): void {
  if (!checkExactKeys('longLived', value, longLivedKeys, problems)) return;
  if (checkExactKeys('longLived.handoffMs', value.handoffMs, handoffKinds, problems))
    for (const kind of handoffKinds) {
      const where = `longLived.handoffMs.${kind}`;
      const entry = value.handoffMs[kind];
      if (!checkExactKeys(where, entry, ['p50', 'p95'], problems)) continue;
      checkNumber(`${where}.p50`, entry.p50, problems);
      checkNumber(`${where}.p95`, entry.p95, problems);
    }
  for (const key of numberKeys) checkNumber(`longLived.${key}`, value[key], problems);
}

// -----------------------------------------------------------------------------------------------------------
// The table

function formatNumber(value: number | null, unit = ''): string {
  if (value === null) return '—';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits })}${unit}`;
}

function formatSpread(value: Spread): string {
  if (value.p50 === null) return '—';
  return `p50 ${formatNumber(value.p50)} · p95 ${formatNumber(value.p95)} ms`;
}

/** The rows of the long-lived part; none when it did not run (every figure null). */
export function longLivedRows(part: LongLivedFigures): TableRow[] {
  const ran =
    part.handoffMs.long.p50 !== null ||
    part.handoffMs.short.p50 !== null ||
    numberKeys.some((key) => part[key] !== null);
  if (!ran) return [];
  const iterations = part.iterations === null ? '—' : formatNumber(part.iterations);
  const replayRatio =
    part.replayOpsPerSecond !== null && part.recordOpsPerSecond !== null && part.recordOpsPerSecond > 0
      ? part.replayOpsPerSecond / part.recordOpsPerSecond
      : null;
  return [
    {
      figure: `long-lived handoff, ${iterations} iterations / ${formatNumber(part.chainRuns)} runs`,
      value: formatSpread(part.handoffMs.long),
      ceiling: `1 run of 1,000: ${formatSpread(part.handoffMs.short)}`,
      ratio: formatNumber(part.handoffRatio),
      target: `ratio ≤ ${longLivedTargets.handoffRatio}`,
      verdict:
        part.handoffRatio === null
          ? 'n/a'
          : part.handoffRatio <= longLivedTargets.handoffRatio
            ? 'pass'
            : 'miss',
    },
    {
      figure: 'long-lived build (one engine)',
      value: `${formatNumber(part.buildIterationsPerSecond)} iterations/s`,
      ceiling: '',
      ratio: '',
      target: '(reported)',
      verdict: '',
    },
    {
      figure: 'replay() of 10,000 operations',
      value: `${formatNumber(part.replayOpsPerSecond)} ops/s`,
      ceiling: `engine run ${formatNumber(part.recordOpsPerSecond)} ops/s`,
      ratio: formatNumber(replayRatio),
      target: '(reported)',
      verdict: '',
    },
  ];
}
