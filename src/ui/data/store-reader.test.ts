import { describe, expect, it, vi } from 'vitest';
import type { ClientConnection, ShuttleClient } from '../../public/browser';
import type { PushMessage } from '../../public/browser';
import { createStoreReader } from './store-reader';

/** A client double: `describe` says which engine answered; connection and pushes are driven by the test. */
function fakeClient(name: string, engineId: string) {
  let connection: ClientConnection = { state: 'ready', since: 0 } as ClientConnection;
  const connectionListeners = new Set<() => void>();
  const pushListeners = new Set<(message: PushMessage) => void>();
  let resolveReady: (hello: { engineId: string }) => void = () => undefined;
  const ready = new Promise<{ engineId: string }>((resolve) => (resolveReady = resolve));
  const client = {
    name,
    get connection() {
      return connection;
    },
    get engineId() {
      return engineId;
    },
    isServer: false,
    ready,
    describe: vi.fn(async (id: string) => ({ workflowId: id, answeredBy: name })),
    engines: vi.fn(async () => [
      { engineId: 'tab-engine', thisTab: name === 'tab' },
      { engineId: 'viewer-engine', thisTab: name === 'viewer' },
    ]),
    hello: vi.fn(async () => ({ engineId, answeredBy: name })),
    api: {
      queues: vi.fn(async () => [{ name: 'payments', answeredBy: name }]),
      activityLimits: vi.fn(async () => [{ name: 'payment-gateway', answeredBy: name }]),
      engineDirectory: vi.fn(async () => [{ engineId, answeredBy: name }]),
    },
    start: vi.fn(async () => `started by ${name}`),
    shutdown: vi.fn(async () => ({ claimsReleased: 0 })),
    close: vi.fn(),
    subscribe: (listener: (message: PushMessage) => void) => {
      pushListeners.add(listener);
      return () => pushListeners.delete(listener);
    },
    onConnectionChange: (listener: () => void) => {
      connectionListeners.add(listener);
      return () => connectionListeners.delete(listener);
    },
    onEngineChange: () => () => undefined,
  };
  return {
    client: client as unknown as ShuttleClient & typeof client,
    setConnection(state: ClientConnection['state']) {
      connection = { state, since: 1, message: state } as ClientConnection;
      for (const listener of [...connectionListeners]) listener();
    },
    push(message: PushMessage) {
      for (const listener of [...pushListeners]) listener(message);
    },
    ready: () => resolveReady({ engineId }),
  };
}

const storeChanged: PushMessage = { kind: 'store-changed', v: 1, areas: ['workflows'], workflowIds: ['w'] };
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the store reader', () => {
  it('reads through this tab’s engine while it runs, through a viewer once it crashed, and back after a restart', async () => {
    const tab = fakeClient('tab', 'tab-engine');
    const viewer = fakeClient('viewer', 'viewer-engine');
    const launch = vi.fn(() => viewer.client);
    const reader = createStoreReader(tab.client, launch);
    tab.ready();
    const switches = vi.fn();
    reader.onSourceChange(switches);
    expect(await reader.client.describe('w')).toMatchObject({ answeredBy: 'tab' });
    expect(await reader.client.api.queues({})).toEqual([{ name: 'payments', answeredBy: 'tab' }]);
    expect(launch).not.toHaveBeenCalled();

    tab.setConnection('crashed');
    await flush();
    expect(launch).toHaveBeenCalledTimes(1);
    // Until the viewer answers, nothing switches.
    expect(reader.viaViewer).toBe(false);
    viewer.ready();
    await flush();
    expect(reader.viaViewer).toBe(true);
    expect(switches).toHaveBeenCalledTimes(1);
    expect(await reader.client.describe('w')).toMatchObject({ answeredBy: 'viewer' });
    // The queues, read through the protocol's facade, follow; what is not a read of the store does not.
    expect(await reader.client.api.queues({})).toEqual([{ name: 'payments', answeredBy: 'viewer' }]);
    expect(await reader.client.api.activityLimits({})).toMatchObject([{ answeredBy: 'viewer' }]);
    expect(await reader.client.api.engineDirectory({})).toMatchObject([{ answeredBy: 'tab' }]);
    // This tab's own facts and every action stay with the tab's client.
    expect(await reader.client.hello()).toMatchObject({ answeredBy: 'tab' });
    expect(await reader.client.start('countdown')).toBe('started by tab');
    expect(reader.client.connection.state).toBe('crashed');
    // The stopped engine is still this tab's in the engine list, not the viewer.
    expect(await reader.client.engines()).toEqual([
      { engineId: 'tab-engine', thisTab: true },
      { engineId: 'viewer-engine', thisTab: false },
    ]);
    // Another crash notice does not start a second viewer.
    tab.setConnection('unresponsive');
    await flush();
    expect(launch).toHaveBeenCalledTimes(1);

    tab.setConnection('ready');
    await flush();
    expect(reader.viaViewer).toBe(false);
    expect(switches).toHaveBeenCalledTimes(2);
    expect(viewer.client.shutdown).toHaveBeenCalled();
    expect(await reader.client.describe('w')).toMatchObject({ answeredBy: 'tab' });
  });

  it('passes on the viewer’s store changes to the page, and nothing else of it', async () => {
    const tab = fakeClient('tab', 'tab-engine');
    const viewer = fakeClient('viewer', 'viewer-engine');
    const reader = createStoreReader(tab.client, () => viewer.client);
    const heard: PushMessage[] = [];
    reader.client.subscribe((message) => heard.push(message));
    tab.setConnection('crashed');
    await flush();
    viewer.ready();
    await flush();
    viewer.push(storeChanged);
    viewer.push({ kind: 'heartbeat', v: 1, at: 5 });
    tab.push({ kind: 'heartbeat', v: 1, at: 6 });
    expect(heard).toEqual([storeChanged, { kind: 'heartbeat', v: 1, at: 6 }]);
  });

  it('starts no viewer for a restart (the old worker stops and the new one connects at once), nor in server mode', async () => {
    const tab = fakeClient('tab', 'tab-engine');
    const launch = vi.fn();
    createStoreReader(tab.client, launch);
    tab.setConnection('crashed');
    tab.setConnection('connecting');
    await flush();
    expect(launch).not.toHaveBeenCalled();

    const server = fakeClient('tab', 'tab-engine');
    (server.client as { isServer: boolean }).isServer = true;
    createStoreReader(server.client, launch);
    server.setConnection('crashed');
    await flush();
    expect(launch).not.toHaveBeenCalled();
  });
});
