/**
 * The workflow the throughput benchmarks run (Node, server, and the server's diagnostics): N sequential
 * activities, each returning its index; the result is their sum, (N × (N − 1)) / 2.
 */
import { defineWorkflow } from '../src/engine';

export const steps = defineWorkflow({
  name: 'bench-steps',
  version: 1,
  *run(ctx, input: { steps: number }) {
    let sum = 0;
    for (let i = 0; i < input.steps; i++) sum += yield* ctx.activity('step', () => i);
    return sum;
  },
});
