/**
 * How the studio reads a schedule, without React: the cron in English (cronstrue, in 24-hour time), fire
 * times in the schedule's own time zone, what each slot outcome means in words, the one-line explanations
 * of overlap and catch-up (the form and the screen say the same thing), the summary line of the screen, and
 * the time zones the form offers.
 */
import cronstrue from 'cronstrue';
import type { ScheduleCatchUp, ScheduleInfo, ScheduleOverlap, SlotOutcome } from '../../public';

/** The cron in English ("At 09:00, Monday through Friday"), or null when cronstrue cannot read it. */
export function describeCron(cron: string): string | null {
  try {
    return cronstrue.toString(cron.trim(), {
      use24HourTimeFormat: true,
      throwExceptionOnParseError: true,
      verbose: false,
    });
  } catch {
    return null;
  }
}

/** The fire times still ahead of `now` (the list was computed when the schedules were read). */
export function upcoming(nextFireAt: readonly number[], now: number): number[] {
  return nextFireAt.filter((at) => at > now - 500);
}

/**
 * A time in `timezone`, as short as reads well next to "now": "14:05:09" today (there), "Thu 4 Dec 09:00"
 * another day this year, "4 Dec 2026 09:00" beyond — with the seconds when they are not zero.
 */
export function formatInZone(at: number, timezone: string, now: number = Date.now()): string {
  const zone = safeZone(timezone);
  const parts = (time: number) => {
    const values: Record<string, string> = {};
    for (const part of new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(new Date(time)))
      values[part.type] = part.value;
    return values;
  };
  const p = parts(at);
  const today = parts(now);
  if (p.year === today.year && p.month === today.month && p.day === today.day)
    return `${p.hour}:${p.minute}:${p.second}`;
  const clock = p.second === '00' ? `${p.hour}:${p.minute}` : `${p.hour}:${p.minute}:${p.second}`;
  if (p.year === today.year) return `${p.weekday} ${p.day} ${p.month} ${clock}`;
  return `${p.day} ${p.month} ${p.year} ${clock}`;
}

function safeZone(timezone: string): string {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: timezone });
    return timezone;
  } catch {
    return 'UTC';
  }
}

/** How a slot outcome reads: a short label, a tone for its colour, and the full sentence. */
export type SlotView = {
  outcome: SlotOutcome['outcome'] | 'missed';
  label: string;
  tone: 'success' | 'info' | 'warning' | 'danger' | 'neutral';
  /** The sentence for a tooltip or the details: what happened and why. */
  reason: string;
  /** Why, in a few words, beside the label (empty for a plain start). */
  short: string;
  /** The workflow it started, waited for or collided with. */
  workflowId: string | null;
};

export function slotView(slot: SlotOutcome, timezone = 'UTC', now: number = Date.now()): SlotView {
  switch (slot.outcome) {
    case 'started': {
      const waited =
        slot.bufferedMs !== undefined
          ? ` after waiting ${Math.round(slot.bufferedMs / 100) / 10} s for the previous run`
          : '';
      return {
        outcome: 'started',
        label: slot.trigger ? 'triggered' : 'started',
        tone: 'success',
        short: slot.trigger
          ? 'triggered by hand'
          : slot.bufferedMs !== undefined
            ? `waited ${Math.round(slot.bufferedMs / 100) / 10} s for the previous run`
            : '',
        reason: slot.trigger
          ? `Triggered by hand at ${formatInZone(slot.at, timezone, now)}: started ${slot.workflowId}.`
          : `Started ${slot.workflowId}${waited}.`,
        workflowId: slot.workflowId,
      };
    }
    case 'buffered':
      return {
        outcome: 'buffered',
        label: 'buffered',
        tone: 'info',
        short: 'waits for the previous run',
        reason: `Waiting for ${slot.waitingFor} to finish (overlap: buffer-one); it starts then.`,
        workflowId: slot.waitingFor,
      };
    case 'skipped': {
      switch (slot.reason) {
        case 'overlap':
          return {
            outcome: 'skipped',
            label: 'skipped',
            tone: 'warning',
            short: 'previous run still running',
            reason: `Skipped: the previous run${slot.workflowId ? ` (${slot.workflowId})` : ''} had not finished (overlap: skip).`,
            workflowId: slot.workflowId ?? null,
          };
        case 'buffer-full':
          return {
            outcome: 'skipped',
            label: 'skipped',
            tone: 'warning',
            short: 'a slot already waiting',
            reason: `Skipped: a slot was already waiting for the previous run${slot.workflowId ? ` (${slot.workflowId})` : ''} (overlap: buffer-one keeps one).`,
            workflowId: slot.workflowId ?? null,
          };
        case 'already-started':
          return {
            outcome: 'skipped',
            label: 'exists',
            tone: 'neutral',
            short: 'its workflow id already exists',
            reason: `Not started again: a workflow with this slot's id already exists${slot.workflowId ? ` (${slot.workflowId})` : ''}.`,
            workflowId: slot.workflowId ?? null,
          };
        case 'missed': {
          const count = slot.count !== undefined && slot.count > 1 ? `${slot.count} slots` : null;
          const throughTime =
            slot.through !== undefined && slot.through !== slot.slot
              ? formatInZone(slot.through, timezone, now)
              : null;
          const through = throughTime ? ` through ${throughTime}` : '';
          return {
            outcome: 'missed',
            label: count ? `missed ${slot.count}` : 'missed',
            tone: 'danger',
            short: `${throughTime ? `through ${throughTime} — ` : ''}no engine ran, or it was paused`,
            reason: `Missed${count ? ` ${count}` : ''}${through}: no engine was running, or the schedule was paused, when ${count || through ? 'they' : 'it'} fell due — and catch-up did not fire ${count || through ? 'them' : 'it'}.`,
            workflowId: null,
          };
        }
      }
    }
  }
}

/** What each overlap policy does, in one line (the form's select and the details say the same). */
export const overlapText: Record<ScheduleOverlap, { label: string; explain: string }> = {
  skip: {
    label: 'Skip',
    explain: 'A slot that falls due while the previous run still runs is skipped.',
  },
  'buffer-one': {
    label: 'Buffer one',
    explain: 'One such slot waits and starts when the previous run finishes; more are skipped.',
  },
  allow: {
    label: 'Allow',
    explain: 'Every slot starts a run, even while earlier ones still run.',
  },
};

/** What each catch-up policy does with slots missed while no engine ran (or while paused). */
export const catchUpText: Record<ScheduleCatchUp, { label: string; explain: string }> = {
  latest: {
    label: 'Latest',
    explain: 'After an outage only the most recent missed slot runs; older ones are recorded as missed.',
  },
  all: {
    label: 'All',
    explain: 'After an outage every missed slot runs, oldest first (up to 100 per pass).',
  },
  none: {
    label: 'None',
    explain: 'Missed slots never run; a slot runs only when an engine reaches it on time.',
  },
};

/** The summary line of the Schedules screen: how many, how many paused, which fires next. */
export function schedulesSummary(schedules: readonly ScheduleInfo[], now: number): string {
  if (schedules.length === 0) return 'Workflows started on a cron, exactly once per slot.';
  const paused = schedules.filter((schedule) => schedule.paused).length;
  const parts = [`${schedules.length} schedule${schedules.length === 1 ? '' : 's'}`];
  if (paused > 0) parts.push(`${paused} paused`);
  const next = schedules
    .flatMap((schedule) =>
      upcoming(schedule.nextFireAt, now)
        .slice(0, 1)
        .map((at) => ({ name: schedule.name, at })),
    )
    .sort((a, b) => a.at - b.at)[0];
  if (next) parts.push(`next: ${next.name}`);
  return parts.join(' · ');
}

/** The browser's time zone (IANA), or UTC when it does not say. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The time zones the form suggests: UTC and the browser's first, then every zone the runtime knows. */
export function timeZoneChoices(browser: string = browserTimeZone()): string[] {
  let all: string[] = [];
  try {
    all = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  } catch {
    all = [];
  }
  return [...new Set(['UTC', browser, ...all])];
}

/** The workflows a schedule started have ids `<name>@<slot ISO>` or `<name>@trigger-<n>`. */
export function scheduleIdPrefix(name: string): string {
  return `${name}@`;
}
