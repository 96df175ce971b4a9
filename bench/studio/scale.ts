/**
 * Scale in the studio: N parked workflows held by one tab, with two more tabs of the same database open (one
 * browser context, a fresh database per N). Every tab stays on the Workflows screen (the studio's default),
 * as a person would leave it. For each N, in order:
 *
 * 1. **Starts**: the holder tab H starts N − `dueWorkflows` countdowns `{ from: 1, tickMs: 7 days }` through
 *    the console API (`shuttle.start`), `batchSize` at a time; each start's completion is timed in H's page.
 *    Meanwhile another tab samples the claim margin of a recently started workflow every 2 s.
 * 2. **Window** (`windowMs`, 60 s): the third tab C describes random held workflows back to back (100 ms
 *    apart): the `describe` latency and, from each answer, the claim margin (`owner.expiresAt − Date.now()`
 *    in C when the answer arrived). H's worker counts its IndexedDB transactions and requests
 *    (scale-probes.ts) and its engine counts renewal passes (`metrics().renewals`): their quotient is the
 *    storage cost of a renewal pass. Tab B reads every claim (`shuttle.claims()`) at both ends of the window.
 * 3. **Start-up**: a new tab D opens on the database (`startupRuns` times): navigation → the shell says its
 *    engine is `running`, and navigation → the first workflow row is shown (`performance.now()` in D).
 * 3b. **Probe**: with the N parked, H starts `probeStarts` more countdowns (500; the same number at every N,
 *    `batchSize` at a time), timed, then terminates them. Its rate is the start rate at N that the ratio
 *    compares: the rate of step 1 mixes a first burst (the other tabs not yet following the new workflows)
 *    into the steady rate, and at N = 100 its 80 starts are two batches.
 * 4. **Close**: H starts the last `dueWorkflows` countdowns with a `dueDelayMs` tick, and is closed as a
 *    person closes it just before the first of those timers falls due. Then: for each due workflow, the time
 *    from the later of the close and its due time to the first step another tab commits for it; and the time
 *    until every holder record names a live engine (B or C) — or how many did not after
 *    `reachableTimeoutMs`.
 *
 * Takeovers from the live holder are the `claimAttempts.takeover` of B, C and every D, read before H closes
 * (H is the only engine holding anything until then). A step that fails is recorded in `errors` and the
 * figures it would have produced stay null; the next N still runs.
 */
import os from 'node:os';
import type { BrowserContext, Page, Worker } from '@playwright/test';
import type { EngineMetrics, TimelineEntry } from '../../src/engine';
import {
  dueLatencies,
  minMargin,
  perRenewalPass,
  startRates,
  type DueWorkflow,
  type MarginSample,
  type StartBatch,
  type StartRates,
} from '../scale-summary';
import type { ScaleCaseFigures } from '../scale-results';
import { summarize, type SampleSummary } from '../stats';
import { countDuplicateCommits, findTakeover } from '../timeline-audit';
import {
  installClientCounters,
  installStorageCounters,
  observeStartup,
  readClientCounters,
  readStartupMarks,
  readStorageCounters,
  type ClientCounters,
  type StartupMarks,
  type StorageCounters,
} from './scale-probes';
import { pollUntil, StudioTab } from './tab';

export type ScaleOptions = {
  /** The numbers of parked workflows, one fresh database each. */
  counts: readonly number[];
  /** Starts asked for at once (the next batch begins when all of a batch have completed). */
  batchSize: number;
  /** How long margins, describe latency and storage requests are sampled after the starts, in ms. */
  windowMs: number;
  /** New tabs opened to time start-up. */
  startupRuns: number;
  /**
   * Starts of the probe: with the N parked (after the start-ups), H starts this many more, `batchSize` at a
   * time, timed, then terminates them. The same count at every N, so the rates compare like with like.
   */
  probeStarts: number;
  /** Workflows whose timers fall due right after the holder closes. */
  dueWorkflows: number;
  /** Their timer, in ms (they are started this long before they fall due). */
  dueDelayMs: number;
  /** How long to wait after the close for every workflow to be reachable, in ms. */
  reachableTimeoutMs: number;
  log: (message: string) => void;
};

/** Storage counters of one worker over a stretch of time (after − before). */
export type CountersDelta = Omit<StorageCounters, 'byMethod'> & { byMethod: Record<string, number> };

/** What one tab did over a stretch of time: its worker's storage use and its page's client calls. */
type TabCounters = {
  label: string;
  engineId: string;
  delta: CountersDelta | null;
  calls: ClientCounters | null;
};

type Counters = { storage: StorageCounters | null; calls: ClientCounters | null };

export type StartupRun = StartupMarks & { engineId: string | null; takeovers: number | null; error?: string };

/** Everything one N measured (details.json). */
export type ScaleCase = {
  parked: number;
  databaseName: string;
  holder: string | null;
  idle: string[];
  errors: string[];
  starts: {
    count: number;
    failed: number;
    errors: string[];
    durationMs: number | null;
    rates: StartRates;
    /** Claim margins sampled while the starts ran. */
    margin: ReturnType<typeof minMargin>;
    storage: TabCounters[];
  };
  window: {
    durationMs: number | null;
    renewals: number | null;
    /** `metrics().storageTransactions` of H's engine (its commits), over the window. */
    engineTransactions: number | null;
    storage: TabCounters[];
    requestsPerRenewal: number | null;
    transactionsPerRenewal: number | null;
    margin: ReturnType<typeof minMargin>;
    describeMs: SampleSummary;
    describeErrors: string[];
    claimsAtStart: ClaimsView | null;
    claimsAtEnd: ClaimsView | null;
    holderMetrics: EngineMetrics | null;
  };
  /** The probe of `probeStarts` starts with the N parked (they are terminated after). */
  probe: {
    count: number;
    failed: number;
    errors: string[];
    rates: StartRates;
    terminated: number;
  };
  takeovers: {
    fromLiveHolder: number | null;
    byEngine: Record<string, number>;
    holderClaimsLost: number | null;
  };
  startup: {
    runs: StartupRun[];
    engineRunningMs: SampleSummary;
    firstRowsMs: SampleSummary;
    /** Claim margins of H sampled by C every 500 ms while the new tabs started. */
    margin: ReturnType<typeof minMargin>;
  };
  close: {
    exitAt: number | null;
    /** How long before the first due time the holder was closed, in ms (negative: after). */
    closedBeforeDueMs: number | null;
    due: (DueWorkflow & { newOwner: string | null; claimAt: number | null })[];
    dueLatenciesMs: (number | null)[];
    dueAllRunningMs: number | null;
    reachable: { allReachableMs: number | null; remaining: number | null; samples: ClaimsView[] };
    runningWithoutLiveOwner: number | null;
    /** B's and C's storage use and client calls from the close until both watches ended. */
    storage: TabCounters[];
    audit: { workflows: number; duplicateCommits: number; findings: string[] } | null;
  };
  totalMs: number;
  /** The machine's load average (1, 5, 15 min) when this N began and ended: a busy machine explains slow figures. */
  loadAverage: { before: number[]; after: number[] };
};

/** What one `claims()` answer said, summarised in the page (the answer itself can be 10,000 entries long). */
export type ClaimsView = {
  at: number;
  ms: number;
  total: number;
  byEngine: Record<string, number>;
  /** Holders that are not one of `live` (or could not be decoded). */
  notLive: number;
  /** The smallest `expiresAt − now` among claims of `holder`. */
  holderMinMarginMs: number | null;
  /** The latest `claimedAt` among holders that are live. */
  lastLiveClaimedAt: number | null;
};

const parkedTickMs = 7 * 24 * 60 * 60 * 1_000;

function round(value: number | null, digits = 0): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

function subtract(after: StorageCounters, before: StorageCounters): CountersDelta {
  const byMethod: Record<string, number> = {};
  for (const [key, value] of Object.entries(after.byMethod)) {
    const delta = value - (before.byMethod[key] ?? 0);
    if (delta !== 0) byMethod[key] = delta;
  }
  return {
    transactions: after.transactions - before.transactions,
    readonlyTransactions: after.readonlyTransactions - before.readonlyTransactions,
    readwriteTransactions: after.readwriteTransactions - before.readwriteTransactions,
    requests: after.requests - before.requests,
    rowsRead: after.rowsRead - before.rowsRead,
    readonlyTransactionMs: Math.round(after.readonlyTransactionMs - before.readonlyTransactionMs),
    readwriteTransactionMs: Math.round(after.readwriteTransactionMs - before.readwriteTransactionMs),
    byMethod,
  };
}

/** A studio tab of the benchmark, with its engine worker's storage counters. */
class CountedTab {
  private constructor(
    readonly tab: StudioTab,
    readonly worker: Worker,
  ) {}

  static async open(context: BrowserContext, baseUrl: string, databaseName: string): Promise<CountedTab> {
    const tab = await StudioTab.open(context, baseUrl, databaseName);
    const worker = await pollUntil(
      'the tab’s engine worker',
      async () =>
        tab.page.workers().find((candidate) => /engine/.test(candidate.url())) ?? tab.page.workers()[0],
      { timeoutMs: 10_000 },
    );
    await worker.evaluate(installStorageCounters);
    await tab.page.evaluate(installClientCounters);
    return new CountedTab(tab, worker);
  }

  get page(): Page {
    return this.tab.page;
  }

  get engineId(): string {
    return this.tab.engineId;
  }

  async counters(): Promise<Counters> {
    const [storage, calls] = await Promise.all([
      this.worker.evaluate(readStorageCounters).catch(() => null),
      this.page.evaluate(readClientCounters).catch(() => null),
    ]);
    return { storage, calls };
  }

  metrics(): Promise<EngineMetrics> {
    return this.page.evaluate(() => window.shuttle!.metrics());
  }

  /** A summary of every claim of the database, as this tab reads it. */
  claims(holder: string | null, live: readonly string[]): Promise<ClaimsView> {
    return this.page.evaluate(
      async ({ holder, live }) => {
        const began = performance.now();
        const claims = await window.shuttle!.claims();
        const at = Date.now();
        const view = {
          at,
          ms: Math.round(performance.now() - began),
          total: claims.length,
          byEngine: {} as Record<string, number>,
          notLive: 0,
          holderMinMarginMs: null as number | null,
          lastLiveClaimedAt: null as number | null,
        };
        for (const claim of claims) {
          const engineId = claim.holder?.engineId ?? '(undecodable)';
          view.byEngine[engineId] = (view.byEngine[engineId] ?? 0) + 1;
          if (claim.holder && engineId === holder) {
            const margin = claim.holder.expiresAt - at;
            if (view.holderMinMarginMs === null || margin < view.holderMinMarginMs)
              view.holderMinMarginMs = margin;
          }
          if (claim.holder && live.includes(engineId)) {
            if (view.lastLiveClaimedAt === null || claim.holder.claimedAt > view.lastLiveClaimedAt)
              view.lastLiveClaimedAt = claim.holder.claimedAt;
          } else view.notLive++;
        }
        return view;
      },
      { holder, live: [...live] },
    );
  }

  /** One `describe`, timed in the page, with the claim margin its answer shows. */
  async marginOf(workflowId: string): Promise<MarginSample & { ms: number }> {
    return this.page.evaluate(async (id) => {
      const began = performance.now();
      const description = await window.shuttle!.describe(id);
      const ms = performance.now() - began;
      return {
        ms,
        ownerEngineId: description.owner?.engineId ?? null,
        marginMs: description.owner ? description.owner.expiresAt - Date.now() : null,
      };
    }, workflowId);
  }
}

function emptyCase(parked: number, databaseName: string): ScaleCase {
  return {
    parked,
    databaseName,
    holder: null,
    idle: [],
    errors: [],
    starts: {
      count: 0,
      failed: 0,
      errors: [],
      durationMs: null,
      rates: { firstTenth: null, lastTenth: null, overall: null },
      margin: { minMarginMs: null, samples: 0, notHolder: 0 },
      storage: [],
    },
    window: {
      durationMs: null,
      renewals: null,
      engineTransactions: null,
      storage: [],
      requestsPerRenewal: null,
      transactionsPerRenewal: null,
      margin: { minMarginMs: null, samples: 0, notHolder: 0 },
      describeMs: summarize([]),
      describeErrors: [],
      claimsAtStart: null,
      claimsAtEnd: null,
      holderMetrics: null,
    },
    probe: {
      count: 0,
      failed: 0,
      errors: [],
      rates: { firstTenth: null, lastTenth: null, overall: null },
      terminated: 0,
    },
    takeovers: { fromLiveHolder: null, byEngine: {}, holderClaimsLost: null },
    startup: {
      runs: [],
      engineRunningMs: summarize([]),
      firstRowsMs: summarize([]),
      margin: { minMarginMs: null, samples: 0, notHolder: 0 },
    },
    close: {
      exitAt: null,
      closedBeforeDueMs: null,
      due: [],
      dueLatenciesMs: [],
      dueAllRunningMs: null,
      reachable: { allReachableMs: null, remaining: null, samples: [] },
      runningWithoutLiveOwner: null,
      storage: [],
      audit: null,
    },
    totalMs: 0,
    loadAverage: { before: loadAverage(), after: [] },
  };
}

function loadAverage(): number[] {
  return os.loadavg().map((value) => Math.round(value * 100) / 100);
}

type StartProgress = { done: number; failed: number; finished: boolean; sampleId: string | null };

type StartState = {
  batches: StartBatch[];
  ids: string[];
  failed: number;
  errors: string[];
  finished: boolean;
};

/** Starts `count` parked countdowns in H's page, `batchSize` at a time; resolves when all have completed. */
async function startParked(
  holder: CountedTab,
  count: number,
  batchSize: number,
  onProgress: (progress: StartProgress) => Promise<void>,
): Promise<StartState> {
  await holder.page.evaluate(
    ({ count, batchSize, tickMs }) => {
      const state: StartState = { batches: [], ids: [], failed: 0, errors: [], finished: false };
      (window as unknown as { __scaleStarts: StartState }).__scaleStarts = state;
      void (async () => {
        for (let first = 0; first < count; first += batchSize) {
          const size = Math.min(batchSize, count - first);
          const beganAt = Date.now();
          let started = 0;
          await Promise.all(
            Array.from({ length: size }, async () => {
              try {
                state.ids.push(await window.shuttle!.start('countdown', { from: 1, tickMs }));
                started++;
              } catch (error) {
                state.failed++;
                if (state.errors.length < 5) state.errors.push(String(error));
              }
            }),
          );
          state.batches.push({ beganAt, endedAt: Date.now(), count: started });
        }
        state.finished = true;
      })();
    },
    { count, batchSize, tickMs: parkedTickMs },
  );
  for (;;) {
    await sleep(2_000);
    const progress = await holder.page.evaluate(() => {
      const state = (window as unknown as { __scaleStarts: StartState }).__scaleStarts;
      return {
        done: state.ids.length,
        failed: state.failed,
        finished: state.finished,
        sampleId: state.ids.at(-1) ?? null,
      };
    });
    await onProgress(progress);
    if (progress.finished) break;
  }
  return holder.page.evaluate(() => (window as unknown as { __scaleStarts: StartState }).__scaleStarts);
}

/** C describes random workflows of `ids` for `windowMs`, pausing `pauseMs` between calls. */
function describeLoop(
  tab: CountedTab,
  ids: readonly string[],
  windowMs: number,
  pauseMs: number,
): Promise<{ ms: number[]; margins: MarginSample[]; errors: string[] }> {
  return tab.page.evaluate(
    async ({ ids, windowMs, pauseMs }) => {
      const ms: number[] = [];
      const margins: { ownerEngineId: string | null; marginMs: number | null }[] = [];
      const errors: string[] = [];
      const end = Date.now() + windowMs;
      while (Date.now() < end) {
        const id = ids[Math.floor(Math.random() * ids.length)]!;
        const began = performance.now();
        try {
          const description = await window.shuttle!.describe(id);
          ms.push(performance.now() - began);
          margins.push({
            ownerEngineId: description.owner?.engineId ?? null,
            marginMs: description.owner ? description.owner.expiresAt - Date.now() : null,
          });
        } catch (error) {
          if (errors.length < 5) errors.push(String(error));
        }
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
      return { ms, margins, errors };
    },
    { ids: [...ids], windowMs, pauseMs },
  );
}

async function countersOf(tabs: readonly CountedTab[]): Promise<Counters[]> {
  return Promise.all(tabs.map((tab) => tab.counters()));
}

function callsBetween(before: ClientCounters | null, after: ClientCounters | null): ClientCounters | null {
  if (!before || !after) return null;
  const calls: ClientCounters = {};
  for (const [method, count] of Object.entries(after))
    if (count - (before[method] ?? 0) !== 0) calls[method] = count - (before[method] ?? 0);
  return calls;
}

function deltas(
  tabs: readonly { label: string; tab: CountedTab }[],
  before: readonly Counters[],
  after: readonly Counters[],
): TabCounters[] {
  return tabs.map(({ label, tab }, index) => {
    const from = before[index];
    const to = after[index];
    return {
      label,
      engineId: tab.engineId,
      delta: from?.storage && to?.storage ? subtract(to.storage, from.storage) : null,
      calls: callsBetween(from?.calls ?? null, to?.calls ?? null),
    };
  });
}

/** Opens a new tab on the database and times its start-up; closes it again. */
async function timeStartup(
  context: BrowserContext,
  baseUrl: string,
  databaseName: string,
): Promise<StartupRun> {
  const page = await context.newPage();
  const run: StartupRun = { engineRunningMs: null, firstRowsMs: null, engineId: null, takeovers: null };
  try {
    await page.addInitScript(observeStartup);
    await page.goto(`${baseUrl}/?db=${encodeURIComponent(databaseName)}`);
    const marks = await pollUntil(
      'the new tab to show its engine running and the first rows',
      async () => {
        const current = await page.evaluate(readStartupMarks);
        return current && current.engineRunningMs !== null && current.firstRowsMs !== null
          ? current
          : undefined;
      },
      { intervalMs: 100, timeoutMs: 60_000 },
    ).catch(async (error: unknown) => {
      const partial = await page.evaluate(readStartupMarks).catch(() => null);
      run.engineRunningMs = round(partial?.engineRunningMs ?? null);
      run.firstRowsMs = round(partial?.firstRowsMs ?? null);
      throw error;
    });
    run.engineRunningMs = round(marks.engineRunningMs);
    run.firstRowsMs = round(marks.firstRowsMs);
    const hello = await page.evaluate(() => window.shuttle!.hello());
    run.engineId = hello.engineId;
    run.takeovers = (await page.evaluate(() => window.shuttle!.metrics())).claimAttempts.takeover;
  } catch (error) {
    run.error = message(error);
  } finally {
    await page.close({ runBeforeUnload: true }).catch(() => undefined);
  }
  return run;
}

/** The first step another engine committed after taking each due workflow from `holder`. */
async function readDue(
  reader: CountedTab,
  due: readonly { workflowId: string; dueAt: number }[],
  holder: string,
): Promise<ScaleCase['close']['due']> {
  const timelines = await reader.page.evaluate(
    (ids) => Promise.all(ids.map((id) => window.shuttle!.timeline(id).catch(() => [] as TimelineEntry[]))),
    due.map((workflow) => workflow.workflowId),
  );
  return due.map((workflow, index) => {
    const takeover = findTakeover(timelines[index] ?? [], holder);
    return {
      ...workflow,
      firstStepAt: takeover?.firstStep?.at ?? null,
      newOwner: takeover?.engineId ?? null,
      claimAt: takeover?.claim.at ?? null,
    };
  });
}

async function measureCase(
  context: BrowserContext,
  baseUrl: string,
  parked: number,
  options: ScaleOptions,
): Promise<ScaleCase> {
  const began = Date.now();
  const databaseName = `bench-scale-${parked}-${Date.now().toString(36)}`;
  const result = emptyCase(parked, databaseName);
  const say = (text: string) => options.log(`scale N=${parked.toLocaleString('en-US')}: ${text}`);
  const fail = (step: string, error: unknown) => {
    result.errors.push(`${step}: ${message(error)}`);
    say(`${step} failed: ${message(error)}`);
  };
  const longCount = Math.max(0, parked - options.dueWorkflows);
  let holder: CountedTab | null = null;
  let idle: CountedTab[] = [];
  try {
    holder = await CountedTab.open(context, baseUrl, databaseName);
    idle = [
      await CountedTab.open(context, baseUrl, databaseName),
      await CountedTab.open(context, baseUrl, databaseName),
    ];
  } catch (error) {
    fail('opening the tabs', error);
    for (const tab of [holder, ...idle]) await tab?.page.close().catch(() => undefined);
    result.totalMs = Date.now() - began;
    result.loadAverage.after = loadAverage();
    return result;
  }
  const [tabB, tabC] = idle as [CountedTab, CountedTab];
  const H = holder;
  result.holder = H.engineId;
  result.idle = idle.map((tab) => tab.engineId);
  const labelled = [
    { label: 'holder', tab: H },
    { label: 'B', tab: tabB },
    { label: 'C', tab: tabC },
  ];
  const takeoversByEngine = new Map<string, number>();
  let ids: string[] = [];

  // 1. Starts
  try {
    const before = await countersOf([H, tabB, tabC]);
    const margins: MarginSample[] = [];
    say(`starting ${longCount.toLocaleString('en-US')} parked countdowns in batches of ${options.batchSize}`);
    const started = await startParked(H, longCount, options.batchSize, async (progress) => {
      if (progress.sampleId) {
        const sample = await tabC.marginOf(progress.sampleId).catch(() => null);
        if (sample) margins.push({ ownerEngineId: sample.ownerEngineId, marginMs: sample.marginMs });
      }
      say(
        `${progress.done.toLocaleString('en-US')} started${progress.failed ? `, ${progress.failed} failed` : ''}`,
      );
    });
    const after = await countersOf([H, tabB, tabC]);
    ids = started.ids;
    result.starts = {
      count: started.ids.length,
      failed: started.failed,
      errors: started.errors,
      durationMs: started.batches.length
        ? started.batches.at(-1)!.endedAt - started.batches[0]!.beganAt
        : null,
      rates: startRates(started.batches),
      margin: minMargin(margins, H.engineId),
      storage: deltas(labelled, before, after),
    };
    const rates = result.starts.rates;
    say(
      `starts/s first tenth ${round(rates.firstTenth)}, last tenth ${round(rates.lastTenth)}, overall ${round(rates.overall)}; ` +
        `min margin during starts ${round(result.starts.margin.minMarginMs)} ms`,
    );
  } catch (error) {
    fail('starts', error);
  }

  // 2. Window: margins, describe latency, storage per renewal pass
  if (ids.length > 0)
    try {
      const sampleIds = [...ids].sort(() => Math.random() - 0.5).slice(0, 1_000);
      const live = [H.engineId];
      const claimsAtStart = await tabB.claims(H.engineId, live);
      const metricsBefore = await H.metrics();
      const before = await countersOf([H, tabB, tabC]);
      const windowBegan = Date.now();
      const describes = await describeLoop(tabC, sampleIds, options.windowMs, 100);
      const after = await countersOf([H, tabB, tabC]);
      const metricsAfter = await H.metrics();
      const durationMs = Date.now() - windowBegan;
      const claimsAtEnd = await tabB.claims(H.engineId, live);
      const storage = deltas(labelled, before, after);
      const renewals = metricsAfter.renewals - metricsBefore.renewals;
      const holderDelta = storage[0]?.delta ?? null;
      const margin = minMargin(describes.margins, H.engineId);
      const claimMargins = [claimsAtStart.holderMinMarginMs, claimsAtEnd.holderMinMarginMs].filter(
        (value): value is number => value !== null,
      );
      const overall =
        margin.minMarginMs === null
          ? claimMargins.length
            ? Math.min(...claimMargins)
            : null
          : Math.min(margin.minMarginMs, ...claimMargins);
      result.window = {
        durationMs,
        renewals,
        engineTransactions: metricsAfter.storageTransactions - metricsBefore.storageTransactions,
        storage,
        requestsPerRenewal: holderDelta ? round(perRenewalPass(0, holderDelta.requests, renewals), 1) : null,
        transactionsPerRenewal: holderDelta
          ? round(perRenewalPass(0, holderDelta.transactions, renewals), 1)
          : null,
        margin: {
          minMarginMs: round(overall),
          samples: margin.samples + 2,
          notHolder: margin.notHolder + claimsAtStart.notLive + claimsAtEnd.notLive,
        },
        describeMs: summarize(describes.ms, 1),
        describeErrors: describes.errors,
        claimsAtStart,
        claimsAtEnd,
        holderMetrics: metricsAfter,
      };
      say(
        `window ${Math.round(durationMs / 1000)} s: ${renewals} renewal passes, ${result.window.requestsPerRenewal} requests ` +
          `and ${result.window.transactionsPerRenewal} transactions per pass; min margin ${result.window.margin.minMarginMs} ms; ` +
          `describe p50 ${result.window.describeMs.p50} ms`,
      );
    } catch (error) {
      fail('window', error);
    }

  // 3. Start-up of a new tab, while C keeps sampling H's claim margin
  const startupMargins: MarginSample[] = [];
  let startingUp = true;
  const startupSampler = (async () => {
    while (startingUp && ids.length > 0) {
      const sample = await tabC.marginOf(ids[Math.floor(Math.random() * ids.length)]!).catch(() => null);
      if (sample) startupMargins.push({ ownerEngineId: sample.ownerEngineId, marginMs: sample.marginMs });
      await sleep(500);
    }
  })();
  for (let run = 1; run <= options.startupRuns; run++) {
    const record = await timeStartup(context, baseUrl, databaseName);
    result.startup.runs.push(record);
    if (record.engineId && record.takeovers !== null)
      takeoversByEngine.set(record.engineId, record.takeovers);
    say(
      `start-up ${run}/${options.startupRuns}: engine running after ${record.engineRunningMs} ms, first rows after ${record.firstRowsMs} ms` +
        (record.error ? ` (${record.error})` : ''),
    );
    await sleep(2_000);
  }
  startingUp = false;
  await startupSampler;
  result.startup.margin = minMargin(startupMargins, H.engineId);
  say(
    `min margin during start-ups ${round(result.startup.margin.minMarginMs)} ms ` +
      `(${result.startup.margin.notHolder} of ${result.startup.margin.samples} samples not held by H)`,
  );
  const measured = (pick: (run: StartupRun) => number | null) =>
    result.startup.runs.flatMap((run) => {
      const value = pick(run);
      return run.error || value === null ? [] : [value];
    });
  result.startup.engineRunningMs = summarize(measured((run) => run.engineRunningMs));
  result.startup.firstRowsMs = summarize(measured((run) => run.firstRowsMs));

  // 3b. The probe: the start rate with the N parked, over the same number of starts at every N. The rate of
  // the first starts of a case is no measure of it: at N = 100 they are two batches, and the first runs before
  // the other tabs' views and engines have begun to follow the new workflows (see bench/README.md).
  if (ids.length > 0)
    try {
      const probe = await startParked(H, options.probeStarts, options.batchSize, async () => undefined);
      result.probe = {
        count: probe.ids.length,
        failed: probe.failed,
        errors: probe.errors,
        rates: startRates(probe.batches),
        terminated: 0,
      };
      // Back to N parked for the close: the probe's workflows end.
      result.probe.terminated = await H.page.evaluate(async (probeIds) => {
        let ended = 0;
        for (let first = 0; first < probeIds.length; first += 50)
          await Promise.all(
            probeIds.slice(first, first + 50).map((id) =>
              window.shuttle!.terminate(id, 'scale bench: end of the probe').then(
                () => ended++,
                () => undefined,
              ),
            ),
          );
        return ended;
      }, probe.ids);
      say(
        `probe: ${probe.ids.length} starts with ${parked.toLocaleString('en-US')} parked at ${round(result.probe.rates.overall)}/s ` +
          `(first tenth ${round(result.probe.rates.firstTenth)}, last ${round(result.probe.rates.lastTenth)}); ${result.probe.terminated} terminated`,
      );
    } catch (error) {
      fail('probe', error);
    }

  // 4. Due workflows, then close the holder
  let due: { workflowId: string; dueAt: number }[] = [];
  try {
    let armed: { workflowId: string; dueAt: number | null }[] = [];
    const dueIds = Array.from({ length: options.dueWorkflows }, (_, index) => `scale-due-${index + 1}`);
    armed = await H.page.evaluate(
      async ({ dueIds, tickMs }) => {
        await Promise.all(
          dueIds.map((id) => window.shuttle!.start('countdown', { from: 1, tickMs }, { id })),
        );
        // Each countdown reaches its sleep just after its start commits: wait for the timer to be armed.
        return Promise.all(
          dueIds.map(async (id) => {
            const deadline = Date.now() + 30_000;
            for (;;) {
              const description = await window.shuttle!.describe(id);
              const dueAt = description.pending?.leaves[0]?.dueAt;
              if (typeof dueAt === 'number') return { workflowId: id, dueAt };
              if (Date.now() > deadline) return { workflowId: id, dueAt: null };
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
          }),
        );
      },
      { dueIds, tickMs: options.dueDelayMs },
    );
    due = armed.flatMap(({ workflowId, dueAt }) => (dueAt === null ? [] : [{ workflowId, dueAt }]));
    if (due.length < armed.length)
      fail(
        'arming the due timers',
        `${armed.length - due.length} of ${armed.length} due workflows were not waiting on their timer after 30 s (not measured)`,
      );
  } catch (error) {
    fail('starting the due workflows', error);
  }
  try {
    for (const tab of idle) takeoversByEngine.set(tab.engineId, (await tab.metrics()).claimAttempts.takeover);
    const holderMetrics = await H.metrics();
    result.takeovers = {
      fromLiveHolder: [...takeoversByEngine.values()].reduce((sum, count) => sum + count, 0),
      byEngine: Object.fromEntries(takeoversByEngine),
      holderClaimsLost: holderMetrics.claimsLost,
    };
  } catch (error) {
    fail('reading takeovers', error);
  }
  const firstDue = due.length ? Math.min(...due.map((workflow) => workflow.dueAt)) : Date.now();
  await sleep(firstDue - 250 - Date.now());
  const exitAt = Date.now();
  result.close.exitAt = exitAt;
  result.close.closedBeforeDueMs = due.length ? firstDue - exitAt : null;
  const closeBefore = await countersOf(idle);
  say(`closing the holder tab${due.length ? ` ${firstDue - exitAt} ms before the first due timer` : ''}`);
  await H.tab.close();
  const live = idle.map((tab) => tab.engineId);

  const dueWatch = (async () => {
    if (due.length === 0) return;
    const deadline = exitAt + 30_000;
    for (;;) {
      const seen = await readDue(tabB, due, H.engineId);
      result.close.due = seen;
      if (seen.every((workflow) => workflow.firstStepAt !== null) || Date.now() > deadline) break;
      await sleep(100);
    }
    const latencies = dueLatencies(exitAt, result.close.due);
    result.close.dueLatenciesMs = latencies.latenciesMs;
    result.close.dueAllRunningMs = latencies.allRunningMs;
    say(`due timers running elsewhere after ${latencies.allRunningMs} ms (latest of ${due.length})`);
  })().catch((error: unknown) => fail('watching the due workflows', error));

  const reachWatch = (async () => {
    const deadline = exitAt + options.reachableTimeoutMs;
    for (;;) {
      const view = await tabB.claims(H.engineId, live);
      result.close.reachable.samples.push(view);
      result.close.reachable.remaining = view.notLive;
      if (view.notLive === 0) {
        result.close.reachable.allReachableMs =
          view.lastLiveClaimedAt === null ? 0 : Math.max(0, view.lastLiveClaimedAt - exitAt);
        break;
      }
      if (Date.now() > deadline) break;
      await sleep(5_000);
    }
    const reachable = result.close.reachable;
    say(
      reachable.allReachableMs !== null
        ? `every workflow reachable after ${reachable.allReachableMs} ms`
        : `${reachable.remaining} holder records still named no live engine after ${options.reachableTimeoutMs / 1000} s`,
    );
  })().catch((error: unknown) => fail('watching reachability', error));
  await Promise.all([dueWatch, reachWatch]);
  result.close.storage = deltas(
    [
      { label: 'B', tab: tabB },
      { label: 'C', tab: tabC },
    ],
    closeBefore,
    await countersOf(idle),
  );

  try {
    result.close.runningWithoutLiveOwner = await tabB.page.evaluate(async (live) => {
      let cursor: string | undefined;
      let count = 0;
      do {
        const page = await window.shuttle!.list({
          status: 'running',
          limit: 1000,
          ...(cursor ? { cursor } : {}),
        });
        for (const item of page.items) if (!item.owner || !live.includes(item.owner.engineId)) count++;
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      return count;
    }, live);
  } catch (error) {
    fail('listing running workflows', error);
  }

  try {
    const auditIds = [
      ...due.map((workflow) => workflow.workflowId),
      ...[...ids].sort(() => Math.random() - 0.5).slice(0, 20),
    ];
    await pollUntil(
      'the due workflows to complete',
      async () => {
        const statuses = await tabB.page.evaluate(
          (ids) => Promise.all(ids.map(async (id) => (await window.shuttle!.describe(id)).status)),
          due.map((workflow) => workflow.workflowId),
        );
        return statuses.every((status) => status === 'completed') ? true : undefined;
      },
      { intervalMs: 200, timeoutMs: 20_000 },
    ).catch(() => undefined);
    const audit = { workflows: 0, duplicateCommits: 0, findings: [] as string[] };
    const dueSet = new Set(due.map((workflow) => workflow.workflowId));
    for (const workflowId of auditIds) {
      const [timeline, description] = await Promise.all([
        tabB.tab.timeline(workflowId),
        tabB.tab.describe(workflowId),
      ]);
      const expected =
        dueSet.has(workflowId) && description.status === 'completed'
          ? { kind: 'timer-fired' as const, count: 1 }
          : undefined;
      const found = countDuplicateCommits(timeline, expected);
      audit.workflows++;
      audit.duplicateCommits += found.duplicates;
      for (const finding of found.findings) audit.findings.push(`${workflowId}: ${finding}`);
    }
    result.close.audit = audit;
  } catch (error) {
    fail('audit', error);
  }

  // Clean up: close the tabs and delete the database (best effort).
  await tabC.page.close().catch(() => undefined);
  try {
    await tabB.page.goto(`${baseUrl}/bench.html`);
    await tabB.page.evaluate(
      (name) =>
        new Promise<void>((resolve) => {
          const request = indexedDB.deleteDatabase(name);
          request.onsuccess = request.onerror = () => resolve();
          setTimeout(resolve, 10_000);
        }),
      databaseName,
    );
  } catch {
    // the next N uses a fresh database anyway
  } finally {
    await tabB.page.close().catch(() => undefined);
  }
  result.totalMs = Date.now() - began;
  result.loadAverage.after = loadAverage();
  say(`done in ${Math.round(result.totalMs / 1000)} s (load average ${result.loadAverage.after.join(' ')})`);
  return result;
}

/** latest.json's figures of one N, from its details. */
export function caseFigures(result: ScaleCase): ScaleCaseFigures {
  return {
    parked: result.parked,
    startsPerSecondFirstTenth: round(result.starts.rates.firstTenth, 1),
    startsPerSecondLastTenth: round(result.starts.rates.lastTenth, 1),
    startsPerSecond: round(result.starts.rates.overall, 1),
    probeStartsPerSecond: round(result.probe.rates.overall, 1),
    storageRequestsPerRenewal: result.window.requestsPerRenewal,
    storageTransactionsPerRenewal: result.window.transactionsPerRenewal,
    minClaimMarginMs: result.window.margin.minMarginMs,
    minClaimMarginDuringStartsMs: round(result.starts.margin.minMarginMs),
    minClaimMarginDuringStartupMs: round(result.startup.margin.minMarginMs),
    takeoversFromLiveHolder: result.takeovers.fromLiveHolder,
    describeMs: { p50: result.window.describeMs.p50, p95: result.window.describeMs.p95 },
    startupEngineRunningMs: result.startup.engineRunningMs.p50,
    startupFirstRowsMs: result.startup.firstRowsMs.p50,
    dueTimersRunningElsewhereMs: result.close.dueAllRunningMs,
    allReachableMs: result.close.reachable.allReachableMs,
    unreachableAfterTimeout: result.close.reachable.remaining,
  };
}

/** Measures every N of `options.counts`, one after the other, each on a fresh database. */
export async function measureScale(
  context: BrowserContext,
  baseUrl: string,
  options: ScaleOptions,
): Promise<{ cases: ScaleCase[]; figures: ScaleCaseFigures[] }> {
  const cases: ScaleCase[] = [];
  for (const parked of options.counts) cases.push(await measureCase(context, baseUrl, parked, options));
  return { cases, figures: cases.map(caseFigures) };
}
