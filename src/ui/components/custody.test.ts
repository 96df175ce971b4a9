import { describe, expect, it } from 'vitest';
import type { FenceRejection, TimelineEntry, TimelineKind } from '../../public';
import { deriveCustody, epochHistory } from './custody';

let seq = 0;
function entry(
  at: number,
  kind: TimelineKind,
  engineId: string,
  epoch: number,
  detail: Record<string, unknown> = {},
): TimelineEntry {
  return { seq: ++seq, at, kind, engineId, epoch, detail } as TimelineEntry;
}

const ttl = 6_000;

describe('custody lanes', () => {
  it('draws one bar for a workflow started and finished by one engine, with no fences or gaps', () => {
    const timeline = [
      entry(1_000, 'started', 'A', 1),
      entry(1_000, 'claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry(1_500, 'activity-started', 'A', 1, { pos: 0, name: 'x', attempt: 1 }),
      entry(2_000, 'completed', 'A', 1),
    ];
    const custody = deriveCustody({
      timeline,
      rejections: [],
      workflow: { status: 'completed', createdAt: 1_000, endedAt: 2_000, owner: null },
      now: 9_000,
      claimTtlMs: ttl,
    });
    expect(custody).toMatchObject({ start: 1_000, end: 2_000, live: false, fences: [], gaps: [] });
    expect(custody.lanes).toHaveLength(1);
    expect(custody.lanes[0]!.bars).toEqual([
      expect.objectContaining({
        engineId: 'A',
        epoch: 1,
        start: 1_000,
        end: 2_000,
        endReason: 'finished',
        how: 'start',
        lastWriteAt: 2_000,
      }),
    ]);
  });

  it('draws the wait of a queued workflow before its admission as a gap in its queue, and a delayed start as scheduled', () => {
    const admitted = deriveCustody({
      timeline: [
        entry(0, 'scheduled', 'A', 0, { startAt: 0, queue: { name: 'payments', key: 'acme', priority: 5 } }),
        entry(1_200, 'started', 'B', 1, {
          workflowType: 'payment',
          queue: { name: 'payments', waitedMs: 1_200 },
        }),
        entry(1_200, 'claim-acquired', 'B', 1, { engineId: 'B', epoch: 1, how: 'queue' }),
        entry(2_000, 'completed', 'B', 1),
      ],
      rejections: [],
      workflow: { status: 'completed', createdAt: 0, endedAt: 2_000, owner: null },
      now: 9_000,
      claimTtlMs: ttl,
    });
    expect(admitted.gaps).toEqual([{ start: 0, end: 1_200, kind: 'queued', queue: 'payments' }]);
    expect(admitted.lanes[0]!.bars[0]).toMatchObject({ engineId: 'B', start: 1_200, how: 'queue' });

    const waiting = deriveCustody({
      timeline: [entry(0, 'scheduled', 'A', 0, { startAt: 0, queue: { name: 'payments', priority: 5 } })],
      rejections: [],
      workflow: { status: 'pending', createdAt: 0, owner: null },
      now: 5_000,
      claimTtlMs: ttl,
    });
    expect(waiting.gaps).toEqual([{ start: 0, end: 5_000, kind: 'queued', queue: 'payments' }]);

    const delayed = deriveCustody({
      timeline: [entry(0, 'scheduled', 'A', 0, { startAt: 3_000 })],
      rejections: [],
      workflow: { status: 'pending', createdAt: 0, owner: null },
      now: 2_000,
      claimTtlMs: ttl,
    });
    expect(delayed.gaps).toEqual([{ start: 0, end: 2_000, kind: 'scheduled' }]);
  });

  it('shows a graceful handoff as A released, a gap, then B at epoch 2 behind a fence', () => {
    const timeline = [
      entry(0, 'started', 'A', 1),
      entry(0, 'claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry(4_000, 'claim-released', 'A', 1, { engineId: 'A', epoch: 1 }),
      entry(4_030, 'claim-acquired', 'B', 2, { engineId: 'B', epoch: 2, how: 'acquire' }),
      entry(6_000, 'completed', 'B', 2),
    ];
    const custody = deriveCustody({
      timeline,
      rejections: [],
      workflow: { status: 'completed', createdAt: 0, endedAt: 6_000, owner: null },
      now: 10_000,
      claimTtlMs: ttl,
    });
    expect(custody.lanes.map((lane) => lane.engineId)).toEqual(['A', 'B']);
    expect(custody.lanes[0]!.bars[0]).toMatchObject({ start: 0, end: 4_000, endReason: 'released' });
    expect(custody.lanes[1]!.bars[0]).toMatchObject({
      start: 4_030,
      end: 6_000,
      epoch: 2,
      endReason: 'finished',
    });
    expect(custody.gaps).toEqual([{ start: 4_000, end: 4_030, kind: 'unowned' }]);
    expect(custody.fences).toEqual([
      { at: 4_030, epoch: 2, kind: 'handoff', fromEngineId: 'A', toEngineId: 'B', reason: 'released' },
    ]);
  });

  it('marks an expiry takeover with a fence, a not-renewed tail, and the deposed engine’s refused write in its own lane', () => {
    const timeline = [
      entry(0, 'started', 'A', 1),
      entry(0, 'claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry(500, 'activity-started', 'A', 1, { pos: 0, name: 'step', attempt: 1 }),
      entry(9_000, 'claim-taken-over', 'B', 2, {
        fromEngineId: 'A',
        fromEpoch: 1,
        toEngineId: 'B',
        toEpoch: 2,
        reason: 'expired',
      }),
      entry(9_010, 'activity-started', 'B', 2, { pos: 0, name: 'step', attempt: 2, rerun: true }),
    ];
    const rejections: FenceRejection[] = [
      { workflowId: 'w', engineId: 'A', heldEpoch: 1, currentEpoch: 2, at: 12_000, what: 'commit' },
    ];
    const custody = deriveCustody({
      timeline,
      rejections,
      workflow: { status: 'running', createdAt: 0, owner: { engineId: 'B', epoch: 2, expiresAt: 19_000 } },
      now: 13_000,
      claimTtlMs: ttl,
    });
    const [a, b] = custody.lanes;
    expect(a!.bars[0]).toMatchObject({
      end: 9_000,
      endReason: 'taken-over',
      lastWriteAt: 500,
      silentFrom: 3_000,
    });
    expect(a!.rejections).toEqual([
      { at: 12_000, engineId: 'A', heldEpoch: 1, currentEpoch: 2, what: 'commit' },
    ]);
    expect(b!.bars[0]).toMatchObject({
      start: 9_000,
      end: 13_000,
      endReason: 'live',
      expiresAt: 19_000,
      epoch: 2,
    });
    expect(custody.fences).toEqual([
      { at: 9_000, epoch: 2, kind: 'takeover', fromEngineId: 'A', toEngineId: 'B', reason: 'expired' },
    ]);
    expect(custody).toMatchObject({ live: true, end: 13_000, gaps: [] });
  });

  it('starts the not-renewed stretch no earlier than the last write, and TTL + grace before the takeover', () => {
    const timeline = [
      entry(0, 'claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry(4_800, 'activity-started', 'A', 1, { pos: 3, name: 'step', attempt: 1 }),
      entry(12_000, 'claim-taken-over', 'B', 2, {
        fromEngineId: 'A',
        fromEpoch: 1,
        toEngineId: 'B',
        toEpoch: 2,
        reason: 'expired',
      }),
    ];
    const custody = deriveCustody({
      timeline,
      rejections: [],
      workflow: { status: 'running', createdAt: 0, owner: { engineId: 'B', epoch: 2, expiresAt: 18_000 } },
      now: 13_000,
      claimTtlMs: 6_000,
      graceMs: 2_000,
    });
    expect(custody.lanes[0]!.bars[0]).toMatchObject({ silentFrom: 4_800, endReason: 'taken-over' });
    const holderDead = deriveCustody({
      timeline: [
        timeline[0]!,
        { ...timeline[2]!, detail: { ...timeline[2]!.detail, reason: 'holder-dead' } } as TimelineEntry,
      ],
      rejections: [],
      workflow: null,
      now: 13_000,
      claimTtlMs: 6_000,
    });
    expect(holderDead.lanes[0]!.bars[0]!.silentFrom).toBeNull();
  });

  it('ends an owner’s bar at a rotation by another engine, with a fence at the new epoch', () => {
    const timeline = [
      entry(0, 'started', 'A', 1),
      entry(0, 'claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry(3_000, 'terminated', 'C', 2, { reason: 'stop', newEpoch: 2 }),
    ];
    const custody = deriveCustody({
      timeline,
      rejections: [],
      workflow: { status: 'terminated', createdAt: 0, endedAt: 3_000, owner: null },
      now: 5_000,
      claimTtlMs: ttl,
    });
    expect(custody.lanes.map((lane) => lane.engineId)).toEqual(['A']);
    expect(custody.lanes[0]!.bars[0]).toMatchObject({ end: 3_000, endReason: 'rotated' });
    expect(custody.fences).toEqual([
      { at: 3_000, epoch: 2, kind: 'rotation', fromEngineId: 'A', toEngineId: null, reason: 'terminated' },
    ]);
  });

  it('shades the time a workflow waited for its first owner and the time it is suspended', () => {
    const timeline = [
      entry(0, 'started', 'V', 0),
      entry(800, 'claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'acquire' }),
      entry(2_000, 'suspended', 'A', 1),
    ];
    const custody = deriveCustody({
      timeline,
      rejections: [],
      workflow: { status: 'suspended', createdAt: 0, owner: null },
      now: 5_000,
      claimTtlMs: ttl,
    });
    expect(custody.gaps).toEqual([
      { start: 0, end: 800, kind: 'unowned' },
      { start: 2_000, end: 5_000, kind: 'suspended' },
    ]);
    expect(custody.lanes[0]!.bars[0]).toMatchObject({ start: 800, end: 2_000, endReason: 'suspended' });
    expect(custody.fences).toEqual([]);
  });

  it('says a claim lapsed when the owner on record is no longer the bar’s engine', () => {
    const timeline = [
      entry(0, 'started', 'A', 1),
      entry(0, 'claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry(1_000, 'timer-armed', 'A', 1, { pos: 0, durationMs: 60_000, dueAt: 61_000 }),
    ];
    const custody = deriveCustody({
      timeline,
      rejections: [],
      workflow: { status: 'running', createdAt: 0, owner: null },
      now: 20_000,
      claimTtlMs: ttl,
    });
    expect(custody.lanes[0]!.bars[0]).toMatchObject({ endReason: 'lapsed', end: 20_000, silentFrom: 1_000 });
  });

  it('lists the epoch history: claims, takeovers and rotations in order', () => {
    const timeline = [
      entry(0, 'claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry(9, 'claim-taken-over', 'B', 2, {
        fromEngineId: 'A',
        fromEpoch: 1,
        toEngineId: 'B',
        toEpoch: 2,
        reason: 'holder-dead',
      }),
      entry(12, 'terminated', 'B', 3, { newEpoch: 3 }),
    ];
    expect(epochHistory(timeline)).toEqual([
      { epoch: 1, at: 0, engineId: 'A', how: 'start' },
      { epoch: 2, at: 9, engineId: 'B', how: 'takeover (holder-dead)' },
      { epoch: 3, at: 12, engineId: null, how: 'terminated' },
    ]);
  });
});
