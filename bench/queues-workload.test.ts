import { describe, expect, it } from 'vitest';
import type { TimelineEntry } from '../src/engine';
import { auditConcurrency } from './queues-workload';
import { halfFigures, peerFigures, type QueueRoundsResult, type RunSample } from './queues-rounds';
import { summarize } from './stats';

/** A timeline of one workflow running from `from` to `to`, admitted into `slot` of `queue` when given. */
function timeline(from: number, to: number, queue?: { name: string; slot?: number }): TimelineEntry[] {
  return [
    {
      seq: 1,
      at: from,
      engineId: 'e',
      epoch: 1,
      kind: 'started',
      detail: { workflowType: 'w', version: 1, ...(queue ? { queue: { ...queue, waitedMs: 0 } } : {}) },
    },
    { seq: 2, at: to, engineId: 'e', epoch: 1, kind: 'completed', detail: { hasResult: true } },
  ] as unknown as TimelineEntry[];
}

describe('auditConcurrency', () => {
  it('counts the most running at once, an end before a start at the same ms', () => {
    const audit = auditConcurrency(
      [timeline(0, 10), timeline(5, 20), timeline(10, 30), timeline(12, 13)],
      null,
    );
    expect(audit).toEqual({ maxConcurrent: 3, incomplete: 0, badSlots: 0, handoverMs: null });
  });

  it('catches more than the limit at once, admissions without a slot of the queue, and unfinished timelines', () => {
    const eleven = Array.from({ length: 11 }, (_, index) =>
      timeline(index, 100, { name: 'bench-q', slot: index % 10 }),
    );
    expect(auditConcurrency(eleven, 'bench-q').maxConcurrent).toBe(11);
    const wrong = [
      timeline(0, 1, { name: 'bench-q', slot: 10 }),
      timeline(0, 1, { name: 'other', slot: 0 }),
      timeline(0, 1),
      timeline(0, 1, { name: 'bench-q', slot: 3 }),
    ];
    expect(auditConcurrency(wrong, 'bench-q').badSlots).toBe(3);
    expect(auditConcurrency([[timeline(0, 1)[0]!]], null).incomplete).toBe(1);
  });

  it('measures how long a freed slot stayed empty before the next admission', () => {
    const first = Array.from({ length: 10 }, (_, index) =>
      timeline(0, 50 + index, { name: 'bench-q', slot: index }),
    );
    const next = Array.from({ length: 10 }, (_, index) =>
      timeline(55 + index * 2, 200, { name: 'bench-q', slot: index }),
    );
    // the k-th of the next ten starts at 55 + 2k, the k-th end was at 50 + k: gaps 5 … 14
    expect(auditConcurrency([...first, ...next], 'bench-q').handoverMs).toEqual({ p50: 10, max: 14 });
  });
});

describe('the rounds summary', () => {
  const run = (kind: string, workflowsPerSecond: number, maxConcurrent = 10): RunSample => ({
    kind,
    workflows: 50,
    elapsedMs: 50_000 / workflowsPerSecond,
    workflowsPerSecond,
    commits: 100,
    commitsPerSecond: 200,
    maxConcurrent,
  });
  const result: QueueRoundsResult = {
    latency: { samples: [], queued: summarize([10, 12, 14]), direct: summarize([5, 6, 7]) },
    rounds: [
      {
        round: 1,
        order: [],
        runs: { queued: run('queued', 80), batched: run('batched', 100), dbos: run('dbos', 40) },
      },
      {
        round: 2,
        order: [],
        runs: { queued: run('queued', 90, 9), batched: run('batched', 90), dbos: run('dbos', 60) },
      },
      { round: 3, order: [], runs: { queued: run('queued', 70), batched: run('batched', 100) } },
    ],
    failures: [],
  };

  it('takes the median of per-round ratios, not the ratio of medians, and the highest peak', () => {
    const figures = halfFigures(result);
    expect(figures.throughput?.ratio).toBe(0.8); // rounds: 0.8, 1, 0.7
    expect(figures.throughput?.queued?.workflowsPerSecond).toBe(80);
    expect(figures.throughput?.maxConcurrent).toBe(10);
    expect(figures.latencyMs?.queued).toEqual({ p50: 12, p95: 14, count: 3 });
    const dbos = peerFigures(result, 'dbos', 20);
    expect(dbos).toMatchObject({
      workflowsPerSecond: 50,
      shuttleRatio: 1.75,
      pollIntervalMs: 20,
      maxConcurrent: 10,
    }); // 2, 1.5
  });
});
