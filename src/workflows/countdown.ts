/**
 * Countdown: a long series of short durable sleeps, the best handoff demo. Every tick is one committed
 * operation, so whichever engine owns the workflow when a timer falls due fires it: close the owning tab (or
 * freeze it past its claim) and another tab continues from the tick it reached, without repeating one.
 *
 * The `remaining` and `progress` queries read the committed state, so any tab can watch the count.
 *
 * With `ticksPerRun`, it continues as new every that many ticks (`ctx.continueAsNew`): a count of 10,000
 * then replays at most `ticksPerRun` ticks on a handoff, and its page shows the chain of runs.
 */
import { defineWorkflow, type WorkflowContext } from '../engine';

export type CountdownInput = {
  /** Where to count down from: an integer from 0 to 10,000. */
  from: number;
  /** The length of one tick (a durable sleep), in ms. Default 500. */
  tickMs?: number;
  /** Continue as new every this many ticks (a positive integer). Default: one run for the whole count. */
  ticksPerRun?: number;
  /** Where the whole count started (set by the run that continued as new; `from` otherwise). */
  total?: number;
};

type CountdownState = { remaining: number; total: number };

export const countdown = defineWorkflow({
  name: 'countdown',
  version: 1,
  description:
    'Counts down with one short durable sleep per tick — close the owner tab and watch another tab continue.',
  sampleInput: { from: 20, tickMs: 500 },
  *run(ctx: WorkflowContext<CountdownState>, input: CountdownInput) {
    if (!Number.isInteger(input?.from) || input.from < 0 || input.from > 10_000)
      throw new TypeError(`countdown input: from must be an integer from 0 to 10,000; got ${input?.from}.`);
    const tickMs = input.tickMs ?? 500;
    if (typeof tickMs !== 'number' || !Number.isFinite(tickMs) || tickMs < 0)
      throw new TypeError(`countdown input: tickMs must be a number of milliseconds ≥ 0; got ${tickMs}.`);
    const { ticksPerRun } = input;
    if (ticksPerRun !== undefined && (!Number.isInteger(ticksPerRun) || ticksPerRun < 1))
      throw new TypeError(`countdown input: ticksPerRun must be a positive integer; got ${ticksPerRun}.`);
    const state = ctx.state;
    const total = input.total ?? input.from;
    state.total = total;
    for (let remaining = input.from, ticks = 0; remaining > 0; remaining--, ticks++) {
      if (ticks === ticksPerRun) return yield* ctx.continueAsNew({ ...input, from: remaining, total });
      state.remaining = remaining;
      yield* ctx.sleep(tickMs);
    }
    state.remaining = 0;
    return { counted: total };
  },
  queries: {
    remaining: (state) => state.remaining ?? null,
    progress: (state) => ({ remaining: state.remaining ?? null, total: state.total ?? null }),
  },
});

export default countdown;
