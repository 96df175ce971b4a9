/**
 * The browser benchmarks, driven from Node with Playwright in Chromium against the built app served by
 * `vite preview` (scripts/bench.mjs starts the server and passes `--base-url`). Prints one JSON line on
 * stdout — `{ figures, details }`, the figures in latest.json's `browser` shape — and progress on stderr.
 *
 * Order: the throughput run on the bench page first (no studio tab is open, so no other engine competes),
 * then the handoffs (graceful, crash, freeze, lifecycle-freeze, and shutdown for the details), then tab
 * start-up, then cross-tab signal and result latency, then the browser half of `long-lived` (a continued-as-new
 * chain handed over between two bench tabs, bench/studio/long-lived.ts), then the browser half of `queues` (a queue of
 * 10 beside 10 at a time without one, in one bench tab: bench/studio/queues.ts). Each part records its failures in the details instead
 * of aborting the others; a figure with no successful run is null.
 *
 * Environment: `SHUTTLE_BENCH_QUICK=1` for a short run; `SHUTTLE_BENCH_ONLY=throughput,graceful,crash,freeze,
 * lifecycle-freeze,shutdown,startup,cross-tab,long-lived,queues` to run some parts only (`shutdown` is a details-only handoff;
 * `handoff` stands for every handoff kind); `CHROMIUM_PATH` to choose the browser (see
 * e2e/fixtures/chromium.ts).
 */
import { chromium, type Browser, type BrowserContext } from '@playwright/test';
import { chromiumArgs, resolveChromium } from '../e2e/fixtures/chromium';
import type { ThroughputOptions, ThroughputResult } from './browser/protocol';
import { unmeasured, type BrowserFigures } from './results';
import { spreadOf } from './stats';
import { measureCrossTab, type CrossTabFigures } from './studio/cross-tab';
import { measureHandoffs, type HandoffFigure, type HandoffKind } from './studio/handoff';
import { measureLongLivedBrowser } from './studio/long-lived';
import { measureQueuesBrowser } from './studio/queues';
import { measureStartup, type StartupFigure } from './studio/startup';
import { summarizeThroughput } from './throughput-summary';
import { buildThroughputFigure } from './throughput-figures';

const quick = process.env.SHUTTLE_BENCH_QUICK === '1';
const handoffParts = ['graceful', 'crash', 'freeze', 'lifecycle-freeze', 'shutdown'];
const parts = new Set(
  (
    process.env.SHUTTLE_BENCH_ONLY ??
    'throughput,graceful,crash,freeze,lifecycle-freeze,shutdown,startup,cross-tab,long-lived,queues'
  )
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .flatMap((part) => (part === 'handoff' ? handoffParts : [part])),
);
/** The part name (`SHUTTLE_BENCH_ONLY`) of each handoff kind. */
const handoffPart: Record<HandoffKind, string> = {
  graceful: 'graceful',
  crash: 'crash',
  freeze: 'freeze',
  lifecycleFreeze: 'lifecycle-freeze',
  shutdown: 'shutdown',
};

const throughputOptions: ThroughputOptions = quick
  ? { rounds: 2, rawDurationMs: 800, engineDurationMs: 800, parallelWorkflows: 50, variantRounds: 1 }
  : { rounds: 5, rawDurationMs: 2_000, engineDurationMs: 2_000, parallelWorkflows: 50, variantRounds: 3 };

const handoffRuns: Record<HandoffKind, number> = quick
  ? { graceful: 2, crash: 2, freeze: 1, lifecycleFreeze: 2, shutdown: 1 }
  : { graceful: 7, crash: 7, freeze: 3, lifecycleFreeze: 7, shutdown: 3 };
const startupRuns = quick ? 3 : 7;
/** The browser half of `long-lived` (bench/studio/long-lived.ts): rounds of long + short. */
const longLivedOptions = {
  rounds: quick ? 2 : 9,
  longTotal: Number(process.env.SHUTTLE_BENCH_LONG_LIVED_ITERATIONS ?? 1_000_000),
  every: 1_000,
};
/** The browser half of `queues` (bench/studio/queues.ts), the same rounds and workload as over PostgreSQL. */
const queuesOptions = {
  rounds: quick ? 2 : 7,
  latencySamples: quick ? 10 : 40,
  warmUpLatencySamples: quick ? 2 : 5,
  workload: { workflows: 50, batch: 10, steps: 2, delayMs: 20 },
};
const crossTabRuns = quick ? { signalRuns: 3, resultRuns: 3 } : { signalRuns: 10, resultRuns: 10 };

function log(message: string): void {
  process.stderr.write(`[bench:browser] ${message}\n`);
}

function baseUrlFromArguments(): string {
  const index = process.argv.indexOf('--base-url');
  const value = index >= 0 ? process.argv[index + 1] : undefined;
  if (!value) throw new Error('usage: node bench/.build/browser.js --base-url http://localhost:<port>');
  return value.replace(/\/$/, '');
}

async function runThroughput(context: BrowserContext, baseUrl: string): Promise<ThroughputResult> {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.text().startsWith('[shuttle bench]')) log(message.text().slice('[shuttle bench] '.length));
    else if (message.type() === 'error' || message.type() === 'warning')
      log(`page ${message.type()}: ${message.text()}`);
  });
  try {
    await page.goto(`${baseUrl}/bench.html`);
    await page.waitForFunction(() => window.shuttleBench !== undefined, undefined, { timeout: 30_000 });
    return await page.evaluate((options) => window.shuttleBench!.run(options), throughputOptions);
  } finally {
    await page.close().catch(() => undefined);
  }
}

/** Runs `part` if selected; a failure is logged and recorded, never thrown. */
async function attempt<T>(
  part: string,
  failures: Record<string, string>,
  run: () => Promise<T>,
): Promise<T | null> {
  if (!parts.has(part)) return null;
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    failures[part] = message;
    log(`${part} failed: ${message}`);
    return null;
  }
}

async function main(): Promise<void> {
  const baseUrl = baseUrlFromArguments();
  const started = Date.now();
  const browser: Browser = await chromium.launch({
    executablePath: resolveChromium(),
    args: [...chromiumArgs],
  });
  const failures: Record<string, string> = {};
  try {
    const context = await browser.newContext();
    const throughput = await attempt('throughput', failures, () => runThroughput(context, baseUrl));
    const handoffs: Partial<Record<HandoffKind, HandoffFigure>> = {};
    const kinds: HandoffKind[] = ['graceful', 'crash', 'freeze', 'lifecycleFreeze', 'shutdown'];
    for (const kind of kinds) {
      const figure = await attempt(handoffPart[kind], failures, () =>
        measureHandoffs(context, baseUrl, kind, {
          runs: handoffRuns[kind],
          countdownFrom: 60,
          tickMs: 20,
          freezeSeconds: 12,
          log,
        }),
      );
      if (figure) handoffs[kind] = figure;
    }
    const startup: StartupFigure | null = await attempt('startup', failures, () =>
      measureStartup(context, baseUrl, { runs: startupRuns, log }),
    );
    const crossTab: CrossTabFigures | null = await attempt('cross-tab', failures, () =>
      measureCrossTab(context, baseUrl, { ...crossTabRuns, log }),
    );
    const longLived = await attempt('long-lived', failures, () =>
      measureLongLivedBrowser(context, baseUrl, { ...longLivedOptions, log }),
    );
    const queues = await attempt('queues', failures, () =>
      measureQueuesBrowser(context, baseUrl, { ...queuesOptions, log }),
    );
    await context.close();

    const summary = throughput ? summarizeThroughput(throughput.rounds) : null;
    const audits = [
      ...(throughput ? [throughput.audit.duplicateCommits] : []),
      ...Object.values(handoffs).flatMap((figure) => (figure.audit ? [figure.audit.duplicateCommits] : [])),
      ...(crossTab?.audit ? [crossTab.audit.duplicateCommits] : []),
    ];
    const figures: BrowserFigures = {
      one: buildThroughputFigure(summary?.figures.one),
      fifty: buildThroughputFigure(summary?.figures.fifty),
      handoffMs: {
        graceful: handoffs.graceful ? spreadOf(handoffs.graceful.latencyMs) : unmeasured,
        crash: handoffs.crash ? spreadOf(handoffs.crash.latencyMs) : unmeasured,
        freeze: handoffs.freeze ? spreadOf(handoffs.freeze.latencyMs) : unmeasured,
        lifecycleFreeze: handoffs.lifecycleFreeze ? spreadOf(handoffs.lifecycleFreeze.latencyMs) : unmeasured,
      },
      startupMs: startup ? spreadOf(startup.firstCommitMs) : unmeasured,
      crossTabSignalMs: crossTab ? spreadOf(crossTab.signal.latencyMs) : unmeasured,
      crossTabResultMs: crossTab ? spreadOf(crossTab.result.latencyMs) : unmeasured,
      duplicateCommits: audits.length > 0 ? audits.reduce((sum, count) => sum + count, 0) : null,
    };
    const runFailures = [
      ...Object.values(handoffs).flatMap((figure) =>
        figure.runs.flatMap((run) =>
          run.error ? [`handoff ${figure.kind} run ${run.run}: ${run.error}`] : [],
        ),
      ),
      ...(startup?.runs ?? []).flatMap((run) =>
        run.tabs.flatMap((tab) =>
          tab.error ? [`startup run ${run.run} (${tab.kind} tab): ${tab.error}`] : [],
        ),
      ),
      ...(crossTab
        ? [
            ...crossTab.signal.runs.flatMap((run) =>
              run.error ? [`signal run ${run.run}: ${run.error}`] : [],
            ),
            ...crossTab.result.runs.flatMap((run) =>
              run.error ? [`result run ${run.run}: ${run.error}`] : [],
            ),
          ]
        : []),
    ];
    const details = {
      quick,
      runFailures,
      parts: [...parts],
      chromium: browser.version(),
      totalMs: Date.now() - started,
      failures,
      throughput: throughput
        ? {
            options: throughput.options,
            environment: throughput.environment,
            spreads: summary!.spreads,
            rounds: throughput.rounds,
            variants: throughput.variants,
            durability: throughput.durability,
            audit: throughput.audit,
            totalMs: throughput.totalMs,
          }
        : null,
      handoffs,
      startup,
      crossTab,
    };
    const longLivedOutput = longLived
      ? {
          figures: {
            handoffMs: {
              long: spreadOf(longLived.long),
              short: spreadOf(longLived.short),
            },
            chainRuns: longLived.runs,
            buildIterationsPerSecond: longLived.buildIterationsPerSecond.p50,
          },
          details: longLived,
        }
      : null;
    process.stdout.write(`${JSON.stringify({ figures, details, longLived: longLivedOutput, queues })}\n`);
  } finally {
    await browser.close().catch(() => undefined);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
