/**
 * One Playwright test per seed of the browser soak, each in a fresh browser context (a fresh database): the
 * schedule runs (run-seed.ts), the checks (verify.ts) must find nothing. A failing seed attaches its report —
 * the violations, the schedule, what happened, and the evidence of the workflows named — and says how to
 * replay it. Used by `npm run soak:browser` (browser-soak.soak.ts) and by npm test's short version
 * (e2e/browser-soak.spec.ts).
 */
import { writeFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { freshDatabaseName } from '../fixtures/studio';
import { finishBudgetMs, runSeed, summarize, tabStartBudgetMs, takeoverBudgetMs } from './run-seed';
import { maxTabs, soakSchedule, type ProfileName } from './schedule';

/** How to replay `seed` of `profile` alone. */
export function replayCommand(seed: number, profile: ProfileName): string {
  return `SHUTTLE_SEED=${seed}${profile === 'full' ? '' : ` SHUTTLE_BROWSER_SOAK_PROFILE=${profile}`} npm run soak:browser`;
}

/**
 * The options of a soak test file, for it to pass to `test.use` at its top level (Playwright reads a file's
 * options there; set in a helper they make the worker's fixture pool inconsistent between files). A trace of
 * 3–5 pages' screencasts costs more CPU than the soak itself on a busy machine; a failing seed writes its own
 * report.json instead.
 */
export const soakTestOptions = { trace: 'off' } as const;

/** Declares one test per seed; prints a total when they are done. Call `test.use(soakTestOptions)` first. */
export function defineSeedTests(seeds: readonly number[], profile: ProfileName): void {
  const totals = { seeds: 0, violations: 0, failedSeeds: [] as number[], began: 0 };

  for (const seed of seeds)
    test(`browser soak seed ${seed} (${profile})`, async ({ context }, testInfo) => {
      const schedule = soakSchedule(seed, profile);
      const tabsEver = schedule.initialTabs + schedule.events.filter((event) => event.kind === 'open').length;
      // A ceiling for a seed that goes wrong, never a pace: the planned schedule, every tab's start-up, the
      // end of the longest freeze and the drain.
      test.setTimeout(
        (schedule.events.at(-1)?.at ?? 0) +
          (tabsEver + maxTabs) * tabStartBudgetMs +
          10_000 +
          finishBudgetMs +
          takeoverBudgetMs,
      );
      totals.began ||= Date.now();
      const report = await runSeed(context, {
        seed,
        profile,
        databaseName: freshDatabaseName(testInfo),
        output: (line) => console.log(line),
      });
      totals.seeds++;
      totals.violations += report.violations.length;
      if (report.violations.length > 0) {
        totals.failedSeeds.push(seed);
        const named = new Set(report.violations.flatMap((line) => line.match(/soak-\d+-w\d+/g) ?? []));
        const path = testInfo.outputPath('report.json');
        writeFileSync(
          path,
          JSON.stringify(
            {
              seed,
              profile,
              replay: replayCommand(seed, profile),
              summary: summarize(report),
              violations: report.violations,
              plan: report.plan,
              log: report.log,
              evidence: {
                workflows: report.evidence.workflows.filter((record) => named.has(record.plan.id)),
                rejections: report.evidence.rejections.filter((rejection) => named.has(rejection.workflowId)),
                ledger: report.evidence.ledger.rows.filter((row) => named.has(row.workflowId)),
                conflicts: report.evidence.ledger.conflicts,
              },
            },
            null,
            2,
          ),
        );
        await testInfo.attach('report.json', { contentType: 'application/json', path });
      }
      expect(
        report.violations,
        `seed ${seed} (${profile}): ${summarize(report)}; replay with ${replayCommand(seed, profile)}`,
      ).toEqual([]);
    });

  test.afterAll(() => {
    if (totals.seeds === 0) return;
    const minutes = ((Date.now() - totals.began) / 60_000).toFixed(1);
    console.log(
      `browser soak (${profile}): ${totals.seeds} seeds, ${totals.violations} violations${totals.failedSeeds.length > 0 ? ` (seeds ${totals.failedSeeds.join(', ')})` : ''}, ${minutes} min`,
    );
  });
}
