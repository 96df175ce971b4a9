import { describe, expect, it } from 'vitest';
import type { WorkflowDescription } from '../../../public';
import { bufferedOf, byDue, bySent, payloadPreview, pendingOf, pendingState } from './pending-work';

type Pending = NonNullable<WorkflowDescription['pending']>;
type Leaves = Pending['leaves'];

const waiting = (workflowId: string, kind: Pending['kind'], leaves: Leaves, since = 100) => ({
  workflowId,
  workflowType: 'demo',
  status: 'running' as const,
  pending: { position: 3, kind, name: kind, summary: kind, since, leaves },
});

describe('pending work', () => {
  it('lists each open operation with its attempt, next attempt and due time', () => {
    const items = pendingOf(
      waiting('w1', 'all', [
        {
          kind: 'activity',
          name: 'charge',
          done: false,
          attempt: 2,
          retrying: true,
          dueAt: 5_000,
          lastError: { name: 'ServiceUnavailableError', message: 'try later' },
        },
        { kind: 'sleep', name: 'sleep', done: false, dueAt: 9_000 },
        { kind: 'signal', name: 'approve', done: true },
        { kind: 'until', name: 'until', done: false },
        { kind: 'child', name: 'child', done: false, childId: 'w1.c' },
      ]),
    );
    expect(items.map((item) => [item.kind, item.name, item.attempt, item.dueAt])).toEqual([
      ['activity', 'charge', 2, 5_000],
      ['timer', 'sleep', null, 9_000],
      ['condition', 'until', null, null],
      ['child', 'child', null, null],
    ]);
    expect(items[0]!.lastError).toBe('ServiceUnavailableError: try later');
    expect(pendingState(items[0]!)).toBe('backing off · attempt 2 due');
    expect(pendingState(items[3]!)).toBe('waiting for child w1.c');
    expect(new Set(items.map((item) => item.key)).size).toBe(4);
  });

  it('says when an activity waits for an outside completion, and nothing for a workflow waiting on nothing', () => {
    const [external] = pendingOf(
      waiting('w2', 'activity', [
        { kind: 'activity', name: 'approve', done: false, attempt: 1, completionToken: 't' },
      ]),
    );
    expect(pendingState(external!)).toBe('attempt 1 · waiting for its completion (external)');
    expect(pendingOf({ workflowId: 'w3', workflowType: 'demo', status: 'completed', pending: null })).toEqual(
      [],
    );
  });

  it("shows an activity's last heartbeat: when, which attempt, its details in one line", () => {
    const [copying, silent] = pendingOf(
      waiting('w4', 'all', [
        {
          kind: 'activity',
          name: 'copy',
          done: false,
          attempt: 2,
          heartbeat: { attempt: 1, details: { files: 50, of: 200 }, at: 4_000, engineId: 'e1' },
        },
        { kind: 'activity', name: 'quiet', done: false, attempt: 1 },
      ]),
    );
    expect(copying!.heartbeat).toEqual({ preview: '{"files":50,"of":200}', at: 4_000, attempt: 1 });
    expect(silent!.heartbeat).toBeNull();
  });

  it('orders by due time, then the longest waiting', () => {
    const items = [
      ...pendingOf(waiting('late', 'sleep', [{ kind: 'sleep', name: 'sleep', done: false, dueAt: 9 }])),
      ...pendingOf(waiting('new', 'signal', [{ kind: 'signal', name: 's', done: false }], 50)),
      ...pendingOf(waiting('old', 'signal', [{ kind: 'signal', name: 's', done: false }], 10)),
      ...pendingOf(waiting('soon', 'sleep', [{ kind: 'sleep', name: 'sleep', done: false, dueAt: 3 }])),
    ].sort(byDue);
    expect(items.map((item) => item.workflowId)).toEqual(['soon', 'late', 'old', 'new']);
  });
});

describe('buffered signals', () => {
  it('lists the signals a workflow has not consumed, with payload, time and sender', () => {
    const items = bufferedOf({
      workflowId: 'w1',
      workflowType: 'demo',
      bufferedSignals: [
        { seq: 0, name: 'approve', payload: { by: 'ann' }, sentAt: 200, sentBy: 'engine-a' },
        { seq: 3, name: 'ping', sentAt: 100, sentBy: 'engine-b' },
      ],
    });
    expect(items.map((item) => [item.name, item.payload, item.hasPayload, item.sentAt, item.sentBy])).toEqual(
      [
        ['approve', { by: 'ann' }, true, 200, 'engine-a'],
        ['ping', undefined, false, 100, 'engine-b'],
      ],
    );
    expect(new Set(items.map((item) => item.key)).size).toBe(2);
    expect([...items].sort(bySent).map((item) => item.name)).toEqual(['ping', 'approve']);
    // A description from an engine that does not report them (another build): none.
    expect(bufferedOf({ workflowId: 'w2', workflowType: 'demo' })).toEqual([]);
  });

  it('previews a payload as one line of JSON, cut with an ellipsis when longer', () => {
    expect(payloadPreview({ a: 1 })).toEqual({ text: '{"a":1}', truncated: false });
    expect(payloadPreview(null)).toEqual({ text: 'null', truncated: false });
    const long = payloadPreview({ text: 'x'.repeat(200) }, 20);
    expect(long.truncated).toBe(true);
    expect(long.text).toHaveLength(20);
    expect(long.text).toBe('{"text":"xxxxxxxxxx…');
  });
});
