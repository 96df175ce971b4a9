/**
 * The launchers' refusals of bad input: each throws a TypeError that says what it needs, before anything is
 * started (no worker spawned, no socket opened). What they start is covered end to end (e2e/, examples/).
 */
import { describe, expect, it } from 'vitest';
import { connectBrowserEngine, connectShuttleServer } from './launch';

describe('connectShuttleServer', () => {
  it.each(['http://localhost:7070/ws', 'localhost:7070', '', 'not a url'])(
    'refuses %j: it needs a ws:// or wss:// address',
    (url) => {
      expect(() => connectShuttleServer(url)).toThrow(
        new TypeError(
          `connectShuttleServer needs the server's WebSocket address (ws://host:port/ws or wss://…); got ${JSON.stringify(url)}.`,
        ),
      );
    },
  );
});

describe('connectBrowserEngine', () => {
  it('refuses options without a worker factory', () => {
    expect(() => connectBrowserEngine({} as never)).toThrow(/needs \{ worker: \(\) => new Worker/);
  });

  it.each(['', '   ', 'x'.repeat(201)])('refuses the database name %j without starting a worker', (name) => {
    let spawned = 0;
    const worker = () => {
      spawned++;
      return {} as Worker;
    };
    expect(() => connectBrowserEngine({ worker, databaseName: name })).toThrow(
      /databaseName must be a non-empty string of at most 200 characters/,
    );
    expect(spawned).toBe(0);
  });
});
