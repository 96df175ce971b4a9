/**
 * What both halves of the `queues` part share (bench/queues.ts over PostgreSQL, bench/browser/queues.worker.ts
 * in Chromium): the workflow, the queue it goes through, one latency sample, one throughput run, and the audit
 * of how many ran at once. Imports only the engine, so the browser bundle can take it; every time is the
 * caller's clock (`performance.now()` in Node and in the worker).
 *
 * - **Latency**: one `bench-queue-work` workflow of one zero-delay activity, started alone (queued: onto
 *   `bench-q`, concurrency 10, nothing else waiting; direct: no queue); the sample is `start` returned → its
 *   activity's function called (the activity notes the time in `firstActivityAt`, in this process).
 * - **Throughput**: 50 workflows of `steps` activities of `delayMs` each (the same for every mode): `queued` —
 *   all 50 started at once onto `bench-q`; `batched` — 10 at a time without a queue (start 10, wait for the
 *   10 results, start the next 10 …). Elapsed: the first `start` call → the last `result()`.
 * - **Audit**: from the queued workflows' timelines, the most that ran at once: each is running from its
 *   `started` entry (its admission) to its terminal entry; an end and a start at the same ms count the end
 *   first (a slot is freed by the end's commit, before another admission can take it).
 */
import { defineWorkflow, isTerminal, type Engine, type TimelineEntry } from '../src/engine';

/** The queue the measurements go through, and its limit. */
export const benchQueue = { name: 'bench-q', concurrency: 10 } as const;

/** `createEngine({ queues })` for the part: `bench-q` with concurrency 10. */
export const benchQueues = { [benchQueue.name]: { concurrency: benchQueue.concurrency } };

export type QueueWorkInput = { tag: string; steps: number; delayMs: number };

/** When each workflow's first activity function was called (this process's clock), by its input's tag. */
export const firstActivityAt = new Map<string, number>();

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `steps` activities, each waiting `delayMs`; the first notes when it was called. Returns `steps`. */
export const queueWork = defineWorkflow({
  name: 'bench-queue-work',
  version: 1,
  *run(ctx, input: QueueWorkInput) {
    for (let i = 0; i < input.steps; i++)
      yield* ctx.activity('work', async () => {
        if (i === 0 && !firstActivityAt.has(input.tag)) firstActivityAt.set(input.tag, performance.now());
        if (input.delayMs > 0) await wait(input.delayMs);
        return i;
      });
    return input.steps;
  },
});

export type LatencyMode = 'queued' | 'direct';

/** One latency sample. */
export type LatencySample = {
  mode: LatencyMode;
  /** `start` returned → the first activity called (the figure). */
  fromReturnMs: number;
  /** `start` called → the first activity called. */
  fromCallMs: number;
  /** How long `start` took to return. */
  startMs: number;
  /** The queued workflow's `started` entry's `detail.queue.waitedMs` (enqueued → admitted), when queued. */
  waitedMs: number | null;
};

let tags = 0;
const nextTag = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++tags}`;

/** Starts one workflow alone (onto the queue or not), waits for it, and returns its latency. */
export async function latencySample(engine: Engine, mode: LatencyMode): Promise<LatencySample> {
  const tag = nextTag(`latency-${mode}`);
  const called = performance.now();
  const handle = await engine.start(
    queueWork,
    { tag, steps: 1, delayMs: 0 },
    mode === 'queued' ? { queue: benchQueue.name } : {},
  );
  const returned = performance.now();
  const result = await handle.result();
  if (result !== 1) throw new Error(`${handle.workflowId} returned ${JSON.stringify(result)}, not 1`);
  const ran = firstActivityAt.get(tag);
  firstActivityAt.delete(tag);
  if (ran === undefined)
    throw new Error(`${handle.workflowId} completed without its activity noting the time`);
  let waitedMs: number | null = null;
  if (mode === 'queued') {
    const started = (await handle.timeline()).find((entry) => entry.kind === 'started');
    const queue = (started?.detail as { queue?: { waitedMs: number } } | undefined)?.queue;
    if (!queue) throw new Error(`${handle.workflowId} has no queue admission in its 'started' entry`);
    waitedMs = queue.waitedMs;
  }
  const round2 = (value: number) => Math.round(value * 100) / 100;
  return {
    mode,
    fromReturnMs: round2(ran - returned),
    fromCallMs: round2(ran - called),
    startMs: round2(returned - called),
    waitedMs,
  };
}

export type ThroughputMode = 'queued' | 'batched';

export type QueueWorkload = { workflows: number; batch: number; steps: number; delayMs: number };

/** One throughput run of either mode. */
export type ThroughputSample = {
  mode: ThroughputMode;
  workflows: number;
  elapsedMs: number;
  workflowsPerSecond: number;
  /** The engine's storage transactions during the run (`metrics().storageTransactions`). */
  storageTransactions: number;
  /** The audit of the run's timelines (both modes; the queued one must stay within the queue's limit). */
  audit: ConcurrencyAudit;
};

/** Runs `options.workflows` workflows in `mode`; see the module comment. */
export async function throughputRun(
  engine: Engine,
  mode: ThroughputMode,
  options: QueueWorkload,
): Promise<ThroughputSample> {
  const tagsUsed: string[] = [];
  const input = (index: number): QueueWorkInput => {
    const tag = nextTag(`${mode}-${index}`);
    tagsUsed.push(tag);
    return { tag, steps: options.steps, delayMs: options.delayMs };
  };
  const before = engine.metrics().storageTransactions;
  const started = performance.now();
  const handles = [];
  if (mode === 'queued') {
    const started = await Promise.all(
      Array.from({ length: options.workflows }, (_, index) =>
        engine.start(queueWork, input(index), { queue: benchQueue.name }),
      ),
    );
    handles.push(...started);
    await Promise.all(started.map((handle) => handle.result()));
  } else {
    for (let first = 0; first < options.workflows; first += options.batch) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(options.batch, options.workflows - first) }, (_, index) =>
          engine.start(queueWork, input(first + index)),
        ),
      );
      handles.push(...batch);
      await Promise.all(batch.map((handle) => handle.result()));
    }
  }
  const elapsedMs = performance.now() - started;
  const storageTransactions = engine.metrics().storageTransactions - before;
  for (const handle of handles) {
    const result = await handle.result();
    if (result !== options.steps) throw new Error(`${handle.workflowId} returned ${JSON.stringify(result)}`);
  }
  for (const tag of tagsUsed) firstActivityAt.delete(tag);
  const timelines = await Promise.all(handles.map((handle) => handle.timeline()));
  return {
    mode,
    workflows: handles.length,
    elapsedMs: Math.round(elapsedMs * 100) / 100,
    workflowsPerSecond: Math.round((handles.length / elapsedMs) * 1000 * 100) / 100,
    storageTransactions,
    audit: auditConcurrency(timelines, mode === 'queued' ? benchQueue.name : null),
  };
}

/** The most workflows running at once, from their timelines. */
export type ConcurrencyAudit = {
  /** The most running at any instant (admission / start → terminal entry). */
  maxConcurrent: number;
  /** Workflows whose timeline had no `started` or no terminal entry (not counted: the audit is then void). */
  incomplete: number;
  /** Queued runs: workflows admitted without a slot of `queue` below its limit (must be 0). */
  badSlots: number;
  /**
   * Queued runs: how long a freed slot stayed empty — the k-th admission after the first `concurrency`
   * minus the k-th end (both in time order): p50 and max in ms (null for other runs).
   */
  handoverMs: { p50: number; max: number } | null;
};

/**
 * The audit of a set of workflows' timelines: running intervals from each one's `started` entry to its terminal
 * entry; at equal times ends count before starts. `queue`: each `started` must name it with a slot below the
 * limit (`badSlots` counts those that do not).
 *
 * @example
 * auditConcurrency([timelineA, timelineB], 'bench-q'); // { maxConcurrent: 2, incomplete: 0, badSlots: 0 }
 */
export function auditConcurrency(
  timelines: readonly (readonly TimelineEntry[])[],
  queue: string | null,
): ConcurrencyAudit {
  const events: { at: number; delta: 1 | -1 }[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let incomplete = 0;
  let badSlots = 0;
  for (const timeline of timelines) {
    const started = timeline.find((entry) => entry.kind === 'started');
    const ended = timeline.find((entry) => isTerminal(entry.kind));
    if (!started || !ended) {
      incomplete++;
      continue;
    }
    if (queue !== null) {
      const admitted = (started.detail as { queue?: { name: string; slot?: number } }).queue;
      if (
        !admitted ||
        admitted.name !== queue ||
        admitted.slot === undefined ||
        admitted.slot < 0 ||
        admitted.slot >= benchQueue.concurrency
      )
        badSlots++;
    }
    events.push({ at: started.at, delta: 1 }, { at: ended.at, delta: -1 });
    starts.push(started.at);
    ends.push(ended.at);
  }
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let running = 0;
  let maxConcurrent = 0;
  for (const event of events) {
    running += event.delta;
    maxConcurrent = Math.max(maxConcurrent, running);
  }
  let handoverMs: ConcurrencyAudit['handoverMs'] = null;
  if (queue !== null && starts.length > benchQueue.concurrency) {
    starts.sort((a, b) => a - b);
    ends.sort((a, b) => a - b);
    const gaps = starts
      .slice(benchQueue.concurrency)
      .map((at, index) => at - ends[index]!)
      .sort((a, b) => a - b);
    handoverMs = { p50: gaps[Math.floor(gaps.length / 2)]!, max: gaps.at(-1)! };
  }
  return { maxConcurrent, incomplete, badSlots, handoverMs };
}
