import { describe, expect, it } from 'vitest';
import { locateJsonError } from './json-errors';
import { buildStartOptions, parseJsonInput, payloadBytes, rememberInput } from './start-form';

describe('start form', () => {
  it('says where JSON goes wrong, by line and column, and what was expected there', () => {
    expect(parseJsonInput('{ "from": 3, "tickMs": }')).toEqual({
      ok: false,
      message: 'expected a value',
      line: 1,
      column: 24,
    });
    expect(parseJsonInput('{\n  "a": 1,\n}')).toMatchObject({
      ok: false,
      line: 3,
      column: 1,
      message: 'expected another key (no trailing comma)',
    });
    expect(parseJsonInput('[1, 2')).toMatchObject({
      ok: false,
      message: 'expected a comma or a closing bracket',
    });
    expect(parseJsonInput("{ 'a': 1 }")).toMatchObject({
      ok: false,
      message: 'expected a key in double quotes',
      column: 3,
    });
    expect(parseJsonInput('  ')).toEqual({ ok: true, value: undefined, empty: true });
    expect(parseJsonInput('{"a":[1,{"b":null}]}')).toEqual({
      ok: true,
      value: { a: [1, { b: null }] },
      empty: false,
    });
  });

  it('agrees with JSON.parse on what is valid', () => {
    for (const text of ['0', '-1.5e3', '"\\u00e9\\n"', 'true', '[]', '{}', '{"a":{"b":[true,false,null]}}'])
      expect(locateJsonError(text), text).toBeNull();
    for (const text of ['01', '1.', '"\\x"', 'tru', '{"a" 1}', '[1,]', '"abc', '{} x'])
      expect(locateJsonError(text), text).not.toBeNull();
  });

  it('turns the optional fields into start options, or says which is wrong', () => {
    expect(
      buildStartOptions({ workflowId: 'a', startDelaySeconds: '1.5', executionTimeoutSeconds: '' }),
    ).toEqual({
      ok: true,
      options: { id: 'a', startDelayMs: 1_500 },
    });
    expect(
      buildStartOptions({ workflowId: 'x'.repeat(257), startDelaySeconds: '', executionTimeoutSeconds: '' }),
    ).toMatchObject({
      ok: false,
      problem: { field: 'workflowId' },
    });
    expect(
      buildStartOptions({ workflowId: '', startDelaySeconds: '', executionTimeoutSeconds: '-2' }),
    ).toMatchObject({
      ok: false,
      problem: { field: 'executionTimeoutSeconds' },
    });
  });

  it('measures payloads in UTF-8 bytes and remembers the five latest distinct inputs', () => {
    expect(payloadBytes({ a: 'é' })).toBe(10);
    expect(payloadBytes(undefined)).toBe(0);
    let recent: string[] = [];
    for (const input of ['1', '2', '3', '2', '4', '5', '6']) recent = rememberInput(recent, input);
    expect(recent).toEqual(['6', '5', '4', '2', '3']);
  });
});
