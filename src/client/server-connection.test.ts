/**
 * The server connection refuses, before sending, what JSON would silently change on its way to the server —
 * what a tab's engine refuses as a payload — with the engine's own error name, so a studio in server mode
 * refuses the same input as one in tab mode (`NaN` used to arrive as `null`). Checked against the engine's
 * own check of the same values, and through a client over the connection (a fake socket records what is sent).
 */
import { describe, expect, it } from 'vitest';
import { assertPlainData } from '../engine/codec';
import { createShuttleClient } from './client';
import { connectToServer, jsonHazard } from './server-connection';

class FakeSocket {
  readonly OPEN = 1;
  readonly CONNECTING = 0;
  readyState = 1;
  readonly sent: string[] = [];
  send(text: string) {
    this.sent.push(text);
  }
  addEventListener() {}
  close() {}
}

class Custom {
  x = 1;
}

const refused: [string, unknown, string][] = [
  ['NaN', { input: { a: NaN } }, 'params.input.a is the number NaN'],
  ['Infinity', { input: [1, -Infinity] }, 'params.input[1] is the number -Infinity'],
  ['a Date', { input: { at: new Date(0) } }, 'params.input.at is a Date'],
  ['a Map', { input: new Map() }, 'params.input is a Map'],
  ['a class instance', { input: { c: new Custom() } }, 'params.input.c is a Custom'],
  ['a function', { input: { f: () => 1 } }, 'params.input.f is a function'],
  ['a BigInt', { input: 1n }, 'params.input is a BigInt'],
];

describe('jsonHazard', () => {
  it.each(refused)('finds %s, where the engine refuses it too', (_, params, found) => {
    expect(jsonHazard(params)).toBe(found);
    expect(() => assertPlainData((params as { input: unknown }).input, 'Input')).toThrow(
      expect.objectContaining({ name: 'PayloadNotSerializableError' }),
    );
  });

  it('passes plain JSON data, undefined members and repeated (not cyclic) references', () => {
    const shared = { k: 1 };
    expect(
      jsonHazard({ input: { a: 1, b: 'x', c: [true, null, undefined], d: undefined, e: shared, f: shared } }),
    ).toBe(null);
    expect(jsonHazard(Object.assign(Object.create(null) as object, { a: 1 }))).toBe(null);
  });

  it('finds a cycle', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(jsonHazard({ input: cyclic })).toBe('params.input.self refers to itself (a cycle)');
  });
});

describe('a client over the server connection', () => {
  it('rejects a call whose params JSON would change with PayloadNotSerializableError, and sends nothing', async () => {
    const socket = new FakeSocket();
    const client = createShuttleClient(
      connectToServer('ws://127.0.0.1:1/ws', () => socket as unknown as WebSocket),
      { databaseName: 'server', mode: 'viewer', server: true },
    );
    const before = socket.sent.length;
    await expect(client.api.start({ workflowType: 'countdown', input: { from: NaN } })).rejects.toMatchObject(
      {
        name: 'PayloadNotSerializableError',
        message: expect.stringContaining('params.input.from is the number NaN, which JSON cannot carry'),
      },
    );
    expect(socket.sent.slice(before).filter((text) => text.includes('"start"'))).toEqual([]);
    // plain data is sent as it is
    void client.api.start({ workflowType: 'countdown', input: { from: 3 } }).catch(() => undefined);
    expect(socket.sent.some((text) => text.includes('"from":3'))).toBe(true);
    client.close();
  });
});
