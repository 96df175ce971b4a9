import { describe, expect, it } from 'vitest';
import type { TimelineEntry } from '../../../engine';
import { eventDetail, sameOperation } from './event-detail';

const failed = {
  seq: 7,
  at: 1_000,
  engineId: 'engine-a',
  epoch: 2,
  kind: 'activity-failed',
  detail: {
    pos: 3,
    name: 'charge',
    attempt: 1,
    error: {
      name: 'PaymentGatewayError',
      message: 'Payment gateway timed out after 3 s; card not charged',
      stack: 'at charge (order.ts:12)',
    },
  },
} as unknown as TimelineEntry;

describe('eventDetail', () => {
  it('keeps the whole failure, with its stack, and every field', () => {
    const detail = eventDetail(failed, String);
    expect(detail.error).toEqual(failed.detail && (failed.detail as { error: unknown }).error);
    expect(detail.facts).toEqual([
      { label: 'Operation position', value: '3' },
      { label: 'Name', value: 'charge' },
      { label: 'Attempt', value: '1' },
    ]);
    expect(detail).toMatchObject({ seq: 7, engineId: 'engine-a', epoch: 2, position: 3 });
  });

  it('keeps the whole text of a takeover', () => {
    const takeover = {
      seq: 9,
      at: 2_000,
      engineId: 'engine-b',
      epoch: 2,
      kind: 'claim-taken-over',
      detail: {
        fromEngineId: 'engine-a',
        fromEpoch: 1,
        toEngineId: 'engine-b',
        toEpoch: 2,
        reason: 'holder-dead',
      },
    } as unknown as TimelineEntry;
    expect(eventDetail(takeover, String).facts).toContainEqual({ label: 'Reason', value: 'holder-dead' });
  });

  it('finds the other entries of the same operation', () => {
    const started = { ...failed, seq: 6, kind: 'activity-started' } as unknown as TimelineEntry;
    const other = {
      ...failed,
      seq: 8,
      detail: { pos: 4, name: 'x', attempt: 1 },
    } as unknown as TimelineEntry;
    expect(sameOperation([started, failed, other], failed).map((entry) => entry.seq)).toEqual([6, 7]);
  });
});
