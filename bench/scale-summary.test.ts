import { describe, expect, it } from 'vitest';
import { dueLatencies, minMargin, perRenewalPass, startRates } from './scale-summary';

describe('startRates', () => {
  const batch = (beganAt: number, endedAt: number, count = 10) => ({ beganAt, endedAt, count });

  it('times the first and the last tenth over whole batches, from a batch being asked for to its end', () => {
    // 100 starts in 10 batches of 10: the first takes 500 ms, the middle ones 100 ms, the last 1 s.
    const batches = [
      batch(0, 500),
      ...Array.from({ length: 8 }, (_, index) => batch(500 + index * 100, 600 + index * 100)),
      batch(1_300, 2_300),
    ];
    expect(startRates(batches)).toEqual({ firstTenth: 20, lastTenth: 10, overall: 100 / 2.3 });
  });

  it('takes as many batches as a tenth needs, and one whole batch when a tenth is smaller', () => {
    const small = [batch(0, 100, 4), batch(100, 200, 4), batch(200, 400, 4), batch(400, 1_000, 88)];
    // a tenth of 100 is 10: the first three batches (12 starts in 400 ms), the last one alone.
    expect(startRates(small)).toMatchObject({ firstTenth: 30, lastTenth: (88 * 1_000) / 600 });
    expect(startRates([batch(0, 1_000, 50), batch(1_000, 1_500, 50)])).toEqual({
      firstTenth: 50,
      lastTenth: 100,
      overall: 100 / 1.5,
    });
  });

  it('has no rate without starts, and none for a stretch that took no time', () => {
    expect(startRates([])).toEqual({ firstTenth: null, lastTenth: null, overall: null });
    expect(startRates([batch(5, 5, 1)]).overall).toBeNull();
  });
});

describe('perRenewalPass', () => {
  it('divides the growth of a counter by the renewal passes, and has no value without a pass', () => {
    expect(perRenewalPass(100, 400, 60)).toBe(5);
    expect(perRenewalPass(100, 400, 0)).toBeNull();
  });
});

describe('minMargin', () => {
  it('takes the smallest margin of the live holder and counts samples naming anyone else', () => {
    expect(
      minMargin(
        [
          { ownerEngineId: 'h', marginMs: 4_000 },
          { ownerEngineId: 'h', marginMs: -200 },
          { ownerEngineId: 'b', marginMs: 5_000 },
          { ownerEngineId: null, marginMs: null },
        ],
        'h',
      ),
    ).toEqual({ minMarginMs: -200, samples: 4, notHolder: 2 });
  });
});

describe('dueLatencies', () => {
  it('measures each due workflow from the later of the close and its due time', () => {
    const result = dueLatencies(1_000, [
      { workflowId: 'due-before-close', dueAt: 900, firstStepAt: 1_300 },
      { workflowId: 'due-after-close', dueAt: 1_200, firstStepAt: 1_250 },
    ]);
    expect(result).toEqual({ latenciesMs: [300, 50], allRunningMs: 300 });
  });

  it('has no overall figure while one due workflow never ran elsewhere', () => {
    expect(
      dueLatencies(1_000, [
        { workflowId: 'a', dueAt: 1_100, firstStepAt: 1_200 },
        { workflowId: 'b', dueAt: 1_100, firstStepAt: null },
      ]).allRunningMs,
    ).toBeNull();
  });
});
