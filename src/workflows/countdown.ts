/**
 * Countdown: a long series of short durable sleeps, the best handoff demo. Every tick is one committed
 * operation, so whichever engine owns the workflow when a timer falls due fires it: close the owning tab (or
 * freeze it past its claim) and another tab continues from the tick it reached, without repeating one.
 *
 * The `remaining` and `progress` queries read the committed state, so any tab can watch the count.
 */
import { defineWorkflow, type WorkflowContext } from '../engine';

export type CountdownInput = {
  /** Where to count down from: an integer from 0 to 10,000. */
  from: number;
  /** The length of one tick (a durable sleep), in ms. Default 500. */
  tickMs?: number;
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
    const state = ctx.state;
    state.total = input.from;
    for (let remaining = input.from; remaining > 0; remaining--) {
      state.remaining = remaining;
      yield* ctx.sleep(tickMs);
    }
    state.remaining = 0;
    return { counted: input.from };
  },
  queries: {
    remaining: (state) => state.remaining ?? null,
    progress: (state) => ({ remaining: state.remaining ?? null, total: state.total ?? null }),
  },
});

export default countdown;
