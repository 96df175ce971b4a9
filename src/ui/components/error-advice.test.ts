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

  it('explains anything thrown, even a string', () => {
    expect(explainError('boom')).toMatchObject({
      name: 'Error',
      title: 'Something went wrong',
      message: 'boom',
      advice: null,
    });
  });
});
