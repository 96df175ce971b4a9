/**
 * The start relay: lets the studio in one tab start a workflow *in another tab's engine*, so that engine
 * claims and runs it. Chaos drills use it to give each open tab workflows to own, and to make several tabs
 * race to start one id at the same instant — all driven from the tab where the person clicked.
 *
 * It is a `BroadcastChannel` per database (`shuttle-start-relay:<database>`) between the studio pages of that
 * database's tabs; each page answers only requests addressed to its own engine, by calling its own client's
 * `start`. Nothing received is trusted: messages are validated, and a request is plain data for `start`,
 * which the engine validates again.
 */
import { useEffect } from 'react';
import type { SerializedError, StartOptions } from '../../engine';
import type { ShuttleClient } from '../../client/client';
import { useShuttleClient } from './client-context';
import { useThisEngine } from './engine-queries';

const relayVersion = 1;

export function relayChannelName(databaseName: string): string {
  return `shuttle-start-relay:${databaseName}`;
}

export type RelayStartRequest = {
  kind: 'relay-start';
  v: number;
  requestId: string;
  /** The engine that should start it. */
  engineId: string;
  workflowType: string;
  input?: unknown;
  options?: StartOptions;
  /** Start no earlier than this time (epoch ms), so several tabs can start at one instant. */
  notBefore?: number;
};

export type RelayReply =
  | { kind: 'relay-reply'; v: number; requestId: string; ok: true; workflowId: string; engineId: string }
  | {
      kind: 'relay-reply';
      v: number;
      requestId: string;
      ok: false;
      error: SerializedError;
      engineId: string;
    };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 300;
}

/** A valid relay request, or null. */
export function parseRelayRequest(data: unknown): RelayStartRequest | null {
  if (!isRecord(data) || data.kind !== 'relay-start' || data.v !== relayVersion) return null;
  if (!isText(data.requestId) || !isText(data.engineId) || !isText(data.workflowType)) return null;
  if (data.options !== undefined && !isRecord(data.options)) return null;
  if (
    data.notBefore !== undefined &&
    (typeof data.notBefore !== 'number' || !Number.isFinite(data.notBefore))
  )
    return null;
  return data as RelayStartRequest;
}

/** A valid relay reply, or null. */
export function parseRelayReply(data: unknown): RelayReply | null {
  if (!isRecord(data) || data.kind !== 'relay-reply' || data.v !== relayVersion) return null;
  if (!isText(data.requestId) || !isText(data.engineId)) return null;
  if (data.ok === true) return isText(data.workflowId) ? (data as RelayReply) : null;
  if (data.ok === false) return isRecord(data.error) ? (data as RelayReply) : null;
  return null;
}

/**
 * Serves relay requests addressed to this tab's engine until the returned function is called.
 * `engineId` is read at each request, since a restart gives the tab a new engine.
 */
export function serveStartRelay(
  databaseName: string,
  client: Pick<ShuttleClient, 'start'>,
  engineId: () => string | null,
): () => void {
  if (typeof BroadcastChannel !== 'function') return () => undefined;
  const channel = new BroadcastChannel(relayChannelName(databaseName));
  channel.onmessage = (event: MessageEvent<unknown>) => {
    const request = parseRelayRequest(event.data);
    const self = engineId();
    if (!request || !self || request.engineId !== self) return;
    const run = async () => {
      const delay = (request.notBefore ?? 0) - Date.now();
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(delay, 5_000)));
      try {
        const workflowId = await client.start(request.workflowType, request.input, request.options);
        channel.postMessage({
          kind: 'relay-reply',
          v: relayVersion,
          requestId: request.requestId,
          ok: true,
          workflowId,
          engineId: self,
        } satisfies RelayReply);
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        channel.postMessage({
          kind: 'relay-reply',
          v: relayVersion,
          requestId: request.requestId,
          ok: false,
          error: { name: failure.name, message: failure.message },
          engineId: self,
        } satisfies RelayReply);
      }
    };
    void run();
  };
  return () => channel.close();
}

/**
 * Serves relay requests addressed to this tab's engine while the calling component is mounted (the app
 * root), on the channel of this tab's database; a viewer tab, which runs no engine, answers none.
 */
export function useStartRelay(): void {
  const client = useShuttleClient();
  const self = useThisEngine().data;
  const databaseName = self?.databaseName;
  const engineId = self?.mode === 'engine' ? self.engineId : null;
  useEffect(() => {
    if (!databaseName) return;
    return serveStartRelay(databaseName, client, () => engineId);
  }, [client, databaseName, engineId]);
}

/** Options of `relayStart`. */
export type RelayStartOptions = {
  input?: unknown;
  options?: StartOptions;
  notBefore?: number;
  /** Give up waiting for the other tab after this many ms. Default 10,000. */
  timeoutMs?: number;
};

/**
 * Asks the tab of `engineId` to start a workflow; resolves with the id it started, or rejects with the error
 * that tab's engine raised (name and message kept), or with `RelayTimeoutError` if no tab answered.
 */
export function relayStart(
  databaseName: string,
  engineId: string,
  workflowType: string,
  options: RelayStartOptions = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    if (typeof BroadcastChannel !== 'function') {
      reject(
        Object.assign(new Error('This browser has no BroadcastChannel.'), { name: 'RelayUnavailableError' }),
      );
      return;
    }
    const channel = new BroadcastChannel(relayChannelName(databaseName));
    const requestId = crypto.randomUUID();
    const timer = setTimeout(() => {
      channel.close();
      reject(
        Object.assign(
          new Error(
            `No tab answered for engine ${engineId.slice(0, 8)} within ${options.timeoutMs ?? 10_000} ms; it may have closed.`,
          ),
          {
            name: 'RelayTimeoutError',
          },
        ),
      );
    }, options.timeoutMs ?? 10_000);
    channel.onmessage = (event: MessageEvent<unknown>) => {
      const reply = parseRelayReply(event.data);
      if (!reply || reply.requestId !== requestId) return;
      clearTimeout(timer);
      channel.close();
      if (reply.ok) resolve(reply.workflowId);
      else reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
    };
    const request: RelayStartRequest = {
      kind: 'relay-start',
      v: relayVersion,
      requestId,
      engineId,
      workflowType,
      ...(options.input === undefined ? {} : { input: options.input }),
      ...(options.options ? { options: options.options } : {}),
      ...(options.notBefore === undefined ? {} : { notBefore: options.notBefore }),
    };
    channel.postMessage(request);
  });
}
