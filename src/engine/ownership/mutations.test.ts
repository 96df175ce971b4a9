/**
 * The suites that audit the others can fail: under each deliberate defect of src/engine/mutations.ts the
 * randomised simulation (scenario 28) reports violations, and says which guarantee broke. (The cluster
 * harness's runs under the same defects are in src/server/cluster.test.ts; the acceptance scenario that
 * hands off inside a partly finished `ctx.all`, 15e, fails under M4 too: docs/testing.md.)
 *
 * The seeds are fixed, and MemoryStorage makes a run deterministic, so each defect is caught the same way on
 * every run; each also runs unmutated, to show the same seeds pass with the engine intact.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setMutation, withMutation, type Mutation } from '../mutations';
import { runSimulation, type SimulationReport } from './simulation.test-support';

/** Seeds and what the violations must say, per defect. */
const cases: { mutation: Mutation; label: string; caughtBy: RegExp }[] = [
  {
    mutation: 'unfenced-commit',
    label: 'M1: a run’s commit lands without its fence',
    // the audit sees a checkpoint replaced without its commit record (the commit's missing condition)
    caughtBy: /the checkpoint of .* was replaced without appending|was rewritten/,
  },
  {
    mutation: 'takeover-keeps-epoch',
    label: 'M2: a takeover keeps the old epoch',
    caughtBy: /epoch wf-owner-epoch:.* went from (\d+) to \1$|epoch \d+ has timeline entries from/,
  },
  {
    mutation: 'every-holder-dead',
    label: 'M3: every holder is judged dead',
    // a safety violation, not only a liveness one: a live holder was taken over
    caughtBy: /took .* over from engine-\w+ .* but engine-\w+ was live/,
  },
  {
    mutation: 'all-ignores-recorded-results',
    label: 'M4: a recorded activity result inside ctx.all is ignored on replay',
    caughtBy: /run \d+\/p\d+[ab] ran attempt\(s\) .* after attempt \d+ was recorded as completed/,
  },
];

const seeds = [1, 2, 3];
const small = { workflows: 20, steps: 200 } as const;

function summary(reports: SimulationReport[]): string {
  return reports
    .map(
      (report) =>
        `seed ${report.seed}: ${report.violations.length} violations; first: ${report.violations[0]}`,
    )
    .join('\n');
}

describe('the simulation fails on a deliberately broken engine', () => {
  afterEach(() => setMutation(null));

  it('passes on the same seeds with the engine intact', async () => {
    for (const seed of seeds) {
      const report = await runSimulation({ seed, ...small });
      expect(report.violations, `seed ${seed}`).toEqual([]);
    }
  });

  for (const { mutation, label, caughtBy } of cases)
    it(`${label} (${mutation}): violations reported`, async () => {
      const reports = await withMutation(mutation, async () => {
        const done: SimulationReport[] = [];
        for (const seed of seeds) done.push(await runSimulation({ seed, ...small }));
        return done;
      });
      const caught = reports.filter((report) =>
        report.violations.some((violation) => caughtBy.test(violation)),
      );
      expect(caught.length, summary(reports)).toBeGreaterThan(0);
    });
});
