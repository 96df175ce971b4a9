import { defineWorkflow } from '../engine';

/**
 * A long countdown of short durable sleeps: the best handoff demo. Close the tab that owns it and another
 * tab continues from the tick it reached, without repeating one.
 */
export const countdown = defineWorkflow({
  name: 'countdown',
  version: 1,
  description:
    'Counts down with one short durable sleep per tick — close the owner tab and watch another tab continue.',
  sampleInput: { from: 20, tickMs: 500 },
  *run(ctx, input: { from: number; tickMs?: number }) {
    const tickMs = input.tickMs ?? 500;
    ctx.state.remaining = input.from;
    for (let remaining = input.from; remaining > 0; remaining--) {
      ctx.state.remaining = remaining;
      yield* ctx.sleep(tickMs);
    }
    ctx.state.remaining = 0;
    return { counted: input.from };
  },
  queries: { remaining: (state) => state.remaining },
});
