/**
 * The browser half of the `long-lived` part (bench/README.md, Long-lived workflows): the same handoff as
 * bench/long-lived.ts, between two bench tabs in Chromium over one IndexedDB database — each tab's engine in
 * a dedicated worker set up as a studio tab's (bench/browser/long-lived.worker.ts).
 *
 * Each trial, on a fresh database: tab X's engine builds the ticker (long: `total` iterations, continue-as-new
 * every 1,000; short: 1,000 iterations in one run) until it parks on `stop`; tab Y opens an engine on the same
 * database (counting what it reads) and confirms X holds the claim; then X's engine is shut down gracefully
 * (its claim released) and Y sends `stop` and waits for the result. The handoff time is X's shutdown call →
 * Y has the result, both taken in the tabs on the machine's clock (`performance.timeOrigin + now()`); it
 * includes the Playwright round trip that tells Y to send `stop` once X's shutdown returned (in Node the two
 * steps run back to back in one process), the same for long and short. Y may take the workflow over as soon
 * as X's release reaches it, before `stop`: its reads are counted from just before X's shutdown. Long and
 * short alternate in order from round to round.
 */
import type { BrowserContext, Page } from '@playwright/test';
import type { LongLivedReply, LongLivedRequest } from '../browser/protocol';
import { summarize, type SampleSummary } from '../stats';

export type BrowserLongLivedOptions = {
  rounds: number;
  /** The long workflow's iterations (1,000,000). */
  longTotal: number;
  /** Iterations per run of the long workflow, and the short workflow's whole length (1,000). */
  every: number;
  log: (message: string) => void;
};

export type BrowserLongLivedTrial = {
  which: 'long' | 'short';
  round: number;
  databaseName: string;
  buildMs: number;
  iterationsPerSecond: number;
  runs: number;
  currentRunOperations: number;
  shutdownMs: number;
  signalToCompletedMs: number;
  handoffMs: number;
  reads: { requests: number; values: number; chars: number };
  takeover: string | null;
};

export type BrowserLongLivedFigure = {
  options: Omit<BrowserLongLivedOptions, 'log'>;
  trials: BrowserLongLivedTrial[];
  failures: string[];
  long: SampleSummary;
  short: SampleSummary;
  ratio: number | null;
  buildIterationsPerSecond: SampleSummary;
  runs: number | null;
  reads: {
    long: { values: number | null; chars: number | null; requests: number | null };
    short: { values: number | null; chars: number | null; requests: number | null };
  };
};

async function benchTab(context: BrowserContext, baseUrl: string, log: (message: string) => void) {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      log(`page ${message.type()}: ${message.text()}`);
  });
  await page.goto(`${baseUrl}/bench.html`);
  await page.waitForFunction(() => window.shuttleBench !== undefined, undefined, { timeout: 30_000 });
  return page;
}

async function send<K extends LongLivedReply['kind']>(
  page: Page,
  request: LongLivedRequest,
  expected: K,
): Promise<Extract<LongLivedReply, { kind: K }>> {
  const reply = await page.evaluate((message) => window.shuttleBench!.longLived(message), request);
  if (reply.kind !== expected)
    throw new Error(`The bench tab answered '${reply.kind}' to '${request.kind}', not '${expected}'.`);
  return reply as Extract<LongLivedReply, { kind: K }>;
}

let databaseCounter = 0;

async function trial(
  x: Page,
  y: Page,
  which: 'long' | 'short',
  round: number,
  options: BrowserLongLivedOptions,
): Promise<BrowserLongLivedTrial> {
  const total = which === 'long' ? options.longTotal : options.every;
  const every = which === 'long' ? options.every : 1_000_000;
  const id = `ticker-${which}`;
  const databaseName = `shuttle-bench-long-lived-${Date.now().toString(36)}-${++databaseCounter}`;
  try {
    const opened = await send(x, { kind: 'open', databaseName, countReads: false }, 'opened');
    const built = await send(x, { kind: 'build', id, total, every, timeoutMs: 900_000 }, 'built');
    await send(y, { kind: 'open', databaseName, countReads: true }, 'opened');
    const holder = await send(y, { kind: 'holder', id }, 'holder');
    if (holder.engineId !== opened.engineId)
      throw new Error(`${id} is held by ${holder.engineId ?? 'nobody'}, not by X, before the handoff`);
    const { shutdownMs, startedAt } = await send(x, { kind: 'shutdown' }, 'shut-down');
    const completed = await send(y, { kind: 'stop-and-wait', id }, 'completed');
    const handoffMs = completed.completedAt - startedAt;
    if (completed.result !== total) throw new Error(`${id} returned ${completed.result}, not ${total}`);
    if (completed.chain !== built.runs)
      throw new Error(`${id}: ${completed.chain} runs listed, ${built.runs} parked`);
    return {
      which,
      round,
      databaseName,
      buildMs: Math.round(built.buildMs),
      iterationsPerSecond: Math.round(total / (built.buildMs / 1000)),
      runs: built.runs,
      currentRunOperations: built.currentRunOperations,
      shutdownMs: Math.round(shutdownMs * 100) / 100,
      signalToCompletedMs: Math.round(completed.signalToCompletedMs * 100) / 100,
      handoffMs: Math.round(handoffMs * 100) / 100,
      reads: completed.reads,
      takeover: completed.takeover,
    };
  } finally {
    await send(x, { kind: 'close' }, 'closed').catch(() => undefined);
    await send(y, { kind: 'close', deleteDatabase: databaseName }, 'closed').catch(() => undefined);
  }
}

export async function measureLongLivedBrowser(
  context: BrowserContext,
  baseUrl: string,
  options: BrowserLongLivedOptions,
): Promise<BrowserLongLivedFigure> {
  const { log } = options;
  const x = await benchTab(context, baseUrl, log);
  const y = await benchTab(context, baseUrl, log);
  const trials: BrowserLongLivedTrial[] = [];
  const failures: string[] = [];
  try {
    // Warm-up, discarded: the first trial measures the tabs compiling the engine's hot path.
    await trial(x, y, 'short', 0, options).catch((error: unknown) =>
      failures.push(`warm-up: ${String(error)}`),
    );
    for (let round = 1; round <= options.rounds; round++) {
      const order: ('long' | 'short')[] = round % 2 === 1 ? ['long', 'short'] : ['short', 'long'];
      for (const which of order) {
        try {
          const result = await trial(x, y, which, round, options);
          trials.push(result);
          log(
            `long-lived (browser) round ${round}/${options.rounds} ${which}: built ${result.runs} runs in ${result.buildMs} ms, ` +
              `handoff ${result.handoffMs} ms (shutdown ${result.shutdownMs}, stop → completed ${result.signalToCompletedMs}; ${result.takeover}; ` +
              `Y read ${result.reads.values} values, ${result.reads.chars} chars in ${result.reads.requests} requests)`,
          );
        } catch (error) {
          const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
          failures.push(`round ${round} ${which}: ${message}`);
          log(`long-lived (browser) round ${round} ${which} failed: ${message}`);
        }
      }
    }
  } finally {
    await x.close().catch(() => undefined);
    await y.close().catch(() => undefined);
  }
  const of = (which: 'long' | 'short') => trials.filter((entry) => entry.which === which);
  const long = summarize(
    of('long').map((entry) => entry.handoffMs),
    1,
  );
  const short = summarize(
    of('short').map((entry) => entry.handoffMs),
    1,
  );
  const readsOf = (which: 'long' | 'short') => ({
    values: summarize(of(which).map((entry) => entry.reads.values)).p50,
    chars: summarize(of(which).map((entry) => entry.reads.chars)).p50,
    requests: summarize(of(which).map((entry) => entry.reads.requests)).p50,
  });
  const { log: _log, ...recorded } = options;
  return {
    options: recorded,
    trials,
    failures,
    long,
    short,
    ratio: long.p50 !== null && short.p50 ? Math.round((long.p50 / short.p50) * 100) / 100 : null,
    buildIterationsPerSecond: summarize(of('long').map((entry) => entry.iterationsPerSecond)),
    runs: of('long')[0]?.runs ?? null,
    reads: { long: readsOf('long'), short: readsOf('short') },
  };
}
