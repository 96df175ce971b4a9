import { PGlite } from '@electric-sql/pglite';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterAll, describe, expect, it } from 'vitest';
import { IndexedDbStorage, MemoryStorage } from '../storage';
import { PostgresStorage } from '../storage/postgres';
import { freshSchema } from '../storage/postgres.test-support';
import type { Storage } from '../storage/types';
import { PROTOCOL_VERSION, type EnginePresence } from '../protocol';
import {
  decodeDirectoryEntry,
  directoryKey,
  engineDirectoryPrefix,
  purgeEngineDirectory,
  readEngineDirectory,
} from './engine-directory';
import {
  allocateEngineIdentity,
  allocateProcessIdentity,
  emptyCounters,
  encodePresence,
  presenceKey,
  presenceRetentionMs,
  PresenceWriter,
  prunePresence,
  readStoredPresence,
  recordCrash,
} from './presence';

const start = 1_700_000_000_000;

/** An engine started on `storage` at `at` whose writer has written its first record. */
async function startEngine(storage: Storage, engineId: string, at: number, clock: { now: number }) {
  const identity = await allocateEngineIdentity(storage, engineId);
  const writer = new PresenceWriter({
    storage,
    engineId,
    identity,
    mode: 'engine',
    runtime: { kind: 'tab' },
    startedAt: at,
    now: () => clock.now,
    onError: (error) => {
      throw error;
    },
  });
  await writer.write({ status: 'starting' });
  return writer;
}

describe('engine directory', () => {
  it('records an engine when it starts, with its ordinal, and its stop time when it stops', async () => {
    const storage = new MemoryStorage();
    const clock = { now: start };
    const a = await startEngine(storage, 'engine-a', start, clock);
    const b = await startEngine(storage, 'engine-b', start + 5, clock);
    expect(await readEngineDirectory(storage)).toEqual([
      {
        engineId: 'engine-a',
        label: 'Tab A',
        shortLabel: 'A',
        color: '#0072B2',
        ordinal: 0,
        mode: 'engine',
        runtime: { kind: 'tab' },
        startedAt: start,
        stoppedAt: null,
      },
      expect.objectContaining({ engineId: 'engine-b', label: 'Tab B', ordinal: 1, stoppedAt: null }),
    ]);
    // Presence carries the ordinal too, so the studio colours a live engine as it will a remembered one.
    const [stored] = await readStoredPresence(storage);
    expect(stored!.presence.ordinal).toBe(0);
    clock.now = start + 60_000;
    await a.write({ status: 'running' });
    await a.write({ status: 'stopped' });
    await b.write({ status: 'running' });
    const entries = await readEngineDirectory(storage);
    expect(entries.map((entry) => [entry.engineId, entry.stoppedAt])).toEqual([
      ['engine-a', start + 60_000],
      ['engine-b', null],
    ]);
  });

  it('outlives presence: pruning a long-dead engine keeps its entry and fills in its last heartbeat', async () => {
    const storage = new MemoryStorage();
    const clock = { now: start };
    const writer = await startEngine(storage, 'engine-a', start, clock);
    clock.now = start + 1_000;
    await writer.write({ status: 'running' }); // then its tab closes: no stop is ever written
    const later = start + 1_000 + presenceRetentionMs + 1;
    const entries = (await readStoredPresence(storage)).map((entry) => ({ ...entry, alive: false }));
    expect(await prunePresence(storage, entries, later)).toBe(1);
    expect(await storage.get(presenceKey('engine-a'))).toBeNull();
    expect(await readEngineDirectory(storage)).toEqual([
      expect.objectContaining({ engineId: 'engine-a', label: 'Tab A', ordinal: 0, stoppedAt: start + 1_000 }),
    ]);
    // A month later it is still there: nothing prunes the directory by age.
    expect((await readEngineDirectory(storage)).length).toBe(1);
  });

  it('makes an entry for an engine of an older build (presence only) when its record is pruned', async () => {
    const storage = new MemoryStorage();
    const old: EnginePresence = {
      engineId: 'old-1',
      label: 'Tab C',
      shortLabel: 'C',
      color: '#009E73',
      mode: 'engine',
      status: 'running',
      startedAt: start,
      lastSeenAt: start + 10,
      claimsHeld: 0,
      protocolVersion: PROTOCOL_VERSION,
      resultWaiters: [],
      counters: { ...emptyCounters },
      runtime: { kind: 'tab' },
    };
    await storage.batch([{ type: 'put', key: presenceKey('old-1'), value: encodePresence(old) }]);
    const entries = (await readStoredPresence(storage)).map((entry) => ({ ...entry, alive: false }));
    await prunePresence(storage, entries, start + presenceRetentionMs + 100);
    expect(await readEngineDirectory(storage)).toEqual([
      expect.objectContaining({ engineId: 'old-1', label: 'Tab C', ordinal: null, stoppedAt: start + 10 }),
    ]);
  });

  it('never prunes a record refreshed meanwhile, nor rewrites a known stop time', async () => {
    const storage = new MemoryStorage();
    const clock = { now: start };
    const writer = await startEngine(storage, 'engine-a', start, clock);
    const stale = (await readStoredPresence(storage)).map((entry) => ({ ...entry, alive: false }));
    clock.now = start + 500;
    await writer.write({ status: 'running' }); // refreshed after the survey read it
    expect(await prunePresence(storage, stale, start + presenceRetentionMs + 1)).toBe(0);
    expect((await readEngineDirectory(storage))[0]!.stoppedAt).toBeNull();
    // Crashed on its behalf: the crash time is its stop time; a later prune keeps it.
    expect(await recordCrash(storage, 'engine-a', start + 700)).toBe(true);
    expect((await readEngineDirectory(storage))[0]!.stoppedAt).toBe(start + 700);
    const crashed = (await readStoredPresence(storage)).map((entry) => ({ ...entry, alive: false }));
    await prunePresence(storage, crashed, start + 700 + presenceRetentionMs + 1);
    expect(await readEngineDirectory(storage)).toEqual([
      expect.objectContaining({ engineId: 'engine-a', stoppedAt: start + 700 }),
    ]);
  });

  it('remembers server processes under their own names, and skips entries that do not decode', async () => {
    const storage = new MemoryStorage();
    await allocateEngineIdentity(storage, 'tab-1');
    const identity = await allocateProcessIdentity(storage, 'proc-1', undefined);
    const writer = new PresenceWriter({
      storage,
      engineId: 'proc-1',
      identity,
      mode: 'engine',
      runtime: { kind: 'server', hostName: 'db-host', pid: 42 },
      startedAt: start,
      now: () => start,
      onError: () => undefined,
    });
    await writer.write({ status: 'starting' });
    await storage.batch([
      { type: 'put', key: `${engineDirectoryPrefix}broken`, value: '{not json' },
      { type: 'put', key: `${engineDirectoryPrefix}partial`, value: JSON.stringify({ engineId: 'x' }) },
    ]);
    expect(await readEngineDirectory(storage)).toEqual([
      {
        engineId: 'proc-1',
        label: 'worker-2',
        shortLabel: 'W2',
        color: identity.color,
        ordinal: 1,
        mode: 'engine',
        runtime: { kind: 'server', hostName: 'db-host', pid: 42 },
        startedAt: start,
        stoppedAt: null,
      },
    ]);
    expect(decodeDirectoryEntry((await storage.get(directoryKey('proc-1')))!)?.label).toBe('worker-2');
  });

  it('purgeEngineDirectory deletes only entries of engines stopped before the given time', async () => {
    const storage = new MemoryStorage();
    const clock = { now: start };
    const a = await startEngine(storage, 'engine-a', start, clock);
    await startEngine(storage, 'engine-b', start, clock);
    const c = await startEngine(storage, 'engine-c', start, clock);
    clock.now = start + 100;
    await a.write({ status: 'stopped' });
    clock.now = start + 300;
    await c.write({ status: 'stopped' });
    expect(await purgeEngineDirectory(storage, start + 200)).toBe(1);
    expect((await readEngineDirectory(storage)).map((entry) => entry.engineId)).toEqual([
      'engine-b',
      'engine-c',
    ]);
  });
});

// The directory goes through the Storage contract, so every store has it: a tab's IndexedDB, a server
// worker's PostgreSQL (here PGlite, the same adapter) and memory.
let pglite: PGlite | null = null;
afterAll(async () => {
  await pglite?.close();
});
const stores: [string, () => Promise<Storage>][] = [
  ['memory', async () => new MemoryStorage()],
  [
    'IndexedDB',
    async () => {
      const storage = new IndexedDbStorage({
        databaseName: 'engine-directory',
        indexedDB: new IDBFactory(),
        IDBKeyRange,
      });
      await storage.open();
      return storage;
    },
  ],
  [
    'PostgreSQL (PGlite)',
    async () => {
      pglite ??= await PGlite.create();
      return PostgresStorage.fromPglite(pglite, { schema: freshSchema() });
    },
  ],
];

describe.each(stores)('engine directory on %s', (_name, open) => {
  it('names an engine after its presence record was pruned', { timeout: 30_000 }, async () => {
    const storage = await open();
    try {
      const clock = { now: start };
      const writer = await startEngine(storage, 'engine-a', start, clock);
      await startEngine(storage, 'engine-b', start + 1, clock);
      await writer.write({ status: 'running' });
      const entries = (await readStoredPresence(storage))
        .filter(({ presence }) => presence.engineId === 'engine-a')
        .map((entry) => ({ ...entry, alive: false }));
      expect(await prunePresence(storage, entries, start + presenceRetentionMs + 1)).toBe(1);
      expect((await readStoredPresence(storage)).map(({ presence }) => presence.engineId)).toEqual([
        'engine-b',
      ]);
      expect(await readEngineDirectory(storage)).toEqual([
        expect.objectContaining({ engineId: 'engine-a', label: 'Tab A', ordinal: 0, stoppedAt: start }),
        expect.objectContaining({ engineId: 'engine-b', label: 'Tab B', ordinal: 1, stoppedAt: null }),
      ]);
    } finally {
      await storage.close();
    }
  });
});
