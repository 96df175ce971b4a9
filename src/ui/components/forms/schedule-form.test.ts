import { describe, expect, it } from 'vitest';
import { buildScheduleRequest, cronPresets, defaultScheduleFields, fieldOfError } from './schedule-form';
import { describeCron } from '../schedule-view';

function named(name: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(name), { name, ...fields });
}

const noInput = { empty: true, value: undefined };

describe('schedule form', () => {
  it('builds the spec the engine takes: defaults filled, input and start options only when given', () => {
    const fields = { ...defaultScheduleFields(), name: 'tick', cron: ' */5 * * * * * ' };
    expect(buildScheduleRequest(fields, 'countdown', noInput)).toEqual({
      ok: true,
      request: {
        name: 'tick',
        spec: {
          cron: '*/5 * * * * *',
          timezone: 'UTC',
          workflow: 'countdown',
          overlap: 'skip',
          catchUp: 'latest',
        },
      },
    });
    const full = buildScheduleRequest(
      {
        ...fields,
        timezone: 'Europe/Paris',
        overlap: 'allow',
        catchUp: 'all',
        executionTimeoutSeconds: '30',
        startDelaySeconds: '1.5',
      },
      'countdown',
      { empty: false, value: { from: 1 } },
    );
    expect(full).toMatchObject({
      ok: true,
      request: {
        spec: {
          timezone: 'Europe/Paris',
          overlap: 'allow',
          catchUp: 'all',
          input: { from: 1 },
          startOptions: { executionTimeoutMs: 30_000, startDelayMs: 1_500 },
        },
      },
    });
  });

  it('stops at a missing name or cron, or a bad delay — and leaves the rest for the engine to judge', () => {
    const fields = defaultScheduleFields();
    expect(buildScheduleRequest(fields, 'countdown', noInput)).toMatchObject({ ok: false, field: 'name' });
    expect(buildScheduleRequest({ ...fields, name: 'a' }, 'countdown', noInput)).toMatchObject({
      ok: false,
      field: 'cron',
    });
    expect(
      buildScheduleRequest(
        { ...fields, name: 'a', cron: '* * * * *', startDelaySeconds: '-1' },
        'c',
        noInput,
      ),
    ).toMatchObject({
      ok: false,
      field: 'options',
      message: 'The start delay must be a positive number of seconds.',
    });
    // a name with spaces around it goes to the engine as typed: its refusal says what is wrong
    expect(buildScheduleRequest({ ...fields, name: ' a ', cron: 'nonsense' }, 'c', noInput)).toMatchObject({
      ok: true,
      request: { name: ' a ', spec: { cron: 'nonsense' } },
    });
  });

  it('places the engine’s refusal at the field it names', () => {
    expect(fieldOfError(named('InvalidScheduleError', { field: 'cron' }))).toBe('cron');
    expect(fieldOfError(named('InvalidScheduleError', { field: 'timezone' }))).toBe('timezone');
    expect(fieldOfError(named('InvalidScheduleError', { field: 'startOptions' }))).toBe('options');
    expect(fieldOfError(named('InvalidScheduleError', { field: 'spec' }))).toBeNull();
    expect(fieldOfError(named('ScheduleExistsError'))).toBe('name');
    expect(fieldOfError(named('WorkflowNotRegisteredError'))).toBeNull();
    expect(fieldOfError('boom')).toBeNull();
  });

  it('offers presets that read well in English', () => {
    for (const preset of cronPresets) expect(describeCron(preset.cron)).not.toBeNull();
  });
});
