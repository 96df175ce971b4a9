/**
 * The New schedule form's logic, without React: its fields and their defaults, the cron presets, turning
 * the fields into the spec `client.schedule(name, spec)` takes, and placing the engine's refusal at the field
 * it names. The engine validates everything (and says so in its own words, before anything is written); this
 * only builds the request and knows where to show the answer.
 */
import type { ScheduleCatchUp, ScheduleOverlap, ScheduleSpecInput } from '../../../public';
import { buildStartOptions, type FieldProblem } from './start-form';

export type ScheduleFields = {
  name: string;
  cron: string;
  timezone: string;
  overlap: ScheduleOverlap;
  catchUp: ScheduleCatchUp;
  /** Seconds, as typed; empty for none. */
  startDelaySeconds: string;
  executionTimeoutSeconds: string;
};

/** The form's fields that an engine error can name. */
export type ScheduleField = 'name' | 'cron' | 'timezone' | 'overlap' | 'catchUp' | 'options';

export function defaultScheduleFields(): ScheduleFields {
  return {
    name: '',
    cron: '',
    timezone: 'UTC',
    overlap: 'skip',
    catchUp: 'latest',
    startDelaySeconds: '',
    executionTimeoutSeconds: '',
  };
}

/** One click fills the cron. */
export const cronPresets: readonly { label: string; cron: string }[] = [
  { label: 'Every 10 s', cron: '*/10 * * * * *' },
  { label: 'Every minute', cron: '* * * * *' },
  { label: 'Hourly', cron: '0 * * * *' },
  { label: 'Daily 09:00', cron: '0 9 * * *' },
  { label: 'Weekdays 09:00', cron: '0 9 * * 1-5' },
];

/** The cron forms the engine accepts, for the hint under the field (the engine's refusal says it in full). */
export const cronHint = '5 fields, 6 with seconds first, or @daily, @hourly…';

export type ScheduleRequest = { name: string; spec: ScheduleSpecInput };

/**
 * The request the fields describe, or the one thing that stops it being sent (a missing name or cron, a bad
 * delay or timeout). Everything else is left for the engine to judge.
 */
export function buildScheduleRequest(
  fields: ScheduleFields,
  workflowType: string,
  input: { empty: boolean; value: unknown },
): { ok: true; request: ScheduleRequest } | { ok: false; field: ScheduleField; message: string } {
  if (fields.name.trim().length === 0)
    return { ok: false, field: 'name', message: 'Give the schedule a name: its runs are named after it.' };
  if (fields.cron.trim().length === 0)
    return { ok: false, field: 'cron', message: 'Write a cron, or pick one of the presets.' };
  const options = buildStartOptions({
    workflowId: '',
    startDelaySeconds: fields.startDelaySeconds,
    executionTimeoutSeconds: fields.executionTimeoutSeconds,
  });
  if (!options.ok) return { ok: false, field: 'options', message: (options.problem as FieldProblem).message };
  const startOptions = options.options;
  const spec: ScheduleSpecInput = {
    cron: fields.cron.trim(),
    timezone: fields.timezone.trim() || 'UTC',
    workflow: workflowType,
    overlap: fields.overlap,
    catchUp: fields.catchUp,
    ...(input.empty ? {} : { input: input.value }),
    ...(Object.keys(startOptions).length > 0 ? { startOptions } : {}),
  };
  return { ok: true, request: { name: fields.name, spec } };
}

/**
 * Where the engine's refusal belongs: the field an `InvalidScheduleError` names, the name for a schedule that
 * exists with another spec, or null (shown under the whole form: an unknown workflow type, a payload too
 * large, the engine stopped…).
 */
export function fieldOfError(error: unknown): ScheduleField | null {
  if (!(error instanceof Error)) return null;
  if (error.name === 'ScheduleExistsError') return 'name';
  if (error.name !== 'InvalidScheduleError') return null;
  const field = (error as { field?: unknown }).field;
  switch (field) {
    case 'name':
    case 'cron':
    case 'timezone':
    case 'overlap':
    case 'catchUp':
      return field;
    case 'startOptions':
      return 'options';
    default:
      return null;
  }
}
