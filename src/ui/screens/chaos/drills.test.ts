import { describe, expect, it } from 'vitest';
import { drillDefinitions } from './drills';
import { checkQueueLimit, queueHoldFrom, type QueueHold } from './queue-limit';
import { createEngine, MemoryStorage, type TimelineEntry } from '../../../public';
import { withMutation } from '../../../engine/mutations';
import { builtInQueues, payment } from '../../../workflows';

describe('the drills’ texts', () => {
  it('say both ways a start that lost the race is refused: the id exists, or the winner holds its claim', () => {
    const race = drillDefinitions.find((drill) => drill.id === 'race')!;
    expect(race.description).toContain('the id exists');
    expect(race.description).toContain('the winner holds its claim');
    expect(race.description).not.toMatch(/told the id exists/);
  });
});

/** A queued workflow's timeline as the engine writes it: enqueued, admitted (by `admittedBy`), ended (or not). */
function queuedTimeline(options: {
  queue?: string;
  key?: string;
  enqueuedAt?: number;
  admittedAt: number | null;
  endedAt: number | null;
  admittedBy?: string;
  endedBy?: string;
  end?: 'completed' | 'failed';
}): TimelineEntry[] {
  const queue = options.queue ?? 'payments';
  const admittedBy = options.admittedBy ?? 'engine-a';
  const entries: TimelineEntry[] = [
    {
      seq: 1,
      at: options.enqueuedAt ?? 0,
      engineId: admittedBy,
      epoch: 0,
      kind: 'scheduled',
      detail: {
        workflowType: 'payment',
        version: 1,
        startAt: 0,
        queue: { name: queue, priority: 5, ...(options.key === undefined ? {} : { key: options.key }) },
      },
    },
  ];
  if (options.admittedAt !== null)
    entries.push(
      {
        seq: 2,
        at: options.admittedAt,
        engineId: admittedBy,
        epoch: 1,
        kind: 'started',
        detail: { workflowType: 'payment', version: 1, queue: { name: queue, waitedMs: 5, slot: 0 } },
      },
      {
        seq: 3,
        at: options.admittedAt + 1,
        engineId: admittedBy,
        epoch: 1,
        kind: 'activity-started',
        detail: { pos: 0, member: 0, name: 'authorize', attempt: 1 },
      },
    );
  if (options.endedAt !== null)
    entries.push({
      seq: 4,
      at: options.endedAt,
      engineId: options.endedBy ?? admittedBy,
      epoch: 2,
      kind: options.end ?? 'completed',
      detail: { hasResult: true },
    });
  return entries;
}

const paymentsLimits = { concurrency: 2, perKeyConcurrency: 1 };

describe('the queue-limit check (admission to end, from the timelines)', () => {
  it('reads the hold from admission to end, with the key of the enqueueing entry and who admitted and ended it', () => {
    const timeline = queuedTimeline({
      key: 'acme',
      admittedAt: 100,
      endedAt: 900,
      admittedBy: 'tab-b',
      endedBy: 'tab-a',
      end: 'failed',
    });
    expect(queueHoldFrom('w1', timeline, 'payments')).toEqual({
      workflowId: 'w1',
      key: 'acme',
      from: 100,
      to: 900,
      admittedBy: 'tab-b',
      endedBy: 'tab-a',
    });
    // Admitted by its start, the queue being free: no `scheduled` entry; its key is the one it was started with.
    const direct = queuedTimeline({ key: 'acme', admittedAt: 100, endedAt: 900 }).filter(
      (entry) => entry.kind !== 'scheduled',
    );
    expect(queueHoldFrom('w1', direct, 'payments')).toMatchObject({ key: null, from: 100, to: 900 });
    expect(queueHoldFrom('w1', direct, 'payments', 'acme')).toMatchObject({ key: 'acme' });
    // Not admitted from that queue: no hold. Admitted, not ended: it holds its slot still.
    expect(queueHoldFrom('w1', timeline, 'other')).toBeNull();
    expect(queueHoldFrom('w2', queuedTimeline({ admittedAt: null, endedAt: null }), 'payments')).toBeNull();
    expect(queueHoldFrom('w3', queuedTimeline({ admittedAt: 50, endedAt: null }), 'payments')).toMatchObject({
      from: 50,
      to: null,
      endedBy: null,
    });
  });

  it('passes holds that never overlap more than the limit, an end and an admission at one instant included', () => {
    const holds = [
      { id: 'a', key: 'k1', from: 0, to: 100 },
      { id: 'b', key: 'k2', from: 10, to: 50 },
      { id: 'c', key: 'k3', from: 50, to: 120 }, // admitted the millisecond b ended
      { id: 'd', key: 'k1', from: 100, to: 200 }, // the same key as a, admitted the millisecond a ended
    ].map(({ id, key, from, to }) =>
      queueHoldFrom(id, queuedTimeline({ key, admittedAt: from, endedAt: to }), 'payments')!,
    );
    expect(checkQueueLimit(holds, paymentsLimits)).toEqual({ peak: 2, peakPerKey: 1, violations: [] });
  });

  it('fails when three hold a slot of a queue of two at one instant, naming them', () => {
    const holds = [
      { id: 'a', key: 'k1', from: 0, to: 100 },
      { id: 'b', key: 'k2', from: 10, to: 50 },
      { id: 'c', key: 'k3', from: 49, to: 120 }, // one millisecond too early
    ].map(({ id, key, from, to }) =>
      queueHoldFrom(id, queuedTimeline({ key, admittedAt: from, endedAt: to }), 'payments')!,
    );
    const result = checkQueueLimit(holds, paymentsLimits);
    expect(result.peak).toBe(3);
    expect(result.violations).toEqual([
      '3 held a slot at once at 00:00:00.049 (a, b, c); the queue admits 2',
    ]);
  });

  it('fails when two of one key overlap though the queue as a whole has room', () => {
    const holds = [
      { id: 'a', key: 'acme', from: 0, to: 100 },
      { id: 'b', key: 'acme', from: 99, to: 150 },
    ].map(({ id, key, from, to }) =>
      queueHoldFrom(id, queuedTimeline({ key, admittedAt: from, endedAt: to }), 'payments')!,
    );
    const result = checkQueueLimit(holds, paymentsLimits);
    expect(result.peak).toBe(2);
    expect(result.peakPerKey).toBe(2);
    expect(result.violations).toEqual([
      '2 of key acme held a slot at once at 00:00:00.099 (a, b); the queue admits 1 per key',
    ]);
  });

  it('counts a workflow that never ended as holding its slot ever after', () => {
    const holds = [
      queueHoldFrom('a', queuedTimeline({ key: 'k1', admittedAt: 0, endedAt: null }), 'payments')!,
      queueHoldFrom('b', queuedTimeline({ key: 'k2', admittedAt: 10, endedAt: 20 }), 'payments')!,
      queueHoldFrom('c', queuedTimeline({ key: 'k3', admittedAt: 30, endedAt: 40 }), 'payments')!,
      queueHoldFrom('d', queuedTimeline({ key: 'k4', admittedAt: 5_000, endedAt: null }), 'payments')!,
    ];
    expect(checkQueueLimit(holds, { concurrency: 1, perKeyConcurrency: null }).violations).toEqual([
      '2 held a slot at once at 00:00:00.010 (a, b); the queue admits 1',
      '2 held a slot at once at 00:00:00.030 (a, c); the queue admits 1',
      '2 held a slot at once at 00:00:05.000 (a, d); the queue admits 1',
    ]);
    // Without limits nothing is checked, but the peak is measured.
    expect(checkQueueLimit(holds, { concurrency: null, perKeyConcurrency: null })).toEqual({
      peak: 2,
      peakPerKey: 1,
      violations: [],
    });
  });
});

/**
 * Payments through the demos' `payments` queue on a real engine (real clock, in memory), one per key of
 * `keys`; returns the check over their timelines (with the keys they were started with: the first ones find
 * the queue free and are admitted at once, with no `scheduled` entry naming their key).
 */
async function paymentsThroughTheQueue(keys: readonly string[]): Promise<ReturnType<typeof checkQueueLimit>> {
  const engine = await createEngine({
    storage: new MemoryStorage(),
    workflows: [payment],
    queues: builtInQueues,
  });
  try {
    const ids = keys.map((_, index) => `pay-${index + 1}`);
    for (const [index, id] of ids.entries())
      await engine.start(
        payment,
        { customer: keys[index]!, amount: 10, workMs: 60 },
        { id, concurrencyKey: keys[index]! },
      );
    await Promise.all(ids.map((id) => engine.handle(id).result()));
    const holds = await Promise.all(
      ids.map(async (id, index) => queueHoldFrom(id, await engine.timeline(id), 'payments', keys[index]!)),
    );
    expect(holds.every((hold) => hold !== null && hold.to !== null)).toBe(true);
    return checkQueueLimit(holds as QueueHold[], paymentsLimits);
  } finally {
    await engine.shutdown();
  }
}

describe('the queue-limit check over a real engine’s timelines', () => {
  it('sees the limits reached and never passed: 2 at once, 1 per key', async () => {
    const result = await paymentsThroughTheQueue(['a', 'b', 'c', 'a', 'b', 'c']);
    expect(result).toEqual({ peak: 2, peakPerKey: 1, violations: [] });
  });

  it('reports the overlap when the queue admits without taking a slot (mutation queue-ignores-limit)', async () => {
    const result = await withMutation('queue-ignores-limit', () =>
      paymentsThroughTheQueue(['a', 'b', 'c', 'd', 'e', 'f']),
    );
    expect(result.peak).toBeGreaterThan(2);
    expect(result.violations[0]).toMatch(/^[3-6] held a slot at once at .*; the queue admits 2$/);
  });
});
