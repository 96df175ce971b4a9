import { expect, test, type Page } from '@playwright/test';
import { storageConformanceCases } from '../src/storage/conformance-cases.test-support';
import type { IncrementReport } from '../src/storage/conformance-page.test-support';

/**
 * The storage conformance suite against real IndexedDB in Chromium, through the harness page
 * storage-conformance.html (built beside the studio). One test per case: the case runs inside the page, on
 * fresh databases that it deletes afterwards. Only the case names are read here; nothing runs in Node.
 */

const harnessUrl = '/storage-conformance.html';

function uniqueName(label: string): string {
  return `e2e-${label}-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
}

async function openHarness(page: Page): Promise<void> {
  await page.goto(harnessUrl);
  await expect(page.getByTestId('conformance-status')).toHaveText('ready');
}

const caseNames = storageConformanceCases(async () => {
  throw new Error('case names only');
}).map((conformanceCase) => conformanceCase.name);

test.describe('storage conformance on real IndexedDB', () => {
  test('the harness page offers exactly the cases of the suite', async ({ page }) => {
    await openHarness(page);
    const offered = await page.evaluate(() => window.shuttleStorageConformance?.listCases());
    expect(offered).toEqual(caseNames);
  });

  for (const name of caseNames) {
    test(name, async ({ page }) => {
      await openHarness(page);
      const prefix = uniqueName('case');
      const result = await page.evaluate(
        ({ caseName, databasePrefix }) => window.shuttleStorageConformance?.runCase(caseName, databasePrefix),
        { caseName: name, databasePrefix: prefix },
      );
      // Real IndexedDB has every capability, so no case may be skipped.
      expect(result?.error ?? result?.outcome).toBe('passed');
    });
  }
});

test('three pages of one browser context increment one counter without losing or doubling an update', async ({
  context,
}) => {
  const databaseName = uniqueName('counter');
  const incrementsPerPage = 150;
  const pages = await Promise.all([context.newPage(), context.newPage(), context.newPage()]);
  await Promise.all(pages.map(openHarness));
  // Start every page's loop at the same moment, so their read-modify-write cycles overlap.
  const startAt = Date.now() + 500;
  const reports: IncrementReport[] = await Promise.all(
    pages.map((page) =>
      page.evaluate(
        async ({ name, increments, start }) => {
          const harness = window.shuttleStorageConformance;
          if (!harness) throw new Error('the storage conformance harness did not load');
          return harness.incrementCounter(name, 'counter', increments, start);
        },
        { name: databaseName, increments: incrementsPerPage, start: startAt },
      ),
    ),
  );
  const first = pages[0] as Page;
  const final = await first.evaluate(
    (name) => window.shuttleStorageConformance?.readValue(name, 'counter'),
    databaseName,
  );
  const successes = reports.reduce((sum, report) => sum + report.successes, 0);
  expect(final).toBe(String(3 * incrementsPerPage));
  expect(final).toBe(String(successes));
  // Each success wrote a distinct value: no two pages both won the same compare-and-swap.
  const written = reports.flatMap((report) => report.written).sort((a, b) => a - b);
  expect(written).toEqual(Array.from({ length: 3 * incrementsPerPage }, (_, index) => index + 1));
  // The pages really raced: some of their conditional batches were refused.
  expect(reports.reduce((sum, report) => sum + report.conflicts, 0)).toBeGreaterThan(0);
  await first.evaluate((name) => window.shuttleStorageConformance?.deleteDatabase(name), databaseName);
});
