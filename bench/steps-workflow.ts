/**
 * The workflows the throughput benchmarks run (Node, server, and the server's diagnostics):
 * - `bench-steps`: N sequential activities, each returning its index; the result is their sum,
 *   (N × (N − 1)) / 2 — zero-length steps, the workload that favours grouping commits most;
 * - `bench-io-steps`: sequential activities that each wait a given time (simulated I/O latency, 1–20 ms,
 *   seeded by the runner: `ioWorkload`), workflows of mixed lengths — where grouping helps less, since the
 *   workflows' steps no longer end together. Its result is the number of steps.
 */
import { defineWorkflow } from '../src/engine';
import { seededRandom } from '../src/storage/seeded-random';

export const steps = defineWorkflow({
  name: 'bench-steps',
  version: 1,
  *run(ctx, input: { steps: number }) {
    let sum = 0;
    for (let i = 0; i < input.steps; i++) sum += yield* ctx.activity('step', () => i);
    return sum;
  },
});

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const ioSteps = defineWorkflow({
  name: 'bench-io-steps',
  version: 1,
  *run(ctx, input: { delays: number[] }) {
    for (const delay of input.delays) yield* ctx.activity('io', () => wait(delay));
    return input.delays.length;
  },
});

/**
 * The I/O-bound workload: `workflows` workflows of 10 to 100 steps (uniform), each step waiting 1 to 20 ms
 * (uniform), from `seed` — the same lists for Shuttle and its peer.
 */
export function ioWorkload(seed: number, workflows = 50): number[][] {
  const random = seededRandom(seed);
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  return Array.from({ length: workflows }, () =>
    Array.from({ length: between(10, 100) }, () => between(1, 20)),
  );
}
