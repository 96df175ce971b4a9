/**
 * Slow steps: a pipeline of activities that each take real time (about a second), for the studio's chaos
 * drills: freeze or crash the owning tab while a step is in flight and watch another tab take over. Steps
 * already recorded never run again; the step that was in flight runs again on the new owner (activities are
 * at-least-once), and its first run is aborted through its `AbortSignal` when the old engine stops.
 *
 * Each step reports progress with `heartbeat` while it works; a step run again resumes from the progress its
 * last attempt recorded (`heartbeatDetails`), so the new owner finishes it instead of starting it over.
 */
import { delay, defineWorkflow, type ActivityContext, type WorkflowContext } from '../engine';

export type SlowStep = {
  /** The activity name. */
  name: string;
  /** How long the step works, in ms of real time (0–60,000). */
  ms: number;
};

export type SlowStepsInput = { steps: SlowStep[] };

export type SlowStepsResult = { completed: string[]; workMs: number };

type SlowStepsState = { current: string | null; completed: string[]; total: number };

/** Heartbeats are sent about this often while a step works, in ms. */
const heartbeatEveryMs = 250;

/**
 * The pipeline's side effect. Workflow code calls it only through `ctx.activity`; tests may spy on it to
 * count invocations.
 */
export const slowStepsActivities = {
  async work(
    step: SlowStep,
    { signal, heartbeat, heartbeatDetails }: ActivityContext,
  ): Promise<{ step: string; ms: number }> {
    // A step run again (a retry, or another tab took it over) resumes from the progress its last attempt
    // recorded with a heartbeat.
    const resumed = (heartbeatDetails as { doneMs?: unknown } | undefined)?.doneMs;
    let done = typeof resumed === 'number' && resumed >= 0 && resumed <= step.ms ? resumed : 0;
    while (done < step.ms) {
      const slice = Math.min(heartbeatEveryMs, step.ms - done);
      await delay(slice, signal);
      done += slice;
      heartbeat({ doneMs: done, totalMs: step.ms });
    }
    return { step: step.name, ms: step.ms };
  },
};

function assertSlowStepsInput(input: SlowStepsInput): void {
  const steps = input?.steps;
  if (!Array.isArray(steps) || steps.length === 0 || steps.length > 50)
    throw new TypeError('slow-steps input: steps must be an array of 1–50 { name, ms }.');
  for (const step of steps)
    if (
      typeof step?.name !== 'string' ||
      step.name.length === 0 ||
      step.name.length > 100 ||
      typeof step.ms !== 'number' ||
      !(step.ms >= 0 && step.ms <= 60_000)
    )
      throw new TypeError(
        `slow-steps input: step ${JSON.stringify(step)} needs a name (1–100 characters) and ms from 0 to 60,000.`,
      );
}

export const slowSteps = defineWorkflow({
  name: 'slow-steps',
  version: 1,
  description:
    'A pipeline of activities that each work for about a second of real time — freeze or crash the owner ' +
    'mid-step and watch another tab redo only the step that was in flight.',
  sampleInput: {
    steps: [
      { name: 'extract', ms: 900 },
      { name: 'transform', ms: 1_400 },
      { name: 'validate', ms: 600 },
      { name: 'load', ms: 1_200 },
      { name: 'publish', ms: 800 },
    ],
  },
  *run(ctx: WorkflowContext<SlowStepsState>, input: SlowStepsInput) {
    assertSlowStepsInput(input);
    const state = ctx.state;
    const initial: SlowStepsState = { current: null, completed: [], total: input.steps.length };
    Object.assign(state, initial);
    for (const step of input.steps) {
      state.current = step.name;
      yield* ctx.activity(step.name, (activity) => slowStepsActivities.work(step, activity), {
        retry: { maxAttempts: 3, initialIntervalMs: 1_000 },
        timeoutMs: step.ms + 10_000,
      });
      state.completed.push(step.name);
    }
    state.current = null;
    const result: SlowStepsResult = {
      completed: state.completed,
      workMs: input.steps.reduce((sum, step) => sum + step.ms, 0),
    };
    return result;
  },
  queries: {
    progress: (state) => ({
      current: state.current ?? null,
      completed: state.completed ?? [],
      total: state.total ?? null,
    }),
  },
});

export default slowSteps;
