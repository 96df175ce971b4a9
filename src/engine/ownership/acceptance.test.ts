/**
 * The acceptance scenarios of docs/ownership.md, each a named test. Two or more real engines share one store,
 * with a simulated clock and manual background tasks unless said otherwise; renew 1 s, TTL 3 s (grace 2 s:
 * takeover-eligible strictly after `expiresAt + 2000`). Counters inside activities and workflow bodies
 * check that claims are exclusive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { IndexedDbStorage } from '../../storage/indexeddb';
import { MemoryStorage } from '../../storage/memory';
import { PostgresStorage } from '../../storage/postgres';
import { createTestDatabase, freshSchema } from '../../storage/postgres.test-support';
import type { Storage } from '../../storage/types';
import { SimulatedClock } from '../clock';
import { createEngine, type Engine } from '../engine';
import { TestWorld, type TestEngine } from '../engine.test-support';
import {
  EngineLeaseNotHeldError,
  InvalidOptionsError,
  OwnershipModeMismatchError,
  WorkflowClaimUnavailableError,
  WorkflowAlreadyExistsError,
} from '../errors';
import { keys } from '../keys';
import type { EngineOptions } from '../options';
import { defineWorkflow, type AnyWorkflowDefinition } from '../workflow';
import { decodeHolder } from './holder';
import { InMemoryLiveness } from './liveness';
import { decodeSession } from './session';

const fencing = {
  ownership: 'workflow-lease',
  workflowClaimTtlMs: 3000,
  workflowClaimRenewIntervalMs: 1000,
} as const satisfies Partial<EngineOptions>;

/** Workflows whose every step counts its executions. */
function counted() {
  const runs = new Map<string, number>();
  const bump = (key: string) => runs.set(key, (runs.get(key) ?? 0) + 1);
  /** Openers of gated activity attempts, in the order they started (several engines may run one). */
  const gates = new Map<string, (() => void)[]>();
  const open = (key: string, index = 0) => gates.get(key)![index]!();
  const parked = defineWorkflow({
    name: 'parked',
    version: 1,
    *run(ctx) {
      const first = yield* ctx.activity('first', () => (bump(`${ctx.workflowId}:first`), 1));
      const signal = yield* ctx.waitForSignal<number>('go');
      const second = yield* ctx.activity('second', () => (bump(`${ctx.workflowId}:second`), 2));
      return first + second + (signal ?? 0);
    },
  });
  const sleeper = defineWorkflow({
    name: 'sleeper',
    version: 1,
    *run(ctx) {
      yield* ctx.activity('before', () => void bump(`${ctx.workflowId}:before`));
      yield* ctx.sleep(10_000);
      yield* ctx.activity('after', () => void bump(`${ctx.workflowId}:after`));
      return 'slept';
    },
  });
  /** An activity that waits until the test opens its gate. */
  const gated = defineWorkflow({
    name: 'gated',
    version: 1,
    *run(ctx) {
      ctx.state.stage = 'before';
      const value = yield* ctx.activity('slow', ({ attempt }) => {
        bump(`${ctx.workflowId}:slow#${attempt}`);
        return new Promise<string>((resolve) => {
          const key = `${ctx.workflowId}#${attempt}`;
          gates.set(key, [...(gates.get(key) ?? []), () => resolve(`slow ${attempt}`)]);
        });
      });
      ctx.state.stage = 'after';
      yield* ctx.sleep(100);
      return value;
    },
  });
  const racer = defineWorkflow({
    name: 'racer',
    version: 1,
    *run(ctx) {
      return yield* ctx.race([ctx.waitForSignal('left'), ctx.waitForSignal('right')]);
    },
  });
  const definitions: AnyWorkflowDefinition[] = [parked, sleeper, gated, racer];
  return { runs, gates, open, parked, sleeper, gated, racer, definitions };
}

/** A change feed that does not (yet) report displacement notices. */
const notNotices = (key: string) => !key.startsWith(keys.ownerNoticesPrefix);

async function holderOf(storage: Storage, id: string) {
  const raw = await storage.get(keys.ownerHolder(id));
  return raw === null ? null : decodeHolder(raw);
}

async function epochOf(storage: Storage, id: string): Promise<string | null> {
  return storage.get(keys.ownerEpoch(id));
}

async function sessionOf(storage: Storage, engineId: string) {
  const raw = await storage.get(keys.session(engineId));
  return raw === null ? null : decodeSession(raw);
}

/**
 * The store the scenarios share, per run: a MemoryStorage, or a fresh schema of PostgreSQL (the same
 * scenarios over a real server: claims, fences and sessions do not depend on the adapter).
 */
let openStore: () => Promise<Storage> = async () => new MemoryStorage();

async function setup(engineCount: number, options: Partial<EngineOptions> = {}) {
  const wf = counted();
  const world = new TestWorld({ storage: await openStore() });
  const engines: TestEngine[] = [];
  for (let i = 0; i < engineCount; i++)
    engines.push(await world.engine(wf.definitions, { ...fencing, ...options }));
  return { world, engines, ...wf };
}

const stores: {
  name: string;
  prepare(): Promise<{ open: () => Promise<Storage>; close(): Promise<void> }>;
}[] = [
  {
    name: 'MemoryStorage',
    prepare: async () => ({ open: async () => new MemoryStorage(), close: async () => undefined }),
  },
  {
    // IndexedDB as the studio's tabs use it (fake-indexeddb in Node; its feed is the store's own, in-page)
    name: 'IndexedDbStorage',
    prepare: async () => {
      const indexedDB = new IDBFactory();
      const opened: IndexedDbStorage[] = [];
      let count = 0;
      return {
        open: async () => {
          const storage = new IndexedDbStorage({
            databaseName: `acceptance-${++count}`,
            indexedDB,
            IDBKeyRange,
          });
          opened.push(storage);
          return storage;
        },
        close: async () => {
          await Promise.all(opened.map((storage) => storage.close()));
        },
      };
    },
  },
  {
    name: 'PostgresStorage',
    prepare: async () => {
      const database = await createTestDatabase();
      const opened: PostgresStorage[] = [];
      return {
        open: async () => {
          const storage = await PostgresStorage.open({
            connectionString: database.url,
            schema: freshSchema(),
            maxConnections: 4,
          });
          opened.push(storage);
          return storage;
        },
        close: async () => {
          await Promise.all(opened.map((storage) => storage.close()));
          await database.drop();
        },
      };
    },
  },
];

describe.each(stores)('ownership acceptance scenarios on $name', (store) => {
  let close: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    const prepared = await store.prepare();
    openStore = prepared.open;
    close = prepared.close;
  }, 60_000);
  afterAll(() => close());

  it('1. option validation', async () => {
    const storage = new MemoryStorage();
    const make = (options: Partial<EngineOptions>) =>
      createEngine({ storage, backgroundTasks: 'manual', recover: false, ...options });
    await expect(
      make({ ownership: 'workflow-lease', workflowClaimTtlMs: 3000, workflowClaimRenewIntervalMs: 3000 }),
    ).rejects.toThrow(/workflowClaimRenewIntervalMs \(3000\) must be less than workflowClaimTtlMs \(3000\)/);
    await expect(
      make({ ownership: 'workflow-lease', workflowClaimTtlMs: 2999, workflowClaimRenewIntervalMs: 1000 }),
    ).rejects.toThrow(/at least 3 × workflowClaimRenewIntervalMs/);
    await expect(make({ ownership: 'workflow-lease', workflowClaimTtlMs: 0 })).rejects.toThrow(
      /workflowClaimTtlMs must be a positive number of milliseconds; got 0/,
    );
    await expect(make({ ownership: 'workflow-lease', workflowClaimRenewIntervalMs: -1 })).rejects.toThrow(
      /got -1/,
    );
    await expect(make({ ownership: 'lease', leaseTtlMs: Number.NaN })).rejects.toBeInstanceOf(
      InvalidOptionsError,
    );
    await expect(make({ ownership: 'leases' as never })).rejects.toThrow(/Unknown ownership mode "leases"/);
    await expect(make({ ownership: 'lease' })).rejects.toThrow(/cannot run with backgroundTasks 'manual'/);
    const accepted = await make({
      ownership: 'workflow-lease',
      workflowClaimTtlMs: 3000,
      workflowClaimRenewIntervalMs: 1000,
    });
    await accepted.shutdown();
    const none = await createEngine({
      storage: new MemoryStorage(),
      backgroundTasks: 'manual',
      workflowClaimTtlMs: -5,
      workflowClaimRenewIntervalMs: 99_999,
    });
    expect(none.ownership).toBe('none');
    await none.shutdown();
  });

  it('2. capability gate: a fencing mode on storage without conditionalBatch fails before any key is read', async () => {
    let reads = 0;
    const inner = new MemoryStorage();
    const storage: Storage = {
      capabilities: { conditionalBatch: false, durable: false, changeFeed: false, groupCommit: false },
      get: (key) => (reads++, inner.get(key)),
      getMany: (k) => (reads++, inner.getMany(k)),
      scan: (p, o) => (reads++, inner.scan(p, o)),
      batch: (ops) => inner.batch(ops),
      conditionalBatch: (c, o) => inner.conditionalBatch(c, o),
      close: () => inner.close(),
    };
    for (const ownership of ['lease', 'workflow-lease'] as const)
      await expect(
        createEngine({ storage, ownership, workflowClaimTtlMs: 3000, workflowClaimRenewIntervalMs: 1000 }),
      ).rejects.toThrow(
        new RegExp(`Ownership mode '${ownership}' needs storage with the 'conditionalBatch' capability`),
      );
    expect(reads).toBe(0);
    const none = await createEngine({ storage, backgroundTasks: 'manual' });
    await none.shutdown();
  });

  it('3. mode marker: a lease store refuses workflow-lease engines and the reverse; the marker is unchanged', async () => {
    const clock = new SimulatedClock();
    const leaseStore = new MemoryStorage();
    const leaseEngine = await createEngine({
      storage: leaseStore,
      clock,
      ownership: 'lease',
      leaseTtlMs: 3000,
      leaseRenewIntervalMs: 1000,
    });
    const marker = await leaseStore.get(keys.modeMarker);
    expect(JSON.parse(marker!)).toMatchObject({ mode: 'lease' });
    const error = await createEngine({
      storage: leaseStore,
      clock,
      ...fencing,
      backgroundTasks: 'manual',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OwnershipModeMismatchError);
    expect(error).toMatchObject({ configuredMode: 'workflow-lease', storedMode: 'lease' });
    expect(await leaseStore.get(keys.modeMarker)).toBe(marker);
    const none = await createEngine({ storage: leaseStore, clock, backgroundTasks: 'manual' });
    await none.shutdown();
    await leaseEngine.shutdown();

    const wlStore = new MemoryStorage();
    const wl = await createEngine({ storage: wlStore, clock, ...fencing, backgroundTasks: 'manual' });
    const wlMarker = await wlStore.get(keys.modeMarker);
    await expect(
      createEngine({
        storage: wlStore,
        clock,
        ownership: 'lease',
        leaseTtlMs: 3000,
        leaseRenewIntervalMs: 1000,
      }),
    ).rejects.toMatchObject({
      configuredMode: 'lease',
      storedMode: 'workflow-lease',
    });
    expect(await wlStore.get(keys.modeMarker)).toBe(wlMarker);
    expect(await wlStore.get(keys.leaseHolder)).toBeNull();
    await wl.shutdown();
  });

  it('4. start race: exactly one engine wins, the other is told the workflow exists, the first activity runs once', async () => {
    const { world, engines, runs, parked } = await setup(2);
    const results = await Promise.allSettled(
      engines.map((engine) => engine.start(parked, undefined, { id: 'race' })),
    );
    await world.idle();
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    // Whether the loser lost the write (it then reads the winner's running workflow) or read the winner's
    // record first, a start is refused because the workflow exists — not because of who holds it.
    expect(rejected.reason).toBeInstanceOf(WorkflowAlreadyExistsError);
    expect(runs.get('race:first')).toBe(1);
    expect((await holderOf(world.storage, 'race'))?.epoch).toBe(1);
  });

  it('5. recovery partition: concurrent recoveries take disjoint sets that cover every workflow', async () => {
    const { world, engines, runs, parked } = await setup(1);
    const ids = Array.from({ length: 12 }, (_, i) => `p${i}`);
    for (const id of ids) await engines[0]!.start(parked, undefined, { id });
    await world.idle();
    world.crash(engines[0]!);
    await world.clock.advance(5001);
    const b = await world.engine([parked], { ...fencing, recover: false });
    const c = await world.engine([parked], { ...fencing, recover: false });
    await Promise.all([b.recoverAll(), c.recoverAll()]);
    const owned = [...b.ownedWorkflows(), ...c.ownedWorkflows()].sort();
    expect(owned).toEqual([...ids].sort());
    expect(new Set(b.ownedWorkflows()).size + new Set(c.ownedWorkflows()).size).toBe(ids.length);
    for (const id of ids) await world.engines[0]!.signal(id, 'go', 0);
    await world.idle();
    for (const id of ids) {
      expect(runs.get(`${id}:first`)).toBe(1);
      expect(runs.get(`${id}:second`)).toBe(1);
      expect(await b.handle(id).result()).toBe(3);
    }
  });

  it('6. explicit resume against a live claim throws WorkflowClaimUnavailableError { heldBy }; nothing is claimed', async () => {
    const { world, engines, parked } = await setup(2);
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(parked, undefined, { id: 'r' });
    await world.idle();
    const before = await world.storage.get(keys.ownerHolder('r'));
    const error = await b.resume('r').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowClaimUnavailableError);
    expect((error as WorkflowClaimUnavailableError).heldBy).toMatchObject({ engineId: a.id, epoch: 1 });
    expect(await world.storage.get(keys.ownerHolder('r'))).toBe(before);
    expect(b.ownedWorkflows()).toEqual([]);
  });

  it('7. rolling release: B holds all three at epoch 2 without waiting; every step ran once in total', async () => {
    const { world, engines, runs, parked } = await setup(1);
    const a = engines[0]!;
    for (const id of ['x', 'y', 'z']) await a.start(parked, undefined, { id });
    await world.idle();
    const b = await world.engine([parked], fencing);
    expect(b.ownedWorkflows()).toEqual([]);
    const now = world.clock.now();
    await a.shutdown();
    await world.idle([b]);
    expect(world.clock.now()).toBe(now);
    expect(b.ownedWorkflows().sort()).toEqual(['x', 'y', 'z']);
    for (const id of ['x', 'y', 'z'])
      expect(await holderOf(world.storage, id)).toMatchObject({ engineId: b.id, epoch: 2 });
    for (const id of ['x', 'y', 'z']) await b.signal(id, 'go', 0);
    await world.idle([b]);
    for (const id of ['x', 'y', 'z']) {
      expect(await b.handle(id).result()).toBe(3);
      expect(runs.get(`${id}:first`)).toBe(1);
      expect(runs.get(`${id}:second`)).toBe(1);
    }
  });

  it('8. crash and reclaim by TTL: not before the session expiresAt + 2000, strictly after it B takes over at epoch 2 and drives it', async () => {
    const { world, engines, runs, sleeper } = await setup(2);
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(sleeper, undefined, { id: 's' });
    await world.idle();
    await world.advance(1000);
    const holder = (await holderOf(world.storage, 's'))!;
    expect(holder.engineId).toBe(a.id);
    // A claim lives as long as its engine's session: the session's expiry is the claim's.
    const { expiresAt } = (await sessionOf(world.storage, a.id))!;
    world.crash(a);
    await expect(b.resume('s')).rejects.toBeInstanceOf(WorkflowClaimUnavailableError);
    world.clock.set(expiresAt + 2000);
    await world.maintain([b]);
    expect(b.ownedWorkflows()).toEqual([]);
    world.clock.set(expiresAt + 2001);
    await world.maintain([b]);
    expect(b.ownedWorkflows()).toEqual(['s']);
    expect(await holderOf(world.storage, 's')).toMatchObject({ engineId: b.id, epoch: 2 });
    const timeline = await b.timeline('s');
    expect(timeline.find((e) => e.kind === 'claim-taken-over')?.detail).toMatchObject({
      fromEngineId: a.id,
      fromEpoch: 1,
      toEngineId: b.id,
      toEpoch: 2,
    });
    await world.advance(10_000, { stepMs: 1000 });
    expect(await b.handle('s').result()).toBe('slept');
    expect(runs.get('s:before')).toBe(1);
    expect(runs.get('s:after')).toBe(1);
  });

  it('9. crash and reclaim by liveness: B takes over on its next pass, long before the TTL', async () => {
    const { world, engines, sleeper } = await setup(0);
    const a = await world.engine([sleeper], { ...fencing, liveness: world.liveness });
    const b = await world.engine([sleeper], { ...fencing, liveness: world.liveness });
    void engines;
    await a.start(sleeper, undefined, { id: 'l' });
    await world.idle();
    await world.maintain([b]);
    expect(b.ownedWorkflows()).toEqual([]); // A is alive
    world.crash(a); // the oracle now reports A dead
    await world.maintain([b]);
    expect(b.ownedWorkflows()).toEqual(['l']);
    expect(world.clock.now()).toBeLessThan((await holderOf(world.storage, 'l'))!.claimedAt + 3000);
    expect(b.metrics().claimAttempts.takeover).toBe(1);
  });

  it('reclaim() alone moves every workflow of a dead engine, asking the liveness oracle once per engine', async () => {
    const { world, sleeper } = await setup(0);
    const a = await world.engine([sleeper], { ...fencing, liveness: world.liveness });
    const asked: string[] = [];
    const counting = {
      hold: (engineId: string) => world.liveness.hold(engineId),
      isDead: (engineId: string) => {
        asked.push(engineId);
        return world.liveness.isDead(engineId);
      },
    };
    const b = await world.engine([sleeper], { ...fencing, liveness: counting });
    for (const id of ['r1', 'r2', 'r3', 'r4', 'r5']) await a.start(sleeper, undefined, { id });
    await world.idle();
    world.crash(a);
    asked.length = 0;
    await b.reclaim();
    await world.idle();
    expect([...b.ownedWorkflows()].sort()).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(asked.filter((id) => id === a.id)).toHaveLength(1);
    expect(b.metrics().claimAttempts.takeover).toBe(5);
  });

  it('10. ownerless but running: the reclaim scan finds it and drives it', async () => {
    // The engine that will run it comes later, so it cannot learn of the start from the change feed.
    const { world, runs, parked } = await setup(0);
    const observer = await world.engine([parked], { ...fencing, claimWorkflows: false });
    await observer.start(parked, undefined, { id: 'orphan' });
    await world.idle();
    expect(await holderOf(world.storage, 'orphan')).toBeNull();
    const engine = await world.engine([parked], { ...fencing, recover: false });
    expect(engine.ownedWorkflows()).toEqual([]);
    await world.maintain([engine]);
    expect(engine.ownedWorkflows()).toEqual(['orphan']);
    expect(runs.get('orphan:first')).toBe(1);
    expect(observer.ownedWorkflows()).toEqual([]);
  });

  it('11. eligibility: no definition, no claim; a workflow found terminal after takeover is released, not driven', async () => {
    const { world, engines, runs, parked, sleeper } = await setup(1);
    const a = engines[0]!;
    await a.start(parked, undefined, { id: 'elig' });
    await world.idle();
    world.crash(a);
    await world.clock.advance(6000);
    const stranger = await world.engine([sleeper], fencing);
    await world.maintain([stranger]);
    expect(stranger.ownedWorkflows()).toEqual([]);
    expect((await holderOf(world.storage, 'elig'))?.engineId).toBe(a.id);
    // a finished workflow with a stale holder left behind
    const b = await world.engine([parked, sleeper], fencing);
    await b.signal('elig', 'go', 0);
    await world.idle([b]);
    await world.maintain([b]);
    await world.idle([b]);
    expect(await b.handle('elig').result()).toBe(3);
    const done = await world.engine([sleeper], fencing);
    await done.start(sleeper, undefined, { id: 'finished' });
    await world.idle([done]);
    await done.terminate('finished');
    await world.storage.batch([
      {
        type: 'put',
        key: keys.ownerHolder('finished'),
        value: JSON.stringify({
          engineId: 'ghost',
          epoch: 9,
          claimedAt: world.clock.now() - 10_000,
          expiresAt: world.clock.now() - 9000,
        }),
      },
    ]);
    const before = runs.get('finished:after') ?? 0;
    await world.maintain([b]);
    // The takeover loads the workflow, finds it terminal and releases it: wait until B is idle (over
    // PostgreSQL the release may still be in flight when the maintenance pass returns).
    await world.idle([b]);
    await expect.poll(() => holderOf(world.storage, 'finished'), { timeout: 5_000 }).toBeNull();
    expect(b.ownedWorkflows()).not.toContain('finished');
    expect(runs.get('finished:after') ?? 0).toBe(before);
    expect((await b.timeline('finished')).map((e) => e.kind)).toEqual(
      expect.arrayContaining(['terminated', 'claim-taken-over', 'claim-released']),
    );
  });

  it('12. takeover isolation: A learns at its next pass that it lost X, keeps Y, and Y completes on A', async () => {
    const { world, engines, runs, parked } = await setup(2);
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(parked, undefined, { id: 'X' });
    await a.start(parked, undefined, { id: 'Y' });
    await world.idle();
    // X's holder alone is found expired (an older build's holder that carries its own expiry, run out)
    const holderX = (await holderOf(world.storage, 'X'))!;
    await world.storage.batch([
      {
        type: 'put',
        key: keys.ownerHolder('X'),
        value: JSON.stringify({ ...holderX, expiresAt: world.clock.now() - 10_000 }),
      },
    ]);
    await world.maintain([b]);
    expect(b.ownedWorkflows()).toEqual(['X']);
    await world.maintain([a]);
    expect(a.ownedWorkflows()).toEqual(['Y']);
    expect(a.warnings.some((w) => w.name === 'WorkflowClaimLostWarning' && w.workflowId === 'X')).toBe(true);
    expect(a.metrics().claimsLost).toBe(1);
    expect(a.metrics().renewalFailures).toBe(0); // the session renewed fine: only X was taken
    await a.signal('Y', 'go', 0);
    await a.signal('X', 'go', 0);
    await world.idle();
    expect(await a.handle('Y').result()).toBe(3);
    expect(await a.handle('X').result()).toBe(3);
    expect(runs.get('Y:second')).toBe(1);
    expect(runs.get('X:second')).toBe(1);
  });

  it('13. zombie writes: the deposed engine is refused, a fence-rejection is recorded, and the state is the successor’s', async () => {
    const { world, runs, open, gated, definitions } = await setup(0);
    // B's takeover leaves A a notice (notices.ts); A hears it only later, as a frozen engine would: its
    // late write is already on its way and meets the fence
    const a = await world.engine(definitions, fencing, { hears: notNotices });
    const b = await world.engine(definitions, fencing);
    await a.start(gated, undefined, { id: 'z' });
    await world.maintain([a]);
    // A hangs in its activity; time passes for B only, and B takes over
    await world.advance(7000, { stepMs: 1000, engines: [b] });
    expect(b.ownedWorkflows()).toEqual(['z']);
    open('z#1', 0); // A's stale activity finishes now and A tries to commit it
    await world.idle([a]);
    expect(a.events.some((e) => e.type === 'write.fenced-out' && e.workflowId === 'z')).toBe(true);
    const rejections = await b.fenceRejections('z');
    expect(rejections).toEqual([
      expect.objectContaining({ workflowId: 'z', engineId: a.id, heldEpoch: 1, currentEpoch: 2 }),
    ]);
    expect((await b.describe('z')).state).toEqual({ stage: 'before' });
    // at-least-once: B ran it again, as attempt 2 (the interrupted start was recorded); A's result was refused
    expect(runs.get('z:slow#1')).toBe(1);
    expect(runs.get('z:slow#2')).toBe(1);
    expect(
      (await b.timeline('z'))
        .filter((e) => e.kind === 'activity-started')
        .map((e) => [e.engineId, e.detail.attempt]),
    ).toEqual([
      [a.id, 1],
      [b.id, 2],
    ]);
    open('z#2');
    // the activity's result must be committed before time moves, or the 100 ms sleep after it would be
    // scheduled after the advance and never come due (with an asynchronous store, such as PostgreSQL)
    await world.idle([b]);
    await world.advance(200, { engines: [b] });
    expect(await b.handle('z').result()).toBe('slow 2');
  });

  it('14. zombie wake: a signal does not advance X on the deposed engine; the new owner consumes it once', async () => {
    const { world, runs, parked, definitions } = await setup(0);
    // the signal's notification reaches A before B's notice does: the wake guard discards it
    const a = await world.engine(definitions, fencing, { hears: notNotices });
    const b = await world.engine(definitions, fencing);
    await a.start(parked, undefined, { id: 'w' });
    await world.idle();
    await world.advance(7000, { stepMs: 1000, engines: [b] });
    expect(b.ownedWorkflows()).toEqual(['w']);
    await b.signal('w', 'go', 5);
    await world.idle();
    expect(
      a.events.some((e) => e.type === 'wake.discarded' && e.workflowId === 'w' && e.wakeKind === 'signal'),
    ).toBe(true);
    expect(a.warnings.some((w) => w.name === 'WorkflowWakeDiscardedWarning')).toBe(true);
    expect(await b.handle('w').result()).toBe(8);
    expect(runs.get('w:second')).toBe(1);
  });

  it('15. external rotation: B terminates X while A runs it; epoch +1, holder deleted, terminal, A lets it go and says so', async () => {
    const { world, engines, open, gated } = await setup(2);
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(gated, undefined, { id: 'rot' });
    await world.maintain([a]);
    await b.terminate('rot', 'stop it');
    expect(await epochOf(world.storage, 'rot')).toBe('2');
    expect(await holderOf(world.storage, 'rot')).toBeNull();
    const terminal = await world.storage.get(keys.record('rot'));
    // the change feed brings B's notice: A drops the claim before its activity ends
    await world.idle([a]);
    expect(a.ownedWorkflows()).toEqual([]);
    expect(a.events).toContainEqual(
      expect.objectContaining({
        type: 'claim.lost',
        workflowId: 'rot',
        epoch: 1,
        reason: expect.stringMatching(/terminated it \(epoch 1 → 2\)/),
      }),
    );
    open('rot#1');
    await world.idle([a]);
    expect(await world.storage.get(keys.record('rot'))).toBe(terminal);
    expect((await b.describe('rot')).status).toBe('terminated');
    // suspend rotates too
    await a.start(gated, undefined, { id: 'rot2' });
    await world.maintain([a]);
    await b.suspend('rot2');
    expect(await epochOf(world.storage, 'rot2')).toBe('2');
    await world.idle([a]);
    expect(a.ownedWorkflows()).toEqual([]);
    open('rot2#1');
    await world.idle([a]);
    expect((await b.describe('rot2')).status).toBe('suspended');
    expect(await world.storage.scan(keys.ownerNoticesPrefix)).toEqual([]); // read and deleted
  });

  describe('15b. a claim rotated away by another engine leaves its old owner at once (feed) or within one pass; a new run of the id is not stranded', () => {
    const causes = ['terminate', 'suspend', 'time out', 'purge'] as const;
    const cases = causes.flatMap((cause) =>
      [false, true].flatMap((second) =>
        [true, false].map((feed) => ({
          cause,
          second,
          feed,
          name: `${cause}, ${second ? 'with a second claiming engine' : 'A alone'}, ${feed ? 'change feed' : 'no notification (passes only)'}`,
        })),
      ),
    );
    it.each(cases)('$name', async ({ cause, second, feed }) => {
      const { world, runs, parked, definitions } = await setup(0);
      // A claims; O is an observer that rotates, starts and resumes but never claims (the scenario)
      const a = await world.engine(definitions, fencing, feed ? {} : { hears: () => false });
      const o = await world.engine(definitions, { ...fencing, claimWorkflows: false, recover: false });
      const b = second ? await world.engine(definitions, fencing) : null;
      const claimers = b ? [a, b] : [a];
      /** Every claiming engine's view of what it holds matches the holders stored. */
      const viewsMatchStore = async () => {
        for (const engine of claimers) {
          const stored = (await engine.claims()).filter((claim) => claim.holder?.engineId === engine.id);
          expect(engine.ownedWorkflows().sort()).toEqual(stored.map((claim) => claim.workflowId).sort());
          expect(engine.metrics().claimsHeld).toBe(stored.length);
        }
      };
      await a.start(parked, undefined, {
        id: 'w',
        ...(cause === 'time out' ? { executionTimeoutMs: 5000 } : {}),
      });
      await world.idle();
      expect(await holderOf(world.storage, 'w')).toMatchObject({ engineId: a.id, epoch: 1 });
      expect(runs.get('w:first')).toBe(1);

      // O displaces A's claim
      if (cause === 'terminate') await o.terminate('w');
      else if (cause === 'suspend') await o.suspend('w');
      else if (cause === 'time out') {
        // the claiming engines keep their sessions renewed up to the second before the deadline (one left
        // unrenewed for 5 s would be judged frozen, and its next claim taken over: a rerun this test would
        // count); then only O's timer pass runs when the deadline comes, so O is the one that fires it
        await world.advance(4000, { stepMs: 1000, engines: claimers });
        await world.clock.advance(1000);
        await o.runMaintenance();
      } else {
        await o.terminate('w');
        await o.purge('w');
      }
      const rotated = (await o.describe('w').catch(() => null))?.status ?? 'purged';
      expect(rotated).toBe(
        { terminate: 'terminated', suspend: 'suspended', 'time out': 'timed-out', purge: 'purged' }[cause],
      );
      await world.idle();
      if (feed)
        expect(a.ownedWorkflows()).toEqual([]); // the notice arrived with the change feed
      else expect(a.ownedWorkflows()).toEqual(['w']); // nothing told A yet
      await world.maintain([a]); // at the latest, A's next pass reads the notice
      expect(a.ownedWorkflows()).toEqual([]);
      const lost = a.events.find((e) => e.type === 'claim.lost' && e.workflowId === 'w');
      expect(lost).toMatchObject({
        epoch: 1,
        reason: expect.stringMatching(
          /^engine engine-B (terminated it|suspended it|timed it out|purged it)( \(epoch 1 → 2\))?$/,
        ),
      });
      expect(a.warnings).toContainEqual(
        expect.objectContaining({ name: 'WorkflowClaimLostWarning', workflowId: 'w' }),
      );
      await viewsMatchStore();

      // The id goes on: a new run (terminate, time-out, purge) or the same run resumed (suspend), started by
      // O, which never claims: it must be claimed by a claiming engine and finish, once
      if (cause === 'suspend') await o.resume('w');
      else await o.start(parked, undefined, { id: 'w' });
      for (let pass = 0; pass < 3 && (await holderOf(world.storage, 'w')) === null; pass++)
        await world.advance(1000, { engines: claimers });
      const holder = await holderOf(world.storage, 'w');
      expect(holder).not.toBeNull();
      expect(claimers.map((engine) => engine.id)).toContain(holder!.engineId);
      await viewsMatchStore();
      await o.signal('w', 'go', 1);
      await world.idle();
      await world.maintain(claimers);
      expect(await o.handle('w').result()).toBe(4);
      // the first activity ran once per run (a resumed run had it already), the second once
      expect(runs.get('w:first')).toBe(cause === 'suspend' ? 1 : 2);
      expect(runs.get('w:second')).toBe(1);
      await viewsMatchStore();
      expect(await world.storage.scan(keys.ownerNoticesPrefix)).toEqual([]);
      const report = await a.shutdown();
      expect(report.claimsReleased).toBe(0);
    });

    it('a purge that deletes a holder naming another engine leaves that engine a notice', async () => {
      const { world, parked, definitions } = await setup(0);
      const a = await world.engine(definitions, fencing, { hears: () => false });
      const o = await world.engine(definitions, { ...fencing, claimWorkflows: false, recover: false });
      await a.start(parked, undefined, { id: 'p' });
      await world.idle();
      const holderRaw = await world.storage.get(keys.ownerHolder('p'));
      await o.terminate('p');
      // a finished workflow keeps a holder only for a moment (a takeover that found it finished releases it):
      // put A's back, as if A were in the middle of that
      await world.storage.batch([{ type: 'put', key: keys.ownerHolder('p'), value: holderRaw! }]);
      await world.storage.batch([{ type: 'delete', key: keys.ownerNotice(a.id, 'p') }]);
      await o.purge('p');
      const notice = await world.storage.get(keys.ownerNotice(a.id, 'p'));
      expect(JSON.parse(notice!)).toMatchObject({ epoch: 1, newEpoch: null, cause: 'purged', by: o.id });
      await world.maintain([a]);
      expect(a.ownedWorkflows()).toEqual([]);
      expect(await world.storage.get(keys.ownerNotice(a.id, 'p'))).toBeNull();
    });
  });

  it('15c. a takeover of an engine judged dead while it lives (its liveness lost) tells it: it drops the claim at its next pass, where the sweep does not reach', async () => {
    const { world, parked, definitions } = await setup(0);
    // an oracle whose "dead" may be a live engine cut off from it (PostgreSQL's, not Web Locks')
    const liveness = new InMemoryLiveness({ deathIsFinal: false });
    // a sweep page of 2 holders: A's claim on 'z' sorts after B's four, beyond the first page
    const options = { ...fencing, liveness, reclaimBatchSize: 2 };
    const a = await world.engine(definitions, options, { hears: () => false });
    const b = await world.engine(definitions, options);
    for (const id of ['a1', 'a2', 'a3', 'a4']) await b.start(parked, undefined, { id });
    await a.start(parked, undefined, { id: 'z' });
    await world.idle();
    liveness.kill(a.id); // A lives on, but the oracle says dead (a dropped lock connection, say)
    for (let pass = 0; pass < 3; pass++) await world.maintain([b]); // B's sweep reaches 'z' on its third page
    expect(await holderOf(world.storage, 'z')).toMatchObject({ engineId: b.id, epoch: 2 });
    expect(JSON.parse((await world.storage.get(keys.ownerNotice(a.id, 'z')))!)).toMatchObject({
      epoch: 1,
      newEpoch: 2,
      cause: 'taken-over',
      by: b.id,
    });
    await world.maintain([a]);
    expect(a.ownedWorkflows()).toEqual([]);
    expect(a.metrics().claimsHeld).toBe(0);
    expect(a.events).toContainEqual(
      expect.objectContaining({
        type: 'claim.lost',
        workflowId: 'z',
        reason: expect.stringMatching(/took it over/),
      }),
    );
    // a takeover from an engine whose session ended (a graceful stop) leaves no notice
    const c = await world.engine(definitions, options);
    await c.start(parked, undefined, { id: 'y' });
    await world.idle();
    await c.shutdown();
    for (let pass = 0; pass < 3; pass++) await world.maintain([b]);
    expect(await holderOf(world.storage, 'y')).toMatchObject({ engineId: b.id });
    expect(await world.storage.scan(keys.ownerNoticesOf(c.id))).toEqual([]);
    // nor does an engine the oracle reports dead for good (Web Locks: a closed tab, a crashed worker)
    const other = new TestWorld({ storage: await openStore() });
    const d = await other.engine(definitions, { ...fencing, liveness: other.liveness });
    const e = await other.engine(definitions, { ...fencing, liveness: other.liveness });
    await d.start(parked, undefined, { id: 'x' });
    await other.idle();
    other.crash(d);
    await other.maintain([e]);
    expect(await holderOf(other.storage, 'x')).toMatchObject({ engineId: e.id, epoch: 2 });
    expect(await other.storage.scan(keys.ownerNoticesPrefix)).toEqual([]);
  });

  it('15d. a zombie whose commit failed on a storage error says it lost the workflow when it reloads it: taken over and finished, or terminated and purged (cluster seed 206)', async () => {
    const { world, open, gated, definitions } = await setup(0);
    const options = { ...fencing, liveness: world.liveness };
    // A hears nothing and runs only its reclaim pass (reclaim()), which reloads what stopped on a storage
    // error: neither the change feed nor the renewal pass's notices tell it first
    const a = await world.engine(definitions, options, { hears: () => false });
    const b = await world.engine(definitions, options);
    await a.start(gated, undefined, { id: 'g' });
    await a.start(gated, undefined, { id: 'q' });
    await world.maintain([a, b]); // settles turns; A's activities wait at their gates
    // A's connection is gone: its commits of both activities fail
    a.wrapper.setFaults({ writeFailureRate: 1 });
    a.wrapper.enabled = true;
    open('g#1', 0);
    open('q#1', 0);
    await world.idle([a]);
    for (const id of ['g', 'q'])
      expect(a.warnings).toContainEqual(
        expect.objectContaining({
          name: 'StorageWarning',
          message: expect.stringMatching(
            new RegExp(`'${id}' stopped on a storage error and will be reloaded`),
          ),
        }),
      );
    // meanwhile B takes both over (the oracle says A is dead): it finishes 'g', and 'q' is terminated and
    // purged
    world.liveness.kill(a.id);
    await world.maintain([b]);
    expect(await holderOf(world.storage, 'g')).toMatchObject({ engineId: b.id, epoch: 2 });
    await b.terminate('q');
    await b.purge('q');
    open('g#2', 0);
    await world.idle([b]);
    await world.advance(200, { engines: [b] });
    expect((await b.describe('g')).status).toBe('completed');
    // A's connection is back; its reclaim pass reloads both: each loss is said, none is silent
    a.wrapper.enabled = false;
    await a.reclaim();
    await world.idle([a]);
    const lost = a.events.filter((e) => e.type === 'claim.lost');
    // 'g' is loaded and found at another epoch (finished there): lost, whatever its status
    expect(lost).toContainEqual(
      expect.objectContaining({
        workflowId: 'g',
        epoch: 1,
        reason: expect.stringMatching(/loaded at epoch 2/),
      }),
    );
    // 'q' has no record left: the release finds the epoch moved and says so
    expect(lost).toContainEqual(
      expect.objectContaining({
        workflowId: 'q',
        epoch: 1,
        reason: expect.stringMatching(/its release found the epoch at 3/),
      }),
    );
    expect(a.ownedWorkflows()).toEqual([]);
    expect(a.metrics().claimsHeld).toBe(0);
  });

  it('15e. handoff inside a partly finished ctx.all: the members already recorded are not run again, the rest are, once', async () => {
    const world = new TestWorld({ storage: await openStore() });
    const runs = new Map<string, number>();
    const gates: (() => void)[] = [];
    const fan = defineWorkflow({
      name: 'fan',
      version: 1,
      *run(ctx) {
        const count = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);
        const [x, y, z] = yield* ctx.all([
          ctx.activity('x', () => (count('x'), 'x')),
          ctx.activity('y', () => (count('y'), 'y')),
          ctx.activity('z', ({ attempt }) => {
            count(`z#${attempt}`);
            return new Promise<string>((resolve) => gates.push(() => resolve(`z${attempt}`)));
          }),
        ]);
        return `${x}${y}${z}`;
      },
    });
    const options = { ...fencing, liveness: world.liveness };
    const a = await world.engine([fan], options);
    const b = await world.engine([fan], options);
    await a.start(fan, undefined, { id: 'fan' });
    await world.maintain([a]); // x and y finish and are recorded; z waits at its gate on A
    const completed = (await a.timeline('fan')).filter((e) => e.kind === 'activity-completed');
    expect(completed.map((e) => e.detail.name).sort()).toEqual(['x', 'y']);
    world.crash(a);
    await world.maintain([b]); // B takes it over and replays up to the unfinished ctx.all
    expect(await holderOf(world.storage, 'fan')).toMatchObject({ engineId: b.id, epoch: 2 });
    gates.at(-1)!();
    await world.idle([b]);
    expect(await b.handle('fan').result()).toBe('xyz2');
    expect(Object.fromEntries(runs)).toEqual({ x: 1, y: 1, 'z#1': 1, 'z#2': 1 });
  });

  it('15f. an engine whose renewal is overdue (woken by its change feed before its renewal timer) renews its session before it claims: its claim is not taken over at the next look, and no step runs twice', async () => {
    const { world, runs, parked, definitions } = await setup(0);
    // A hears nothing (it acts by its passes only); B claims from its change feed
    const a = await world.engine(definitions, fencing, { hears: () => false });
    const b = await world.engine(definitions, fencing);
    const o = await world.engine(definitions, { ...fencing, claimWorkflows: false, recover: false });
    // five seconds in which B's timers do not run (a frozen tab): its session lapsed past the grace
    await world.advance(5000, { stepMs: 1000, engines: [a] });
    expect((await sessionOf(world.storage, b.id))!.renewedAt).toBe(world.clock.now() - 5000);
    // A is busy elsewhere; B wakes to the start of a workflow nobody holds and claims it from its feed
    await o.start(parked, undefined, { id: 'w' });
    await world.idle([b, o]);
    expect(await holderOf(world.storage, 'w')).toMatchObject({ engineId: b.id });
    // it renewed its session first: the claim is bound to a live session
    expect((await sessionOf(world.storage, b.id))!.renewedAt).toBe(world.clock.now());
    expect(b.warnings).toEqual([]);
    // A's next passes see B live: no takeover, the first step ran once
    await world.advance(1000, { engines: [a] });
    expect(await holderOf(world.storage, 'w')).toMatchObject({ engineId: b.id });
    expect(b.ownedWorkflows()).toEqual(['w']);
    expect(a.ownedWorkflows()).toEqual([]);
    await o.signal('w', 'go', 1);
    await world.idle();
    expect(await o.handle('w').result()).toBe(4);
    expect(runs.get('w:first')).toBe(1);
    expect(runs.get('w:second')).toBe(1);
  });

  it('16. same-engine suspend then resume succeeds at the next epoch', async () => {
    const { world, engines, parked } = await setup(1);
    const a = engines[0]!;
    await a.start(parked, undefined, { id: 'sr' });
    await world.idle();
    await a.suspend('sr');
    expect(await epochOf(world.storage, 'sr')).toBe('2');
    await a.resume('sr');
    await world.idle();
    expect(await holderOf(world.storage, 'sr')).toMatchObject({ engineId: a.id, epoch: 3 });
    await a.signal('sr', 'go', 0);
    await world.idle();
    expect(await a.handle('sr').result()).toBe(3);
  });

  it('17. epoch monotonicity', async () => {
    const { world, engines, parked } = await setup(1);
    const a = engines[0]!;
    await a.start(parked, undefined, { id: 'new' });
    expect(await epochOf(world.storage, 'new')).toBe('1');
    await world.storage.batch([{ type: 'put', key: keys.ownerEpoch('reused'), value: '7' }]);
    await a.start(parked, undefined, { id: 'reused' });
    expect(await epochOf(world.storage, 'reused')).toBe('8');
    await world.idle();
    await a.shutdown(); // ends A's session: its holders stay, free at once, and the epoch is untouched
    expect(await holderOf(world.storage, 'reused')).toMatchObject({ engineId: a.id, epoch: 8 });
    expect(await epochOf(world.storage, 'reused')).toBe('8');
    const b = await world.engine([parked], fencing);
    await world.idle([b]);
    expect(await holderOf(world.storage, 'reused')).toMatchObject({ engineId: b.id, epoch: 9 });
    // a release deletes only the holder: B terminates it with its claim folded into the terminal write
    await b.signal('reused', 'go', 0);
    await world.idle([b]);
    expect(await holderOf(world.storage, 'reused')).toBeNull();
    expect(await epochOf(world.storage, 'reused')).toBe('9');
    // takeover mints from E even when the stale holder claims another epoch
    const stale = (await holderOf(world.storage, 'new'))!;
    await world.storage.batch([
      {
        type: 'put',
        key: keys.ownerHolder('new'),
        value: JSON.stringify({
          ...stale,
          engineId: 'ghost',
          epoch: 40,
          expiresAt: world.clock.now() - 10_000,
        }),
      },
    ]);
    const c = await world.engine([parked], fencing);
    await world.maintain([c]);
    const epochs = [
      await epochOf(world.storage, 'new'),
      String((await holderOf(world.storage, 'new'))?.epoch),
    ];
    expect(epochs[0]).toBe(epochs[1]);
    expect(Number(epochs[0])).toBeLessThan(40);
  });

  it('18. renewal: one session write per pass whatever the number of claims, holders untouched; a throwing renewal keeps the claims; a lapsed session re-validates; manual mode renews only in runMaintenance', async () => {
    const { world, engines, parked } = await setup(1);
    const a = engines[0]!;
    for (const id of ['rn', 'rn2', 'rn3']) await a.start(parked, undefined, { id });
    await world.idle();
    const holders = await Promise.all(['rn', 'rn2', 'rn3'].map((id) => holderOf(world.storage, id)));
    const before = (await sessionOf(world.storage, a.id))!;
    await world.clock.advance(500);
    expect(world.clock.pendingTimers).toBe(0);
    expect(await sessionOf(world.storage, a.id)).toEqual(before);
    const writes = a.metrics().storageTransactions;
    await a.runMaintenance();
    expect(a.metrics().storageTransactions - writes).toBe(1); // the session, nothing per claim
    const after = (await sessionOf(world.storage, a.id))!;
    expect(after).toMatchObject({
      engineId: a.id,
      startedAt: before.startedAt,
      expiresAt: before.expiresAt + 500,
    });
    expect(await Promise.all(['rn', 'rn2', 'rn3'].map((id) => holderOf(world.storage, id)))).toEqual(holders);
    // a renewal that throws keeps the claims
    a.wrapper.setFaults({ writeFailureRate: 1 });
    a.wrapper.enabled = true;
    await a.runMaintenance();
    a.wrapper.enabled = false;
    expect(a.ownedWorkflows().sort()).toEqual(['rn', 'rn2', 'rn3']);
    expect(a.metrics().claimsLost).toBe(0);
    // a lapsed session (A could not renew past TTL + grace) re-validates its claims: one taken meanwhile is
    // dropped, the others are kept
    await world.clock.advance(6000);
    await world.storage.batch([
      {
        type: 'put',
        key: keys.ownerHolder('rn3'),
        value: JSON.stringify({ ...holders[2], engineId: 'elsewhere' }),
      },
    ]);
    await a.runMaintenance();
    expect(a.ownedWorkflows().sort()).toEqual(['rn', 'rn2']);
    expect(a.metrics().claimsLost).toBe(1);
    await a.signal('rn', 'go', 0);
    await world.idle();
    expect(await a.handle('rn').result()).toBe(3);
    expect(a.warnings.filter((w) => w.name === 'WorkflowClaimLostWarning').map((w) => w.workflowId)).toEqual([
      'rn3',
    ]);
  });

  it('19. cooldown: right after losing X, the takeover attempt is skipped and counted as backoff_skipped', async () => {
    const { world, engines, parked } = await setup(2);
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(parked, undefined, { id: 'cd' });
    await world.idle();
    // A's session expires at +3 s; B takes it over at its pass at +6 s, and A learns it then (B's notice)
    await world.advance(6000, { stepMs: 1000, engines: [b] });
    expect(b.ownedWorkflows()).toEqual(['cd']);
    await world.maintain([a]); // A's session had lapsed: it renews and re-validates
    expect(a.metrics().claimsLost).toBe(1);
    // B dies at once, its claim expires only later; but make it look expired now
    const holder = (await holderOf(world.storage, 'cd'))!;
    world.crash(b);
    await world.storage.batch([
      {
        type: 'put',
        key: keys.ownerHolder('cd'),
        value: JSON.stringify({ ...holder, expiresAt: world.clock.now() - 10_000 }),
      },
    ]);
    await world.maintain([a]);
    expect(a.ownedWorkflows()).toEqual([]);
    expect(a.metrics().claimAttempts.backoff_skipped).toBeGreaterThanOrEqual(1);
    await world.advance(1000, { engines: [a] });
    expect(a.ownedWorkflows()).toEqual(['cd']);
  });

  it('20. wake guard: rules, and timers kept for the owner or collected when finished', async () => {
    const { world, engines, sleeper } = await setup(2);
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(sleeper, undefined, { id: 'wg' });
    await world.idle();
    // a sleep timer firing on a non-owner stays in storage for the owner
    await world.advance(9000, { stepMs: 1000, engines: [a] });
    await world.clock.advance(1000);
    await b.runMaintenance();
    expect((await world.storage.scan('timer:')).length).toBe(1);
    await world.maintain([a]);
    expect(await a.handle('wg').result()).toBe('slept');
    // for a terminal workflow the timer is collected
    await a.start(sleeper, undefined, { id: 'done' });
    await world.idle();
    const timerKey = (await world.storage.scan('timer:'))[0]!.key;
    await world.storage.batch([
      {
        type: 'put',
        key: keys.record('done'),
        value: (await world.storage.get(keys.record('done')))!.replace('"running"', '"terminated"'),
      },
    ]);
    await world.clock.advance(10_000);
    await b.runMaintenance();
    expect(await world.storage.get(timerKey)).toBeNull();
  });

  it('21. cross-engine signal: the owner delivers it within one pass, at once with the change feed; only the signalled race branch wins', async () => {
    const { world, engines, racer } = await setup(2);
    const [a, b] = engines as [TestEngine, TestEngine];
    await a.start(racer, undefined, { id: 'sig' });
    await world.idle();
    await b.signal('sig', 'right', 'R');
    await world.idle(); // no maintenance pass: the change feed woke the owner
    expect(await a.handle('sig').result()).toEqual({ index: 1, value: 'R' });
    expect((await a.timeline('sig')).filter((e) => e.kind === 'signal-consumed')).toHaveLength(1);
    // without a change feed, the poll delivers it within one pass
    const quiet = new MemoryStorage();
    const noFeed: Storage = Object.assign(Object.create(quiet) as Storage, {
      capabilities: { ...quiet.capabilities, changeFeed: false },
      watch: undefined,
    });
    const world2 = new TestWorld({ storage: noFeed });
    const a2 = await world2.engine([racer], fencing);
    const b2 = await world2.engine([racer], fencing);
    await a2.start(racer, undefined, { id: 'sig2' });
    await world2.idle();
    await b2.signal('sig2', 'left', 'L');
    await world2.idle();
    expect((await a2.describe('sig2')).status).toBe('running');
    await world2.maintain([a2]);
    expect(await a2.handle('sig2').result()).toEqual({ index: 0, value: 'L' });
  });

  it('22. cross-engine update: submitted through a non-owner, applied once by the owner, the caller gets the result', async () => {
    let applied = 0;
    const counter = defineWorkflow({
      name: 'counter',
      version: 1,
      *run(ctx) {
        ctx.state.n = 0;
        yield* ctx.waitUntil(() => (ctx.state.n as number) >= 10);
        return ctx.state.n;
      },
      updates: {
        add: { handle: (state, arg) => (applied++, (state.n = (state.n as number) + (arg as number))) },
      },
    });
    const world = new TestWorld({ storage: await openStore() });
    const a = await world.engine([counter], fencing);
    const b = await world.engine([counter], fencing);
    await a.start(counter, undefined, { id: 'up' });
    await world.idle();
    expect(await b.update('up', 'add', 4)).toBe(4);
    expect(await b.update('up', 'add', 6)).toBe(10);
    await world.idle();
    expect(applied).toBe(2);
    expect(await b.handle('up').result()).toBe(10);
    expect(a.ownedWorkflows()).toEqual([]);
  });

  it('23. cross-engine result: C waits on a workflow completing on B; a transient read failure keeps it pending (workflow-lease) or rejects (none)', async () => {
    const { world, engines, parked } = await setup(3);
    const [b, , c] = engines as [TestEngine, TestEngine, TestEngine];
    await b.start(parked, undefined, { id: 'res' });
    await world.idle();
    c.wrapper.setFaults({ readFailureRate: 1 });
    c.wrapper.enabled = true;
    const waiting = c.handle('res').result();
    let settled = false;
    void waiting.then(() => (settled = true)).catch(() => (settled = true));
    await world.idle([c]);
    expect(settled).toBe(false);
    c.wrapper.enabled = false;
    await b.signal('res', 'go', 1);
    await world.idle();
    expect(await waiting).toBe(4);
    expect(c.resultWaiters()[0]).toMatchObject({
      workflowId: 'res',
      settled: { via: expect.stringMatching(/change-feed|poll/) },
    });
    // under none, the failing read rejects
    const world2 = new TestWorld();
    const n = await world2.engine([parked]);
    await n.start(parked, undefined, { id: 'res' });
    await world2.idle();
    n.wrapper.setFaults({ readFailureRate: 1 });
    n.wrapper.enabled = true;
    await expect(n.handle('res').result()).rejects.toThrow(/injected/);
  });

  it('24. child across engines: a parent on A sees its child complete on B; a deposed parent engine does not deliver it', async () => {
    const child = defineWorkflow({
      name: 'remote-child',
      version: 1,
      *run(ctx) {
        yield* ctx.waitForSignal('finish');
        return 'child done';
      },
    });
    let parentFinishes = 0;
    const parent = defineWorkflow({
      name: 'remote-parent',
      version: 1,
      *run(ctx) {
        const value = yield* ctx.startChild(child, undefined, { id: `${ctx.workflowId}-kid` });
        parentFinishes++;
        return value;
      },
    });
    const world = new TestWorld({ storage: await openStore() });
    const a = await world.engine([parent, child], fencing);
    await a.start(parent, undefined, { id: 'P' });
    await world.idle();
    // the child moves to B (A released only the child's claim, e.g. B took it over)
    const b = await world.engine([parent, child], fencing);
    const kidHolder = (await holderOf(world.storage, 'P-kid'))!;
    await world.storage.batch([
      {
        type: 'put',
        key: keys.ownerHolder('P-kid'),
        value: JSON.stringify({ ...kidHolder, expiresAt: world.clock.now() - 10_000 }),
      },
    ]);
    await world.maintain([b]);
    expect(b.ownedWorkflows()).toEqual(['P-kid']);
    await world.maintain([a]);
    expect(a.ownedWorkflows()).toEqual(['P']);
    await a.signal('P-kid', 'finish');
    await world.idle();
    expect(await a.handle('P').result()).toBe('child done');
    expect(parentFinishes).toBe(1);

    // now the parent engine is deposed before the child finishes
    await a.start(parent, undefined, { id: 'Q' });
    await world.idle();
    await world.advance(7000, { stepMs: 1000, engines: [b] });
    expect(b.ownedWorkflows().sort()).toEqual(['Q', 'Q-kid']);
    await b.signal('Q-kid', 'finish');
    await world.idle();
    expect(await b.handle('Q').result()).toBe('child done');
    expect(parentFinishes).toBe(2);
  });

  it('25. shutdown: the session ends and every claim is free at once; a failed release does not reject; a claim landing during shutdown is released', async () => {
    const { world, engines, parked } = await setup(1);
    const a = engines[0]!;
    for (const id of ['s1', 's2']) await a.start(parked, undefined, { id });
    await world.idle();
    expect(await a.shutdown()).toEqual({ claimsReleased: 2, leaseReleased: false });
    expect((await sessionOf(world.storage, a.id))?.endedAt).toBe(world.clock.now());
    const b = await world.engine([parked], fencing);
    await world.idle([b]);
    expect(b.ownedWorkflows().sort()).toEqual(['s1', 's2']);
    expect((await b.timeline('s1')).find((e) => e.kind === 'claim-taken-over')?.detail).toMatchObject({
      fromEngineId: a.id,
      toEngineId: b.id,
      reason: 'holder-stopped',
    });
    b.wrapper.setFaults({ writeFailureRate: 1 });
    b.wrapper.enabled = true;
    await expect(b.shutdown()).resolves.toEqual({ claimsReleased: 0, leaseReleased: false });
    // a claim that lands while shutting down is released, not driven
    const c = await world.engine([parked], { ...fencing, recover: false });
    await world.clock.advance(10_000);
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    let blocked = false;
    let commits = 0;
    // The first commit of the pass renews C's session; the second is its first claim: hold that one.
    c.wrapper.setFaults({
      delay: (operation) =>
        operation === 'conditionalBatch' && ++commits === 2 ? ((blocked = true), held) : undefined,
    });
    c.wrapper.enabled = true;
    const maintenance = c.runMaintenance();
    await expect.poll(() => blocked).toBe(true);
    const stopping = c.shutdown();
    open();
    await maintenance;
    await stopping;
    expect(blocked).toBe(true);
    expect(c.ownedWorkflows()).toEqual([]);
    // The held claim landed after shutdown began: it was released on its own (its holder deleted). A claim
    // that landed before (the pass claims several at once) went with C's session, which ended.
    const released = c.events.flatMap((event) => (event.type === 'claim.released' ? [event.workflowId] : []));
    expect(released).toHaveLength(1);
    expect(await holderOf(world.storage, released[0]!)).toBeNull();
    expect((await sessionOf(world.storage, c.id))?.endedAt).toBe(world.clock.now());
    for (const id of ['s1', 's2']) {
      const holder = await holderOf(world.storage, id);
      if (holder) expect(holder.engineId).toBe(c.id);
    }
    // Both are free at once: a new engine holds them without any time passing.
    const d = await world.engine([parked], fencing);
    await world.idle([d]);
    expect(d.ownedWorkflows().sort()).toEqual(['s1', 's2']);
  });

  it('25b. an engine that ended its session and then died while a pass was judging it is taken over as stopped', async () => {
    const { world, parked } = await setup(0);
    const a = await world.engine([parked], { ...fencing, liveness: world.liveness });
    await a.start(parked, undefined, { id: 'stopped-then-gone' });
    await world.idle();
    // B's pass reads the sessions (A's is live), then asks the oracle about A: in between, A stops gracefully
    // (its session ends) and its process exits (the oracle says dead), as a worker does on SIGTERM.
    let stoppedInBetween = false;
    const liveness = {
      hold: (engineId: string) => world.liveness.hold(engineId),
      isDead: async (engineId: string) => {
        if (engineId === a.id && !stoppedInBetween) {
          stoppedInBetween = true;
          await a.shutdown();
          world.liveness.kill(a.id);
        }
        return world.liveness.isDead(engineId);
      },
    };
    const b = await world.engine([parked], { ...fencing, liveness, recover: false });
    await world.maintain([b]);
    expect(stoppedInBetween).toBe(true);
    expect(b.ownedWorkflows()).toEqual(['stopped-then-gone']);
    expect(
      (await b.timeline('stopped-then-gone')).find((e) => e.kind === 'claim-taken-over')?.detail,
    ).toMatchObject({
      fromEngineId: a.id,
      reason: 'holder-stopped',
    });
  });

  it('25c. a takeover decided on a slow answer of the oracle is stamped when the answer came, not before', async () => {
    // Found by the cluster soak (seed 12): a reclaim pass slow enough to read the sessions again asked the
    // oracle again in the middle of a database restart; the answer took seconds, and the takeover was written
    // with the time read before asking — a time at which the holder was alive and nothing had failed.
    const { world, parked } = await setup(0);
    const a = await world.engine([parked], { ...fencing, liveness: world.liveness });
    await a.start(parked, undefined, { id: 'slow-oracle' });
    await world.idle();
    // A is gone (its lock dropped) and its session lapsed, without its timers running again.
    world.liveness.kill(a.id);
    world.clock.set(world.clock.now() + 3000 + 6000);
    let asked = 0;
    let answeredAt = 0;
    const liveness = {
      hold: (engineId: string) => world.liveness.hold(engineId),
      isDead: async (engineId: string) => {
        if (engineId === a.id && asked < 2) {
          asked++;
          // The first answer makes the pass's reading of the sessions stale (the claim reads them again);
          // the second, asked while deciding the claim, takes 4 s.
          world.clock.set(world.clock.now() + (asked === 1 ? 2000 : 4000));
          if (asked === 2) answeredAt = world.clock.now();
        }
        return world.liveness.isDead(engineId);
      },
    };
    const b = await world.engine([parked], { ...fencing, liveness, recover: false });
    await world.maintain([b]);
    expect(answeredAt).toBeGreaterThan(0);
    expect(b.ownedWorkflows()).toEqual(['slow-oracle']);
    const takeover = (await b.timeline('slow-oracle')).find((e) => e.kind === 'claim-taken-over')!;
    expect(takeover.detail).toMatchObject({ fromEngineId: a.id, toEngineId: b.id });
    expect(takeover.at).toBeGreaterThanOrEqual(answeredAt);
  });

  it('26. downgrade inertness: a none engine completes a leftover workflow and leaves wf-owner-* untouched', async () => {
    const { world, engines, parked } = await setup(1);
    const a = engines[0]!;
    await a.start(parked, undefined, { id: 'left' });
    await world.idle();
    await a.shutdown();
    const ownerKeys = async () => [
      ...(await world.storage.scan('wf-owner-epoch:')),
      ...(await world.storage.scan('wf-owner-holder:')),
    ];
    const before = await ownerKeys();
    const n = await world.engine([parked]);
    await n.signal('left', 'go', 0);
    await world.idle([n]);
    expect(await n.handle('left').result()).toBe(3);
    expect(await ownerKeys()).toEqual(before);
  });

  it('27. global lease: the second engine waits, then holds epoch 2; a stolen lease deposes the whole engine', async () => {
    const clock = new SimulatedClock();
    const storage = new MemoryStorage();
    const leaseOptions = {
      storage,
      clock,
      ownership: 'lease',
      leaseTtlMs: 3000,
      leaseRenewIntervalMs: 1000,
      leaseWaitTimeoutMs: 60_000,
    } as const;
    const { parked } = counted();
    const first = await createEngine({ ...leaseOptions, workflows: [parked] });
    let secondReady = false;
    const secondPromise = createEngine({ ...leaseOptions, workflows: [parked] }).then(
      (engine) => ((secondReady = true), engine),
    );
    await clock.advance(5000);
    expect(secondReady).toBe(false);
    expect(await first.shutdown()).toEqual({ claimsReleased: 0, leaseReleased: true });
    await clock.advance(1000);
    const second = await secondPromise;
    expect(JSON.parse((await storage.get(keys.leaseHolder))!)).toMatchObject({
      engineId: second.id,
      epoch: 2,
    });
    await second.start(parked, undefined, { id: 'L' });
    // the lease is stolen: the whole engine is deposed at its next renewal
    await storage.batch([
      { type: 'put', key: keys.leaseEpoch, value: '3' },
      {
        type: 'put',
        key: keys.leaseHolder,
        value: JSON.stringify({
          engineId: 'thief',
          epoch: 3,
          claimedAt: clock.now(),
          expiresAt: clock.now() + 3000,
        }),
      },
    ]);
    await clock.advance(1000);
    await expect(second.start(parked, undefined, { id: 'M' })).rejects.toBeInstanceOf(
      EngineLeaseNotHeldError,
    );
    expect(await second.shutdown()).toEqual({ claimsReleased: 0, leaseReleased: false });
    // a timeout when the lease is never released
    const third = createEngine({ ...leaseOptions, leaseWaitTimeoutMs: 4000 });
    const outcome = third.catch((e: unknown) => e);
    await clock.advance(5000);
    expect(await outcome).toMatchObject({ name: 'EngineLeaseAcquisitionTimeoutError' });
  });

  it('27b. lease: the first call after the lease was taken elsewhere fails at once with EngineLeaseNotHeldError, whatever it is', async () => {
    const calls: [string, (engine: Engine) => Promise<unknown>][] = [
      ['start', (engine) => engine.start('parked', undefined, { id: 'N' })],
      ['signal', (engine) => engine.signal('L', 'go', 1)],
      ['cancel', (engine) => engine.cancel('L')],
      ['terminate', (engine) => engine.terminate('L')],
      ['suspend', (engine) => engine.suspend('L')],
    ];
    for (const [name, call] of calls) {
      const clock = new SimulatedClock();
      const storage = new MemoryStorage();
      const { parked } = counted();
      const engine = await createEngine({
        storage,
        clock,
        ownership: 'lease',
        leaseTtlMs: 3000,
        leaseRenewIntervalMs: 1000,
        workflows: [parked],
      });
      await engine.start(parked, undefined, { id: 'L' });
      await engine.idle();
      // Another engine takes the lease; this one has not renewed since, so it does not know yet.
      await storage.batch([
        { type: 'put', key: keys.leaseEpoch, value: '2' },
        {
          type: 'put',
          key: keys.leaseHolder,
          value: JSON.stringify({
            engineId: 'thief',
            epoch: 2,
            claimedAt: clock.now(),
            expiresAt: clock.now() + 3000,
          }),
        },
      ]);
      const error = await call(engine).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, name).toBeInstanceOf(EngineLeaseNotHeldError);
      await engine.shutdown();
    }
  });
});
