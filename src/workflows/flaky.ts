/**
 * Flaky: one activity that fails its first `failures` attempts and succeeds after, under a retry policy with
 * exponential backoff. The studio shows every attempt, its error, and the durable timer before the next one;
 * close the owning tab during a backoff and another tab makes the next attempt when the timer falls due.
 *
 * When `failures` reaches `maxAttempts` the activity gives up and the workflow fails with
 * `ActivityFailedError` carrying the last error.
 */
import {
  delay,
  ActivityFailedError,
  defineWorkflow,
  type ActivityContext,
  type WorkflowContext,
} from '../engine';

export type FlakyInput = {
  /** How many attempts fail before one succeeds. */
  failures: number;
  /** Total attempts allowed, including the first. Default 5. */
  maxAttempts?: number;
  /** The wait before the second attempt, in ms; it doubles after every failure. Default 500. */
  initialIntervalMs?: number;
  /** Cap on one wait, in ms. Default 10,000. */
  maxIntervalMs?: number;
};

export type FlakyResult = { succeededOnAttempt: number; failedAttempts: number };

type FlakyState = {
  stage: 'calling' | 'succeeded' | 'gave-up';
  plannedFailures: number;
  maxAttempts: number;
  succeededOnAttempt: number | null;
};

/** What the flaky service throws; retryable. */
export class ServiceUnavailableError extends Error {
  override name = 'ServiceUnavailableError';
}

/**
 * The flaky side effect. Workflow code calls it only through `ctx.activity`; tests may spy on it to count
 * attempts.
 */
export const flakyActivities = {
  async callService(
    request: { failures: number },
    { attempt, signal }: ActivityContext,
  ): Promise<{ attempt: number }> {
    await delay(100, signal);
    if (attempt <= request.failures)
      throw new ServiceUnavailableError(
        `503 Service Unavailable on attempt ${attempt} (this service fails its first ${request.failures}).`,
      );
    return { attempt };
  },
};

export const flaky = defineWorkflow({
  name: 'flaky',
  version: 1,
  description:
    'Calls a service that fails its first "failures" attempts; the retry policy backs off exponentially ' +
    '(500 ms, 1 s, 2 s, …) on durable timers until an attempt succeeds or "maxAttempts" is spent.',
  sampleInput: { failures: 3, maxAttempts: 5, initialIntervalMs: 500 },
  *run(ctx: WorkflowContext<FlakyState>, input: FlakyInput) {
    if (!Number.isInteger(input?.failures) || input.failures < 0)
      throw new TypeError(`flaky input: failures must be an integer ≥ 0; got ${input?.failures}.`);
    const maxAttempts = input.maxAttempts ?? 5;
    const state = ctx.state;
    const initial: FlakyState = {
      stage: 'calling',
      plannedFailures: input.failures,
      maxAttempts,
      succeededOnAttempt: null,
    };
    Object.assign(state, initial);
    try {
      const { attempt } = yield* ctx.activity(
        'call-flaky-service',
        (activity) => flakyActivities.callService({ failures: input.failures }, activity),
        {
          retry: {
            maxAttempts,
            initialIntervalMs: input.initialIntervalMs ?? 500,
            backoffCoefficient: 2,
            maxIntervalMs: input.maxIntervalMs ?? 10_000,
          },
          timeoutMs: 5_000,
        },
      );
      state.stage = 'succeeded';
      state.succeededOnAttempt = attempt;
      const result: FlakyResult = { succeededOnAttempt: attempt, failedAttempts: attempt - 1 };
      return result;
    } catch (error) {
      if (error instanceof ActivityFailedError) state.stage = 'gave-up';
      throw error;
    }
  },
  queries: {
    status: (state) => ({
      stage: state.stage ?? 'starting',
      plannedFailures: state.plannedFailures ?? null,
      succeededOnAttempt: state.succeededOnAttempt ?? null,
    }),
  },
});

export default flaky;
