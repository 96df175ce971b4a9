import { describe, expect, it } from 'vitest';
import type { TimelineEntry, TimelineKind } from '../../../public';
import { deriveOperations, describeEntry } from './operations';

let seq = 0;
function entry(
  at: number,
  kind: TimelineKind,
  detail: Record<string, unknown> = {},
  engineId = 'A',
  epoch = 1,
): TimelineEntry {
  return { seq: ++seq, at, kind, engineId, epoch, detail } as TimelineEntry;
}

describe('timeline operations', () => {
  it('turns an activity’s attempts, failure and back-off into spans of one group', () => {
    const timeline = [
      entry(0, 'started'),
      entry(10, 'activity-started', { pos: 0, member: 0, name: 'charge', attempt: 1 }),
      entry(130, 'activity-failed', {
        pos: 0,
        member: 0,
        name: 'charge',
        attempt: 1,
        error: { name: 'GatewayError', message: 'timeout' },
      }),
      entry(130, 'activity-retry-scheduled', {
        pos: 0,
        member: 0,
        name: 'charge',
        nextAttempt: 2,
        dueAt: 1_130,
        waitMs: 1_000,
      }),
      entry(1_135, 'activity-started', { pos: 0, member: 0, name: 'charge', attempt: 2 }),
      entry(1_250, 'activity-completed', { pos: 0, member: 0, name: 'charge', attempt: 2, durationMs: 115 }),
    ];
    const { spans, groups } = deriveOperations(timeline, 2_000, true);
    expect(spans.map(({ label, start, end, status }) => ({ label, start, end, status }))).toEqual([
      { label: 'charge #1', start: 10, end: 130, status: 'failed' },
      { label: 'charge back-off', start: 130, end: 1_130, status: 'backoff' },
      { label: 'charge #2', start: 1_135, end: 1_250, status: 'ok' },
    ]);
    const group = groups.find((candidate) => candidate.key === 'op:0')!;
    expect(group).toMatchObject({ title: "activity 'charge'", category: 'operation', tone: 'success' });
    expect(group.summary).toBe('2 attempts · 1.2 s · completed');
    expect(group.entries).toHaveLength(5);
    expect(new Set(spans.map((span) => span.groupKey))).toEqual(new Set(['op:0']));
  });

  it('marks an attempt interrupted when it was re-run after a handoff, and keeps a live attempt running to now', () => {
    const timeline = [
      entry(0, 'activity-started', { pos: 1, name: 'step', attempt: 1 }, 'A', 1),
      entry(
        9_000,
        'claim-taken-over',
        { fromEngineId: 'A', toEngineId: 'B', toEpoch: 2, reason: 'expired' },
        'B',
        2,
      ),
      entry(9_001, 'activity-started', { pos: 1, name: 'step', attempt: 2, rerun: true }, 'B', 2),
    ];
    const { spans, groups } = deriveOperations(timeline, 10_000, true);
    expect(spans.map(({ start, end, status, engineId }) => ({ start, end, status, engineId }))).toEqual([
      { start: 0, end: 9_001, status: 'interrupted', engineId: 'A' },
      { start: 9_001, end: 10_000, status: 'running', engineId: 'B' },
    ]);
    expect(groups.map((group) => group.category)).toEqual(['operation', 'ownership']);
  });

  it('files a signal’s receipt with its consumption, and draws timers from armed to fired', () => {
    const timeline = [
      entry(100, 'timer-armed', { pos: 2, member: 0, durationMs: 500, dueAt: 600 }),
      entry(610, 'timer-fired', { pos: 2, member: 0, kind: 'sleep' }),
      entry(650, 'signal-received', { name: 'approve', sentBy: 'B' }),
      entry(700, 'signal-consumed', { pos: 3, member: 0, name: 'approve' }),
      entry(900, 'completed', {}),
    ];
    const { spans, points, groups } = deriveOperations(timeline, 900, false);
    expect(spans).toEqual([
      expect.objectContaining({ track: 'timers', start: 100, end: 610, status: 'ok', label: 'sleep 500 ms' }),
    ]);
    expect(groups.map((group) => [group.key, group.title])).toEqual([
      ['op:2', 'sleep 500 ms'],
      ['op:3', "signal 'approve'"],
      [`entry:${timeline[4]!.seq}`, 'completed'],
    ]);
    expect(points.filter((point) => point.track === 'messages').map((point) => point.groupKey)).toEqual([
      'op:3',
      'op:3',
    ]);
  });

  it('describes entries in words, naming engines through the given function', () => {
    const names = (id: string) => `Tab ${id}`;
    expect(
      describeEntry(
        entry(0, 'claim-taken-over', { fromEngineId: 'A', fromEpoch: 1, toEpoch: 2, reason: 'expired' }),
        names,
      ),
    ).toBe('taken over from Tab A (epoch 1 → 2, expired)');
    expect(describeEntry(entry(0, 'activity-completed', { attempt: 2, durationMs: 1_234 }))).toBe(
      'attempt 2 completed in 1.2 s',
    );
    expect(describeEntry(entry(0, 'signal-received', { name: 'approve', sentBy: 'B' }), names)).toBe(
      "signal 'approve' received from Tab B",
    );
  });

  it('words a queued start: enqueued with its key and priority, admitted after its wait into its slot', () => {
    expect(
      describeEntry(
        entry(0, 'scheduled', { startAt: 0, queue: { name: 'payments', key: 'acme', priority: 5 } }),
      ),
    ).toBe('enqueued in queue payments (key acme, priority 5)');
    expect(
      describeEntry(
        entry(0, 'scheduled', { startAt: 9, queue: { name: 'payments', priority: 1 }, debounced: true }),
      ),
    ).toBe('enqueued in queue payments (priority 1), its start moved back by a debounced start');
    expect(describeEntry(entry(0, 'scheduled', { startAt: 9 }))).toBe('scheduled (start delayed)');
    expect(
      describeEntry(
        entry(0, 'started', {
          workflowType: 'payment',
          queue: { name: 'payments', waitedMs: 1_200, slot: 1 },
        }),
      ),
    ).toBe('admitted from queue payments after 1.2 s (slot 2)');
    expect(describeEntry(entry(0, 'started', { workflowType: 'payment' }))).toBe('started');
  });
});
