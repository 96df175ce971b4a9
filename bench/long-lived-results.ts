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
import { checkExactKeys, checkNumber } from './schema-check';

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
  /**
   * The same handoff in Chromium, between two bench tabs' engines over one IndexedDB database (studio setup):
   * X's graceful shutdown plus Y's `stop` → completed, each timed in its tab.
   */
  browser: LongLivedBrowserFigures;
};

/** latest.json's `longLived.browser`. */
export type LongLivedBrowserFigures = {
  handoffMs: { long: Spread; short: Spread };
  /** long p50 / short p50 (target ≤ 1.2). */
  handoffRatio: number | null;
  chainRuns: number | null;
  /** Building the long workflow in tab X (IndexedDB): iterations per second, p50. */
  buildIterationsPerSecond: number | null;
};

/** What the browser runner reports for the part (bench/studio/long-lived.ts), before null-filling. */
export type LongLivedBrowserInput = Partial<Omit<LongLivedBrowserFigures, 'handoffMs' | 'handoffRatio'>> & {
  handoffMs?: Partial<LongLivedBrowserFigures['handoffMs']>;
};

/** What the runner reports (bench/long-lived.ts), before null-filling; its own ratio is ignored. */
export type LongLivedInput = Partial<Omit<LongLivedFigures, 'handoffMs' | 'browser'>> & {
  handoffMs?: Partial<LongLivedFigures['handoffMs']>;
  browser?: LongLivedBrowserInput | null;
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
  'browser',
] as const satisfies readonly (keyof LongLivedFigures)[];

const numberKeys = longLivedKeys.filter(
  (key): key is Exclude<(typeof longLivedKeys)[number], 'handoffMs' | 'browser'> =>
    key !== 'handoffMs' && key !== 'browser',
);

/** Every key of `longLived.browser`, in order. */
export const longLivedBrowserKeys = [
  'handoffMs',
  'handoffRatio',
  'chainRuns',
  'buildIterationsPerSecond',
] as const satisfies readonly (keyof LongLivedBrowserFigures)[];

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

function ratioOf(long: Spread, short: Spread): number | null {
  return long.p50 !== null && short.p50 !== null && short.p50 > 0
    ? Math.round((long.p50 / short.p50) * 100) / 100
    : null;
}

/** `longLived.browser` of latest.json (all null when the browser half did not run). */
function buildBrowserFigures(input: LongLivedBrowserInput | null | undefined): LongLivedBrowserFigures {
  const part = input ?? {};
  const long = spread(part.handoffMs?.long);
  const short = spread(part.handoffMs?.short);
  return {
    handoffMs: { long, short },
    handoffRatio: ratioOf(long, short),
    chainRuns: figure(part.chainRuns),
    buildIterationsPerSecond: figure(part.buildIterationsPerSecond),
  };
}

/** `longLived` of latest.json from the runners' figures (all null when the part did not run). */
export function buildLongLivedFigures(input: LongLivedInput | null | undefined): LongLivedFigures {
  const part = input ?? {};
  // The figures both halves have, built as the browser half's.
  const chain = buildBrowserFigures(part);
  return {
    handoffMs: chain.handoffMs,
    handoffRatio: chain.handoffRatio,
    iterations: figure(part.iterations),
    chainRuns: chain.chainRuns,
    buildIterationsPerSecond: chain.buildIterationsPerSecond,
    replayOpsPerSecond: figure(part.replayOpsPerSecond),
    recordOpsPerSecond: figure(part.recordOpsPerSecond),
    browser: buildBrowserFigures(part.browser),
  };
}

function checkHandoffs(where: string, value: unknown, problems: string[]): void {
  if (!checkExactKeys(where, value, handoffKinds, problems)) return;
  for (const kind of handoffKinds) {
    const entry = value[kind];
    if (!checkExactKeys(`${where}.${kind}`, entry, ['p50', 'p95'], problems)) continue;
    checkNumber(`${where}.${kind}.p50`, entry.p50, problems);
    checkNumber(`${where}.${kind}.p95`, entry.p95, problems);
  }
}

/** Appends to `problems` every way `value` differs from the schema of `longLived`. */
export function checkLongLivedShape(value: unknown, problems: string[]): void {
  if (!checkExactKeys('longLived', value, longLivedKeys, problems)) return;
  checkHandoffs('longLived.handoffMs', value.handoffMs, problems);
  for (const key of numberKeys) checkNumber(`longLived.${key}`, value[key], problems);
  const browser = value.browser;
  if (!checkExactKeys('longLived.browser', browser, longLivedBrowserKeys, problems)) return;
  checkHandoffs('longLived.browser.handoffMs', browser.handoffMs, problems);
  for (const key of ['handoffRatio', 'chainRuns', 'buildIterationsPerSecond'] as const)
    checkNumber(`longLived.browser.${key}`, browser[key], problems);
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

function verdictOf(ratio: number | null): TableRow['verdict'] {
  return ratio === null ? 'n/a' : ratio <= longLivedTargets.handoffRatio ? 'pass' : 'miss';
}

/** The handoff row (the chain beside one run) and the build row of one half of the part. */
function chainRows(
  handoffFigure: string,
  buildFigure: string,
  half: Pick<LongLivedBrowserFigures, 'handoffMs' | 'handoffRatio' | 'buildIterationsPerSecond'>,
): TableRow[] {
  return [
    {
      figure: handoffFigure,
      value: formatSpread(half.handoffMs.long),
      ceiling: `1 run of 1,000: ${formatSpread(half.handoffMs.short)}`,
      ratio: formatNumber(half.handoffRatio),
      target: `ratio ≤ ${longLivedTargets.handoffRatio}`,
      verdict: verdictOf(half.handoffRatio),
    },
    {
      figure: buildFigure,
      value: `${formatNumber(half.buildIterationsPerSecond)} iterations/s`,
      ceiling: '',
      ratio: '',
      target: '(reported)',
      verdict: '',
    },
  ];
}

/** The rows of the long-lived part; none when it did not run (every figure null). */
export function longLivedRows(part: LongLivedFigures): TableRow[] {
  const browser = part.browser;
  const browserRan =
    browser.handoffMs.long.p50 !== null ||
    browser.handoffMs.short.p50 !== null ||
    browser.chainRuns !== null ||
    browser.buildIterationsPerSecond !== null;
  const nodeRan =
    part.handoffMs.long.p50 !== null ||
    part.handoffMs.short.p50 !== null ||
    numberKeys.some((key) => part[key] !== null);
  const browserRows = browserRan
    ? chainRows(
        `long-lived handoff in Chromium (IndexedDB, two tabs), ${formatNumber(browser.chainRuns)} runs`,
        'long-lived build in Chromium (one tab)',
        browser,
      )
    : [];
  if (!nodeRan) return browserRows;
  const iterations = part.iterations === null ? '—' : formatNumber(part.iterations);
  const replayRatio =
    part.replayOpsPerSecond !== null && part.recordOpsPerSecond !== null && part.recordOpsPerSecond > 0
      ? part.replayOpsPerSecond / part.recordOpsPerSecond
      : null;
  return [
    ...chainRows(
      `long-lived handoff in Node (memory), ${iterations} iterations / ${formatNumber(part.chainRuns)} runs`,
      'long-lived build (one engine)',
      part,
    ),
    {
      figure: 'replay() of 10,000 operations',
      value: `${formatNumber(part.replayOpsPerSecond)} ops/s`,
      ceiling: `engine run ${formatNumber(part.recordOpsPerSecond)} ops/s`,
      ratio: formatNumber(replayRatio),
      target: '(reported)',
      verdict: '',
    },
    ...browserRows,
  ];
}
