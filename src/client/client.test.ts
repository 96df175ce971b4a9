import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStorage } from '../storage';
import { builtInWorkflows } from '../workflows';
import { createShuttleClient, rebuildError, type ShuttleClient } from './client';
import {
  FakeBroadcastHub,
  FakeWorkerChannel,
  ListingLiveness,
  openTestTab,
  sharedStorage,
  type TestTab,
} from '../worker/host.test-support';
import { PROTOCOL_VERSION } from '../protocol';

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

describe('ShuttleClient chaos and restart (tabs over one store and one control channel)', () => {
  const tabs: TestTab[] = [];

  afterEach(async () => {
    await Promise.all(tabs.splice(0).map((tab) => tab.close()));
  });

  function openTabs(count: number) {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const hub = new FakeBroadcastHub();
    for (let index = 0; index < count; index++)
      tabs.push(openTestTab({ storage: sharedStorage(storage), liveness, hub, workflows: builtInWorkflows }));
    return { tabs: [...tabs], hub };
  }

  async function runningIds(tab: TestTab): Promise<string> {
    await vi.waitFor(async () => expect((await tab.client.hello()).status.state).toBe('running'));
    return tab.client.engineId!;
  }

  it('crashes another tab’s engine: its worker is terminated, its page says so, and its record says crashed', async () => {
    const {
      tabs: [a, b],
    } = openTabs(2);
    const [aId] = await Promise.all([runningIds(a!), runningIds(b!)]);
    const outcome = await b!.client.chaos.crash(aId);
    expect(outcome).toMatchObject({ engineId: aId, crashedAt: expect.any(Number) as unknown });
    expect(a!.channel.terminated).toBe(true);
    expect(a!.client.connection).toMatchObject({
      state: 'crashed',
      message: expect.stringContaining('crashed on purpose') as unknown,
    });
    expect(a!.client.engineId).toBeNull();
    await expect(a!.client.metrics()).rejects.toMatchObject({ name: 'EngineWorkerStoppedError' });
    await vi.waitFor(async () =>
      expect((await b!.client.engines()).find((engine) => engine.engineId === aId)?.status).toBe('crashed'),
    );
    // Nobody runs that engine any more; its tab can only restart it, with a new engine.
    await expect(b!.client.chaos.crash(aId)).rejects.toMatchObject({ name: 'ControlTargetNotFoundError' });
    const { newEngineId } = await b!.client.chaos.restart(aId);
    expect(a!.client.engineId).toBe(newEngineId);
    expect(a!.client.connection.state).toBe('ready');
  });

  it('restarts another tab’s engine with a new id, on the same client, and tells that page', async () => {
    const {
      tabs: [a, b],
    } = openTabs(2);
    const [aId] = await Promise.all([runningIds(a!), runningIds(b!)]);
    const changes: string[] = [];
    a!.client.onEngineChange((engine) => changes.push(engine.engineId));
    const { newEngineId } = await b!.client.chaos.restart(aId);
    expect(newEngineId).not.toBe(aId);
    expect(changes).toEqual([newEngineId]);
    expect(a!.client.engineId).toBe(newEngineId);
    expect((await a!.client.ready).engineId).toBe(newEngineId);
    expect(a!.hosts).toHaveLength(2);
    await expect(a!.client.metrics()).resolves.toMatchObject({ claimsHeld: 0 });
    // The new engine answers chaos requests under its new id; the old id is gone.
    await runningIds(a!);
    await expect(b!.client.chaos.shutdown(newEngineId)).resolves.toEqual({
      engineId: newEngineId,
      claimsReleased: 0,
    });
    await expect(b!.client.chaos.freeze(aId, 1)).rejects.toMatchObject({
      name: 'ControlTargetNotFoundError',
    });
  });

  it('has another tab’s engine start a workflow, and races starts of one id at one instant', async () => {
    const {
      tabs: [a, b, c],
      hub,
    } = openTabs(3);
    const [aId, bId, cId] = await Promise.all([runningIds(a!), runningIds(b!), runningIds(c!)]);
    const input = { from: 1, tickMs: 10 };
    await expect(
      a!.client.chaos.start(bId, 'countdown', { input, options: { id: 'on-b' } }),
    ).resolves.toEqual({ engineId: bId, workflowId: 'on-b' });
    expect(hub.posted).toContainEqual(
      expect.objectContaining({
        kind: 'control-request',
        engineId: bId,
        action: expect.objectContaining({ type: 'start' }) as unknown,
      }),
    );
    const started = (await a!.client.timeline('on-b')).filter((entry) => entry.kind === 'started');
    expect(started.map((entry) => entry.engineId)).toEqual([bId]);

    // A countdown that cannot finish during the race: a finished id may be started again (a new run), so a
    // start delayed past the first run's end would rightly succeed too.
    const long = { from: 5, tickMs: 1_000 };
    const notBefore = Date.now() + 150;
    const outcomes = await Promise.allSettled(
      [aId, bId, cId].map((engineId) =>
        a!.client.chaos.start(engineId, 'countdown', { input: long, options: { id: 'raced' }, notBefore }),
      ),
    );
    expect(Date.now()).toBeGreaterThanOrEqual(notBefore);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    for (const outcome of outcomes)
      if (outcome.status === 'rejected') {
        // The hosting tab's error arrives typed, with its detail fields.
        expect(['WorkflowClaimUnavailableError', 'WorkflowAlreadyExistsError']).toContain(
          (outcome.reason as Error).name,
        );
        expect(outcome.reason).toMatchObject({ workflowId: 'raced' });
      }
    await expect(a!.client.chaos.start(bId, '')).rejects.toMatchObject({ name: 'InvalidArgumentError' });
    await expect(a!.client.chaos.start(bId, 'no-such-type')).rejects.not.toMatchObject({
      name: 'ControlTargetNotFoundError',
    });
  });

  it('acts on this tab’s own engine without the channel, and validates arguments first', async () => {
    const {
      tabs: [a],
      hub,
    } = openTabs(1);
    const aId = await runningIds(a!);
    await expect(a!.client.chaos.freeze(aId, 0)).rejects.toMatchObject({ name: 'InvalidArgumentError' });
    await expect(a!.client.chaos.crash('')).rejects.toMatchObject({ name: 'InvalidArgumentError' });
    const restarted = await a!.client.restartThisTab();
    expect(restarted.engineId).not.toBe(aId);
    expect(hub.posted.filter((message) => (message as { kind: string }).kind === 'control-request')).toEqual(
      [],
    );
    // The replaced engine was announced as crashed, for the other tabs to record.
    expect(hub.posted).toContainEqual(expect.objectContaining({ kind: 'engine-crashed', engineId: aId }));
  });

  it('hands over on a page freeze (exit announced, worker terminated) and starts a fresh engine on resume', async () => {
    const {
      tabs: [a, b],
      hub,
    } = openTabs(2);
    const [aId] = await Promise.all([runningIds(a!), runningIds(b!)]);
    const changes: string[] = [];
    a!.client.onEngineChange((engine) => changes.push(engine.engineId));
    await expect(a!.client.resumeTab()).resolves.toBeNull();
    a!.client.freezeTab();
    expect(hub.posted).toContainEqual(expect.objectContaining({ kind: 'engine-exiting', engineId: aId }));
    expect(a!.channel.terminated).toBe(true);
    expect(a!.client.engineId).toBeNull();
    expect(a!.client.connection).toMatchObject({
      state: 'crashed',
      message: expect.stringContaining('froze this tab') as unknown,
    });
    a!.client.freezeTab(); // a second freeze with no engine does nothing
    const resumed = await a!.client.resumeTab();
    expect(resumed!.engineId).not.toBe(aId);
    expect(a!.client.engineId).toBe(resumed!.engineId);
    expect(changes).toEqual([resumed!.engineId]);
    expect(a!.client.connection.state).toBe('ready');
    // Only once: a later resume (no freeze in between) keeps the engine.
    await expect(a!.client.resumeTab()).resolves.toBeNull();
    // The frozen engine was announced as exiting, not as crashed.
    expect(hub.posted).not.toContainEqual(expect.objectContaining({ kind: 'engine-crashed', engineId: aId }));
  });
});

describe('ShuttleClient silence while frozen', () => {
  it('tolerates the silence of a worker that announced a freeze, until the freeze ends', async () => {
    vi.useFakeTimers();
    const setup = silentWorker({ unresponsiveAfterMs: 3_000 });
    client = setup.client;
    const now = Date.now();
    setup.channel.port.post({
      kind: 'status',
      v: PROTOCOL_VERSION,
      status: { state: 'frozen', since: now, frozenUntil: now + 10_000 },
    });
    await vi.advanceTimersByTimeAsync(12_000);
    expect(client.connection.state).toBe('ready');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(client.connection.state).toBe('unresponsive');
  });
});
