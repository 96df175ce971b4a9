/**
 * What the page reads the store through. Normally this tab's engine. When its worker has stopped — crashed,
 * gone silent, closed — it cannot answer, and the query cache would go on showing what the dead engine last
 * read ("Owner: this tab, epoch 1, running" while another tab owns the workflow at epoch 2). So the reader
 * then starts a viewer engine for the page (an observer on the same database: it reads, never claims) and
 * serves every read of the store through it, until this tab's own engine answers again (a restart); then the
 * viewer is shut down and reads go back to the tab's engine.
 *
 * Guarantees:
 * - Reads of the store (`readMethods`, and `readApiMethods` of `client.api`) go to the viewer while this tab's engine is stopped; everything else —
 *   starts, signals, chaos, this engine's own facts (`hello`, `ownedWorkflows`, `metrics`, waiters), the
 *   connection — stays with this tab's client, so the shell still says the engine crashed and "Start a new
 *   engine" restarts it.
 * - The viewer's store-change notices reach the page's live updates (its own engine events, status and
 *   warnings do not: it is not this tab's engine), and `onSourceChange` listeners hear each switch, so the
 *   app refetches everything from the new source at once.
 * - `engines()` through the viewer still marks this tab's (stopped) engine as this tab's, not the viewer.
 * - A restart of this tab's engine starts no viewer (its old worker stops and its new one connects at once).
 * - Server mode never starts a viewer: the page has no database of its own to open.
 */
import type { ShuttleClient } from '../../public/browser';
import type { PushMessage } from '../../public/browser';

/** The client methods that only read the store, so any engine of the database answers them alike. */
export const readMethods: ReadonlySet<string> = new Set([
  'describe',
  'runs',
  'list',
  'timeline',
  'operationOutcome',
  'claims',
  'claimHolder',
  'fenceRejections',
  'engines',
  'definitions',
  'schedules',
  'describeSchedule',
  'storageUsage',
]);

/**
 * The methods of the protocol's facade (`client.api`) that only read the store, which the UI calls there
 * because the console does not wrap them (the queues, the activity limits): routed like `readMethods`.
 */
export const readApiMethods: ReadonlySet<string> = new Set([
  'queues',
  'describeQueue',
  'queuePosition',
  'activityLimits',
]);

/** Whether the tab's link to its engine is stopped for good (until a restart), so it cannot answer reads. */
export function engineStopped(connection: ShuttleClient['connection']): boolean {
  return (
    connection.state === 'crashed' || connection.state === 'unresponsive' || connection.state === 'closed'
  );
}

export type StoreReader = {
  /** The client the app uses: this tab's, with reads of the store routed as above. */
  client: ShuttleClient;
  /** Whether reads go through a viewer right now. */
  readonly viaViewer: boolean;
  /** Called after every switch of source (to the viewer, or back). Returns the unsubscribe function. */
  onSourceChange(listener: () => void): () => void;
  /** Stops following the tab's connection and shuts the viewer down, if any. */
  dispose(): void;
};

/**
 * Wraps `tab` (this tab's client). `launchViewer` starts a viewer engine on the tab's database; it is called
 * when the tab's engine stops, at most once per stop.
 */
export function createStoreReader(tab: ShuttleClient, launchViewer: () => ShuttleClient): StoreReader {
  let viewer: ShuttleClient | null = null;
  let viewerReady = false;
  let thisEngineId: string | null = tab.engineId;
  const sourceListeners = new Set<() => void>();
  const pushListeners = new Set<(message: PushMessage) => void>();
  let stopViewerPushes: (() => void) | null = null;
  const announce = () => {
    for (const listener of [...sourceListeners]) listener();
  };

  void tab.ready.then(
    (hello) => (thisEngineId = hello.engineId),
    () => undefined,
  );
  const stopEngineChanges = tab.onEngineChange((hello) => (thisEngineId = hello.engineId));

  const startViewer = () => {
    if (viewer || tab.isServer) return;
    const started = launchViewer();
    viewer = started;
    stopViewerPushes = started.subscribe((message) => {
      if (message.kind !== 'store-changed') return;
      for (const listener of [...pushListeners]) listener(message);
    });
    void started.ready.then(
      () => {
        if (viewer !== started) return;
        viewerReady = true;
        announce();
      },
      () => undefined,
    );
  };
  const stopViewer = () => {
    const stopped = viewer;
    if (!stopped) return;
    const wasReady = viewerReady;
    viewer = null;
    viewerReady = false;
    stopViewerPushes?.();
    stopViewerPushes = null;
    void stopped
      .shutdown()
      .catch(() => undefined)
      .finally(() => stopped.close());
    if (wasReady) announce();
  };
  const follow = () => {
    if (engineStopped(tab.connection)) startViewer();
    else if (tab.connection.state === 'ready') stopViewer();
  };
  // Judged once the change has settled: a restart reports its old worker crashed and its new one connecting
  // in one go, and must not start a viewer.
  let judging = false;
  const onConnectionChange = () => {
    if (judging) return;
    judging = true;
    queueMicrotask(() => {
      judging = false;
      follow();
    });
  };
  const stopFollowing = tab.onConnectionChange(onConnectionChange);
  follow();

  const bound = new Map<PropertyKey, unknown>();
  const client = new Proxy(tab, {
    get(target, property) {
      const reader = viewer && viewerReady ? viewer : null;
      if (reader && typeof property === 'string' && readMethods.has(property)) {
        if (property === 'engines')
          return async () =>
            (await reader.engines()).map((engine) => ({
              ...engine,
              thisTab: engine.engineId === thisEngineId,
            }));
        const method = Reflect.get(reader, property, reader) as (...args: unknown[]) => unknown;
        return method.bind(reader);
      }
      if (reader && property === 'api')
        return new Proxy(target.api, {
          get(api, method) {
            const source = typeof method === 'string' && readApiMethods.has(method) ? reader.api : api;
            return Reflect.get(source, method, source) as unknown;
          },
        });
      if (property === 'subscribe')
        return (listener: (message: PushMessage) => void) => {
          const stopTab = target.subscribe(listener);
          pushListeners.add(listener);
          return () => {
            stopTab();
            pushListeners.delete(listener);
          };
        };
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      let method = bound.get(property);
      if (!method) {
        method = (value as (...args: unknown[]) => unknown).bind(target);
        bound.set(property, method);
      }
      return method;
    },
  });

  return {
    client,
    get viaViewer() {
      return viewer !== null && viewerReady;
    },
    onSourceChange(listener) {
      sourceListeners.add(listener);
      return () => sourceListeners.delete(listener);
    },
    dispose() {
      stopFollowing();
      stopEngineChanges();
      stopViewer();
      sourceListeners.clear();
    },
  };
}
