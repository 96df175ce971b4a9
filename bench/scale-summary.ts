/**
 * The arithmetic of the scale benchmark (studio/scale.ts), as pure functions over what it recorded, so each
 * figure is defined once and tested without a browser:
 *
 * - `startRates`: starts per second over the first tenth and the last tenth of the starts (and overall), from
 *   when each batch of starts was asked for and when its last start completed;
 * - `perRenewalPass`: a counter's growth over a window divided by the renewal passes the holder made in it;
 * - `minMargin`: the smallest claim margin among samples of the live holder's claims;
 * - `dueLatencies`: for each workflow whose timer fell due after its holder closed, from the later of the
 *   close and its due time to the first step another engine committed for it.
 */

/** Starts per second; null when there were too few starts to time. */
export type StartRates = { firstTenth: number | null; lastTenth: number | null; overall: number | null };

function rate(count: number, elapsedMs: number): number | null {
  return count > 0 && elapsedMs > 0 ? (count * 1_000) / elapsedMs : null;
}

/** One batch of starts: asked for together, timed from asking to the completion of the last of them. */
export type StartBatch = { beganAt: number; endedAt: number; count: number };

/**
 * Start rates over sequential batches of starts (a batch's starts complete together, by group commit, so
 * single completions cannot be timed apart):
 *
 * - first tenth: the first batches that together hold at least ⌈n/10⌉ starts, over the time from the first
 *   batch's beginning to the end of the last of them;
 * - last tenth: likewise the last batches, from the beginning of the first of them to the end;
 * - overall: every start over the time from the first beginning to the last end.
 *
 * With n/10 smaller than a batch, a "tenth" is one whole batch.
 *
 * @example
 * startRates([{ beganAt: 0, endedAt: 500, count: 50 }, { beganAt: 500, endedAt: 1_500, count: 50 }]);
 * // { firstTenth: 100, lastTenth: 50, overall: 66.7 }
 */
export function startRates(batches: readonly StartBatch[]): StartRates {
  const count = batches.reduce((sum, batch) => sum + batch.count, 0);
  if (count === 0) return { firstTenth: null, lastTenth: null, overall: null };
  const tenth = Math.ceil(count / 10);
  const span = (chosen: readonly StartBatch[]) =>
    rate(
      chosen.reduce((sum, batch) => sum + batch.count, 0),
      chosen[chosen.length - 1]!.endedAt - chosen[0]!.beganAt,
    );
  const leading = (ordered: readonly StartBatch[]) => {
    const chosen: StartBatch[] = [];
    let held = 0;
    for (const batch of ordered) {
      if (held >= tenth) break;
      chosen.push(batch);
      held += batch.count;
    }
    return chosen;
  };
  const first = leading(batches);
  const last = leading([...batches].reverse()).reverse();
  return {
    firstTenth: span(first),
    lastTenth: span(last),
    overall: rate(count, batches[batches.length - 1]!.endedAt - batches[0]!.beganAt),
  };
}

/** `(after − before) / passes`, or null when the holder made no renewal pass in the window. */
export function perRenewalPass(before: number, after: number, passes: number): number | null {
  return passes > 0 ? (after - before) / passes : null;
}

/** One look at a workflow's claim from another tab. */
export type MarginSample = {
  /** The holder's engine id, or null when the workflow had none. */
  ownerEngineId: string | null;
  /** The claim's `expiresAt` minus the sampling tab's `Date.now()` when the answer arrived, in ms. */
  marginMs: number | null;
};

/**
 * The smallest margin among the samples that name `holderEngineId`, and how many samples named another
 * engine or no holder at all (each such sample means the claim was no longer the live holder's).
 */
export function minMargin(
  samples: readonly MarginSample[],
  holderEngineId: string,
): { minMarginMs: number | null; samples: number; notHolder: number } {
  let minMarginMs: number | null = null;
  let notHolder = 0;
  for (const sample of samples) {
    if (sample.ownerEngineId !== holderEngineId) {
      notHolder++;
      continue;
    }
    if (sample.marginMs !== null && (minMarginMs === null || sample.marginMs < minMarginMs))
      minMarginMs = sample.marginMs;
  }
  return { minMarginMs, samples: samples.length, notHolder };
}

/** A workflow whose timer fell due around the holder's close, and what became of it. */
export type DueWorkflow = {
  workflowId: string;
  dueAt: number;
  /** `at` of the first step another engine committed after its claim, or null when none did in time. */
  firstStepAt: number | null;
};

/**
 * For each due workflow, ms from `max(exitAt, dueAt)` to its first step on another engine (null when there
 * was none), and the largest of them: the time until every due workflow is running elsewhere (null when one
 * never was).
 */
export function dueLatencies(
  exitAt: number,
  workflows: readonly DueWorkflow[],
): { latenciesMs: (number | null)[]; allRunningMs: number | null } {
  const latenciesMs = workflows.map((workflow) =>
    workflow.firstStepAt === null ? null : workflow.firstStepAt - Math.max(exitAt, workflow.dueAt),
  );
  const allRunningMs =
    latenciesMs.length === 0 || latenciesMs.some((value) => value === null)
      ? null
      : Math.max(...(latenciesMs as number[]));
  return { latenciesMs, allRunningMs };
}
