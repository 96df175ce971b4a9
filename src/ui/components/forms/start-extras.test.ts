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

  it('starts onto the chosen queue with its concurrency key and priority, or leaves them to the definition', () => {
    expect(
      planStart({ id: 'p1' }, { ...noStartExtras, queue: 'payments', concurrencyKey: 'acme', priority: '2' }),
    ).toEqual({
      ok: true,
      plan: { kind: 'start', options: { id: 'p1', queue: 'payments', concurrencyKey: 'acme', priority: 2 } },
    });
    // No queue chosen: a key and priority still go (the definition's default queue takes them).
    expect(planStart({}, { ...noStartExtras, concurrencyKey: 'acme' })).toEqual({
      ok: true,
      plan: { kind: 'start', options: { concurrencyKey: 'acme' } },
    });
    const withSignal = { ...noStartExtras, queue: 'payments', withSignal: true, signalName: 'go' };
    expect(planStart({ id: 'p2' }, withSignal)).toMatchObject({
      ok: true,
      plan: { kind: 'signal-with-start', options: { id: 'p2', queue: 'payments' } },
    });
  });

  it('refuses a priority outside 1–10, a key of spaces or too long, and a malformed queue name', () => {
    for (const priority of ['0', '11', '2.5', 'high'])
      expect(planStart({}, { ...noStartExtras, priority })).toMatchObject({
        ok: false,
        problem: { field: 'priority', message: expect.stringMatching(/from 1 \(runs first\) to 10/) },
      });
    expect(planStart({}, { ...noStartExtras, concurrencyKey: '  ' })).toMatchObject({
      ok: false,
      problem: { field: 'concurrencyKey' },
    });
    expect(planStart({}, { ...noStartExtras, concurrencyKey: 'k'.repeat(201) })).toMatchObject({
      ok: false,
      problem: { field: 'concurrencyKey', message: expect.stringMatching(/201 characters/) },
    });
    expect(planStart({}, { ...noStartExtras, queue: 'no spaces' })).toMatchObject({
      ok: false,
      problem: { field: 'queue' },
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
