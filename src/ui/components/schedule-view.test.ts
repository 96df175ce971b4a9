import { describe, expect, it } from 'vitest';
import type { ScheduleInfo } from '../../public';
import {
  catchUpText,
  describeCron,
  formatInZone,
  overlapText,
  scheduleIdPrefix,
  schedulesSummary,
  slotView,
  timeZoneChoices,
  upcoming,
} from './schedule-view';

const at = (iso: string) => Date.parse(iso);

function schedule(name: string, changes: Partial<ScheduleInfo> = {}): ScheduleInfo {
  return {
    name,
    spec: { cron: '* * * * *', timezone: 'UTC', workflow: 'countdown', overlap: 'skip', catchUp: 'latest' },
    paused: false,
    nextFireAt: [],
    lastSlots: [],
    buffered: null,
    running: [],
    createdAt: 0,
    updatedAt: 0,
    ...changes,
  };
}

describe('schedule view', () => {
  it('reads a cron in English, 24-hour, with seconds and nicknames; null when it cannot', () => {
    expect(describeCron('0 9 * * 1-5')).toBe('At 09:00, Monday through Friday');
    expect(describeCron('*/10 * * * * *')).toBe('Every 10 seconds');
    expect(describeCron('@daily')).toBe('At 00:00');
    expect(describeCron(' * * * * * * ')).toBe('Every second');
    expect(describeCron('tomorrow')).toBeNull();
    expect(describeCron('')).toBeNull();
  });

  it('writes fire times in the schedule’s zone: the clock today, the day another day, the year beyond', () => {
    const now = at('2026-12-03T10:00:00Z');
    expect(formatInZone(at('2026-12-03T14:05:09Z'), 'UTC', now)).toBe('14:05:09');
    expect(formatInZone(at('2026-12-04T09:00:00Z'), 'UTC', now)).toBe('Fri 4 Dec 09:00');
    expect(formatInZone(at('2026-12-04T09:00:30Z'), 'UTC', now)).toBe('Fri 4 Dec 09:00:30');
    expect(formatInZone(at('2027-01-04T09:00:00Z'), 'UTC', now)).toBe('4 Jan 2027 09:00');
    // 14:00 UTC is 09:00 in New York (EST), the same day there
    expect(formatInZone(at('2026-12-03T14:00:00Z'), 'America/New_York', now)).toBe('09:00:00');
    // an unknown zone falls back to UTC instead of throwing
    expect(formatInZone(at('2026-12-03T14:05:09Z'), 'Mars/Olympus', now)).toBe('14:05:09');
  });

  it('keeps only the fire times still ahead', () => {
    expect(upcoming([1_000, 2_000, 3_000], 2_000)).toEqual([2_000, 3_000]);
    expect(upcoming([1_000], 5_000)).toEqual([]);
  });

  it('says what each slot outcome means, and which workflow it concerns', () => {
    const now = at('2026-12-03T10:00:00Z');
    const slot = at('2026-12-03T09:59:00Z');
    expect(
      slotView({ slot, outcome: 'started', workflowId: 'tick@x', at: slot, engineId: 'e' }, 'UTC', now),
    ).toMatchObject({
      label: 'started',
      tone: 'success',
      workflowId: 'tick@x',
      reason: 'Started tick@x.',
      short: '',
    });
    expect(
      slotView(
        { slot, outcome: 'started', workflowId: 'tick@b', at: slot, engineId: 'e', bufferedMs: 2_140 },
        'UTC',
        now,
      ).reason,
    ).toBe('Started tick@b after waiting 2.1 s for the previous run.');
    expect(
      slotView(
        { slot, outcome: 'started', workflowId: 'tick@trigger-1', at: slot, engineId: 'e', trigger: true },
        'UTC',
        now,
      ),
    ).toMatchObject({ label: 'triggered', reason: 'Triggered by hand at 09:59:00: started tick@trigger-1.' });
    expect(
      slotView({ slot, outcome: 'skipped', reason: 'overlap', at: slot, workflowId: 'tick@a' }, 'UTC', now),
    ).toMatchObject({
      label: 'skipped',
      tone: 'warning',
      reason: 'Skipped: the previous run (tick@a) had not finished (overlap: skip).',
    });
    expect(
      slotView({ slot, outcome: 'skipped', reason: 'buffer-full', at: slot }, 'UTC', now).reason,
    ).toMatch(/already waiting/);
    expect(
      slotView(
        { slot, outcome: 'skipped', reason: 'already-started', at: slot, workflowId: 'w' },
        'UTC',
        now,
      ),
    ).toMatchObject({ label: 'exists', tone: 'neutral' });
    const missed = slotView(
      {
        slot: at('2026-12-03T09:00:00Z'),
        outcome: 'skipped',
        reason: 'missed',
        at: now,
        through: at('2026-12-03T09:58:00Z'),
        count: 59,
      },
      'UTC',
      now,
    );
    expect(missed).toMatchObject({
      outcome: 'missed',
      label: 'missed 59',
      tone: 'danger',
      workflowId: null,
      short: 'through 09:58:00 — no engine ran, or it was paused',
    });
    expect(missed.reason).toBe(
      'Missed 59 slots through 09:58:00: no engine was running, or the schedule was paused, when they fell due — and catch-up did not fire them.',
    );
    expect(slotView({ slot, outcome: 'skipped', reason: 'missed', at: now }, 'UTC', now).reason).toMatch(
      /^Missed: .* when it fell due — and catch-up did not fire it\.$/,
    );
    expect(slotView({ slot, outcome: 'buffered', waitingFor: 'tick@a', at: slot }, 'UTC', now)).toMatchObject(
      { tone: 'info', workflowId: 'tick@a' },
    );
  });

  it('explains every overlap and catch-up policy in one line', () => {
    for (const text of [...Object.values(overlapText), ...Object.values(catchUpText)]) {
      expect(text.explain.length).toBeGreaterThan(20);
      expect(text.explain.length).toBeLessThan(110);
    }
  });

  it('sums the schedules up: how many, paused, which fires next', () => {
    expect(schedulesSummary([], 0)).toMatch(/exactly once per slot/);
    expect(
      schedulesSummary(
        [
          schedule('b', { nextFireAt: [9_000] }),
          schedule('a', { nextFireAt: [1_000, 7_000] }),
          schedule('c', { paused: true }),
        ],
        5_000,
      ),
    ).toBe('3 schedules · 1 paused · next: a');
  });

  it('offers UTC and the browser’s zone first, once each', () => {
    const choices = timeZoneChoices('Europe/Paris');
    expect(choices.slice(0, 2)).toEqual(['UTC', 'Europe/Paris']);
    expect(choices.filter((zone) => zone === 'Europe/Paris')).toHaveLength(1);
    expect(scheduleIdPrefix('nightly')).toBe('nightly@');
  });
});
