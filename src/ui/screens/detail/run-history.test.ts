import { describe, expect, it } from 'vitest';
import type { FenceRejection, RunSummary } from '../../../public';
import { earlierRunNote, isEarlierRun, latestRunOf, rejectionsOfRun, runSwitcherLabel } from './run-history';

function run(number: number, createdAt: number, latest = false): RunSummary {
  return {
    run: number,
    workflowType: 'countdown',
    version: 1,
    status: latest ? 'running' : 'completed',
    createdAt,
    latest,
  };
}

const runs = [run(3, 300, true), run(2, 200), run(1, 100)];

function rejection(at: number): FenceRejection {
  return { workflowId: 'w', engineId: 'e', heldEpoch: 1, currentEpoch: 2, at, what: 'commit' };
}

describe('run history on the detail screen', () => {
  it('knows the latest run and whether the run shown is an earlier one', () => {
    expect(latestRunOf(runs)?.run).toBe(3);
    expect(latestRunOf([])).toBeNull();
    expect(latestRunOf(undefined)).toBeNull();
    expect(isEarlierRun({ run: 1 }, runs)).toBe(true);
    expect(isEarlierRun({ run: 3 }, runs)).toBe(false);
    // before the runs are known, the run shown is taken for the latest (actions stay on)
    expect(isEarlierRun({ run: 1 }, undefined)).toBe(false);
  });

  it('labels the switcher with the run out of the latest, and says how an earlier run ended', () => {
    expect(runSwitcherLabel(2, runs)).toBe('Run 2 of 3');
    expect(runSwitcherLabel(3, runs)).toBe('Run 3 of 3');
    // a run newer than the list held (it started meanwhile) never reads "4 of 3"
    expect(runSwitcherLabel(4, runs)).toBe('Run 4 of 4');
    expect(earlierRunNote({ status: 'failed' })).toBe('earlier run — finished failed');
  });

  it('keeps the refused writes of the run shown: from its creation until the next run’s', () => {
    const all = [rejection(50), rejection(150), rejection(250), rejection(350)];
    expect(rejectionsOfRun(all, runs, 1).map((r) => r.at)).toEqual([50, 150]);
    expect(rejectionsOfRun(all, runs, 2).map((r) => r.at)).toEqual([250]);
    expect(rejectionsOfRun(all, runs, 3).map((r) => r.at)).toEqual([350]);
    expect(rejectionsOfRun(all, [run(1, 100, true)], 1)).toHaveLength(4);
    expect(rejectionsOfRun(all, undefined, 2)).toHaveLength(4);
  });
});
