/**
 * The scale benchmark (`SHUTTLE_BENCH_ONLY=scale`), driven from Node with Playwright in Chromium against the
 * built app served by `vite preview` (scripts/bench.mjs starts the server and passes `--base-url`). Runs
 * studio/scale.ts for N = 100, 1,000 and 10,000 parked workflows in one browser of its own, and prints one
 * JSON line on stdout — `{ figures, details }`, the figures in latest.json's `scale` shape — and progress on
 * stderr.
 *
 * Environment: `SHUTTLE_BENCH_QUICK=1` measures N = 100 and 1,000 only, with a 20 s window and one start-up
 * run (the table then says which N were measured); `SHUTTLE_BENCH_SCALE_COUNTS=100,2000` chooses the N;
 * `CHROMIUM_PATH` chooses the browser (see e2e/fixtures/chromium.ts).
 */
import { chromium } from '@playwright/test';
import { chromiumArgs, resolveChromium } from '../e2e/fixtures/chromium';
import type { ScaleOutputFigures } from './scale-results';
import { measureScale, type ScaleOptions } from './studio/scale';

const quick = process.env.SHUTTLE_BENCH_QUICK === '1';

function countsFromEnvironment(): number[] | null {
  const raw = process.env.SHUTTLE_BENCH_SCALE_COUNTS;
  if (!raw) return null;
  const counts = raw.split(',').map((part) => Number(part.trim()));
  if (counts.some((count) => !Number.isInteger(count) || count < 21))
    throw new Error(`SHUTTLE_BENCH_SCALE_COUNTS must list integers above 20; got '${raw}'.`);
  return counts;
}

const options: Omit<ScaleOptions, 'log'> = {
  counts: countsFromEnvironment() ?? (quick ? [100, 1_000] : [100, 1_000, 10_000]),
  batchSize: 50,
  windowMs: quick ? 20_000 : 60_000,
  startupRuns: quick ? 1 : 3,
  probeStarts: quick ? 300 : 500,
  dueWorkflows: 20,
  dueDelayMs: 3_000,
  reachableTimeoutMs: 60_000,
};

function log(message: string): void {
  process.stderr.write(`[bench:scale] ${message}\n`);
}

function baseUrlFromArguments(): string {
  const index = process.argv.indexOf('--base-url');
  const value = index >= 0 ? process.argv[index + 1] : undefined;
  if (!value) throw new Error('usage: node bench/.build/scale.js --base-url http://localhost:<port>');
  return value.replace(/\/$/, '');
}

async function main(): Promise<void> {
  const baseUrl = baseUrlFromArguments();
  const started = Date.now();
  log(
    `N = ${options.counts.map((count) => count.toLocaleString('en-US')).join(', ')}${quick ? ' (quick: smaller N, 20 s window)' : ''}`,
  );
  const browser = await chromium.launch({ executablePath: resolveChromium(), args: [...chromiumArgs] });
  try {
    const context = await browser.newContext();
    const { cases, figures } = await measureScale(context, baseUrl, { ...options, log });
    await context.close();
    const output: { figures: ScaleOutputFigures; details: unknown } = {
      figures: { quick, parked: figures },
      details: { options, totalMs: Date.now() - started, cases },
    };
    process.stdout.write(`${JSON.stringify(output)}\n`);
  } finally {
    await browser.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
