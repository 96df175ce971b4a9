/**
 * Tab start-up in the studio: from a tab's navigation to its engine's first commit.
 *
 * Each run opens a new page on a fresh database (a person opening the studio: the tab creates the
 * database), then a second page on the same database while the first still runs (a person opening another
 * tab). Before navigating, an init script watches for the console API (`window.shuttle`, installed by the
 * studio's entry module) and, the moment it appears, asks it to start a one-tick countdown; the client
 * queues the request until the tab's engine is ready. Measured in each page, against its own navigation
 * start (`performance.timeOrigin`, the same machine clock as `Date.now()`):
 *
 * - `firstCommitMs` (the figure, from the first tab of each run): the `at` of the countdown's first timeline
 *   entry — the first workflow commit of the tab's engine — minus the navigation start;
 * - `engineRunningMs`: when the tab's engine host entered `running` (`hello().status.since`);
 * - `consoleApiMs`: when the console API appeared (the page's script had loaded and run).
 *
 * No DevTools or Playwright round trip is on the measured path: every time is taken inside the browser and
 * read afterwards.
 */
import type { BrowserContext, Page } from '@playwright/test';
import { summarize, type SampleSummary } from '../stats';
import { pollUntil } from './tab';

export type StartupTab = {
  /** `first`: the tab that opened a fresh database; `joining`: a tab opened beside it. */
  kind: 'first' | 'joining';
  engineId: string | null;
  consoleApiMs: number | null;
  engineRunningMs: number | null;
  firstCommitMs: number | null;
  error?: string;
};

export type StartupRun = { run: number; databaseName: string; tabs: StartupTab[] };

export type StartupFigure = {
  runs: StartupRun[];
  /** The first tab on a fresh database: navigation → its engine's first commit (the figure). */
  firstCommitMs: SampleSummary;
  /** A tab joining a database another tab runs: navigation → its engine's first commit. */
  joiningFirstCommitMs: SampleSummary;
  engineRunningMs: { first: SampleSummary; joining: SampleSummary };
  consoleApiMs: { first: SampleSummary; joining: SampleSummary };
};

export type StartupOptions = { runs: number; log: (message: string) => void };

type Probe = { timeOrigin: number; apiAt?: number; error?: string };

/** Runs in the page before its scripts: starts `workflowId` the moment the console API is installed. */
function installProbe(workflowId: string): void {
  const target = window as unknown as { shuttle?: unknown; shuttleBenchStartup?: Probe };
  const probe: Probe = { timeOrigin: performance.timeOrigin };
  target.shuttleBenchStartup = probe;
  let client: unknown;
  Object.defineProperty(window, 'shuttle', {
    configurable: true,
    enumerable: true,
    get: () => client,
    set: (value: unknown) => {
      client = value;
      if (probe.apiAt !== undefined) return;
      probe.apiAt = performance.now();
      const api = value as {
        start: (type: string, input: unknown, options: { id: string }) => Promise<string>;
      };
      api.start('countdown', { from: 1, tickMs: 1 }, { id: workflowId }).catch((error: unknown) => {
        probe.error = error instanceof Error ? error.message : String(error);
      });
    },
  });
}

async function measureTab(
  context: BrowserContext,
  baseUrl: string,
  databaseName: string,
  kind: StartupTab['kind'],
  workflowId: string,
): Promise<{ page: Page; tab: StartupTab }> {
  const page = await context.newPage();
  const tab: StartupTab = {
    kind,
    engineId: null,
    consoleApiMs: null,
    engineRunningMs: null,
    firstCommitMs: null,
  };
  try {
    await page.addInitScript(installProbe, workflowId);
    await page.goto(`${baseUrl}/?db=${encodeURIComponent(databaseName)}`);
    const entry = await pollUntil(
      'the tab to commit its first workflow',
      async () => {
        const probe = await page.evaluate(
          () => (window as unknown as { shuttleBenchStartup?: Probe }).shuttleBenchStartup,
        );
        if (probe?.error) throw new Error(`the tab's start failed: ${probe.error}`);
        if (probe?.apiAt === undefined) return undefined;
        const timeline = await page
          .evaluate((id) => window.shuttle!.timeline(id), workflowId)
          .catch(() => []);
        return timeline[0];
      },
      { intervalMs: 100, timeoutMs: 60_000 },
    );
    const probe = await page.evaluate(
      () => (window as unknown as { shuttleBenchStartup: Probe }).shuttleBenchStartup,
    );
    const hello = await page.evaluate(() => window.shuttle!.hello());
    tab.engineId = hello.engineId;
    tab.consoleApiMs = Math.round(probe.apiAt!);
    tab.firstCommitMs = entry.at - Math.round(probe.timeOrigin);
    if (entry.engineId !== hello.engineId)
      throw new Error(`the countdown's first entry was written by ${entry.engineId}, not the new tab`);
    tab.engineRunningMs =
      hello.status.state === 'running' ? hello.status.since - Math.round(probe.timeOrigin) : null;
  } catch (error) {
    tab.error = error instanceof Error ? error.message : String(error);
  }
  return { page, tab };
}

function samples(runs: StartupRun[], kind: StartupTab['kind'], key: keyof StartupTab): SampleSummary {
  return summarize(
    runs.flatMap((run) =>
      run.tabs.flatMap((tab) =>
        tab.kind === kind && !tab.error && typeof tab[key] === 'number' ? [tab[key]] : [],
      ),
    ),
  );
}

/** Measures `options.runs` start-ups of a first tab and of a tab joining it. */
export async function measureStartup(
  context: BrowserContext,
  baseUrl: string,
  options: StartupOptions,
): Promise<StartupFigure> {
  const runs: StartupRun[] = [];
  for (let run = 1; run <= options.runs; run++) {
    const databaseName = `bench-startup-${run}-${Date.now().toString(36)}`;
    const record: StartupRun = { run, databaseName, tabs: [] };
    const pages: Page[] = [];
    try {
      for (const kind of ['first', 'joining'] as const) {
        const { page, tab } = await measureTab(context, baseUrl, databaseName, kind, `startup-${kind}`);
        pages.push(page);
        record.tabs.push(tab);
      }
    } finally {
      for (const page of pages) await page.close({ runBeforeUnload: true }).catch(() => undefined);
    }
    runs.push(record);
    options.log(
      `startup ${run}/${options.runs}: ` +
        record.tabs
          .map((tab) =>
            tab.error
              ? `${tab.kind} failed: ${tab.error}`
              : `${tab.kind} tab first commit at ${tab.firstCommitMs} ms (engine running at ${tab.engineRunningMs} ms)`,
          )
          .join('; '),
    );
  }
  return {
    runs,
    firstCommitMs: samples(runs, 'first', 'firstCommitMs'),
    joiningFirstCommitMs: samples(runs, 'joining', 'firstCommitMs'),
    engineRunningMs: {
      first: samples(runs, 'first', 'engineRunningMs'),
      joining: samples(runs, 'joining', 'engineRunningMs'),
    },
    consoleApiMs: {
      first: samples(runs, 'first', 'consoleApiMs'),
      joining: samples(runs, 'joining', 'consoleApiMs'),
    },
  };
}
