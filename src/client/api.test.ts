import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import type { WorkflowDescription } from '../engine';
import { PROTOCOL_VERSION, methods, type Method, type Params, type Result } from '../protocol';
import { FakeWorkerChannel } from '../worker/host.test-support';
import type { ProtocolApi } from './api';
import { createShuttleClient, type ShuttleClient } from './client';

/**
 * `client.api` is derived from the protocol's declarations: exactly one function per declared method, each
 * sending its request through the client's request path. A method declared in src/protocol needs no change
 * here: these tests iterate `methods`, so they cover it too.
 */

type Sent = { kind: string; v: number; id: number; method: string; params: unknown };

/** A worker that answers nothing on its own: the tests answer through `channel.port`. */
function silentWorker(options: { requestTimeoutMs?: number } = {}) {
  const channel = new FakeWorkerChannel();
  const sent: Sent[] = [];
  channel.port.listen((data) => sent.push(data as Sent));
  const client = createShuttleClient(channel.worker, {
    databaseName: 'db',
    mode: 'engine',
    unresponsiveAfterMs: 600_000,
    ...options,
  });
  return { channel, client, sent };
}

let open: ShuttleClient | null = null;

afterEach(() => {
  open?.close();
  open = null;
  vi.useRealTimers();
});

describe('client.api', () => {
  it('has exactly the methods the protocol declares, each a function', () => {
    const { client } = silentWorker();
    open = client;
    expect(Object.keys(client.api).sort()).toEqual([...methods].sort());
    for (const method of methods) expect(typeof client.api[method]).toBe('function');
    expect(Object.isFrozen(client.api)).toBe(true);
  });

  it.each(methods)(
    '%s posts a request with that method and params, and resolves with its value',
    async (method) => {
      const { channel, client, sent } = silentWorker();
      open = client;
      const params = { probe: method, nested: { n: 1 } } as unknown as Params<typeof method>;
      const call = (client.api[method] as (params: Params<Method>) => Promise<unknown>)(params);
      await vi.waitFor(() => expect(sent.filter((request) => request.id !== 1)).toHaveLength(1));
      const request = sent.find((candidate) => candidate.id !== 1)!;
      expect(request).toStrictEqual({ kind: 'request', v: PROTOCOL_VERSION, id: request.id, method, params });
      const value = { answered: method };
      channel.port.post({ kind: 'response', v: PROTOCOL_VERSION, id: request.id, ok: true, value });
      await expect(call).resolves.toStrictEqual(value);
    },
  );

  it("rejects with the engine's error, rebuilt with its name, message and detail fields", async () => {
    const { channel, client, sent } = silentWorker();
    open = client;
    const call = client.api.describe({ workflowId: 'missing' });
    await vi.waitFor(() => expect(sent.some((request) => request.method === 'describe')).toBe(true));
    const { id } = sent.find((request) => request.method === 'describe')!;
    channel.port.post({
      kind: 'response',
      v: PROTOCOL_VERSION,
      id,
      ok: false,
      error: {
        name: 'WorkflowNotFoundError',
        message: "No workflow 'missing'",
        details: { workflowId: 'missing' },
      },
    });
    await expect(call).rejects.toMatchObject({
      name: 'WorkflowNotFoundError',
      message: "No workflow 'missing'",
      workflowId: 'missing',
    });
  });

  it("uses the client's timeouts: the ordinary one, none for result, an update's own timeoutMs plus 5 s", async () => {
    vi.useFakeTimers();
    const { client } = silentWorker({ requestTimeoutMs: 500 });
    open = client;
    let resultSettled = false;
    void client.api
      .result({ workflowId: 'w' })
      .finally(() => (resultSettled = true))
      .catch(() => undefined);
    const metrics = expect(client.api.metrics({})).rejects.toMatchObject({
      name: 'RequestTimeoutError',
      method: 'metrics',
      timeoutMs: 500,
    });
    const update = expect(
      client.api.update({ workflowId: 'w', name: 'n', timeoutMs: 1_000 }),
    ).rejects.toMatchObject({
      name: 'RequestTimeoutError',
      timeoutMs: 6_000,
    });
    await vi.advanceTimersByTimeAsync(600);
    await metrics;
    await vi.advanceTimersByTimeAsync(5_500);
    await update;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(resultSettled).toBe(false);
  });

  it('fails like every call when the worker is gone', async () => {
    const { channel, client } = silentWorker();
    open = client;
    channel.crash('gone');
    await expect(client.api.engines({})).rejects.toMatchObject({ name: 'EngineWorkerStoppedError' });
  });

  it('is typed from the declarations: each method takes its params and resolves with its result', () => {
    expectTypeOf<keyof ProtocolApi>().toEqualTypeOf<Method>();
    expectTypeOf<ShuttleClient['api']>().toEqualTypeOf<ProtocolApi>();
    expectTypeOf<ProtocolApi['describe']>().parameter(0).toEqualTypeOf<Params<'describe'>>();
    expectTypeOf<ProtocolApi['describe']>().returns.toEqualTypeOf<Promise<WorkflowDescription>>();
    expectTypeOf<ProtocolApi['start']>().returns.toEqualTypeOf<Promise<Result<'start'>>>();
  });
});
