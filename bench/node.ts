/**
 * Node benchmarks of the engine on the in-memory store (docs/quality.md, Benchmarks; bench/README.md, Node):
 * steps per second, workflows per second, recovery time for 1,000 and 10,000 parked workflows, and heap per
 * parked workflow. Built by scripts/bench.mjs and run with `node --expose-gc`; prints one JSON object.
 *
 * Every figure is the median of several runs (`SHUTTLE_BENCH_RUNS`, default 5); the spread is reported beside
 * it in `details`, which scripts/bench.mjs moves to details.json.
 */
import { createEngine, defineWorkflow, type Engine } from '../src/engine';
import { MemoryStorage } from '../src/storage';
import { median, percentile } from './stats';
import { steps } from './steps-workflow';

const parked = defineWorkflow({
  name: 'bench-parked',
  version: 1,
  *run(ctx) {
    yield* ctx.activity('prepare', () => 'ready');
    return yield* ctx.waitForSignal('go');
  },
});

/** The median of samples that are never empty here. */
function medianOf(values: number[]): number {
  return median(values)!;
}

async function stepsPerSecond(ownership: 'none' | 'workflow-lease', count: number): Promise<number> {
  const engine = await createEngine({ storage: new MemoryStorage(), workflows: [steps], ownership });
  const started = performance.now();
  const handle = await engine.start(steps, { steps: count });
  await handle.result();
  const seconds = (performance.now() - started) / 1000;
  await engine.shutdown();
  return count / seconds;
}

async function workflowsPerSecond(count: number, concurrency: number): Promise<number> {
  const oneStep = defineWorkflow({
    name: 'bench-one',
    version: 1,
    *run(ctx, input: { n: number }) {
      return yield* ctx.activity('only', () => input.n);
    },
  });
  const engine = await createEngine({
    storage: new MemoryStorage(),
    workflows: [oneStep],
    ownership: 'workflow-lease',
  });
  const started = performance.now();
  for (let done = 0; done < count; done += concurrency) {
    const handles = await Promise.all(
      Array.from({ length: Math.min(concurrency, count - done) }, (_, i) =>
        engine.start(oneStep, { n: done + i }),
      ),
    );
    await Promise.all(handles.map((handle) => handle.result()));
  }
  const seconds = (performance.now() - started) / 1000;
  await engine.shutdown();
  return count / seconds;
}

async function parkedStore(count: number): Promise<MemoryStorage> {
  const storage = new MemoryStorage();
  const engine = await createEngine({ storage, workflows: [parked] });
  for (let done = 0; done < count; done += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - done) }, (_, i) =>
        engine.start(parked, undefined, { id: `p-${done + i}` }),
      ),
    );
    await engine.idle();
  }
  // A crash: the engine is dropped without shutdown (its claims, under none, are nothing to release).
  await engine.shutdown();
  return storage;
}

async function recoveryMs(storage: MemoryStorage): Promise<{ ms: number; engine: Engine }> {
  const started = performance.now();
  const engine = await createEngine({ storage, workflows: [parked] });
  await engine.idle();
  return { ms: performance.now() - started, engine };
}

function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const runs = Number(process.env.SHUTTLE_BENCH_RUNS ?? 5);
  // Warm-up, discarded: the first runs measure V8 compiling the engine's hot path, not the engine.
  await stepsPerSecond('workflow-lease', 5_000);
  await stepsPerSecond('none', 5_000);
  await workflowsPerSecond(1_000, 100);
  const stepSamples: number[] = [];
  const stepNoneSamples: number[] = [];
  for (let i = 0; i < runs; i++) {
    stepSamples.push(await stepsPerSecond('workflow-lease', 20_000));
    stepNoneSamples.push(await stepsPerSecond('none', 20_000));
  }
  const workflowSamples: number[] = [];
  for (let i = 0; i < runs; i++) workflowSamples.push(await workflowsPerSecond(5_000, 100));

  const recovery1k: number[] = [];
  const recovery10k: number[] = [];
  const store1k = await parkedStore(1_000);
  const store10k = await parkedStore(10_000);
  for (let i = 0; i < Math.min(runs, 3); i++) {
    const small = await recoveryMs(store1k);
    recovery1k.push(small.ms);
    await small.engine.shutdown();
    const large = await recoveryMs(store10k);
    recovery10k.push(large.ms / 10);
    await large.engine.shutdown();
  }

  const before = heapUsed();
  const { engine } = await recoveryMs(store10k);
  const after = heapUsed();
  const heapPerParked = (after - before) / 10_000;
  await engine.shutdown();

  const result = {
    stepsPerSecond: Math.round(medianOf(stepSamples)),
    workflowsPerSecond: Math.round(medianOf(workflowSamples)),
    recoveryMsPer1000Workflows: Math.round(medianOf(recovery10k)),
    heapBytesPerParkedWorkflow: Math.round(heapPerParked),
    details: {
      runs,
      stepsPerSecond: {
        median: Math.round(medianOf(stepSamples)),
        // For a rate the slow tail is the low end: the rate 95% of runs reached.
        p95: Math.round(percentile(stepSamples, 5)!),
        samples: stepSamples.map(Math.round),
        ownership: 'workflow-lease',
      },
      stepsPerSecondNone: {
        median: Math.round(medianOf(stepNoneSamples)),
        samples: stepNoneSamples.map(Math.round),
      },
      workflowsPerSecond: {
        median: Math.round(medianOf(workflowSamples)),
        samples: workflowSamples.map(Math.round),
      },
      recoveryMs: {
        per1000From1000: Math.round(medianOf(recovery1k)),
        per1000From10000: Math.round(medianOf(recovery10k)),
        samples1k: recovery1k.map(Math.round),
        samples10kPer1000: recovery10k.map(Math.round),
      },
      heapMeasuredWithGc: typeof (globalThis as { gc?: unknown }).gc === 'function',
    },
  };
  console.log(JSON.stringify(result));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
