/**
 * Holding a parked workflow costs nothing while it waits: an engine's claims live by its session, renewed
 * with one write per pass however many workflows it holds. These tests count storage calls per maintenance
 * pass (not time) with a simulated clock, so they are exact on any machine.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../storage/memory';
import type { CommitGroup, Condition, Operation } from '../../storage/types';
import { TestWorld, type TestEngine } from '../engine.test-support';
import { keys } from '../keys';
import { idsWithoutHolder } from './claim-manager';
import type { EngineOptions } from '../options';
import { defineWorkflow } from '../workflow';

const fencing = {
  ownership: 'workflow-lease',
  workflowClaimTtlMs: 3000,
  workflowClaimRenewIntervalMs: 1000,
} as const satisfies Partial<EngineOptions>;

const week = 7 * 24 * 3600_000;

function workflows() {
  const ran = new Map<string, number>();
  const parked = defineWorkflow({
    name: 'parked-for-a-week',
    version: 1,
    *run(ctx, input: { sleepMs: number }) {
      yield* ctx.sleep(input.sleepMs);
      yield* ctx.activity('after', () => void ran.set(ctx.workflowId, (ran.get(ctx.workflowId) ?? 0) + 1));
      return 'woke';
    },
  });
  return { parked, ran };
}

/** Counts the storage calls an engine makes (through its own view of the shared store). */
function countCalls(engine: TestEngine): () => number {
  let calls = 0;
  engine.wrapper.setFaults({
    delay: () => {
      calls++;
    },
  });
  engine.wrapper.enabled = true;
  return () => calls;
}

/** The shared store, counting the keys read by key (`get`, `getMany`), whoever calls. */
class CountingStorage extends MemoryStorage {
  keysReadByKey = 0;

  override get(key: string) {
    this.keysReadByKey++;
    return super.get(key);
  }

  override getMany(keysToRead: readonly string[]) {
    this.keysReadByKey += keysToRead.length;
    return super.getMany(keysToRead);
  }
}

describe('holding parked workflows', () => {
  it('an engine holding 10,000 parked workflows keeps them through 60 s of passes, with the same few storage calls per pass, and a second engine takes none', async () => {
    const { parked } = workflows();
    const world = new TestWorld();
    const a = await world.engine([parked], fencing);
    const b = await world.engine([parked], fencing);
    const count = 10_000;
    for (let i = 0; i < count; i++) await a.start(parked, { sleepMs: week }, { id: `p-${i}` });
    await world.idle();
    expect(a.ownedWorkflows()).toHaveLength(count);

    const callsOfA = countCalls(a);
    const callsOfB = countCalls(b);
    const perPass: number[] = [];
    for (let second = 0; second < 60; second++) {
      const before = callsOfA();
      await world.clock.advance(1000);
      await world.maintain([a]);
      perPass.push(callsOfA() - before);
      await world.maintain([b]);
    }
    expect(a.ownedWorkflows()).toHaveLength(count);
    expect(a.metrics().claimsLost).toBe(0);
    // One session write and a handful of bounded scans per pass, whatever the number of claims held (the
    // once-a-minute housekeeping of purge.ts adds its two scans to one pass in sixty).
    expect(Math.max(...perPass)).toBeLessThanOrEqual(15);
    expect(Math.max(...perPass) - Math.min(...perPass)).toBeLessThanOrEqual(2);
    expect(perPass.filter((calls) => calls !== Math.min(...perPass)).length).toBeLessThanOrEqual(2);
    expect(b.ownedWorkflows()).toEqual([]);
    expect(b.metrics().claimAttempts.takeover).toBe(0);
    // B looks at one page of holders per pass, not all of them.
    expect(callsOfB() / 60).toBeLessThanOrEqual(15);
    await world.shutdownAll();
  }, 120_000);

  it('a due timer of a dead engine’s parked workflow fires exactly once, on another engine, and every other parked workflow becomes reachable', async () => {
    const { parked, ran } = workflows();
    const world = new TestWorld();
    const options = { ...fencing, liveness: world.liveness, reclaimBatchSize: 50 };
    const a = await world.engine([parked], options);
    const b = await world.engine([parked], options);
    // 300 workflows parked for a week, and one whose timer falls due in 5 s, last in key order.
    for (let i = 0; i < 300; i++)
      await a.start(parked, { sleepMs: week }, { id: `p-${String(i).padStart(3, '0')}` });
    await a.start(parked, { sleepMs: 5000 }, { id: 'z-due' });
    await world.idle();
    world.crash(a);
    // B learns of the death only through its own passes (the liveness oracle says A is dead).
    await world.clock.advance(5000);
    await b.runMaintenance();
    await world.idle([b]);
    expect(await b.handle('z-due').result()).toBe('woke');
    expect(ran.get('z-due')).toBe(1);
    const timeline = await b.timeline('z-due');
    expect(timeline.filter((entry) => entry.kind === 'timer-fired')).toHaveLength(1);
    expect(timeline.find((entry) => entry.kind === 'claim-taken-over')?.detail).toMatchObject({
      fromEngineId: a.id,
      toEngineId: b.id,
      reason: 'holder-dead',
    });
    // Everything else is reachable too: B has taken the rest over (its timers are a week away).
    for (let pass = 0; pass < 10 && b.ownedWorkflows().length < 300; pass++) {
      await world.clock.advance(1000);
      await world.maintain([b]);
    }
    expect(b.ownedWorkflows().length).toBeGreaterThanOrEqual(300);
    await world.shutdownAll();
  });

  it('a dead engine’s workflow whose timer falls due within the grace is taken over first, before the sweep of its parked ones', async () => {
    const { parked, ran } = workflows();
    const world = new TestWorld();
    const options = { ...fencing, liveness: world.liveness };
    const a = await world.engine([parked], options);
    const b = await world.engine([parked], options);
    // 300 workflows parked for a week (the sweep's first page and more), and one whose timer falls due in
    // 1.5 s (inside the 2 s grace), last in key order; one due in 60 s is left to the sweep.
    for (let i = 0; i < 300; i++)
      await a.start(parked, { sleepMs: week }, { id: `p-${String(i).padStart(3, '0')}` });
    await a.start(parked, { sleepMs: 1500 }, { id: 'z-due' });
    await a.start(parked, { sleepMs: 60_000 }, { id: 'z-later' });
    await world.idle();
    world.crash(a);
    await b.reclaim(); // what a host runs the moment it learns A died
    const takeovers = b.events.flatMap((event) =>
      event.type === 'claim.taken-over' ? [event.workflowId] : [],
    );
    expect(takeovers.length).toBeGreaterThanOrEqual(300);
    expect(takeovers[0]).toBe('z-due');
    expect(takeovers.indexOf('z-later')).toBeGreaterThan(200);
    await world.clock.advance(1500);
    await b.runMaintenance();
    await world.idle([b]);
    expect(await b.handle('z-due').result()).toBe('woke');
    expect(ran.get('z-due')).toBe(1);
    await world.shutdownAll();
  });

  it('an idle engine’s passes read no holder one by one while another engine holds 2,000 parked workflows', async () => {
    const { parked } = workflows();
    const storage = new CountingStorage();
    const world = new TestWorld({ storage });
    const a = await world.engine([parked], fencing);
    const b = await world.engine([parked], fencing);
    for (let i = 0; i < 2_000; i++) await a.start(parked, { sleepMs: week }, { id: `p-${i}` });
    await world.idle();

    let readByB = 0;
    for (let second = 0; second < 20; second++) {
      await world.clock.advance(1000);
      await world.maintain([a]); // A renews its session
      const before = storage.keysReadByKey;
      await world.maintain([b]);
      readByB += storage.keysReadByKey - before;
    }
    // Each pass of B pages through the running index and reads the holders of that page in one scan
    // (before: a read by key per running workflow of the page, 200 a pass); what is left is A's session.
    expect(readByB / 20).toBeLessThan(10);
    expect(b.ownedWorkflows()).toEqual([]);
    await world.shutdownAll();
  }, 60_000);

  it('tells which running ids have no holder from one scan of holders, reading by key only past its reach', async () => {
    const storage = new CountingStorage();
    const ids = Array.from({ length: 40 }, (_, i) => `p-${String(i).padStart(3, '0')}`);
    const held = ids.filter((_, index) => index % 4 !== 0); // every fourth has no holder
    await storage.batch([
      ...held.map((id) => ({ type: 'put' as const, key: keys.ownerHolder(id), value: 'h' })),
      // Holders of ids no running index lists, three after each of the first ten ids: a page of 40
      // holders ends near p-010, so the ids after it must be read by key.
      ...ids.slice(0, 10).flatMap((id) =>
        ['a', 'b', 'c'].map((suffix) => ({
          type: 'put' as const,
          key: keys.ownerHolder(`${id}${suffix}`),
          value: 'h',
        })),
      ),
      { type: 'put', key: keys.ownerHolder('o-before'), value: 'h' },
    ]);
    const expected = ids.filter((id) => !held.includes(id));
    storage.keysReadByKey = 0;
    expect((await idsWithoutHolder(storage, ids, 'o', ids.length)).sort()).toEqual(expected);
    expect(storage.keysReadByKey).toBeGreaterThan(0); // past the scan's reach
    expect(storage.keysReadByKey).toBeLessThan(ids.length);
    // From the start of the holders (no cursor yet), and a page that ran to their end: nothing read by key.
    storage.keysReadByKey = 0;
    expect((await idsWithoutHolder(storage, ids.slice(30), 'p-029', 100)).sort()).toEqual(
      expected.filter((id) => id > 'p-029'),
    );
    expect(storage.keysReadByKey).toBe(0);
    expect((await idsWithoutHolder(storage, ['o-before', 'o-missing'], null, 2)).sort()).toEqual([
      'o-missing',
    ]);
  });

  it('a new engine recovers over 2,000 workflows a live engine holds without reading their holders one by one, and the claims view reads them in a few requests', async () => {
    const { parked } = workflows();
    const storage = new CountingStorage();
    const world = new TestWorld({ storage });
    const a = await world.engine([parked], fencing);
    const count = 2_000;
    for (let i = 0; i < count; i++) await a.start(parked, { sleepMs: week }, { id: `p-${i}` });
    await world.idle();

    storage.keysReadByKey = 0;
    const b = await world.engine([parked], fencing);
    await b.recoverAll();
    // The full sweep pages through the holders and the running index; the running workflows it saw a
    // holder for are not read again by key (before: one read per running workflow).
    expect(storage.keysReadByKey).toBeLessThan(100);
    expect(b.ownedWorkflows()).toEqual([]);

    storage.keysReadByKey = 0;
    const claims = await b.claims();
    expect(claims).toHaveLength(count);
    expect(claims.every((claim) => claim.epoch === 1 && claim.holder?.engineId === a.id)).toBe(true);
    expect(storage.keysReadByKey).toBeLessThan(10);
    await world.shutdownAll();
  }, 60_000);
});

/** The shared store, where every write but an engine session's waits while `blocked` (a busy store). */
class BusyStorage extends MemoryStorage {
  blocked = false;
  readonly #waiting: (() => void)[] = [];

  release(): void {
    this.blocked = false;
    for (const go of this.#waiting.splice(0)) go();
  }

  async #wait(operations: readonly Operation[]): Promise<void> {
    if (this.blocked && !operations.every((op) => op.key.startsWith(keys.sessionsPrefix)))
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  override async conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]) {
    await this.#wait(operations);
    return super.conditionalBatch(conditions, operations);
  }

  override async commitGroups(groups: readonly CommitGroup[]) {
    await this.#wait(groups.flatMap((group) => group.operations));
    return super.commitGroups(groups);
  }
}

describe('renewal under a burst of writes', () => {
  it('the session renewal is not queued behind the engine’s own pending commits', async () => {
    const { parked } = workflows();
    const storage = new BusyStorage();
    const world = new TestWorld({ storage });
    const a = await world.engine([parked], fencing);
    await a.start(parked, { sleepMs: week }, { id: 'held' });
    await world.idle();
    const sessionKey = keys.session(a.id);
    const before = await storage.get(sessionKey);
    expect(before).not.toBeNull();

    // Starts whose commits cannot land yet fill the engine's commit queue (two transactions in flight,
    // the rest waiting behind them).
    storage.blocked = true;
    const starts = Array.from({ length: 10 }, (_, i) =>
      a.start(parked, { sleepMs: week }, { id: `queued-${i}` }).catch(() => undefined),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    await world.clock.advance(1000);
    const pass = a.runMaintenance();
    for (let i = 0; i < 20 && (await storage.get(sessionKey)) === before; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await storage.get(sessionKey)).not.toBe(before);

    storage.release();
    await Promise.all(starts);
    await pass;
    await world.idle();
    expect(a.metrics().claimsLost).toBe(0);
    await world.shutdownAll();
  });
});
