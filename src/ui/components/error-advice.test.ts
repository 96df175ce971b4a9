import { describe, expect, it } from 'vitest';
import { explainError } from './error-advice';

function named(name: string, message: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { name }, fields);
}

describe('error explanations', () => {
  it('keeps the engine’s message and adds what to do', () => {
    const explained = explainError(
      named('PayloadTooLargeError', 'Input is 300000 bytes, over the limit of 262144 bytes.'),
    );
    expect(explained).toMatchObject({
      name: 'PayloadTooLargeError',
      title: 'Payload too large',
      reload: false,
    });
    expect(explained.message).toContain('262144');
    expect(explained.advice).toContain('reference');
  });

  it('says how large a payload was without an id the person never typed, and its advice once', () => {
    const engineWords =
      "Input of workflow '3f2a9c1e-0000-4000-8000-000000000000' is 300000 bytes, over the limit of 262144 bytes. Store large data elsewhere and pass a reference.";
    const explained = explainError(
      named('PayloadTooLargeError', engineWords, {
        what: "Input of workflow '3f2a9c1e-0000-4000-8000-000000000000'",
        bytes: 300_000,
        limitBytes: 262_144,
      }),
    );
    expect(explained.message).toBe(
      'The input is 293.0 KB (300,000 bytes), over the engine’s limit of 256.0 KB.',
    );
    expect(explained.advice).toBe('Store large data elsewhere and pass a reference.');
    const signal = explainError(
      named('PayloadTooLargeError', 'x', {
        what: "Payload of signal 'approve' to workflow 'order-1'",
        bytes: 2048,
        limitBytes: 1024,
      }),
    );
    expect(signal.message).toBe(
      "Payload of signal 'approve' is 2.0 KB (2,048 bytes), over the engine’s limit of 1.0 KB.",
    );
    // Without the fields, the engine's message stands, and advice it already gives is not repeated.
    expect(explainError(named('PayloadTooLargeError', engineWords)).advice).toBeNull();
  });

  it('says to reload the tab when its worker stopped, and tells storage failures apart', () => {
    expect(explainError(named('EngineWorkerStoppedError', 'stopped'))).toMatchObject({ reload: true });
    expect(
      explainError(
        named('StorageError', 'Storage batch failed (quota-exceeded): full', { code: 'quota-exceeded' }),
      ).title,
    ).toBe('The browser’s storage is full');
    expect(
      explainError(named('StorageError', 'Storage open failed (blocked): …', { code: 'blocked' })).advice,
    ).toContain('Close or reload');
    expect(
      explainError(named('StorageError', 'Storage get failed (closed): …', { code: 'closed' })).title,
    ).toBe('The database went away');
  });

  it('names an id reused for another workflow type, with the way to reuse it on purpose', () => {
    const advice = explainError(named('WorkflowIdReuseError', "Workflow 'a' last ran as 'countdown' …"));
    expect(advice.title).toBe('This id last ran as another workflow type');
    expect(advice.advice).toMatch(/reuse the id for the new type/);
  });

  it('explains anything thrown, even a string', () => {
    expect(explainError('boom')).toMatchObject({
      name: 'Error',
      title: 'Something went wrong',
      message: 'boom',
      advice: null,
    });
  });
});
