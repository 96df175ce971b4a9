/**
 * The page's connection to a studio server (`shuttle serve`): a WebSocket that looks to the client like a
 * tab's engine worker (`WorkerLike`), so one client, one protocol and one UI serve both. Messages are one
 * JSON object per frame; messages sent before the socket opens are queued.
 *
 * When the socket closes — the server stopped, the network went away, or the server refused a message — the
 * client hears an `error` event whose message says so, with the server's reason, exactly as it hears a
 * crashed worker; the page then says the connection was lost and how to get it back (reload).
 */
import type { WorkerLike } from './client';
import { findNotPlainData } from '../engine/vocabulary';
import { namedError } from './errors';

/**
 * Where `value` holds something JSON would silently change on its way to the server — a number that is not
 * finite (NaN and ±Infinity become null), a class instance (a Date becomes a string, a Map `{}`), a function
 * or symbol (dropped), a BigInt or a cycle (JSON throws) — or null when it is plain JSON data. A tab's worker
 * receives such values as they are, and its engine refuses them as payloads; over the socket they must be
 * refused here, the same way, or the server would receive something else than what was sent. The rule is
 * the engine's own (`findNotPlainData`, in the pure engine vocabulary), so both modes refuse the same values.
 */
export function jsonHazard(value: unknown, path = 'params'): string | null {
  const found = findNotPlainData(value, path);
  return found ? `${found.path} ${found.reason}` : null;
}

type MessageListener = (event: MessageEvent<unknown>) => void;
type ErrorListener = (event: Event) => void;

/** The studio server's WebSocket address for a page it served (`ws://host:port/ws`). */
export function serverSocketUrl(location: { protocol: string; host: string }): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
}

/** Opens a connection to the studio server at `url`, shaped like a worker. */
export function connectToServer(
  url: string,
  open: (url: string) => WebSocket = (u) => new WebSocket(u),
): WorkerLike {
  const socket = open(url);
  const queue: string[] = [];
  const messageListeners = new Set<MessageListener>();
  const errorListeners = new Set<ErrorListener>();
  let closedOnPurpose = false;
  socket.addEventListener('open', () => {
    for (const text of queue.splice(0)) socket.send(text);
  });
  socket.addEventListener('message', (event: MessageEvent<unknown>) => {
    let data: unknown;
    try {
      data = JSON.parse(String(event.data));
    } catch {
      return; // the server sends JSON only; anything else is not ours
    }
    for (const listener of [...messageListeners]) listener({ data } as MessageEvent<unknown>);
  });
  socket.addEventListener('close', (event: CloseEvent) => {
    if (closedOnPurpose) return;
    const reason = event.reason ? `: ${event.reason}` : '';
    const message =
      event.code === 1006
        ? 'the studio server cannot be reached (it stopped, or refused this page: open the URL it printed)'
        : `the studio server closed the connection (${event.code}${reason})`;
    for (const listener of [...errorListeners]) listener({ type: 'error', message } as unknown as Event);
  });
  return {
    postMessage: (message: unknown) => {
      const params = (message as { params?: unknown } | null)?.params;
      const hazard = jsonHazard(params);
      if (hazard)
        throw namedError(
          'PayloadNotSerializableError',
          `Not sent to the server: ${hazard}, which JSON cannot carry. Pass plain JSON data: finite numbers, strings, booleans, null, arrays and plain objects.`,
        );
      const text = JSON.stringify(message);
      if (socket.readyState === socket.OPEN) socket.send(text);
      else if (socket.readyState === socket.CONNECTING) queue.push(text);
    },
    addEventListener: ((type: 'message' | 'error', listener: MessageListener & ErrorListener) => {
      if (type === 'message') messageListeners.add(listener);
      else errorListeners.add(listener);
    }) as WorkerLike['addEventListener'],
    removeEventListener: ((type: 'message' | 'error', listener: MessageListener & ErrorListener) => {
      if (type === 'message') messageListeners.delete(listener);
      else errorListeners.delete(listener);
    }) as WorkerLike['removeEventListener'],
    terminate: () => {
      closedOnPurpose = true;
      socket.close(1000, 'the page closed the studio');
    },
  };
}
