/**
 * The shape of `bench/results/latest.json` (docs/quality.md, Benchmarks) and the readable table printed
 * beside it. Pure: building, checking and formatting only; writing files is report.ts's job.
 *
 * Guarantees:
 * - `buildLatestResults` copies exactly the keys of the schema, in the schema's order, from whatever richer
 *   objects the runners produce, so extra detail can never leak into latest.json (it goes to details.json).
 * - A figure that could not be measured is `null`, never a made-up 0 (e.g. the freeze handoff when the
 *   studio has no chaos control channel yet).
 * - `checkLatestShape` lists every difference from the schema (missing, extra or mistyped keys), so the
 *   runner can refuse to write a malformed file.
 */
import {
  buildScaleFigures,
  checkScaleShape,
  scaleRows,
  type ScaleCaseFigures,
  type ScaleFigures,
} from './scale-results';
import { hostClaimTimings } from '../src/protocol';
import type { Spread } from './stats';
import {
  buildThroughputFigure,
  checkFigure,
  throughputKeys,
  type ThroughputFigure,
} from './throughput-figures';
import {
  buildServerFigures,
  checkServerShape,
  serverRows,
  throughputRow,
  type ServerFigures,
  type ServerInput,
} from './server-results';
import {
  buildLongLivedFigures,
  checkLongLivedShape,
  longLivedRows,
  type LongLivedFigures,
  type LongLivedInput,
} from './long-lived-results';
import {
  buildQueuesFigures,
  checkQueuesShape,
  queuesRows,
  type QueuesFigures,
  type QueuesInput,
} from './queues-results';
import { checkExactKeys, checkNumber } from './schema-check';

/** The Node figures (bench/node.ts). */
export type NodeFigures = {
  stepsPerSecond: number | null;
  workflowsPerSecond: number | null;
  recoveryMsPer1000Workflows: number | null;
  heapBytesPerParkedWorkflow: number | null;
};

/** The browser figures (bench/browser.ts). */
export type BrowserFigures = {
  /** One workflow of zero-length steps; its ceiling: one `add` of its record size per transaction. */
  one: ThroughputFigure;
  /** Fifty workflows at once; its ceiling: its own steps per commit in one transaction, two in flight. */
  fifty: ThroughputFigure;
  handoffMs: { graceful: Spread; crash: Spread; freeze: Spread; lifecycleFreeze: Spread };
  /** A studio tab opening a fresh database: navigation → its engine's first workflow commit. */
  startupMs: Spread;
  crossTabSignalMs: Spread;
  crossTabResultMs: Spread;
  duplicateCommits: number | null;
};

/** The whole of latest.json. */
export type LatestResults = {
  generatedAt: string;
  node: NodeFigures;
  browser: BrowserFigures;
  /** The scale part (scale-results.ts). */
  scale: ScaleFigures;
  /** The server part (server-results.ts). */
  server: ServerFigures;
  /** The long-lived part: continue-as-new handoff and replay speed (long-lived-results.ts). */
  longLived: LongLivedFigures;
  /** The queues part: latency and throughput through a queue, over PostgreSQL and in Chromium (queues-results.ts). */
  queues: QueuesFigures;
};

const nodeKeys = [
  'stepsPerSecond',
  'workflowsPerSecond',
  'recoveryMsPer1000Workflows',
  'heapBytesPerParkedWorkflow',
] as const satisfies readonly (keyof NodeFigures)[];

const browserThroughputKeys = ['one', 'fifty'] as const satisfies readonly (keyof BrowserFigures)[];

const handoffKinds = ['graceful', 'crash', 'freeze', 'lifecycleFreeze'] as const;

/** A spread with nothing measured. */
export const unmeasured: Spread = Object.freeze({ p50: null, p95: null });

function spread(value: Partial<Spread> | null | undefined): Spread {
  return { p50: value?.p50 ?? null, p95: value?.p95 ?? null };
}

function figure(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * latest.json from the runners' figures: exactly the schema's keys, nothing else. Missing figures become null.
 *
 * @example
 * buildLatestResults({ generatedAt: new Date().toISOString(), node: nodeOutput, browser: browserOutput });
 */
export function buildLatestResults(input: {
  generatedAt: string;
  node: Partial<NodeFigures> | null;
  browser:
    | (Partial<Omit<BrowserFigures, 'handoffMs' | 'one' | 'fifty'>> & {
        one?: Partial<ThroughputFigure> | null;
        fifty?: Partial<ThroughputFigure> | null;
        handoffMs?: Partial<BrowserFigures['handoffMs']>;
      })
    | null;
  scale?: { parked?: Partial<ScaleCaseFigures>[] } | null;
  server?: ServerInput | null;
  longLived?: LongLivedInput | null;
  queues?: QueuesInput | null;
}): LatestResults {
  const node = input.node ?? {};
  const browser = input.browser ?? {};
  return {
    generatedAt: input.generatedAt,
    node: {
      stepsPerSecond: figure(node.stepsPerSecond),
      workflowsPerSecond: figure(node.workflowsPerSecond),
      recoveryMsPer1000Workflows: figure(node.recoveryMsPer1000Workflows),
      heapBytesPerParkedWorkflow: figure(node.heapBytesPerParkedWorkflow),
    },
    browser: {
      one: buildThroughputFigure(browser.one),
      fifty: buildThroughputFigure(browser.fifty),
      handoffMs: {
        graceful: spread(browser.handoffMs?.graceful),
        crash: spread(browser.handoffMs?.crash),
        freeze: spread(browser.handoffMs?.freeze),
        lifecycleFreeze: spread(browser.handoffMs?.lifecycleFreeze),
      },
      startupMs: spread(browser.startupMs),
      crossTabSignalMs: spread(browser.crossTabSignalMs),
      crossTabResultMs: spread(browser.crossTabResultMs),
      duplicateCommits: figure(browser.duplicateCommits),
    },
    scale: buildScaleFigures(input.scale ?? null),
    server: buildServerFigures(input.server ?? null),
    longLived: buildLongLivedFigures(input.longLived ?? null),
    queues: buildQueuesFigures(input.queues ?? null),
  };
}

function checkSpread(where: string, value: unknown, problems: string[]): void {
  if (!checkExactKeys(where, value, ['p50', 'p95'], problems)) return;
  checkNumber(`${where}.p50`, value.p50, problems);
  checkNumber(`${where}.p95`, value.p95, problems);
}

/** Every way `value` differs from the latest.json schema; empty when it conforms. */
export function checkLatestShape(value: unknown): string[] {
  const problems: string[] = [];
  if (
    !checkExactKeys(
      'results',
      value,
      ['generatedAt', 'node', 'browser', 'scale', 'server', 'longLived', 'queues'],
      problems,
    )
  )
    return problems;
  if (typeof value.generatedAt !== 'string' || Number.isNaN(Date.parse(value.generatedAt)))
    problems.push('results.generatedAt must be an ISO date string');
  if (checkExactKeys('node', value.node, nodeKeys, problems))
    for (const key of nodeKeys) checkNumber(`node.${key}`, value.node[key], problems);
  const browserKeys = [
    ...browserThroughputKeys,
    'handoffMs',
    'startupMs',
    'crossTabSignalMs',
    'crossTabResultMs',
    'duplicateCommits',
  ];
  if (checkExactKeys('browser', value.browser, browserKeys, problems)) {
    const browser = value.browser;
    for (const key of browserThroughputKeys)
      checkFigure(`browser.${key}`, browser[key], throughputKeys, problems);
    if (checkExactKeys('browser.handoffMs', browser.handoffMs, handoffKinds, problems))
      for (const kind of handoffKinds)
        checkSpread(`browser.handoffMs.${kind}`, browser.handoffMs[kind], problems);
    checkSpread('browser.startupMs', browser.startupMs, problems);
    checkSpread('browser.crossTabSignalMs', browser.crossTabSignalMs, problems);
    checkSpread('browser.crossTabResultMs', browser.crossTabResultMs, problems);
    checkNumber('browser.duplicateCommits', browser.duplicateCommits, problems);
  }
  checkScaleShape(value.scale, problems);
  checkServerShape(value.server, problems);
  checkLongLivedShape(value.longLived, problems);
  checkQueuesShape(value.queues, problems);
  return problems;
}

// -----------------------------------------------------------------------------------------------------------
// Targets and the table

/**
 * The freeze handoff's expected window, in ms (by default for the studio's claim timings, `hostClaimTimings`): takeover is allowed strictly after the last renewal's
 * `expiresAt` + 2 renew intervals (the last renewal was up to one interval before the freeze) and happens at
 * the next reclaim scan (one more interval), so "≈ TTL + grace + one renew interval" is
 * [TTL + grace − renew, TTL + grace + renew], given one interval of slack for the step itself.
 */
export function freezeWindowMs(timings: { ttlMs: number; renewIntervalMs: number } = hostClaimTimings): {
  low: number;
  high: number;
} {
  const grace = 2 * timings.renewIntervalMs;
  return {
    low: timings.ttlMs + grace - timings.renewIntervalMs,
    high: timings.ttlMs + grace + 2 * timings.renewIntervalMs,
  };
}

/**
 * Tab start-up's target (navigation → the engine's first commit), in ms: the scale part's target for a new
 * tab's engine running (docs/quality.md).
 */
export const startupTargetMs = 2_000;

/** The browser throughput targets: each of its own ceiling (the same writes without the engine). */
export const browserTargets = { stepRatio: 0.8, parallelRatio: 0.8 } as const;

/** The Node steps-per-second reference: weft, on SQLite in memory, on a laptop (docs/quality.md). */
export const weftStepsPerSecond = 18_000;

/** One line of the table. */
export type TableRow = {
  figure: string;
  value: string;
  ceiling: string;
  ratio: string;
  target: string;
  verdict: 'pass' | 'miss' | 'n/a' | '';
};

function formatNumber(value: number | null, unit = ''): string {
  if (value === null) return '—';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits })}${unit}`;
}

function formatSpread(value: Spread): string {
  if (value.p50 === null) return '—';
  return `p50 ${formatNumber(value.p50)} · p95 ${formatNumber(value.p95)} ms`;
}

function verdict(measured: number | null, passes: (value: number) => boolean): TableRow['verdict'] {
  return measured === null ? 'n/a' : passes(measured) ? 'pass' : 'miss';
}

/** The rows of the readable table: each figure, its ceiling where it has one, the ratio, target and verdict. */
export function tableRows(results: LatestResults): TableRow[] {
  const { node, browser } = results;
  const freeze = freezeWindowMs();
  const latency = (figure: string, value: Spread, limit: number): TableRow => ({
    figure,
    value: formatSpread(value),
    ceiling: '',
    ratio: '',
    target: `p50 ≤ ${formatNumber(limit)} ms`,
    verdict: verdict(value.p50, (p50) => p50 <= limit),
  });
  return [
    {
      figure: 'node steps/s (memory store)',
      value: formatNumber(node.stepsPerSecond),
      ceiling: `weft ${formatNumber(weftStepsPerSecond)}`,
      ratio: formatNumber(node.stepsPerSecond === null ? null : node.stepsPerSecond / weftStepsPerSecond),
      target: `≥ ${formatNumber(weftStepsPerSecond)}`,
      verdict: verdict(node.stepsPerSecond, (value) => value >= weftStepsPerSecond),
    },
    {
      figure: 'node workflows/s',
      value: formatNumber(node.workflowsPerSecond),
      ceiling: '',
      ratio: '',
      target: '',
      verdict: '',
    },
    {
      figure: 'node recovery ms per 1,000 parked',
      value: formatNumber(node.recoveryMsPer1000Workflows, ' ms'),
      ceiling: '',
      ratio: '',
      target: 'linear in count',
      verdict: '',
    },
    {
      figure: 'node heap bytes per parked workflow',
      value: formatNumber(node.heapBytesPerParkedWorkflow, ' B'),
      ceiling: '',
      ratio: '',
      target: '',
      verdict: '',
    },
    throughputRow('browser, 1 workflow', browser.one, browserTargets.stepRatio),
    throughputRow('browser, 50 workflows', browser.fifty, browserTargets.parallelRatio),
    latency('handoff, graceful close', browser.handoffMs.graceful, 100),
    latency('handoff, crash', browser.handoffMs.crash, 300),
    {
      figure: 'handoff, freeze',
      value: formatSpread(browser.handoffMs.freeze),
      ceiling: '',
      ratio: '',
      target: `p50 in ${formatNumber(freeze.low)}–${formatNumber(freeze.high)} ms`,
      verdict: verdict(browser.handoffMs.freeze.p50, (p50) => p50 >= freeze.low && p50 <= freeze.high),
    },
    latency('handoff, lifecycle freeze (CDP)', browser.handoffMs.lifecycleFreeze, 300),
    latency('tab start-up → first commit', browser.startupMs, startupTargetMs),
    latency('cross-tab signal', browser.crossTabSignalMs, 50),
    latency('cross-tab result', browser.crossTabResultMs, 50),
    {
      figure: 'duplicate commits',
      value: formatNumber(browser.duplicateCommits),
      ceiling: '',
      ratio: '',
      target: '= 0',
      verdict: verdict(browser.duplicateCommits, (count) => count === 0),
    },
    ...scaleRows(results.scale),
    ...serverRows(results.server),
    ...longLivedRows(results.longLived),
    ...queuesRows(results.queues),
  ];
}

/** The table as aligned text, one row per figure. */
export function formatTable(rows: readonly TableRow[]): string {
  const header: TableRow = {
    figure: 'figure',
    value: 'value',
    ceiling: 'ceiling',
    ratio: 'ratio',
    target: 'target',
    verdict: '' as TableRow['verdict'],
  };
  const columns = ['figure', 'value', 'ceiling', 'ratio', 'target', 'verdict'] as const;
  const cells = [header, ...rows].map((row) =>
    columns.map((column) => (column === 'verdict' && row === header ? 'result' : row[column])),
  );
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => line[index]!.length)));
  const lines = cells.map((line) =>
    line
      .map((cell, index) => cell.padEnd(widths[index]!))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((width) => '─'.repeat(width)).join('  '));
  return lines.join('\n');
}
