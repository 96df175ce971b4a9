/**
 * Writes the benchmark results: `bench/results/latest.json` (exactly the schema of results.ts, checked
 * before writing) and `bench/results/details.json` (samples, spreads, runs, failures and the machine), and
 * returns the readable table. Imported by scripts/bench.mjs once built.
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

/** What the Node runner printed: the figures plus its `details`. */
export type NodeOutput = Partial<NodeFigures> & { details?: unknown };
/** What the browser runner printed; `longLived` when the browser half of the long-lived part ran. */
export type BrowserOutput = {
  figures: BrowserFigures;
  details?: unknown;
  longLived?: { figures: LongLivedBrowserInput; details?: unknown } | null;
};
/** What the server runner printed (bench/server.ts). */
export type ServerOutput = { figures: ServerInput; details?: unknown };
/** What the scale runner printed (bench/scale.ts). */
export type ScaleOutput = { figures: ScaleOutputFigures; details?: unknown };
/** What the long-lived runner printed (bench/long-lived.ts). */
export type LongLivedOutput = { figures: LongLivedInput; details?: unknown };

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
  const latest = buildLatestResults({
    generatedAt: input.generatedAt,
    node: input.node ? nodeFigures : null,
    browser: input.browser?.figures ?? null,
    server: input.server?.figures ?? null,
    scale: input.scale?.figures ?? null,
    longLived,
  });
  const problems = checkLatestShape(latest);
  if (problems.length > 0) throw new Error(`latest.json would not match the schema: ${problems.join('; ')}`);
  await mkdir(input.resultsDir, { recursive: true });
  await writeFile(path.join(input.resultsDir, 'latest.json'), `${JSON.stringify(latest, null, 2)}\n`);
  const details = {
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
  };
  await writeFile(path.join(input.resultsDir, 'details.json'), `${JSON.stringify(details, null, 2)}\n`);
  return { latest, table: formatTable(tableRows(latest)), problems };
}
