import { describe, expect, it } from 'vitest';
import type { QueueView } from '../../public';
import {
  admittedText,
  oldestWaitText,
  positionText,
  queueFull,
  queueLimitsText,
  queuesSummary,
  ratePeriodText,
  roundDurationText,
  rateText,
  runningText,
  slotText,
  waitingRows,
  waitingText,
} from './queue-view';

function view(overrides: Partial<QueueView> = {}): QueueView {
  return {
    name: 'payments',
    concurrency: 2,
    perKeyConcurrency: 1,
    perEngineConcurrency: null,
    rateLimit: { limit: 30, periodMs: 60_000 },
    priorityStepMs: 60_000,
    running: 1,
    slots: [{ slot: 0, workflowId: 'a', since: 1_000, admittedBy: 'e1' }],
    waiting: 3,
    waitingCapped: false,
    next: [],
    oldestEnqueuedAt: null,
    rate: { usedInWindow: 4, nextFreeAt: null },
    keys: [],
    drivenHere: 0,
    ...overrides,
  };
}

describe('queue wording', () => {
  it('writes every declared limit in one line, in a fixed order, and says when there are none', () => {
    expect(
      queueLimitsText({
        concurrency: 2,
        perKeyConcurrency: 1,
        perEngineConcurrency: 5,
        rateLimit: { limit: 10, periodMs: 60_000 },
      }),
    ).toBe('2 at once · 1 per key · 5 per engine · 10 per minute');
    expect(
      queueLimitsText({
        concurrency: null,
        perKeyConcurrency: 3,
        perEngineConcurrency: null,
        rateLimit: null,
      }),
    ).toBe('3 per key');
    expect(
      queueLimitsText({
        concurrency: null,
        perKeyConcurrency: null,
        perEngineConcurrency: null,
        rateLimit: null,
      }),
    ).toBe('no limits');
  });

  it('names whole rate periods in words and any other as a duration', () => {
    expect(ratePeriodText(1_000)).toBe('per second');
    expect(ratePeriodText(3_600_000)).toBe('per hour');
    expect(ratePeriodText(86_400_000)).toBe('per day');
    expect(ratePeriodText(10_000)).toBe('per 10 s');
    expect(ratePeriodText(300_000)).toBe('per 5 min');
    expect(ratePeriodText(7_200_000)).toBe('per 2 h');
    expect(ratePeriodText(1_500)).toBe('per 1.5 s');
    expect(roundDurationText(60_000)).toBe('1 min');
    expect(roundDurationText(90_000)).toBe('90 s');
  });

  it('counts running against the limit, and knows a queue without one counts nothing', () => {
    expect(runningText(view())).toBe('1 / 2');
    expect(queueFull(view())).toBe(false);
    expect(queueFull(view({ running: 2 }))).toBe(true);
    expect(runningText(view({ concurrency: null, running: null }))).toBe('—');
    expect(queueFull(view({ concurrency: null, running: null }))).toBe(false);
  });

  it('marks a capped waiting count, and writes the oldest wait and the rate window', () => {
    expect(waitingText(view({ waiting: 10_000, waitingCapped: true }))).toBe('10,000+');
    expect(oldestWaitText(view(), 5_000)).toBe('—');
    expect(oldestWaitText(view({ oldestEnqueuedAt: 1_000 }), 13_500)).toBe('12 s');
    expect(rateText(view(), 0)).toBe('4 of 30');
    expect(rateText(view({ rate: { usedInWindow: 30, nextFreeAt: 20_000 } }), 5_000)).toBe(
      '30 of 30 — next in 15 s',
    );
    expect(rateText(view({ rateLimit: null, rate: null }), 0)).toBeNull();
  });

  it('numbers slots from 1 for people', () => {
    expect(slotText(0)).toBe('slot 1');
    expect(slotText(1, 2)).toBe('slot 2 of 2');
  });

  it('words a waiting workflow’s place and an admitted one’s wait', () => {
    const waiting = {
      queue: 'payments',
      status: 'waiting',
      position: 3,
      key: 'acme',
      priority: 5,
      enqueuedAt: 0,
    } as const;
    expect(positionText(waiting, { waiting: 7, waitingCapped: false })).toBe(
      'position 3 of 7 (key acme, priority 5)',
    );
    expect(positionText({ ...waiting, key: undefined, priority: 1 })).toBe('position 3 (priority 1)');
    expect(admittedText({ enqueuedAt: 1_000, admittedAt: 2_200, slot: 1 })).toBe('after 1.2 s (slot 2)');
    expect(admittedText({ enqueuedAt: 1_000, admittedAt: 1_000 })).toBe('after 0 ms');
  });

  it('lists the waiting in admission order, numbered, marking those held by a delay or by a full key', () => {
    const next = [
      { workflowId: 'w1', type: 'payment', key: 'acme' },
      { workflowId: 'w2', type: 'payment', notBefore: 9_000 },
      { workflowId: 'w3', type: 'payment', notBefore: 1_000, key: 'globex' },
    ];
    const keys = [
      { key: 'acme', running: 1, waiting: 1 },
      { key: 'globex', running: 0, waiting: 1 },
    ];
    const rows = waitingRows(view({ next, keys }), 5_000);
    expect(rows.map((row) => [row.position, row.workflowId, row.key, row.held, row.keyFull])).toEqual([
      [1, 'w1', 'acme', false, true],
      [2, 'w2', null, true, false],
      [3, 'w3', 'globex', false, false],
    ]);
    // Without a per-key limit no key is ever full.
    expect(waitingRows(view({ next, keys, perKeyConcurrency: null }), 5_000)[0]!.keyFull).toBe(false);
  });

  it('sums the queues up', () => {
    expect(queuesSummary([])).toMatch(/concurrency and rate limits/);
    expect(queuesSummary([view(), view({ running: null, concurrency: null, waiting: 2 })])).toBe(
      '2 queues · 2 running · 5 waiting',
    );
  });
});
