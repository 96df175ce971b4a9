import { afterEach, describe, expect, it, vi } from 'vitest';
import { createShuttleClient, rebuildError, type ShuttleClient } from './client';
import { FakeWorkerChannel } from './host.test-support';
import { PROTOCOL_VERSION } from './protocol';

/** A worker that never answers on its own: tests answer through `channel.port`. */
function silentWorker(options: { requestTimeoutMs?: number; unresponsiveAfterMs?: number } = {}) {
  const channel = new FakeWorkerChannel();
  const requests: { id: number; method: string }[] = [];
  channel.port.listen((data) => requests.push(data as { id: number; method: string }));
  const client = createShuttleClient(channel.worker, { databaseName: 'db', mode: 'engine', ...options });
  return { channel, client, requests };
}

let client: ShuttleClient | null = null;

afterEach(() => {
  client?.close();
  client = null;
  vi.useRealTimers();
});

describe('ShuttleClient', () => {
  it('rejects a call the worker does not answer in time with a clear timeout error', async () => {
    vi.useFakeTimers();
    const setup = silentWorker({ requestTimeoutMs: 500, unresponsiveAfterMs: 60_000 });
    client = setup.client;
    const call = client.metrics();
    const settled = expect(call).rejects.toMatchObject({
      name: 'RequestTimeoutError',
      method: 'metrics',
      message: expect.stringContaining("did not answer 'metrics' within 500 ms") as unknown,
    });
    await vi.advanceTimersByTimeAsync(600);
    await settled;
  });

  it('fails every pending and later call when the worker crashes, saying to reload the tab', async () => {
    const setup = silentWorker();
    client = setup.client;
    const pending = client.result('w1');
    setup.channel.crash('Uncaught RangeError: out of memory');
    await expect(pending).rejects.toMatchObject({
      name: 'EngineWorkerStoppedError',
      message: expect.stringMatching(/stopped; reload the tab.*out of memory/) as unknown,
    });
    await expect(client.describe('w1')).rejects.toMatchObject({ name: 'EngineWorkerStoppedError' });
    expect(client.connection.state).toBe('crashed');
  });

  it('counts a silent worker as stopped, and as ready again when it speaks', async () => {
    vi.useFakeTimers();
    const setup = silentWorker({ unresponsiveAfterMs: 3_000 });
    client = setup.client;
    setup.channel.port.post({ kind: 'heartbeat', v: PROTOCOL_VERSION, at: Date.now() });
    await vi.advanceTimersByTimeAsync(10);
    expect(client.connection.state).toBe('ready');
    const waiting = client.result('w1');
    const settled = expect(waiting).rejects.toMatchObject({ name: 'EngineWorkerStoppedError' });
    await vi.advanceTimersByTimeAsync(4_500);
    await settled;
    expect(client.connection.state).toBe('unresponsive');
    setup.channel.port.post({ kind: 'heartbeat', v: PROTOCOL_VERSION, at: Date.now() });
    await vi.advanceTimersByTimeAsync(10);
    expect(client.connection.state).toBe('ready');
  });

  it('resolves with the value of the matching response, whatever the order of answers', async () => {
    const setup = silentWorker();
    client = setup.client;
    const first = client.ownedWorkflows();
    const second = client.ownedWorkflows();
    await vi.waitFor(() =>
      expect(setup.requests.filter((r) => r.method === 'ownedWorkflows')).toHaveLength(2),
    );
    const [a, b] = setup.requests.filter((r) => r.method === 'ownedWorkflows');
    setup.channel.port.post({
      kind: 'response',
      v: PROTOCOL_VERSION,
      id: b!.id,
      ok: true,
      value: ['second'],
    });
    setup.channel.port.post({ kind: 'response', v: PROTOCOL_VERSION, id: a!.id, ok: true, value: ['first'] });
    await expect(first).resolves.toEqual(['first']);
    await expect(second).resolves.toEqual(['second']);
  });

  it('refuses to send what cannot be cloned, before it reaches the worker', async () => {
    const setup = silentWorker();
    client = setup.client;
    await expect(client.start('countdown', { callback: () => 1 })).rejects.toMatchObject({
      name: 'DataCloneError',
    });
  });
});

describe('rebuildError', () => {
  it('keeps the name, the message and every detail field', () => {
    const error = rebuildError({
      name: 'WorkflowClaimUnavailableError',
      message: "Workflow 'w' is owned by engine e at epoch 3",
      details: { workflowId: 'w', heldBy: { engineId: 'e', epoch: 3, expiresAt: 1 } },
    }) as Error & Record<string, unknown>;
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('WorkflowClaimUnavailableError');
    expect(error.message).toBe("Workflow 'w' is owned by engine e at epoch 3");
    expect(error.workflowId).toBe('w');
    expect(error.heldBy).toEqual({ engineId: 'e', epoch: 3, expiresAt: 1 });
    expect(error.details).toEqual({ workflowId: 'w', heldBy: { engineId: 'e', epoch: 3, expiresAt: 1 } });
  });
});
