import { describe, expect, it } from 'vitest';
import type { ActivityLimitView } from '../../public/browser';
import {
  activityGroupFull,
  activityHolders,
  activityHolderText,
  activityLimitsSummary,
  activityLimitText,
  activityRunningText,
} from './activity-limit-view';

const holder = (workflowId: string, since: number, extra: { member?: number; attempt?: number } = {}) => ({
  engineId: 'e-1',
  workflowId,
  position: 3,
  member: extra.member ?? 0,
  attempt: extra.attempt ?? 1,
  since,
});

function group(overrides: Partial<ActivityLimitView> = {}): ActivityLimitView {
  return {
    name: 'charge-card',
    concurrency: 5,
    perEngine: 2,
    running: [],
    runningHere: 0,
    waitingHere: 0,
    declared: true,
    ...overrides,
  };
}

describe('activity limits in words', () => {
  it('limits: both, either, or unknown for a group seen only in the store', () => {
    expect(activityLimitText(group())).toBe('5 at once · 2 per engine');
    expect(activityLimitText(group({ perEngine: null }))).toBe('5 at once');
    expect(activityLimitText(group({ concurrency: null }))).toBe('2 per engine');
    expect(activityLimitText(group({ declared: false, concurrency: null, perEngine: null }))).toBe(
      'declared on other engines',
    );
  });

  it('running against the fleet-wide limit, full when every slot is held; a bare count without one', () => {
    const two = [holder('a', 1), holder('b', 2)];
    expect(activityRunningText(group({ running: two }))).toBe('2 / 5');
    expect(activityGroupFull(group({ running: two }))).toBe(false);
    expect(activityGroupFull(group({ concurrency: 2, running: two }))).toBe(true);
    expect(activityRunningText(group({ concurrency: null, running: two }))).toBe('2');
    expect(activityGroupFull(group({ concurrency: null, running: two }))).toBe(false);
    const undeclared = group({ declared: false, concurrency: null, perEngine: null, running: two });
    expect(activityRunningText(undeclared)).toBe('2');
    expect(activityGroupFull(undeclared)).toBe(false);
  });

  it('a holder: its step, member and attempt; holders oldest first; the section summary', () => {
    expect(activityHolderText(holder('a', 1))).toBe('step 3');
    expect(activityHolderText(holder('a', 1, { member: 1, attempt: 2 }))).toBe('step 3.1, attempt 2');
    expect(
      activityHolders(group({ running: [holder('late', 9), holder('early', 4)] })).map((h) => h.workflowId),
    ).toEqual(['early', 'late']);
    expect(
      activityLimitsSummary([
        group({ running: [holder('a', 1)], waitingHere: 2 }),
        group({ name: 'email', running: [holder('b', 1), holder('c', 2)] }),
      ]),
    ).toBe('2 groups · 3 running · 2 waiting here');
    expect(activityLimitsSummary([group()])).toBe('1 group · 0 running');
  });
});
