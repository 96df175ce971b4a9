/**
 * The schedules domain of the wire contract: cron schedules of a store, and a cron's preview.
 */
import type { ScheduleInfo, ScheduleSpecInput } from '../engine';
import { method, type Empty } from './declare';

/** A cron's next fire times, or why the engine refuses it (`previewSchedule`). */
export type SchedulePreview =
  { ok: true; nextFireAt: number[] } | { ok: false; field: string; message: string };

export const scheduleMethods = {
  /** Every schedule of the store. */
  schedules: method<Empty, ScheduleInfo[]>({}),
  describeSchedule: method<{ name: string }, ScheduleInfo>({ name: 'string' }),
  /** Creates a schedule (unchanged when it exists with the same spec; a different one needs `replace`). */
  createSchedule: method<{ name: string; spec: ScheduleSpecInput; replace?: boolean }, ScheduleInfo>({
    name: 'string',
    spec: 'object',
    replace: 'boolean?',
  }),
  pauseSchedule: method<{ name: string }, ScheduleInfo>({ name: 'string' }),
  resumeSchedule: method<{ name: string }, ScheduleInfo>({ name: 'string' }),
  /** Starts one run of the schedule now, outside its slots. */
  triggerSchedule: method<{ name: string }, { workflowId: string; run: number }>({ name: 'string' }),
  /** Deletes a schedule; the workflows it started are left alone. */
  deleteSchedule: method<{ name: string }, null>({ name: 'string' }),
  /**
   * The next `count` (default 5) fire times of a cron in a time zone, or the engine's reason for refusing it
   * (`field` 'cron' or 'timezone'): for the studio's live preview. Writes nothing.
   */
  previewSchedule: method<{ cron: string; timezone?: string; count?: number }, SchedulePreview>({
    cron: 'string',
    timezone: 'string?',
    count: 'integer?',
  }),
} as const;
