import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryLiveness, hostKeys } from '../engine';
import { MemoryStorage } from '../storage';
import { builtInWorkflows } from '../workflows';
import { builtInInfo } from './built-ins';
import { ListingLiveness, openTestTab, sharedStorage, type TestTab } from './host.test-support';
import { presenceKey } from '../host/presence';
import { PROTOCOL_VERSION, type HostStatus, type PushMessage } from '../protocol';

const tabs: TestTab[] = [];

function open(options: Partial<Parameters<typeof openTestTab>[0]> & { storage: MemoryStorage }): TestTab {
  const tab = openTestTab({
    workflows: builtInWorkflows,
    ...options,
    storage: sharedStorage(options.storage),
  });
  tabs.push(tab);
  return tab;
}

afterEach(async () => {
  await Promise.all(tabs.splice(0).map((tab) => tab.close()));
});

function collect(tab: TestTab): PushMessage[] {
  const messages: PushMessage[] = [];
  tab.client.subscribe((message) => messages.push(message));
  return messages;
}

async function until<T>(
  read: () => T | Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function running(tab: TestTab): Promise<HostStatus> {
  return until(
    async () => (await tab.client.hello()).status,
    (status) => status.state === 'running',
  );
}

describe('worker host', () => {
  it('answers hello with this engine’s identity, then reports running', async () => {
    const tab = open({ storage: new MemoryStorage(), databaseName: 'db-1' });
    const hello = await tab.client.ready;
    expect(hello).toMatchObject({
      protocolVersion: PROTOCOL_VERSION,
      engineId: tab.host.engineId,
      label: 'Tab A',
      shortLabel: 'A',
      mode: 'engine',
      databaseName: 'db-1',
    });
    expect(hello.color).toMatch(/^#[0-9A-F]{6}$/i);
    await running(tab);
  });

  it('serves requests sent right behind the first hello once its engine has started', async () => {
    const tab = open({ storage: new MemoryStorage() });
    const [page, definitions] = await Promise.all([tab.client.list(), tab.client.definitions()]);
    expect(page.items).toEqual([]);
    expect(definitions.map((definition) => definition.name)).toContain('countdown');
    expect(definitions.find((definition) => definition.name === 'countdown')).toMatchObject({
      version: 1,
      sampleInput: expect.any(Object) as unknown,
      queries: expect.arrayContaining(['remaining']) as unknown,
    });
  });

  it('gives each engine of a database its own label and colour, and lists them alive', async () => {
    const storage = new MemoryStorage();
    const a = open({ storage });
    const b = open({ storage });
    const [helloA, helloB] = await Promise.all([a.client.ready, b.client.ready]);
    expect(new Set([helloA.label, helloB.label])).toEqual(new Set(['Tab A', 'Tab B']));
    expect(helloA.color).not.toBe(helloB.color);
    await Promise.all([running(a), running(b)]);
    const engines = await until(
      () => a.client.engines(),
      (list) => list.length === 2 && list.every((engine) => engine.status === 'running'),
    );
    expect(engines.map((engine) => [engine.engineId, engine.thisTab, engine.alive])).toEqual(
      expect.arrayContaining([
        [helloA.engineId, true, true],
        [helloB.engineId, false, true],
      ]),
    );
  });

  it('starts a workflow, pushes its events and store changes, and runs it to completion', async () => {
    const tab = open({ storage: new MemoryStorage() });
    const pushed = collect(tab);
    await running(tab);
    const id = await tab.client.start('countdown', { from: 3, tickMs: 10 }, { id: 'count-1' });
    expect(id).toBe('count-1');
    const done = await tab.client.waitFor(id, 'completed', { timeoutMs: 5_000 });
    expect(done.result).toEqual({ counted: 3 });
    await expect(tab.client.result(id)).resolves.toEqual({ counted: 3 });
    await until(
      () => pushed.flatMap((message) => (message.kind === 'events' ? message.events : [])),
      (events) => events.some((event) => event.type === 'workflow.completed' && event.workflowId === id),
    );
    const notices = pushed.filter((message) => message.kind === 'store-changed');
    expect(
      notices.some((notice) => notice.areas.includes('workflows') && notice.workflowIds?.includes(id)),
    ).toBe(true);
    expect(notices.some((notice) => notice.areas.includes('timelines'))).toBe(true);
  });

  it('rebuilds engine errors on the page with their name, message and detail fields', async () => {
    const tab = open({ storage: new MemoryStorage() });
    await running(tab);
    await expect(tab.client.start('no-such-type', {})).rejects.toMatchObject({
      name: 'WorkflowNotRegisteredError',
      workflowType: 'no-such-type',
    });
    await tab.client.start('countdown', { from: 50, tickMs: 1_000 }, { id: 'dup' });
    const error = await tab.client
      .start('countdown', { from: 1 }, { id: 'dup' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'WorkflowAlreadyExistsError', workflowId: 'dup', status: 'running' });
    expect((error as Error).message).toContain("Workflow 'dup' already exists");
    await expect(tab.client.describe('missing')).rejects.toMatchObject({ name: 'WorkflowNotFoundError' });
  });

  it('answers malformed requests with an error, warns about messages without an id, and keeps serving', async () => {
    const tab = open({ storage: new MemoryStorage() });
    const pushed = collect(tab);
    await running(tab);
    tab.channel.postRaw('garbage');
    tab.channel.postRaw({
      kind: 'request',
      v: PROTOCOL_VERSION,
      id: 900,
      method: 'describe',
      params: { workflowId: 7 },
    });
    tab.channel.postRaw({ kind: 'request', v: PROTOCOL_VERSION, id: 901, method: 'explode', params: {} });
    tab.channel.postRaw({ kind: 'request', v: PROTOCOL_VERSION + 1, id: 902, method: 'metrics', params: {} });
    const replies = await until(
      () => tab.channel.sent.filter((message) => message.kind === 'response' && message.id >= 900),
      (found) => found.length === 3,
    );
    expect(replies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: 900,
          ok: false,
          error: expect.objectContaining({ name: 'ProtocolError' }),
        }),
        expect.objectContaining({
          id: 901,
          ok: false,
          error: expect.objectContaining({ name: 'ProtocolError' }),
        }),
        expect.objectContaining({
          id: 902,
          ok: false,
          error: expect.objectContaining({
            name: 'ProtocolVersionMismatchError',
            message: expect.stringContaining('Reload the tab') as unknown,
          }),
        }),
      ]),
    );
    await until(
      () => pushed.filter((message) => message.kind === 'warning'),
      (warnings) =>
        warnings.some((message) => message.kind === 'warning' && message.warning.name === 'ProtocolWarning'),
    );
    await expect(tab.client.metrics()).resolves.toMatchObject({ claimsHeld: 0 });
  });

  it('in viewer mode starts workflows that another tab runs, and claims none itself', async () => {
    const storage = new MemoryStorage();
    const liveness = new InMemoryLiveness();
    const engineTab = open({ storage, liveness });
    const viewer = open({ storage, liveness, mode: 'viewer' });
    expect((await viewer.client.ready).mode).toBe('viewer');
    await Promise.all([running(engineTab), running(viewer)]);
    const id = await viewer.client.start('countdown', { from: 2, tickMs: 10 });
    const done = await viewer.client.waitFor(id, 'completed', { timeoutMs: 5_000 });
    const timeline = await viewer.client.timeline(done.workflowId);
    const claimers = new Set(
      timeline.filter((entry) => entry.kind.startsWith('claim-')).map((entry) => entry.engineId),
    );
    expect(claimers).toEqual(new Set([engineTab.host.engineId]));
    expect(await viewer.client.metrics()).toMatchObject({ claimAttempts: { acquired: 0, takeover: 0 } });
  });

  it('shuts down gracefully: releases claims so another tab takes over at the next epoch', async () => {
    const storage = new MemoryStorage();
    const liveness = new InMemoryLiveness();
    const a = open({ storage, liveness });
    await running(a);
    const id = await a.client.start('countdown', { from: 30, tickMs: 20 });
    await until(
      () => a.client.ownedWorkflows(),
      (owned) => owned.includes(id),
    );
    const report = await a.client.shutdown();
    expect(report.claimsReleased).toBe(1);
    expect((await a.client.hello()).status.state).toBe('stopped');
    const b = open({ storage, liveness });
    await running(b);
    const done = await b.client.waitFor(id, 'completed', { timeoutMs: 10_000 });
    expect(done.epoch).toBe(2);
    const timeline = await b.client.timeline(id);
    expect(new Set(timeline.map((entry) => entry.engineId))).toEqual(
      new Set([a.host.engineId, b.host.engineId]),
    );
    expect(timeline.filter((entry) => entry.kind === 'timer-fired')).toHaveLength(30);
    const engines = await b.client.engines();
    expect(engines.find((engine) => engine.engineId === a.host.engineId)).toMatchObject({
      status: 'stopped',
      alive: false,
    });
  });

  it('reports a database that cannot be opened as a failed status with a readable message', async () => {
    const tab = openTestTab({
      storage: new MemoryStorage(),
      workflows: builtInWorkflows,
      host: {
        openStorage: () =>
          Promise.reject(
            Object.assign(new Error('Storage open failed (blocked): close the other tabs of the studio.'), {
              name: 'StorageError',
            }),
          ),
      },
    });
    tabs.push(tab);
    const hello = await tab.client.ready;
    expect(hello.status).toMatchObject({
      state: 'failed',
      message: expect.stringContaining('close the other tabs') as unknown,
    });
    await expect(tab.client.list()).rejects.toMatchObject({ name: 'EngineUnavailableError' });
  });
});

describe('worker host: engines of the database', () => {
  it('lists every engine with status, counters and result waiters, and one whose lock vanished as dead', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const a = open({ storage, liveness });
    const b = open({ storage, liveness });
    await Promise.all([running(a), running(b)]);
    const id = await a.client.start('countdown', { from: 2, tickMs: 10 });
    await expect(b.client.result(id)).resolves.toEqual({ counted: 2 });
    const engines = await until(
      () => b.client.engines(),
      (list) => {
        const onA = list.find((engine) => engine.engineId === a.host.engineId);
        const onB = list.find((engine) => engine.engineId === b.host.engineId);
        return onA?.counters.workflowsCompleted === 1 && onB?.resultWaiters.length === 1;
      },
    );
    expect(engines.find((engine) => engine.engineId === b.host.engineId)).toMatchObject({
      status: 'running',
      alive: true,
      thisTab: true,
      protocolVersion: PROTOCOL_VERSION,
      resultWaiters: [
        { workflowId: id, settled: expect.objectContaining({ status: 'completed' }) as unknown },
      ],
      counters: { workflowsCompleted: 0, claimsLost: 0, writesFencedOut: 0, wakesDiscarded: 0, takeovers: 0 },
    });
    // A's waiters and counters are read from its presence record.
    const c = open({ storage, liveness });
    await running(c);
    await until(
      () => c.client.engines(),
      (list) => list.find((engine) => engine.engineId === b.host.engineId)?.resultWaiters.length === 1,
    );

    liveness.kill(a.host.engineId);
    const afterDeath = await b.client.engines();
    expect(afterDeath.find((engine) => engine.engineId === a.host.engineId)).toMatchObject({
      status: 'dead',
      alive: false,
      thisTab: false,
    });
  });

  it('reports no claims for a dead engine, although its last presence record counted some', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const a = open({ storage, liveness });
    const b = open({ storage, liveness });
    await Promise.all([running(a), running(b)]);
    await a.client.start('countdown', { from: 600, tickMs: 60_000 }, { id: 'held-by-a' });
    await until(
      () => b.client.engines(),
      (list) => (list.find((engine) => engine.engineId === a.host.engineId)?.claimsHeld ?? 0) >= 1,
    );
    // A's tab is gone without a word: its worker writes nothing more, its lock vanished.
    a.channel.worker.terminate();
    liveness.kill(a.host.engineId);
    const stored = JSON.parse((await storage.get(presenceKey(a.host.engineId)))!) as { claimsHeld: number };
    expect(stored.claimsHeld).toBeGreaterThanOrEqual(1);
    const listed = (await b.client.engines()).find((engine) => engine.engineId === a.host.engineId);
    expect(listed).toMatchObject({ status: 'dead', alive: false, claimsHeld: 0 });
  });

  it('records an engine crashed on another tab’s behalf, and never overwrites a graceful stop', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const a = open({ storage, liveness });
    const b = open({ storage, liveness });
    const c = open({ storage, liveness });
    await Promise.all([running(a), running(b), running(c)]);
    await c.client.shutdown();
    a.channel.worker.terminate(); // the page killed A's worker: it writes nothing any more
    await b.client.call('recordCrash', { engineId: a.host.engineId, at: Date.now() });
    await b.client.call('recordCrash', { engineId: c.host.engineId, at: Date.now() });
    const engines = await b.client.engines();
    const status = (tab: TestTab) => engines.find((engine) => engine.engineId === tab.host.engineId)?.status;
    expect([a, c].map(status)).toEqual(['crashed', 'stopped']);
  });

  it('warns once about a live engine that runs another protocol version, naming its tab', async () => {
    const storage = new MemoryStorage();
    const stale = {
      engineId: 'stale-engine',
      label: 'Tab Q',
      shortLabel: 'Q',
      color: '#0072B2',
      mode: 'engine',
      status: 'running',
      startedAt: Date.now(),
      lastSeenAt: Date.now() + 60_000,
      claimsHeld: 0,
      protocolVersion: PROTOCOL_VERSION - 1,
    };
    await storage.batch([{ type: 'put', key: presenceKey('stale-engine'), value: JSON.stringify(stale) }]);
    const tab = open({ storage });
    const pushed = collect(tab);
    await running(tab);
    const warnings = await until(
      () =>
        pushed.flatMap((message) =>
          message.kind === 'warning' && message.warning.name === 'VersionMismatchWarning'
            ? [message.warning]
            : [],
        ),
      (found) => found.length >= 1,
    );
    expect(warnings[0]).toMatchObject({
      engineId: 'stale-engine',
      message: expect.stringMatching(/^Tab Q runs a different build of the studio.*Reload Tab Q/) as unknown,
    });
    // Old records decode with empty defaults for the fields they lack.
    const listed = (await tab.client.engines()).find((engine) => engine.engineId === 'stale-engine');
    expect(listed).toMatchObject({ protocolVersion: PROTOCOL_VERSION - 1, resultWaiters: [] });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(
      pushed.filter((m) => m.kind === 'warning' && m.warning.name === 'VersionMismatchWarning'),
    ).toHaveLength(1);
  });

  it('stops listing engines dead for over 10 minutes, and deletes their records', async () => {
    const storage = new MemoryStorage();
    const long = Date.now() - 11 * 60_000;
    const old = {
      engineId: 'old-engine',
      label: 'Tab Z',
      shortLabel: 'Z',
      color: '#0072B2',
      mode: 'engine',
      status: 'stopped',
      startedAt: long - 1_000,
      lastSeenAt: long,
      claimsHeld: 0,
      protocolVersion: PROTOCOL_VERSION,
    };
    await storage.batch([{ type: 'put', key: presenceKey('old-engine'), value: JSON.stringify(old) }]);
    const tab = open({ storage, liveness: new ListingLiveness() });
    await running(tab);
    const engines = await tab.client.engines();
    expect(engines.map((engine) => engine.engineId)).toEqual([tab.host.engineId]);
    await until(
      () => storage.get(presenceKey('old-engine')),
      (value) => value === null,
    );
  });
});

describe('worker host: handoff', () => {
  /** Claim timings so long that only the death watch or an exit notice can explain a quick takeover. */
  const slowClaims = { workflowClaimTtlMs: 60_000, workflowClaimRenewIntervalMs: 15_000 };

  it('takes a dead engine’s workflows over the moment the death watch reports it, long before the TTL', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const reports = new Map<string, (engineId: string) => void>();
    const observed: string[][] = [];
    const host = {
      ...slowClaims,
      deathWatch: (selfId: string, onDeath: (engineId: string) => void) => {
        reports.set(selfId, onDeath);
        return {
          observe: (engines: readonly { engineId: string }[]) => {
            observed.push(engines.map((engine) => engine.engineId));
          },
          covers: () => false,
          close: () => undefined,
        };
      },
    };
    const a = open({ storage, liveness, host });
    await running(a);
    const id = await a.client.start('countdown', { from: 40, tickMs: 20 });
    await until(
      () => a.client.query<number>(id, 'remaining'),
      (remaining) => remaining !== null && remaining <= 38,
    );
    const b = open({ storage, liveness, host });
    await running(b);
    await until(
      () => observed,
      (all) => all.some((ids) => ids.includes(a.host.engineId) && ids.includes(b.host.engineId)),
    );

    a.channel.worker.terminate(); // A's worker dies: its lock and its storage go with it
    const diedAt = Date.now();
    reports.get(b.host.engineId)!(a.host.engineId);

    const described = await until(
      () => b.client.describe(id),
      (description) => description.owner?.engineId === b.host.engineId,
      3_000,
    );
    expect(Date.now() - diedAt).toBeLessThan(3_000);
    expect(described.epoch).toBe(2);
    await b.client.waitFor(id, 'completed', { timeoutMs: 10_000 });
    const timeline = await b.client.timeline(id);
    expect(timeline.find((entry) => entry.kind === 'claim-taken-over')?.detail).toMatchObject({
      reason: 'holder-dead',
      toEngineId: b.host.engineId,
      toEpoch: 2,
    });
    expect(timeline.filter((entry) => entry.kind === 'timer-fired')).toHaveLength(40);
  });

  it('watches a tab that has just opened at once, not at its next heartbeat survey', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const observedBy = new Map<string, string[][]>();
    const host = {
      ...slowClaims,
      heartbeatIntervalMs: 3_600_000, // no heartbeat survey within the test: only the change feed can explain it
      deathWatch: (selfId: string) => {
        const observed: string[][] = [];
        observedBy.set(selfId, observed);
        const covered = new Set<string>();
        return {
          observe: (engines: readonly { engineId: string }[], held: ReadonlySet<string>) => {
            observed.push(engines.map((engine) => engine.engineId));
            for (const { engineId } of engines) if (held.has(engineId)) covered.add(engineId);
          },
          covers: (engineId: string) => covered.has(engineId),
          close: () => undefined,
        };
      },
    };
    const a = open({ storage, liveness, host });
    await running(a);
    const b = open({ storage, liveness, host });
    await running(b);
    await until(
      () => observedBy.get(a.host.engineId) ?? [],
      (all) => all.some((ids) => ids.includes(b.host.engineId)),
      3_000,
    );
  });

  it('surveys again when a tab turns running while a survey is reading, so it is watched at once', async () => {
    const storage = new MemoryStorage();
    /** Answers `liveEngineIds` as it was when asked, but only once the gate opens (a slow lock query). */
    class GatedLiveness extends ListingLiveness {
      gate: Promise<void> | null = null;
      override async liveEngineIds(): Promise<ReadonlySet<string>> {
        const snapshot = await super.liveEngineIds();
        if (this.gate) await this.gate;
        return snapshot;
      }
    }
    const liveness = new GatedLiveness();
    let watchedByA = new Set<string>();
    let aId = '';
    const host = {
      ...slowClaims,
      heartbeatIntervalMs: 3_600_000, // no heartbeat survey within the test
      deathWatch: (selfId: string) => {
        const covered = new Set<string>();
        if (!aId) {
          aId = selfId;
          watchedByA = covered;
        }
        return {
          observe: (engines: readonly { engineId: string }[], held: ReadonlySet<string>) => {
            for (const { engineId } of engines) if (held.has(engineId)) covered.add(engineId);
          },
          covers: (engineId: string) => covered.has(engineId),
          close: () => undefined,
        };
      },
    };
    const a = open({ storage, liveness, host });
    await running(a);
    let openGate!: () => void;
    liveness.gate = new Promise<void>((resolve) => (openGate = resolve));
    const b = open({ storage, liveness, host });
    // B's presence says running while A's survey (started by B's first presence record) still waits for
    // the lock list it asked for before B held its lock.
    await until(
      async () => await storage.get(presenceKey(b.host.engineId)),
      (raw) => raw !== null && (JSON.parse(raw) as { status: string }).status === 'running',
    );
    openGate();
    liveness.gate = null;
    await until(
      () => watchedByA.has(b.host.engineId),
      (watched) => watched,
      3_000,
    );
    expect(aId).toBe(a.host.engineId);
  });

  it('takes a workflow over at once when another tab announces it is going away', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const a = open({ storage, liveness, host: slowClaims });
    const b = open({ storage, liveness, host: slowClaims });
    await Promise.all([running(a), running(b)]);
    const id = await a.client.start('countdown', { from: 30, tickMs: 20 });
    await until(
      () => a.client.ownedWorkflows(),
      (owned) => owned.includes(id),
    );
    a.channel.terminated = true; // the page is going away: A's worker hears nothing more
    await b.client.call('engineExiting', { engineId: a.host.engineId });
    const described = await until(
      () => b.client.describe(id),
      (description) => description.owner?.engineId === b.host.engineId,
      3_000,
    );
    expect(described.epoch).toBe(2);
  });
});

describe('worker host: freeze', () => {
  it('marks itself frozen until a time, stalls, then pushes running again', async () => {
    const storage = new MemoryStorage();
    const tab = open({ storage });
    const pushed = collect(tab);
    await running(tab);
    const before = Date.now();
    const { frozenUntil } = await tab.client.call('freeze', { seconds: 0.3 });
    expect(frozenUntil).toBeGreaterThanOrEqual(before + 300);
    const statuses = await until(
      () => pushed.flatMap((message) => (message.kind === 'status' ? [message.status] : [])),
      (found) => found.some((status) => status.state === 'running' && status.since >= frozenUntil),
    );
    expect(statuses.find((status) => status.state === 'frozen')).toMatchObject({ frozenUntil });
    // The stall really happened: nothing of the worker ran until it ended.
    expect(Date.now()).toBeGreaterThanOrEqual(frozenUntil);
    const engines = await tab.client.engines();
    expect(engines[0]).toMatchObject({ status: 'running' });
    expect(engines[0]!.frozenUntil).toBeUndefined();
  });

  it('refuses a freeze of an engine that does not run, and an absurd duration', async () => {
    const tab = open({ storage: new MemoryStorage() });
    await running(tab);
    await expect(tab.client.call('freeze', { seconds: 0 })).rejects.toMatchObject({ name: 'ProtocolError' });
    await tab.client.shutdown();
    await expect(tab.client.call('freeze', { seconds: 1 })).rejects.toMatchObject({
      name: 'InvalidWorkflowStateError',
      message: expect.stringContaining('stopped') as unknown,
    });
  });
});

/** An authored definition's source: a workflow of type `name` whose run body is `body`. */
function authoredSource(body: string, options: { name?: string; version?: number } = {}): string {
  return `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: '${options.name ?? 'authored'}',
  version: ${options.version ?? 1},
  *run(ctx) {
    ${body}
  },
});
`;
}

describe('worker host: authored definitions', () => {
  it('lists the built-ins with their sources, and saves a definition that this tab can start at once', async () => {
    const tab = open({ storage: new MemoryStorage(), host: { builtInInfo } });
    await running(tab);
    const before = await tab.client.definitions();
    expect(before.find((definition) => definition.name === 'order')).toMatchObject({
      builtIn: true,
      title: 'Order fulfilment',
      childOnly: false,
      registered: true,
      source: expect.stringContaining("name: 'order'") as unknown,
    });
    expect(before.find((definition) => definition.name === 'shipment')).toMatchObject({ childOnly: true });
    const source = authoredSource(`return 'done';`);
    await expect(tab.client.saveDefinition(source)).resolves.toEqual({
      ok: true,
      name: 'authored',
      version: 1,
      created: true,
    });
    expect(
      (await tab.client.definitions()).find((definition) => definition.name === 'authored'),
    ).toMatchObject({
      builtIn: false,
      registered: true,
      source,
      savedBy: tab.host.engineId,
      loadProblems: null,
    });
    const id = await tab.client.start('authored');
    await expect(tab.client.waitFor(id, 'completed', { timeoutMs: 5_000 })).resolves.toMatchObject({
      result: 'done',
    });
  });

  it('registers a definition saved in another tab at once: that tab runs it, and the first takes it over', async () => {
    const storage = new MemoryStorage();
    const liveness = new InMemoryLiveness();
    const a = open({ storage, liveness });
    const b = open({ storage, liveness });
    await Promise.all([running(a), running(b)]);
    await a.client.saveDefinition(authoredSource(`yield* ctx.waitForSignal('go'); return 'went';`));
    await until(
      () => b.client.definitions(),
      (definitions) =>
        definitions.some((definition) => definition.name === 'authored' && definition.registered),
    );
    const id = await b.client.start('authored', undefined, { id: 'authored-1' });
    await until(
      () => b.client.ownedWorkflows(),
      (owned) => owned.includes(id),
    );
    await b.client.shutdown();
    await until(
      () => a.client.ownedWorkflows(),
      (owned) => owned.includes(id),
    );
    await a.client.signal(id, 'go');
    const done = await a.client.waitFor(id, 'completed', { timeoutMs: 5_000 });
    expect(done).toMatchObject({ epoch: 2, result: 'went' });
  });

  it('registers the saved definitions before recovering, so a new engine resumes their workflows as it starts', async () => {
    const storage = new MemoryStorage();
    const liveness = new InMemoryLiveness();
    const a = open({ storage, liveness });
    await running(a);
    await a.client.saveDefinition(authoredSource(`yield* ctx.waitForSignal('go'); return 'resumed';`));
    const id = await a.client.start('authored', undefined, { id: 'orphan' });
    await until(
      () => a.client.ownedWorkflows(),
      (owned) => owned.includes(id),
    );
    await a.client.shutdown(); // releases the claim: the workflow runs with no owner now
    const b = open({ storage, liveness });
    await running(b);
    // Recovered during start-up, not by a later reclaim pass.
    expect(await b.client.ownedWorkflows()).toEqual([id]);
    await b.client.signal(id, 'go');
    await expect(b.client.waitFor(id, 'completed', { timeoutMs: 5_000 })).resolves.toMatchObject({
      result: 'resumed',
    });
  });

  it('reports saved definitions that do not load, with their lines, and carries on with the others', async () => {
    const storage = new MemoryStorage();
    const record = (name: string, source: string) => ({
      type: 'put' as const,
      key: hostKeys.definition(name, 1),
      value: JSON.stringify({ name, version: 1, source, savedAt: 1, savedBy: 'engine-gone' }),
    });
    await storage.batch([
      record('broken', `import { defineWorkflow } from 'shuttle';\n\nconst x = 1 +;\n`),
      record(
        'throws',
        `import { defineWorkflow } from 'shuttle';\nconst config: any = undefined;\nconfig.load();\n`,
      ),
      record('fine', authoredSource(`return 1;`, { name: 'fine' })),
    ]);
    const tab = open({ storage });
    const pushed = collect(tab);
    await running(tab);
    const definitions = await tab.client.definitions();
    expect(definitions.find((definition) => definition.name === 'broken')).toMatchObject({
      registered: false,
      savedBy: 'engine-gone',
      loadProblems: [{ kind: 'syntax', line: 3 }],
    });
    expect(definitions.find((definition) => definition.name === 'throws')).toMatchObject({
      registered: false,
      loadProblems: [{ kind: 'evaluation', line: 3, message: expect.stringMatching(/TypeError/) as unknown }],
    });
    expect(definitions.find((definition) => definition.name === 'fine')).toMatchObject({ registered: true });
    await until(
      () => pushed.flatMap((message) => (message.kind === 'warning' ? [message.warning] : [])),
      (warnings) =>
        warnings.filter((warning) => warning.name === 'DefinitionWarning').length === 2 &&
        warnings.some((warning) => /'broken' version 1 .*line 3/.test(warning.message)),
    );
    await expect(tab.client.start('broken')).rejects.toMatchObject({ name: 'WorkflowNotRegisteredError' });
    const id = await tab.client.start('fine');
    await expect(tab.client.waitFor(id, 'completed', { timeoutMs: 5_000 })).resolves.toMatchObject({
      result: 1,
    });
  });

  it('refuses bad saves and deletes with reasons, writing nothing', async () => {
    const storage = new MemoryStorage();
    const tab = open({ storage });
    await running(tab);
    const invalid = await tab.client.saveDefinition(authoredSource(`return 1 +;`));
    expect(invalid).toMatchObject({
      ok: false,
      reason: 'invalid',
      diagnostics: [{ kind: 'syntax', line: 7 }],
    });
    const reserved = await tab.client.saveDefinition(authoredSource(`return 1;`, { name: 'countdown' }));
    expect(reserved).toMatchObject({ ok: false, reason: 'reserved', name: 'countdown' });
    expect(await storage.scan(hostKeys.definitionsPrefix)).toEqual([]);

    await tab.client.saveDefinition(authoredSource(`yield* ctx.waitForSignal('go');`));
    await tab.client.start('authored', undefined, { id: 'in-use' });
    const changed = await tab.client.saveDefinition(authoredSource(`yield* ctx.sleep(1);`));
    expect(changed).toMatchObject({
      ok: false,
      reason: 'version-in-use',
      unfinished: 1,
      suggestedVersion: 2,
    });
    await expect(tab.client.deleteDefinition('authored', 1)).resolves.toMatchObject({
      ok: false,
      reason: 'in-use',
    });
    await expect(
      tab.client.saveDefinition(authoredSource(`yield* ctx.sleep(1);`), { force: true }),
    ).resolves.toMatchObject({ ok: true, created: false });
    await tab.client.terminate('in-use');
    await expect(tab.client.deleteDefinition('authored', 1)).resolves.toEqual({ ok: true });
    expect((await tab.client.definitions()).some((definition) => definition.name === 'authored')).toBe(false);
  });

  it('checks sources in the compile sandbox, and saves nothing the sandbox refused', async () => {
    const storage = new MemoryStorage();
    const checked: string[] = [];
    const tab = open({
      storage,
      host: {
        compileSandbox: {
          check: async (source) => {
            checked.push(source);
            return {
              ok: false,
              diagnostics: [{ kind: 'evaluation', message: 'did not finish loading', line: 1, column: 1 }],
            };
          },
          dispose: () => undefined,
        },
      },
    });
    await running(tab);
    const source = authoredSource(`return 1;`);
    await expect(tab.client.compileDefinition(source)).resolves.toMatchObject({ ok: false });
    await expect(tab.client.saveDefinition(source)).resolves.toMatchObject({ ok: false, reason: 'invalid' });
    expect(checked).toEqual([source, source]);
    expect(await storage.scan(hostKeys.definitionsPrefix)).toEqual([]);
  });
});
