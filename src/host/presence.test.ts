import { describe, expect, it } from 'vitest';
import type { ResultWaiterInfo } from '../engine';
import { MemoryStorage } from '../storage';
import {
  allocateEngineIdentity,
  decodePresence,
  encodePresence,
  engineStatusOf,
  emptyCounters,
  lettersFor,
  ordinalOfLetters,
  presenceKey,
  presenceRetentionMs,
  prunePresence,
  readStoredPresence,
  recordCrash,
  shortLabelOf,
  waitersForPresence,
} from './presence';
import { PROTOCOL_VERSION, type EnginePresence } from '../protocol';

const now = 1_700_000_000_000;

function presence(overrides: Partial<EnginePresence> = {}): EnginePresence {
  return {
    engineId: 'e1',
    label: 'Tab A',
    shortLabel: 'A',
    color: '#0072B2',
    mode: 'engine',
    status: 'running',
    startedAt: now - 60_000,
    lastSeenAt: now,
    claimsHeld: 0,
    protocolVersion: PROTOCOL_VERSION,
    resultWaiters: [],
    counters: { ...emptyCounters },
    runtime: { kind: 'tab' },
    ...overrides,
  };
}

async function store(...records: EnginePresence[]): Promise<MemoryStorage> {
  const storage = new MemoryStorage();
  await storage.batch(
    records.map((record) => ({
      type: 'put',
      key: presenceKey(record.engineId),
      value: encodePresence(record),
    })),
  );
  return storage;
}

describe('engine status', () => {
  it('is the recorded status while the lock is held, and dead once it is not, unless a stop was recorded', () => {
    expect(engineStatusOf(presence(), true, now)).toBe('running');
    expect(engineStatusOf(presence({ status: 'frozen', frozenUntil: now + 5 }), true, now)).toBe('frozen');
    expect(engineStatusOf(presence(), false, now)).toBe('dead');
    expect(engineStatusOf(presence({ status: 'starting' }), false, now)).toBe('dead');
    expect(engineStatusOf(presence({ status: 'stopped' }), false, now)).toBe('stopped');
    expect(engineStatusOf(presence({ status: 'crashed' }), false, now)).toBe('crashed');
  });

  it('without Web Locks, counts an engine dead once its record goes stale', () => {
    expect(engineStatusOf(presence({ lastSeenAt: now - 1_000 }), null, now)).toBe('running');
    expect(engineStatusOf(presence({ lastSeenAt: now - 6_000 }), null, now)).toBe('dead');
  });
});

describe('result waiters in presence records', () => {
  const waiter = (waiterId: number, settledAt: number | null): ResultWaiterInfo => ({
    waiterId,
    workflowId: `w${waiterId}`,
    since: 0,
    settled:
      settledAt === null ? null : { at: settledAt, via: 'change-feed', latencyMs: 1, status: 'completed' },
  });

  it('keeps every pending waiter first, then the 20 most recently settled', () => {
    const settled = Array.from({ length: 30 }, (_, index) => waiter(index, 1_000 + index));
    const pending = [waiter(100, null), waiter(101, null)];
    const kept = waitersForPresence([...settled, ...pending]);
    expect(kept.map((entry) => entry.waiterId)).toEqual([
      100,
      101,
      ...Array.from({ length: 20 }, (_, index) => 29 - index),
    ]);
  });
});

describe('presence records', () => {
  it('decodes a record of an older build with empty defaults for the fields it lacks', () => {
    const old = { ...presence(), protocolVersion: 1 } as Partial<EnginePresence>;
    delete old.resultWaiters;
    delete old.counters;
    expect(decodePresence(JSON.stringify(old))).toMatchObject({
      protocolVersion: 1,
      resultWaiters: [],
      counters: emptyCounters,
    });
    expect(decodePresence('{"engineId":"x"}')).toBeNull();
    expect(decodePresence('not json')).toBeNull();
  });

  it('prunes only records past retention whose engine is not alive, and never one refreshed meanwhile', async () => {
    const old = now - presenceRetentionMs - 1;
    const storage = await store(
      presence({ engineId: 'gone', status: 'stopped', lastSeenAt: old }),
      presence({ engineId: 'frozen-for-ages', status: 'frozen', lastSeenAt: old }),
      presence({ engineId: 'refreshed', lastSeenAt: old }),
      presence({ engineId: 'recent', status: 'stopped', lastSeenAt: now - 1_000 }),
    );
    const entries = await readStoredPresence(storage);
    // 'refreshed' writes a new heartbeat between the read and the prune.
    await storage.batch([
      {
        type: 'put',
        key: presenceKey('refreshed'),
        value: encodePresence(presence({ engineId: 'refreshed' })),
      },
    ]);
    const alive = new Set(['frozen-for-ages']);
    const pruned = await prunePresence(
      storage,
      entries.map((entry) => ({ ...entry, alive: alive.has(entry.presence.engineId) })),
      now,
    );
    expect(pruned).toBe(1);
    const left = (await readStoredPresence(storage)).map(({ presence: record }) => record.engineId).sort();
    expect(left).toEqual(['frozen-for-ages', 'recent', 'refreshed']);
  });

  it('records a crash on an engine that claimed to run, but never over a graceful stop', async () => {
    const storage = await store(
      presence({ engineId: 'a', status: 'frozen', frozenUntil: now + 9_000 }),
      presence({ engineId: 'b', status: 'stopped' }),
    );
    expect(await recordCrash(storage, 'a', now + 500)).toBe(true);
    expect(await recordCrash(storage, 'a', now + 600)).toBe(false);
    expect(await recordCrash(storage, 'b', now + 500)).toBe(false);
    expect(await recordCrash(storage, 'missing', now)).toBe(false);
    const records = new Map(
      (await readStoredPresence(storage)).map(({ presence: record }) => [record.engineId, record]),
    );
    expect(records.get('a')).toMatchObject({ status: 'crashed', lastSeenAt: now + 500 });
    expect(records.get('a')!.frozenUntil).toBeUndefined();
    expect(records.get('b')!.status).toBe('stopped');
  });

  it('gives server processes chip labels from their names', () => {
    expect(shortLabelOf('worker-3', 9)).toBe('W3');
    expect(shortLabelOf('studio server', 9)).toBe('SS');
    expect(shortLabelOf('eu-west', 9)).toBe('EW');
    expect(shortLabelOf('---', 9)).toBe('W9');
  });
});

describe('engine labels', () => {
  it('hands out the next letter to each new engine, and letters map back to their numbers', async () => {
    const storage = new MemoryStorage();
    const labels = [];
    for (const id of ['e1', 'e2', 'e3']) labels.push((await allocateEngineIdentity(storage, id)).label);
    expect(labels).toEqual(['Tab A', 'Tab B', 'Tab C']);
    for (const ordinal of [0, 25, 26, 27, 701, 702])
      expect(ordinalOfLetters(lettersFor(ordinal))).toBe(ordinal);
  });

  it('gives a reloaded tab its label back once its previous engine ended, but never a live engine’s label', async () => {
    const storage = await store(
      presence({ engineId: 'old-a', label: 'Tab A', status: 'stopped' }),
      presence({ engineId: 'b', label: 'Tab B', shortLabel: 'B', status: 'running' }),
    );
    await storage.batch([{ type: 'put', key: 'studio:engine-counter', value: '2' }]);
    const alive = new Set(['b']);
    const isAlive = async (engineId: string) => alive.has(engineId);

    // A reload of Tab A: its previous engine (named by the page) stopped. The counter does not move.
    const reloaded = await allocateEngineIdentity(storage, 'new-a', {
      label: 'Tab A',
      previousEngineId: 'old-a',
      isAlive,
    });
    expect(reloaded).toMatchObject({ label: 'Tab A', shortLabel: 'A' });

    // A duplicated tab B asks for 'Tab B' while B's engine is alive: it gets the next letter.
    const duplicate = await allocateEngineIdentity(storage, 'dup', {
      label: 'Tab B',
      previousEngineId: 'some-ended-engine',
      isAlive,
    });
    expect(duplicate.label).toBe('Tab C');

    // Once B's engine is dead (its lock gone), its label can be asked back by the tab that had it.
    alive.delete('b');
    expect(
      (await allocateEngineIdentity(storage, 'b2', { label: 'Tab B', previousEngineId: 'x', isAlive })).label,
    ).toBe('Tab B');

    // A label the counter never handed out, or not a tab label at all, is not granted.
    expect(
      (await allocateEngineIdentity(storage, 'z', { label: 'Tab Q', previousEngineId: 'x', isAlive })).label,
    ).toBe('Tab D');
    expect(
      (await allocateEngineIdentity(storage, 'w', { label: 'worker-1', previousEngineId: 'x', isAlive }))
        .label,
    ).toBe('Tab E');
  });
});
