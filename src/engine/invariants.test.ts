import { describe, expect, it } from 'vitest';
import type { FenceRejection, TimelineEntry } from './records';
import type { TimelineKind, WorkflowStatus } from './vocabulary';
import { checkOwnershipInvariants, type InvariantName } from './invariants';

let seq = 0;
function entry(
  kind: TimelineKind,
  engineId: string,
  epoch: number,
  detail: Record<string, unknown> = {},
): TimelineEntry {
  seq++;
  return { seq, at: seq * 10, kind, engineId, epoch, detail } as TimelineEntry;
}

function verdicts(
  timeline: TimelineEntry[],
  status: WorkflowStatus = 'completed',
  rejections: FenceRejection[] = [],
) {
  const results = checkOwnershipInvariants([{ workflowId: 'w', status, timeline }], rejections);
  return Object.fromEntries(results.map((result) => [result.name, result.ok])) as Record<
    InvariantName,
    boolean
  >;
}

const handoff = () => [
  entry('started', 'A', 1),
  entry('claim-acquired', 'A', 1, { engineId: 'A', epoch: 1 }),
  entry('activity-started', 'A', 1, { pos: 0, member: 0, name: 'step', attempt: 1 }),
  entry('claim-taken-over', 'B', 2, { fromEngineId: 'A', toEngineId: 'B', toEpoch: 2 }),
  entry('activity-started', 'B', 2, { pos: 0, member: 0, name: 'step', attempt: 2, rerun: true }),
  entry('activity-completed', 'B', 2, { pos: 0, member: 0, name: 'step', attempt: 2 }),
  entry('completed', 'B', 2),
];

describe('drill invariants', () => {
  it('pass for a takeover that re-ran an interrupted attempt as a new attempt', () => {
    const rejection: FenceRejection = {
      workflowId: 'w',
      engineId: 'A',
      heldEpoch: 1,
      currentEpoch: 2,
      at: 1,
      what: 'commit',
    };
    const results = checkOwnershipInvariants(
      [{ workflowId: 'w', status: 'completed', timeline: handoff() }],
      [rejection],
    );
    expect(results.every((result) => result.ok)).toBe(true);
    expect(results).toHaveLength(5);
  });

  it('fail when an epoch went down, or a refused write held the current epoch', () => {
    const timeline = handoff();
    timeline.splice(5, 0, entry('timer-armed', 'B', 1, { pos: 1 }));
    expect(verdicts(timeline)['epochs-only-rose']).toBe(false);
    const stale: FenceRejection = {
      workflowId: 'w',
      engineId: 'A',
      heldEpoch: 2,
      currentEpoch: 2,
      at: 1,
      what: 'x',
    };
    expect(verdicts(handoff(), 'completed', [stale])['epochs-only-rose']).toBe(false);
  });

  it('fail when two engines wrote under one epoch', () => {
    const timeline = handoff();
    timeline.splice(5, 0, entry('timer-armed', 'A', 2, { pos: 1 }));
    expect(verdicts(timeline)['one-writer-per-epoch']).toBe(false);
  });

  it('fail when an attempt started twice, or an activity started again after completing', () => {
    const twice = handoff();
    twice.splice(3, 0, entry('activity-started', 'A', 1, { pos: 0, member: 0, name: 'step', attempt: 1 }));
    expect(verdicts(twice)['no-operation-ran-twice']).toBe(false);
    const again = handoff();
    again.splice(6, 0, entry('activity-started', 'B', 2, { pos: 0, member: 0, name: 'step', attempt: 3 }));
    expect(verdicts(again)['no-operation-ran-twice']).toBe(false);
  });

  it('fail when a workflow did not finish, or its terminal state was overwritten', () => {
    expect(verdicts(handoff().slice(0, 5), 'running')['every-workflow-finished']).toBe(false);
    const overwritten = [...handoff(), entry('failed', 'A', 2)];
    const results = verdicts(overwritten, 'failed');
    expect(results['no-terminal-overwritten']).toBe(false);
    expect(verdicts(handoff(), 'failed')['no-terminal-overwritten']).toBe(false);
  });
});
