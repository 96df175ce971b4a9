import { describe, expect, it } from 'vitest';
import { createEngine, defineWorkflow, type TimelineEntry, type TimelineKind } from '../src/engine';
import { MemoryStorage } from '../src/storage';
import { countDuplicateCommits, findTakeover } from './timeline-audit';

let seq = 0;
function entry(
  kind: TimelineKind,
  engineId: string,
  at: number,
  detail: Record<string, unknown> = {},
): TimelineEntry {
  seq++;
  // Hand-made entries, some partial: the audit must cope with whatever a timeline holds.
  return { seq, at, engineId, epoch: 1, kind, detail } as TimelineEntry;
}

const threeSteps = defineWorkflow({
  name: 'three-steps',
  version: 1,
  *run(ctx) {
    for (let step = 0; step < 3; step++) yield* ctx.activity('step', () => step);
    return 'done';
  },
});

describe('countDuplicateCommits', () => {
  it('finds none in a real workflow timeline, and one when an activity completion is repeated', async () => {
    const engine = await createEngine({ storage: new MemoryStorage(), workflows: [threeSteps] });
    const handle = await engine.start(threeSteps, undefined, { id: 'w' });
    await handle.result();
    const timeline = await engine.timeline('w');
    await engine.shutdown();
    expect(countDuplicateCommits(timeline, { kind: 'activity-completed', count: 3 })).toEqual({
      duplicates: 0,
      findings: [],
    });

    const completion = timeline.find((item) => item.kind === 'activity-completed')!;
    const doubled = [...timeline, { ...completion, seq: 999 }];
    const audit = countDuplicateCommits(doubled);
    expect(audit.duplicates).toBe(1);
    expect(audit.findings[0]).toMatch(/activity-completed@0\/.* committed 2 times/);
  });

  it('counts a tick fired twice at one position and extra ticks beyond the expected count once each', () => {
    const ticks = [0, 1, 2].map((pos) => entry('timer-fired', 'a', pos, { pos, member: 0, kind: 'sleep' }));
    const repeated = [...ticks, entry('timer-fired', 'b', 9, { pos: 2, member: 0, kind: 'sleep' })];
    expect(countDuplicateCommits(repeated, { kind: 'timer-fired', count: 3 }).duplicates).toBe(1);
    const extra = [...ticks, entry('timer-fired', 'b', 9, { pos: 3, member: 0, kind: 'sleep' })];
    expect(countDuplicateCommits(extra, { kind: 'timer-fired', count: 3 })).toEqual({
      duplicates: 1,
      findings: ['4 timer-fired entries for 3 steps'],
    });
  });

  it('allows a retry timer to fire once per attempt at one position', () => {
    const retries = [1, 2].map((at) =>
      entry('timer-fired', 'a', at, { pos: 0, member: 0, kind: 'activity' }),
    );
    expect(countDuplicateCommits(retries).duplicates).toBe(0);
  });

  it('counts two terminal entries and two applications of one update', () => {
    const entries = [
      entry('update-applied', 'a', 1, { updateId: 'u1' }),
      entry('update-applied', 'b', 2, { updateId: 'u1' }),
      entry('completed', 'a', 3),
      entry('terminated', 'b', 4),
    ];
    expect(countDuplicateCommits(entries).duplicates).toBe(2);
  });
});

describe('findTakeover', () => {
  it('finds the new owner’s claim and its first step after it', () => {
    const entries = [
      entry('claim-acquired', 'a', 100, { how: 'start' }),
      entry('timer-fired', 'a', 120, { pos: 0, member: 0, kind: 'sleep' }),
      entry('claim-taken-over', 'b', 400),
      entry('timer-fired', 'b', 410, { pos: 1, member: 0, kind: 'sleep' }),
    ];
    const takeover = findTakeover(entries, 'a');
    expect(takeover?.engineId).toBe('b');
    expect(takeover?.claim.at).toBe(400);
    expect(takeover?.firstStep?.at).toBe(410);
  });

  it('reports a claim without a step yet, and nothing before the previous owner wrote', () => {
    const claimOnly = [entry('claim-acquired', 'a', 1), entry('claim-acquired', 'b', 2)];
    expect(findTakeover(claimOnly, 'a')?.firstStep).toBeNull();
    expect(findTakeover([entry('claim-acquired', 'b', 1)], 'a')).toBeNull();
  });
});
