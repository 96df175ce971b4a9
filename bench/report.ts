/**
 * Writes the benchmark results: `bench/results/latest.json` (exactly the schema of results.ts, checked
 * before writing) and `bench/results/details.json` (samples, spreads, runs, failures and the machine), and
 * returns the readable table. Imported by scripts/bench.mjs once built.
 *
 * Merging (`SHUTTLE_BENCH_MERGE=1`, `input.previous`): a part of latest.json this run measured nothing of
 * (every figure null) is taken whole from the previous files, its details with it; `details.merged` names
 * the parts kept and the run they come from. A part this run measured anything of replaces the previous one
 * whole.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  buildLatestResults,
  checkLatestShape,
  formatTable,
  tableRows,
  type BrowserFigures,
  type LatestResults,
  type NodeFigures,
} from './results';
import type { ServerInput } from './server-results';
import type { ScaleOutputFigures } from './scale-results';
import type { LongLivedBrowserInput, LongLivedInput } from './long-lived-results';
import type { QueuesHalfInput, QueuesInput } from './queues-results';

/** What the Node runner printed: the figures plus its `details`. */
export type NodeOutput = Partial<NodeFigures> & { details?: unknown };
/** What the browser runner printed; `longLived` when the browser half of the long-lived part ran. */
export type BrowserOutput = {
  figures: BrowserFigures;
  details?: unknown;
  longLived?: { figures: LongLivedBrowserInput; details?: unknown } | null;
  /** The browser half of the queues part, when it ran (bench/studio/queues.ts). */
  queues?: { figures: QueuesHalfInput; details?: unknown } | null;
};
/** What the server runner printed (bench/server.ts). */
export type ServerOutput = { figures: ServerInput; details?: unknown };
/** What the scale runner printed (bench/scale.ts). */
export type ScaleOutput = { figures: ScaleOutputFigures; details?: unknown };
/** What the long-lived runner printed (bench/long-lived.ts). */
export type LongLivedOutput = { figures: LongLivedInput; details?: unknown };
/** What the PostgreSQL half of the queues part printed (bench/queues.ts). */
export type QueuesOutput = { figures: NonNullable<QueuesInput['postgres']>; details?: unknown };

export type ReportInput = {
  resultsDir: string;
  generatedAt: string;
  node: NodeOutput | null;
  browser: BrowserOutput | null;
  /** The scale part, when it ran. */
  scale?: ScaleOutput | null;
  /** The server part, when it ran. */
  server?: ServerOutput | null;
  /** The long-lived part, when it ran. */
  longLived?: LongLivedOutput | null;
  /** The PostgreSQL half of the queues part, when it ran. */
  queues?: QueuesOutput | null;
  /** The files of the previous run, to keep the parts this run did not measure (`SHUTTLE_BENCH_MERGE=1`). */
  previous?: { latest: unknown; details: unknown } | null;
  /** How the run went: quick or full, timings, load, failures of whole runners. */
  run: Record<string, unknown>;
};

/** This machine, for details.json: noisy shared machines explain noisy numbers. */
export function describeMachine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? null,
    totalMemoryBytes: os.totalmem(),
    loadAverage: os.loadavg().map((value) => Math.round(value * 100) / 100),
    node: process.version,
  };
}

/** Writes latest.json and details.json; returns the results, the table and any schema problems. */
export async function writeBenchResults(
  input: ReportInput,
): Promise<{ latest: LatestResults; table: string; problems: string[] }> {
  const { details: nodeDetails, ...nodeFigures } = input.node ?? {};
  const longLivedBrowser = input.browser?.longLived ?? null;
  const longLived =
    input.longLived || longLivedBrowser
      ? { ...(input.longLived?.figures ?? {}), browser: longLivedBrowser?.figures ?? null }
      : null;
  const queuesBrowser = input.browser?.queues ?? null;
  const queues =
    input.queues || queuesBrowser
      ? { postgres: input.queues?.figures ?? null, browser: queuesBrowser?.figures ?? null }
      : null;
  const measured = buildLatestResults({
    generatedAt: input.generatedAt,
    node: input.node ? nodeFigures : null,
    browser: input.browser?.figures ?? null,
    server: input.server?.figures ?? null,
    scale: input.scale?.figures ?? null,
    longLived,
    queues,
  });
  const details: Record<string, unknown> = {
    generatedAt: input.generatedAt,
    machine: describeMachine(),
    run: input.run,
    node: nodeDetails ?? null,
    browser: input.browser?.details ?? null,
    server: input.server?.details ?? null,
    scale: input.scale?.details ?? null,
    longLived: longLived
      ? { node: input.longLived?.details ?? null, browser: longLivedBrowser?.details ?? null }
      : null,
    queues: queues
      ? { postgres: input.queues?.details ?? null, browser: queuesBrowser?.details ?? null }
      : null,
  };
  const latest = input.previous ? mergeResults(measured, details, input.previous) : measured;
  const problems = checkLatestShape(latest);
  if (problems.length > 0) throw new Error(`latest.json would not match the schema: ${problems.join('; ')}`);
  await mkdir(input.resultsDir, { recursive: true });
  await writeFile(path.join(input.resultsDir, 'latest.json'), `${JSON.stringify(latest, null, 2)}\n`);
  await writeFile(path.join(input.resultsDir, 'details.json'), `${JSON.stringify(details, null, 2)}\n`);
  return { latest, table: formatTable(tableRows(latest)), problems };
}

/** Whether `value` holds no measured figure: only nulls (and empty arrays) at its leaves. */
export function unmeasuredPart(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.every(unmeasuredPart);
  if (typeof value === 'object') return Object.values(value).every(unmeasuredPart);
  return false;
}

/**
 * `measured` with every part it measured nothing of taken from `previous.latest` (and that part's details
 * from `previous.details`, into `details`, which gains `merged`: the parts kept and, for each, the run it was
 * measured in — carried over when the previous file had itself kept it from an earlier run — and this run's
 * own details of those parts, e.g. the browser runner's failures and version). Parts absent from the
 * previous file stay as measured (null).
 */
export function mergeResults(
  measured: LatestResults,
  details: Record<string, unknown>,
  previous: { latest: unknown; details: unknown },
): LatestResults {
  const before = (previous.latest ?? {}) as Record<string, unknown>;
  const beforeDetails = (previous.details ?? {}) as Record<string, unknown>;
  const earlier = (beforeDetails.merged as { sources?: Record<string, unknown> } | undefined)?.sources ?? {};
  const merged: Record<string, unknown> = { ...measured };
  const sources: Record<string, unknown> = {};
  const displaced: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(measured)) {
    if (key === 'generatedAt' || !unmeasuredPart(value) || !(key in before)) continue;
    merged[key] = before[key];
    // This run's details of a part it measured nothing of (a runner's failures, the browser's version) stay.
    if (details[key] !== null && details[key] !== undefined) displaced[key] = details[key];
    details[key] = beforeDetails[key] ?? null;
    sources[key] = earlier[key] ?? {
      generatedAt: before.generatedAt ?? null,
      run: beforeDetails.run ?? null,
      machine: beforeDetails.machine ?? null,
    };
  }
  details.merged = { keptParts: Object.keys(sources), sources, thisRunsDetails: displaced };
  return merged as LatestResults;
}
