/**
 * Deliberate defects, for tests only: each breaks one guarantee in the smallest way that still typechecks, so
 * that a suite which audits the others (the simulation, the cluster fault harness, the acceptance scenarios)
 * can be shown to fail when the engine is wrong (docs/testing.md, "Suites that can fail").
 *
 * Nothing in the product sets one: no option, no export of the public entry points, no environment variable
 * read by the engine. A test sets one with `withMutation` (in-process), and the cluster harness starts its
 * worker processes with `--import src/server/fixtures/mutate.ts`, which reads the harness's own variable and
 * calls `setMutation` before the worker starts. The checks below are a read of one module variable, null in
 * every real run.
 */

export type Mutation =
  /** M1: a run's commit lands without its fence (its condition on the commit record it appends is dropped). */
  | 'unfenced-commit'
  /** M2: a takeover keeps the old epoch instead of minting the next one. */
  | 'takeover-keeps-epoch'
  /** M3: every other engine's claim is judged dead (live holders are taken over at once). */
  | 'every-holder-dead'
  /** M4: on replay, the results recorded for members of a partly finished `ctx.all` are ignored (rerun). */
  | 'all-ignores-recorded-results'
  /**
   * M5: a queue admits without looking at its held slots, and the admission's slot condition is dropped (the
   * queue's `concurrency` is not enforced: queues/queues.ts, lifecycle.ts `admitQueued`).
   */
  | 'queue-ignores-limit'
  /**
   * M6: every other engine's activity slot is judged free, live or not (an activity limit's `concurrency` is
   * not held across engines: activity-limits.ts).
   */
  | 'activity-slot-holders-dead';

export const mutations: readonly Mutation[] = [
  'unfenced-commit',
  'takeover-keeps-epoch',
  'every-holder-dead',
  'all-ignores-recorded-results',
  'queue-ignores-limit',
  'activity-slot-holders-dead',
];

let active: Mutation | null = null;

/** The mutation in force, or null (always null outside the suites that prove they can fail). */
export function mutation(): Mutation | null {
  return active;
}

export function setMutation(next: Mutation | null): void {
  if (next !== null && !mutations.includes(next)) throw new Error(`Unknown mutation '${String(next)}'.`);
  active = next;
}

/** Runs `work` with `which` in force, and restores the engine afterwards whatever happens. */
export async function withMutation<T>(which: Mutation, work: () => Promise<T>): Promise<T> {
  const previous = active;
  setMutation(which);
  try {
    return await work();
  } finally {
    active = previous;
  }
}
