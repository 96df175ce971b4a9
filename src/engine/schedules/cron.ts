/**
 * Cron expressions, parsed and evaluated by `croner` (never by hand). This module is the only place that
 * imports it: it validates a cron and a time zone with messages that say what is accepted, and answers the
 * questions a schedule asks — the next slot after a time, the latest slot at or before one, the next few.
 *
 * Accepted form: 5 fields `minute hour day-of-month month day-of-week`, or 6 with a leading `second`
 * field, or a nickname (`@yearly`, `@monthly`, `@weekly`, `@daily`, `@hourly`). Day-of-month and
 * day-of-week combine with OR, as in Vixie cron. Slots are whole seconds. Times are evaluated in an IANA
 * time zone (default UTC); across daylight-saving changes croner's rules apply: a fixed-time job in a
 * skipped hour runs when the clock has jumped, and once when a time occurs twice.
 */
import { Cron } from 'croner';
import { InvalidScheduleError } from '../errors';

export const acceptedCronForm =
  "5 fields 'minute hour day-of-month month day-of-week' (e.g. '0 9 * * 1-5'), 6 fields with a leading second " +
  "(e.g. '*/10 * * * * *'), or a nickname (@yearly, @monthly, @weekly, @daily, @hourly)";

/** A parsed cron in a time zone. */
export type CronSchedule = {
  readonly cron: string;
  readonly timezone: string;
  /** The first slot strictly after `time`, or null when there is none. */
  next(time: number): number | null;
  /** Up to `count` slots strictly after `time`. */
  nextFew(count: number, time: number): number[];
  /** The latest slot at or before `time`, or null when there is none. */
  latestAtOrBefore(time: number): number | null;
};

/** Throws `InvalidScheduleError` (field `timezone`) unless `timezone` is an IANA zone this runtime knows. */
export function assertTimezone(timezone: unknown): asserts timezone is string {
  if (typeof timezone !== 'string' || timezone.length === 0 || timezone.length > 100)
    throw new InvalidScheduleError(
      'timezone',
      `A schedule's timezone must be an IANA time zone name such as 'UTC' or 'America/New_York'; got ${JSON.stringify(timezone) ?? String(timezone)}.`,
    );
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new InvalidScheduleError(
      'timezone',
      `Unknown time zone ${JSON.stringify(timezone)}: use an IANA time zone name such as 'UTC', 'Europe/Paris' or 'America/New_York'.`,
    );
  }
}

/**
 * Parses `cron` in `timezone`. Throws `InvalidScheduleError` with croner's message and the accepted form
 * (field `cron`), or for the time zone (field `timezone`).
 */
export function parseCron(cron: unknown, timezone: unknown = 'UTC'): CronSchedule {
  if (typeof cron !== 'string' || cron.trim().length === 0 || cron.length > 200)
    throw new InvalidScheduleError(
      'cron',
      `A schedule's cron must be a non-empty string of at most 200 characters; got ${JSON.stringify(cron) ?? String(cron)}. Accepted: ${acceptedCronForm}.`,
    );
  assertTimezone(timezone);
  let parsed: Cron;
  try {
    parsed = new Cron(cron.trim(), { timezone, mode: '5-or-6-parts' });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InvalidScheduleError(
      'cron',
      `Invalid cron ${JSON.stringify(cron)}: ${message.replace(/^CronPattern: /, '').replace(/\.+$/, '')}. Accepted: ${acceptedCronForm}.`,
    );
  }
  const at = (time: number) => new Date(time);
  return {
    cron,
    timezone,
    next: (time) => parsed.nextRun(at(time))?.getTime() ?? null,
    nextFew: (count, time) => parsed.nextRuns(count, at(time)).map((date) => date.getTime()),
    // previousRuns is strictly before its reference: one millisecond later includes `time` itself.
    latestAtOrBefore: (time) => parsed.previousRuns(1, at(time + 1))[0]?.getTime() ?? null,
  };
}

/** A small cache of parsed crons: a maintenance pass evaluates the same few schedules again and again. */
export class CronCache {
  readonly #parsed = new Map<string, CronSchedule>();

  get(cron: string, timezone: string): CronSchedule {
    const key = `${timezone}\u0000${cron}`;
    let found = this.#parsed.get(key);
    if (!found) {
      if (this.#parsed.size >= 500) this.#parsed.clear();
      found = parseCron(cron, timezone);
      this.#parsed.set(key, found);
    }
    return found;
  }
}

/**
 * The next `count` slots of `cron` in `timezone` after `from`, or why the cron is refused: for previews (the
 * studio's New schedule dialog) that must not throw.
 */
export function previewCron(
  cron: string,
  timezone: string | undefined,
  from: number,
  count = 5,
): { ok: true; nextFireAt: number[] } | { ok: false; field: string; message: string } {
  try {
    const parsed = parseCron(cron, timezone ?? 'UTC');
    const nextFireAt = parsed.nextFew(Math.max(1, Math.min(count, 50)), from);
    if (nextFireAt.length === 0)
      return { ok: false, field: 'cron', message: `Cron ${JSON.stringify(cron)} never fires after now.` };
    return { ok: true, nextFireAt };
  } catch (error) {
    if (error instanceof InvalidScheduleError)
      return { ok: false, field: error.field, message: error.message };
    throw error;
  }
}
