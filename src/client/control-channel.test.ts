import { afterEach, describe, expect, it, vi } from 'vitest';
import { ControlChannel } from './control-channel';
import { FakeBroadcastHub } from '../worker/host.test-support';
import { PROTOCOL_VERSION, type ControlAction, type ControlOutcome } from '../protocol';

const channels: ControlChannel[] = [];

/** A tab's side of the control channel: what it was asked to do and told about. */
class Tab {
  readonly performed: ControlAction[] = [];
  readonly crashes: string[] = [];
  readonly exits: string[] = [];
  readonly warnings: string[] = [];
  readonly channel: ControlChannel;
  #requests = 0;

  constructor(
    hub: FakeBroadcastHub,
    /** The engine this tab hosts; null once it hosts none (its worker was terminated). */
    public engineId: string | null,
    perform?: (action: ControlAction) => Promise<ControlOutcome>,
    formerEngineId?: () => string | null,
  ) {
    this.channel = new ControlChannel({
      port: hub.open(),
      localEngineId: () => this.engineId,
      ...(formerEngineId ? { formerEngineId } : {}),
      perform: async (action) => {
        this.performed.push(action);
        return perform ? perform(action) : { engineId: this.engineId!, frozenUntil: 42 };
      },
      onEngineCrashed: (id) => this.crashes.push(id),
      onEngineExiting: (id) => this.exits.push(id),
      warn: (message) => this.warnings.push(message),
      randomUUID: () => `${engineId ?? 'none'}-${++this.#requests}`,
    });
    channels.push(this.channel);
  }
}

function openTab(
  hub: FakeBroadcastHub,
  engineId: string | null,
  perform?: (action: ControlAction) => Promise<ControlOutcome>,
): Tab {
  return new Tab(hub, engineId, perform);
}

afterEach(() => {
  for (const channel of channels.splice(0)) channel.close();
  vi.useRealTimers();
});

describe('ControlChannel', () => {
  it('performs a request for this tab’s own engine here, without the channel', async () => {
    const hub = new FakeBroadcastHub();
    const a = openTab(hub, 'a');
    const b = openTab(hub, 'b');
    await expect(a.channel.request('a', { type: 'freeze', seconds: 3 })).resolves.toEqual({
      engineId: 'a',
      frozenUntil: 42,
    });
    expect(a.performed).toEqual([{ type: 'freeze', seconds: 3 }]);
    expect(b.performed).toEqual([]);
    expect(hub.posted).toEqual([]);
  });

  it('routes a request to the one tab hosting the engine, which acknowledges, acts and replies', async () => {
    const hub = new FakeBroadcastHub();
    const a = openTab(hub, 'a');
    const b = openTab(hub, 'b', async () => ({ engineId: 'b', claimsReleased: 2 }));
    const c = openTab(hub, 'c');
    await expect(a.channel.request('b', { type: 'shutdown' })).resolves.toEqual({
      engineId: 'b',
      claimsReleased: 2,
    });
    expect(b.performed).toEqual([{ type: 'shutdown' }]);
    expect(c.performed).toEqual([]);
    expect(hub.posted.map((message) => (message as { kind: string }).kind)).toEqual([
      'control-request',
      'control-ack',
      'control-reply',
    ]);
    expect(hub.posted[0]).toMatchObject({ v: PROTOCOL_VERSION, engineId: 'b', from: 'a' });
  });

  it('rejects with the hosting tab’s error, name and message intact', async () => {
    const hub = new FakeBroadcastHub();
    const a = openTab(hub, 'a');
    openTab(hub, 'b', async () => {
      throw Object.assign(new Error('Tab B is already frozen.'), { name: 'InvalidWorkflowStateError' });
    });
    await expect(a.channel.request('b', { type: 'freeze', seconds: 5 })).rejects.toMatchObject({
      name: 'InvalidWorkflowStateError',
      message: 'Tab B is already frozen.',
    });
  });

  it('carries a start to the hosting tab, and its error back with the detail fields', async () => {
    const hub = new FakeBroadcastHub();
    const a = openTab(hub, 'a');
    const b = openTab(hub, 'b', async (action) => {
      if (action.type === 'start' && action.options?.id === 'taken')
        throw Object.assign(new Error('Workflow taken already exists.'), {
          name: 'WorkflowAlreadyExistsError',
          details: { workflowId: 'taken' },
        });
      return { engineId: 'b', workflowId: 'w1' };
    });
    const start = { type: 'start', workflowType: 'countdown', input: { from: 3 }, notBefore: 5 } as const;
    await expect(a.channel.request('b', start)).resolves.toEqual({ engineId: 'b', workflowId: 'w1' });
    expect(b.performed).toEqual([start]);
    await expect(
      a.channel.request('b', { type: 'start', workflowType: 'countdown', options: { id: 'taken' } }),
    ).rejects.toMatchObject({ name: 'WorkflowAlreadyExistsError', workflowId: 'taken' });
    // A start that is not plain data for `start` is ignored, like any malformed request.
    const stranger = hub.open();
    for (const action of [
      { type: 'start' },
      { type: 'start', workflowType: 'countdown', options: 'fast' },
      { type: 'start', workflowType: 'countdown', notBefore: 'now' },
    ])
      stranger.postMessage({
        kind: 'control-request',
        v: PROTOCOL_VERSION,
        requestId: 'x',
        engineId: 'b',
        action,
        from: null,
      });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(b.performed).toHaveLength(2);
  });

  it('rejects after the acknowledgement timeout when no tab hosts the engine', async () => {
    vi.useFakeTimers();
    const hub = new FakeBroadcastHub();
    const a = openTab(hub, 'a');
    const crashed = openTab(hub, 'b');
    crashed.engineId = null; // its worker was terminated: it hosts no engine any more
    const request = a.channel.request('b', { type: 'crash' });
    const settled = expect(request).rejects.toMatchObject({
      name: 'ControlTargetNotFoundError',
      engineId: 'b',
      message: expect.stringContaining('No open tab of this studio hosts engine b') as unknown,
    });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(crashed.performed).toEqual([]);
    await vi.advanceTimersByTimeAsync(2);
    await settled;
  });

  it('waits past the acknowledgement timeout for an acknowledged request', async () => {
    vi.useFakeTimers();
    const hub = new FakeBroadcastHub();
    const a = openTab(hub, 'a');
    openTab(
      hub,
      'b',
      () => new Promise((resolve) => setTimeout(() => resolve({ engineId: 'b', newEngineId: 'b2' }), 5_000)),
    );
    const request = a.channel.request('b', { type: 'restart' });
    await vi.advanceTimersByTimeAsync(5_100);
    await expect(request).resolves.toEqual({ engineId: 'b', newEngineId: 'b2' });
  });

  it('ignores messages of another protocol version with one warning, and malformed ones silently', async () => {
    const hub = new FakeBroadcastHub();
    const b = openTab(hub, 'b');
    const stranger = hub.open();
    const stale = {
      kind: 'control-request',
      v: PROTOCOL_VERSION - 1,
      requestId: 'x',
      engineId: 'b',
      action: { type: 'crash' },
      from: null,
    };
    stranger.postMessage(stale);
    stranger.postMessage(stale);
    stranger.postMessage({ kind: 'control-request', v: PROTOCOL_VERSION, engineId: 'b' });
    stranger.postMessage('crash b');
    await vi.waitFor(() => expect(b.warnings).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(b.warnings).toHaveLength(1);
    expect(b.warnings[0]).toMatch(new RegExp(`protocol version ${PROTOCOL_VERSION - 1}.*reload it`));
    expect(b.performed).toEqual([]);
  });

  it('tells the other tabs about crashes and exits, not the announcing tab', async () => {
    const hub = new FakeBroadcastHub();
    const a = openTab(hub, 'a');
    const b = openTab(hub, 'b');
    const c = openTab(hub, 'c');
    a.channel.announceCrash('a', 10);
    b.channel.announceExit('b', 11);
    await vi.waitFor(() => expect(c.crashes).toEqual(['a']));
    await vi.waitFor(() => expect(c.exits).toEqual(['b']));
    expect(a.crashes).toEqual([]);
    expect(b.exits).toEqual([]);
    expect(a.exits).toEqual(['b']);
  });

  it('lets a tab whose engine crashed answer a restart of that engine, and nothing else', async () => {
    const hub = new FakeBroadcastHub();
    const a = openTab(hub, 'a');
    const crashed = new Tab(
      hub,
      null,
      async () => ({ engineId: 'b', newEngineId: 'b2' }),
      () => 'b',
    );
    await expect(a.channel.request('b', { type: 'restart' })).resolves.toEqual({
      engineId: 'b',
      newEngineId: 'b2',
    });
    expect(crashed.performed).toEqual([{ type: 'restart' }]);
  });

  it('rejects pending requests when closed', async () => {
    const hub = new FakeBroadcastHub();
    const a = openTab(hub, 'a');
    const pending = a.channel.request('nobody', { type: 'crash' });
    a.channel.close();
    await expect(pending).rejects.toMatchObject({ name: 'ControlChannelClosedError' });
  });
});
