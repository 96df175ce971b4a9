/**
 * Old records still read: a store written by the engine before commit records (`fixtures/layout-1.json`,
 * dumped from that engine: every history entry under its own `wf-hist:` key, timeline records keyed by
 * their last entry's sequence number), and one written by the engine before commit records carried
 * checkpoints (`fixtures/layout-2.json`: every commit rewrote `wf-ckpt:`), are loaded, replayed and
 * continued by this engine, on MemoryStorage and on IndexedDbStorage. A store of the first layout holding a finished workflow
 * (`fixtures/layout-1-finished.json`, made by the same engine; the fixture carries the script that wrote it)
 * has its run listed and read by run number, and keeps it when the id is started again as run 2.
 */
import { readFileSync } from 'node:fs';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { IndexedDbStorage } from '../../storage/indexeddb';
import { MemoryStorage } from '../../storage/memory';
import type { Entry, Storage } from '../../storage/types';
import { TestWorld, type TestEngine } from '../engine.test-support';
import { keys } from '../keys';
import { decodeLogRecord, decodeTimelineRecord, type TimelineEntry } from '../records';
import { legacyFinished, legacyWorkflows, setLegacyActivityTwo } from './legacy-layout.test-support';

type Fixture = { now: number; entries: Entry[] };

function loadFixture(name: string): Fixture {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as Fixture;
}

const fixture = loadFixture('layout-1.json');
/** Each layout's fixture, the engine that wrote it, and the `ctx.random()` value that engine recorded. */
const layouts: [string, Fixture, string, number][] = [
  ['before commit records (layout 1)', fixture, 'legacy-engine', 0.7202267837710679],
  [
    'before carried checkpoints (layout 2)',
    loadFixture('layout-2.json'),
    'layout-2-engine',
    0.6270739405881613,
  ],
];
const finishedFixture = loadFixture('layout-1-finished.json');

const fencing = {
  ownership: 'workflow-lease',
  workflowClaimTtlMs: 3000,
  workflowClaimRenewIntervalMs: 1000,
} as const;

const stores: [string, () => Storage][] = [
  ['MemoryStorage', () => new MemoryStorage()],
  [
    'IndexedDbStorage',
    () =>
      new IndexedDbStorage({
        databaseName: `legacy-${Math.random()}`,
        indexedDB: new IDBFactory(),
        IDBKeyRange,
      }),
  ],
];

/** A world on a store holding a fixture, its clock past the legacy engine's session. */
async function legacyWorld(store: () => Storage, from: Fixture = fixture): Promise<TestWorld> {
  const storage = store();
  await storage.batch(from.entries.map(({ key, value }) => ({ type: 'put' as const, key, value })));
  const world = new TestWorld({ storage });
  await world.clock.advance(from.now - world.clock.now() + 10_000);
  return world;
}

/** Every page of `after`/`limit` equals the matching slice of the whole timeline. */
async function expectConsistentTimeline(engine: TestEngine, workflowId: string): Promise<TimelineEntry[]> {
  const all = await engine.timeline(workflowId);
  expect(all.map((entry) => entry.seq)).toEqual(all.map((_, index) => index));
  for (let after = -1; after < all.length; after++)
    for (const limit of [1, 3, 100]) {
      const page = await engine.timeline(workflowId, { ...(after >= 0 ? { after } : {}), limit });
      expect(page).toEqual(all.slice(after + 1, after + 1 + limit));
    }
  return all;
}

describe.each(stores)('a store of an earlier layout on %s', (_name, store) => {
  it.each(layouts)(
    'loads, replays and continues its workflows, %s',
    async (_layout, fixture, writer, roll) => {
      setLegacyActivityTwo(() => 2);
      const world = await legacyWorld(store, fixture);
      const b = await world.engine(legacyWorkflows, fencing);
      await world.maintain([b]);
      expect(b.ownedWorkflows().sort()).toEqual(['mixed', 'sleeper']); // and 'interrupted' finished

      // Replay of the earlier layout restored the state the two updates produced.
      const mixed = await b.describe('mixed');
      expect(mixed.pending?.summary).toBe("signal 'go'");
      expect(mixed.state).toEqual({ label: 'old', count: 5 });
      expect(await b.query('mixed', 'count')).toBe(5);

      // A commit in the new layout on top of the old one, then another engine replays both.
      expect(await b.update('mixed', 'increment', 7)).toBe(12);
      await world.idle([b]);
      world.crash(b);
      const c = await world.engine(legacyWorkflows, fencing);
      await world.advance(10_000, { stepMs: 1000, engines: [c] });
      expect(c.ownedWorkflows()).toContain('mixed');
      expect(await c.query('mixed', 'count')).toBe(12);
      await c.signal('mixed', 'go', 'now');
      await world.idle([c]);
      expect(await c.handle('mixed').result()).toEqual({
        label: 'old',
        sum: 1 + 10 + 11 + 12,
        left: 'L',
        right: 'R',
        payload: 'now',
        count: 12,
        at: Date.UTC(2026, 0, 1),
        roll,
      });

      // The interrupted activity ran again as attempt 2; the durable timer armed by the old engine fired.
      expect(await c.handle('interrupted').result()).toBe(3);
      await world.advance(60_000, { engines: [c] });
      expect(await c.handle('sleeper').result()).toBe('ba');

      for (const id of ['mixed', 'interrupted', 'sleeper']) await expectConsistentTimeline(c, id);
      const interrupted = await c.timeline('interrupted');
      expect(
        interrupted.flatMap((entry) =>
          entry.kind === 'activity-started' && entry.detail.name === 'two'
            ? [[entry.engineId, entry.detail.attempt]]
            : [],
        ),
      ).toEqual([
        [writer, 1],
        [b.id, 2],
      ]);
      const kinds = (await c.timeline('mixed')).map((entry) => entry.kind);
      const mixedLog = fixture.entries.filter(({ key }) => key.startsWith(keys.timelinePrefix('mixed', 1)));
      const before = mixedLog
        .flatMap(({ key, value }) => decodeTimelineRecord(key, value))
        .map((e) => e.kind);
      expect(before.length).toBeGreaterThan(8);
      expect(kinds.slice(0, before.length)).toEqual(before);
      expect(kinds.slice(before.length)).toEqual(
        expect.arrayContaining(['claim-taken-over', 'update-applied', 'signal-consumed', 'completed']),
      );

      // Nothing new was written in an earlier layout: the update's commit carried its checkpoint.
      const written = (await world.storage.scan(keys.timelinePrefix('mixed', 1))).filter(
        ({ key }) => !mixedLog.some((old) => old.key === key),
      );
      expect(written.some(({ key, value }) => decodeLogRecord(key, value).carried)).toBe(true);
      const history = await world.storage.scan('wf-hist:');
      expect(history.map(({ key }) => key)).toEqual(
        fixture.entries.filter(({ key }) => key.startsWith('wf-hist:')).map(({ key }) => key),
      );
      await world.shutdownAll();
    },
  );

  it('lists a finished workflow of the earlier layout as run 1, reads it by run, and keeps it as run 2 starts', async () => {
    const world = await legacyWorld(store, finishedFixture);
    const b = await world.engine([...legacyWorkflows, legacyFinished], fencing);
    await world.maintain([b]);
    const receipt = { receipt: 'o-7:42:yes' };
    const oldTimeline = finishedFixture.entries
      .filter(({ key }) => key.startsWith(keys.timelinePrefix('finished', 1)))
      .flatMap(({ value }) => [JSON.parse(value) as TimelineEntry | TimelineEntry[]].flat());
    expect(oldTimeline.map((entry) => entry.kind)).toContain('completed');

    const summary = { run: 1, workflowType: 'legacy-finished', version: 1, status: 'completed' };
    expect(await b.runs('finished')).toEqual([expect.objectContaining({ ...summary, latest: true })]);
    expect(await b.describe('finished', { run: 1 })).toMatchObject({
      ...summary,
      input: { order: 'o-7' },
      result: receipt,
    });
    expect(await b.handle('finished', { run: 1 }).result()).toEqual(receipt);
    expect(await expectConsistentTimeline(b, 'finished')).toEqual(oldTimeline);
    expect(await b.timeline('finished', { run: 1 })).toEqual(oldTimeline);
    const listed = await b.list({ allRuns: true, idPrefix: 'finished' });
    expect(listed.items.map(({ workflowId, run, status }) => `${workflowId}#${run}:${status}`)).toEqual([
      'finished#1:completed',
    ]);

    // Starting the id again makes run 2 (this engine's layout); run 1 stays as the old engine left it.
    const second = await b.start(legacyFinished, { order: 'o-8' }, { id: 'finished' });
    expect(second.run).toBe(2);
    await world.idle([b]);
    await world.advance(1000, { engines: [b] });
    await second.signal('approve', 'again');
    expect(await second.result()).toEqual({ receipt: 'o-8:42:again' });
    await world.idle([b]);
    expect((await b.runs('finished')).map(({ run, status, latest }) => ({ run, status, latest }))).toEqual([
      { run: 2, status: 'completed', latest: true },
      { run: 1, status: 'completed', latest: false },
    ]);
    expect(await b.describe('finished', { run: 1 })).toMatchObject({
      ...summary,
      input: { order: 'o-7' },
      result: receipt,
    });
    expect(await b.handle('finished', { run: 1 }).result()).toEqual(receipt);
    expect(await b.timeline('finished', { run: 1 })).toEqual(oldTimeline);
    expect(await b.operationOutcome('finished', { run: 1, pos: 3 })).toMatchObject({
      ok: true,
      value: 'o-7:42:yes',
    });
    expect(await b.describe('finished')).toMatchObject({ run: 2, result: { receipt: 'o-8:42:again' } });
    expect((await b.list({ allRuns: true, idPrefix: 'finished' })).items.map(({ run }) => run)).toEqual([
      2, 1,
    ]);
    // Run 2 was written in this engine's layout: no new wf-hist: keys.
    expect((await world.storage.scan('wf-hist:')).map(({ key }) => key)).toEqual(
      finishedFixture.entries.filter(({ key }) => key.startsWith('wf-hist:')).map(({ key }) => key),
    );
    await world.shutdownAll();
  });
});
