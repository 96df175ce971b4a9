/**
 * The browser harness of the storage conformance suite (storage-conformance.html, built by Vite beside the
 * studio). It runs the cases against this browser's real IndexedDB, each case on its own fresh database named
 * from a prefix, and deletes each database afterwards.
 *
 * - `?db=<prefix>` runs every case on load; progress and results are on `window.__conformance` and listed on
 *   the page.
 * - `window.shuttleStorageConformance` lets a test run one case, or race conditional increments of a counter
 *   from several pages of one browser context (they share IndexedDB, as tabs do).
 */

import {
  runStorageConformance,
  storageConformanceCases,
  type ConformanceResult,
  type StorageConformanceFactory,
} from './conformance-cases.test-support';
import { IndexedDbStorage } from './indexeddb';

/** What one page's increment loop did. */
export type IncrementReport = {
  /** Conditional batches that applied. */
  successes: number;
  /** Conditional batches refused because another writer got there first. */
  conflicts: number;
  /** The counter values this page wrote, one per success. */
  written: number[];
};

export type StorageConformanceHarness = {
  /** Names of every case, in order. */
  listCases(): string[];
  /** Runs one case on fresh databases named from `databasePrefix`. */
  runCase(name: string, databasePrefix: string): Promise<ConformanceResult>;
  /**
   * Increments the counter under `key` in `databaseName` until `increments` conditional batches have applied,
   * re-reading and retrying whenever one is refused. Starts at `startAt` (epoch ms) so pages start together.
   */
  incrementCounter(
    databaseName: string,
    key: string,
    increments: number,
    startAt?: number,
  ): Promise<IncrementReport>;
  /** Reads one value. */
  readValue(databaseName: string, key: string): Promise<string | null>;
  /** Deletes a database. */
  deleteDatabase(databaseName: string): Promise<void>;
};

declare global {
  interface Window {
    __conformance?: { done: boolean; results: ConformanceResult[] };
    shuttleStorageConformance?: StorageConformanceHarness;
  }
}

function indexedDbFactory(databasePrefix: string): StorageConformanceFactory {
  let count = 0;
  return async () => {
    count++;
    const databaseName = `${databasePrefix}-${count}`;
    return {
      storage: new IndexedDbStorage({ databaseName }),
      openPeer: async () => new IndexedDbStorage({ databaseName }),
      dispose: () => IndexedDbStorage.deleteDatabase(databaseName),
    };
  };
}

async function runCase(name: string, databasePrefix: string): Promise<ConformanceResult> {
  const [result] = await runStorageConformance(indexedDbFactory(databasePrefix), {
    filter: (candidate) => candidate === name,
  });
  if (!result) throw new Error(`No storage conformance case is named ${JSON.stringify(name)}.`);
  return result;
}

async function incrementCounter(
  databaseName: string,
  key: string,
  increments: number,
  startAt = 0,
): Promise<IncrementReport> {
  const storage = new IndexedDbStorage({ databaseName });
  try {
    await storage.open();
    const wait = startAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const report: IncrementReport = { successes: 0, conflicts: 0, written: [] };
    while (report.successes < increments) {
      const current = await storage.get(key);
      const next = (current === null ? 0 : Number(current)) + 1;
      const applied = await storage.conditionalBatch(
        [{ key, expected: current }],
        [{ type: 'put', key, value: String(next) }],
      );
      if (applied) {
        report.successes++;
        report.written.push(next);
      } else report.conflicts++;
    }
    return report;
  } finally {
    await storage.close();
  }
}

async function readValue(databaseName: string, key: string): Promise<string | null> {
  const storage = new IndexedDbStorage({ databaseName });
  try {
    return await storage.get(key);
  } finally {
    await storage.close();
  }
}

function showResult(result: ConformanceResult): void {
  const item = document.createElement('li');
  item.dataset.outcome = result.outcome;
  item.textContent = `${result.outcome}: ${result.name} (${result.durationMs} ms)${result.error ? ` — ${result.error}` : ''}`;
  document.querySelector('[data-testid="conformance-results"]')?.append(item);
}

function showStatus(text: string): void {
  const status = document.querySelector('[data-testid="conformance-status"]');
  if (status) status.textContent = text;
}

async function runEverything(databasePrefix: string): Promise<void> {
  const progress = { done: false, results: [] as ConformanceResult[] };
  window.__conformance = progress;
  const names = storageConformanceCases(indexedDbFactory(databasePrefix)).map((item) => item.name);
  for (const [index, name] of names.entries()) {
    showStatus(`running ${index + 1} of ${names.length}: ${name}`);
    const result = await runCase(name, `${databasePrefix}-${index}`);
    progress.results.push(result);
    showResult(result);
  }
  const failed = progress.results.filter((result) => result.outcome === 'failed').length;
  showStatus(`done: ${progress.results.length - failed} passed or skipped, ${failed} failed`);
  progress.done = true;
}

window.shuttleStorageConformance = {
  listCases: () => storageConformanceCases(indexedDbFactory('unused')).map((item) => item.name),
  runCase,
  incrementCounter,
  readValue,
  deleteDatabase: (databaseName) => IndexedDbStorage.deleteDatabase(databaseName),
};

const databasePrefix = new URLSearchParams(window.location.search).get('db');
if (databasePrefix) void runEverything(databasePrefix);
else showStatus('ready');
