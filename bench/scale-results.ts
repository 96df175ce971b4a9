/**
 * The `scale` part of `bench/results/latest.json` and its rows in the printed table (results.ts includes
 * both). Pure: building, checking and formatting only.
 *
 * `scale` is `{ startRateRatio, parked: [...] }`: one entry per number of parked workflows measured
 * (100, 1,000 and 10,000 in a full run; fewer when quick), in increasing order, each with exactly the keys of
 * `ScaleCaseFigures` (a figure not measured is null), and the ratio of the probe's start rate at the largest N
 * to its rate at the smallest. `parked` is empty when the part did not run.
 */
import type { Spread } from './stats';
import type { TableRow } from './results';
import { checkExactKeys, checkNumber } from './schema-check';

/** The figures of one N (bench/studio/scale.ts says how each is measured; bench/README.md too). */
export type ScaleCaseFigures = {
  parked: number;
  startsPerSecondFirstTenth: number | null;
  startsPerSecondLastTenth: number | null;
  startsPerSecond: number | null;
  /** The probe: starts/s of the same number of starts at every N, with the N parked. */
  probeStartsPerSecond: number | null;
  storageRequestsPerRenewal: number | null;
  storageTransactionsPerRenewal: number | null;
  minClaimMarginMs: number | null;
  minClaimMarginDuringStartsMs: number | null;
  minClaimMarginDuringStartupMs: number | null;
  takeoversFromLiveHolder: number | null;
  describeMs: Spread;
  startupEngineRunningMs: number | null;
  startupFirstRowsMs: number | null;
  dueTimersRunningElsewhereMs: number | null;
  allReachableMs: number | null;
  unreachableAfterTimeout: number | null;
};

/** latest.json's `scale`. */
export type ScaleFigures = { startRateRatio: number | null; parked: ScaleCaseFigures[] };

/** What the scale runner reports (bench/scale.ts): its figures, before the ratio is derived. */
export type ScaleOutputFigures = { quick: boolean; parked: Partial<ScaleCaseFigures>[] };

const numberKeys = [
  'startsPerSecondFirstTenth',
  'startsPerSecondLastTenth',
  'startsPerSecond',
  'probeStartsPerSecond',
  'storageRequestsPerRenewal',
  'storageTransactionsPerRenewal',
  'minClaimMarginMs',
  'minClaimMarginDuringStartsMs',
  'minClaimMarginDuringStartupMs',
  'takeoversFromLiveHolder',
  'startupEngineRunningMs',
  'startupFirstRowsMs',
  'dueTimersRunningElsewhereMs',
  'allReachableMs',
  'unreachableAfterTimeout',
] as const satisfies readonly (keyof ScaleCaseFigures)[];

/** Every key of a `scale.parked` entry, in order. */
export const scaleCaseKeys = [
  'parked',
  ...numberKeys.slice(0, numberKeys.indexOf('takeoversFromLiveHolder') + 1),
  'describeMs',
  ...numberKeys.slice(numberKeys.indexOf('takeoversFromLiveHolder') + 1),
] as const satisfies readonly (keyof ScaleCaseFigures)[];

/** The targets of the scale part (docs/quality.md, Benchmarks). */
export const scaleTargets = {
  /** The probe's start rate at the largest N is at least this share of the probe's rate at the smallest. */
  startRateRatio: 0.8,
  /** "Independent of N": requests per renewal pass at any N at most this multiple of those at the smallest. */
  renewalGrowth: 1.5,
  /** Navigation → engine running on a new tab, ms. */
  startupMs: 2_000,
  /** Close of the holder → every due workflow running elsewhere, ms. */
  dueMs: 1_000,
} as const;

function figure(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** `scale` of latest.json from the runner's figures (or null when the part did not run). */
export function buildScaleFigures(input: { parked?: Partial<ScaleCaseFigures>[] } | null): ScaleFigures {
  const parked = [...(input?.parked ?? [])]
    .filter((entry) => typeof entry.parked === 'number')
    .sort((a, b) => a.parked! - b.parked!)
    .map((entry): ScaleCaseFigures => ({
      parked: entry.parked!,
      startsPerSecondFirstTenth: figure(entry.startsPerSecondFirstTenth),
      startsPerSecondLastTenth: figure(entry.startsPerSecondLastTenth),
      startsPerSecond: figure(entry.startsPerSecond),
      probeStartsPerSecond: figure(entry.probeStartsPerSecond),
      storageRequestsPerRenewal: figure(entry.storageRequestsPerRenewal),
      storageTransactionsPerRenewal: figure(entry.storageTransactionsPerRenewal),
      minClaimMarginMs: figure(entry.minClaimMarginMs),
      minClaimMarginDuringStartsMs: figure(entry.minClaimMarginDuringStartsMs),
      minClaimMarginDuringStartupMs: figure(entry.minClaimMarginDuringStartupMs),
      takeoversFromLiveHolder: figure(entry.takeoversFromLiveHolder),
      describeMs: { p50: figure(entry.describeMs?.p50), p95: figure(entry.describeMs?.p95) },
      startupEngineRunningMs: figure(entry.startupEngineRunningMs),
      startupFirstRowsMs: figure(entry.startupFirstRowsMs),
      dueTimersRunningElsewhereMs: figure(entry.dueTimersRunningElsewhereMs),
      allReachableMs: figure(entry.allReachableMs),
      unreachableAfterTimeout: figure(entry.unreachableAfterTimeout),
    }));
  return { startRateRatio: startRateRatio(parked), parked };
}

/**
 * The probe's start rate at the largest N over the probe's rate at the smallest (the same number of starts,
 * each with its N parked); null with fewer than 2 N.
 */
export function startRateRatio(parked: readonly ScaleCaseFigures[]): number | null {
  if (parked.length < 2) return null;
  const smallest = parked[0]!.probeStartsPerSecond;
  const largest = parked[parked.length - 1]!.probeStartsPerSecond;
  if (smallest === null || largest === null || smallest <= 0) return null;
  return Math.round((largest / smallest) * 1_000) / 1_000;
}

/** Appends to `problems` every way `value` differs from the schema of `scale`. */
export function checkScaleShape(value: unknown, problems: string[]): void {
  if (!checkExactKeys('scale', value, ['startRateRatio', 'parked'], problems)) return;
  checkNumber('scale.startRateRatio', value.startRateRatio, problems);
  if (!Array.isArray(value.parked)) {
    problems.push('scale.parked must be an array');
    return;
  }
  value.parked.forEach((entry: unknown, index: number) => {
    const where = `scale.parked[${index}]`;
    if (!checkExactKeys(where, entry, scaleCaseKeys, problems)) return;
    if (typeof entry.parked !== 'number' || !Number.isInteger(entry.parked) || entry.parked <= 0)
      problems.push(`${where}.parked must be a positive integer`);
    for (const key of numberKeys) checkNumber(`${where}.${key}`, entry[key], problems);
    if (checkExactKeys(`${where}.describeMs`, entry.describeMs, ['p50', 'p95'], problems)) {
      const spread = entry.describeMs as Record<string, unknown>;
      checkNumber(`${where}.describeMs.p50`, spread.p50, problems);
      checkNumber(`${where}.describeMs.p95`, spread.p95, problems);
    }
  });
}

function formatNumber(value: number | null, unit = ''): string {
  if (value === null) return '—';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits })}${unit}`;
}

function verdict(measured: number | null, passes: (value: number) => boolean): TableRow['verdict'] {
  return measured === null ? 'n/a' : passes(measured) ? 'pass' : 'miss';
}

/** The table rows of `scale`: twelve per N measured. */
export function scaleRows(scale: ScaleFigures): TableRow[] {
  const smallest = scale.parked[0];
  const largest = scale.parked.at(-1);
  return scale.parked.flatMap((entry): TableRow[] => {
    const name = (what: string) => `scale N=${entry.parked.toLocaleString('en-US')}: ${what}`;
    const row = (what: string, value: string, target = '', result: TableRow['verdict'] = ''): TableRow => ({
      figure: name(what),
      value,
      ceiling: '',
      ratio: '',
      target,
      verdict: result,
    });
    const isLargest = entry === largest && entry !== smallest;
    const requestsLimit =
      smallest?.storageRequestsPerRenewal != null
        ? smallest.storageRequestsPerRenewal * scaleTargets.renewalGrowth
        : null;
    return [
      row(
        'starts/s, first → last tenth',
        entry.startsPerSecondFirstTenth === null && entry.startsPerSecondLastTenth === null
          ? '—'
          : `${formatNumber(entry.startsPerSecondFirstTenth)} → ${formatNumber(entry.startsPerSecondLastTenth)} (all ${formatNumber(entry.startsPerSecond)})`,
      ),
      {
        ...row('starts/s with N parked (probe)', formatNumber(entry.probeStartsPerSecond)),
        ...(isLargest
          ? {
              ceiling: `N=${smallest!.parked.toLocaleString('en-US')}: ${formatNumber(smallest!.probeStartsPerSecond)}`,
              ratio: formatNumber(scale.startRateRatio),
              target: `≥ ${scaleTargets.startRateRatio * 100} % of N=${smallest!.parked.toLocaleString('en-US')}'s`,
              verdict: verdict(scale.startRateRatio, (ratio) => ratio >= scaleTargets.startRateRatio),
            }
          : {}),
      },
      row(
        'storage requests / renewal pass',
        entry.storageRequestsPerRenewal === null
          ? '—'
          : `${formatNumber(entry.storageRequestsPerRenewal)} (${formatNumber(entry.storageTransactionsPerRenewal)} tx)`,
        entry === smallest
          ? 'independent of N'
          : `≤ ${scaleTargets.renewalGrowth} × N=${smallest!.parked.toLocaleString('en-US')}'s`,
        entry === smallest || requestsLimit === null
          ? entry === smallest
            ? ''
            : 'n/a'
          : verdict(entry.storageRequestsPerRenewal, (value) => value <= requestsLimit),
      ),
      row(
        'min claim margin, 60 s window',
        formatNumber(entry.minClaimMarginMs, ' ms'),
        '> 0',
        verdict(entry.minClaimMarginMs, (value) => value > 0),
      ),
      row(
        'min claim margin during starts',
        formatNumber(entry.minClaimMarginDuringStartsMs, ' ms'),
        '> 0',
        verdict(entry.minClaimMarginDuringStartsMs, (value) => value > 0),
      ),
      row(
        'min claim margin while new tabs start',
        formatNumber(entry.minClaimMarginDuringStartupMs, ' ms'),
        '> 0',
        verdict(entry.minClaimMarginDuringStartupMs, (value) => value > 0),
      ),
      row(
        'takeovers from the live holder',
        formatNumber(entry.takeoversFromLiveHolder),
        '= 0',
        verdict(entry.takeoversFromLiveHolder, (value) => value === 0),
      ),
      row(
        'describe from a third tab',
        entry.describeMs.p50 === null
          ? '—'
          : `p50 ${formatNumber(entry.describeMs.p50)} · p95 ${formatNumber(entry.describeMs.p95)} ms`,
      ),
      row(
        'new tab → engine running',
        formatNumber(entry.startupEngineRunningMs, ' ms'),
        `≤ ${formatNumber(scaleTargets.startupMs)} ms`,
        verdict(entry.startupEngineRunningMs, (value) => value <= scaleTargets.startupMs),
      ),
      row('new tab → first rows shown', formatNumber(entry.startupFirstRowsMs, ' ms')),
      row(
        'close → due timers run elsewhere',
        formatNumber(entry.dueTimersRunningElsewhereMs, ' ms'),
        `≤ ${formatNumber(scaleTargets.dueMs)} ms`,
        verdict(entry.dueTimersRunningElsewhereMs, (value) => value <= scaleTargets.dueMs),
      ),
      row(
        'close → every workflow reachable',
        entry.allReachableMs !== null
          ? formatNumber(entry.allReachableMs, ' ms')
          : entry.unreachableAfterTimeout !== null
            ? `${formatNumber(entry.unreachableAfterTimeout)} not after 60 s`
            : '—',
        '(reported)',
      ),
    ];
  });
}
