import { describe, expect, it } from 'vitest';
import { noStartExtras, planStart } from './start-extras';

describe('planStart', () => {
  it('is an ordinary start without extras, and carries an idempotency key as typed', () => {
    expect(planStart({ id: 'w' }, noStartExtras)).toEqual({
      ok: true,
      plan: { kind: 'start', options: { id: 'w' } },
    });
    expect(planStart({}, { ...noStartExtras, idempotencyKey: ' order 42 ' })).toEqual({
      ok: true,
      plan: { kind: 'start', options: { idempotencyKey: ' order 42 ' } },
    });
  });

  it('refuses a key of spaces or over the engine’s 200 characters, naming the field', () => {
    expect(planStart({}, { ...noStartExtras, idempotencyKey: '   ' })).toMatchObject({
      ok: false,
      problem: { field: 'idempotencyKey', message: expect.stringMatching(/only spaces/) },
    });
    expect(planStart({}, { ...noStartExtras, idempotencyKey: 'k'.repeat(201) })).toMatchObject({
      ok: false,
      problem: {
        field: 'idempotencyKey',
        message: 'The idempotency key has 201 characters; the limit is 200.',
      },
    });
  });

  it('plans a signal-with-start with the trimmed signal name and the parsed payload', () => {
    const extras = {
      ...noStartExtras,
      withSignal: true,
      signalName: ' approve ',
      signalPayload: '{"ok":true}',
    };
    expect(planStart({ id: 'order-1', startDelayMs: 5 }, extras)).toEqual({
      ok: true,
      plan: {
        kind: 'signal-with-start',
        options: { id: 'order-1', startDelayMs: 5 },
        signalName: 'approve',
        payload: { ok: true },
      },
    });
    expect(planStart({ id: 'order-1' }, { ...extras, signalPayload: '' })).toEqual({
      ok: true,
      plan: { kind: 'signal-with-start', options: { id: 'order-1' }, signalName: 'approve' },
    });
  });

  it.each([
    ['no id', {}, {}, 'workflowId', /needs a workflow id.*Enter a workflow id/],
    ['no signal name', { id: 'w' }, { signalName: ' ' }, 'signalName', /Name the signal/],
    ['a long signal name', { id: 'w' }, { signalName: 's'.repeat(201) }, 'signalName', /limit is 200/],
    [
      'a bad payload',
      { id: 'w' },
      { signalPayload: '{ ok: 1 }' },
      'signalPayload',
      /not valid JSON \(line 1/,
    ],
    [
      'an idempotency key too',
      { id: 'w' },
      { idempotencyKey: 'k' },
      'idempotencyKey',
      /takes no idempotency key: its workflow id already makes it idempotent/,
    ],
  ])(
    'refuses a signal-with-start with %s, and says what to do',
    (_label, options, extras, field, message) => {
      const planned = planStart(options, {
        ...noStartExtras,
        withSignal: true,
        signalName: 'approve',
        ...extras,
      });
      expect(planned).toMatchObject({ ok: false, problem: { field } });
      if (!planned.ok) expect(planned.problem.message).toMatch(message);
    },
  );
});
