/**
 * Scenario 28: the randomised multi-engine simulation, on a quick fixed set of seeds (`npm run soak` runs
 * many). A failure prints the seed; re-run one with `SHUTTLE_SEED=<seed> npm run soak`.
 */
import 'fake-indexeddb/auto';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexedDbStorage } from '../../storage/indexeddb';
import { PostgresStorage } from '../../storage/postgres';
import { createTestDatabase, freshSchema, type TestDatabase } from '../../storage/postgres.test-support';
import { runSimulation } from './simulation.test-support';

function explain(report: Awaited<ReturnType<typeof runSimulation>>): string {
  return `seed ${report.seed}: ${report.violations.join('\n')}\nstats ${JSON.stringify(report.stats)}`;
}

describe('28. randomised multi-engine simulation', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`keeps every invariant on MemoryStorage (seed ${seed})`, async () => {
      const report = await runSimulation({ seed });
      expect(report.violations, explain(report)).toEqual([]);
      expect(report.stats.statuses.running ?? 0).toBe(0);
      expect(report.stats.crashes + report.stats.freezes).toBeGreaterThan(0);
      expect(report.stats.continuedAsNew).toBeGreaterThan(0);
    });
  }

  it('keeps every invariant on IndexedDbStorage over fake-indexeddb (seed 11)', async () => {
    const report = await runSimulation({
      seed: 11,
      workflows: 12,
      steps: 150,
      storage: () =>
        new IndexedDbStorage({
          databaseName: `simulation-${Math.random()}`,
          indexedDB: new IDBFactory(),
          IDBKeyRange,
        }),
    });
    expect(report.violations, explain(report)).toEqual([]);
  });

  // Over PostgreSQL the simulation is not deterministic: real I/O decides the interleavings, and the answers
  // of two engines' commits may come back in either order (the audit orders writes that share a key itself:
  // simulation-audit.test-support.ts).
  describe('over PostgreSQL', () => {
    let database: TestDatabase;
    const opened: PostgresStorage[] = [];
    beforeAll(async () => {
      database = await createTestDatabase();
    }, 60_000);
    afterAll(async () => {
      await Promise.all(opened.map((storage) => storage.close()));
      await database?.drop();
    });

    for (const seed of [21, 22]) {
      it(`keeps every invariant on PostgresStorage (seed ${seed})`, async () => {
        const report = await runSimulation({
          seed,
          workflows: 12,
          steps: 150,
          storage: async () => {
            const storage = await PostgresStorage.open({
              connectionString: database.url,
              schema: freshSchema(),
              maxConnections: 4,
            });
            opened.push(storage);
            return storage;
          },
        });
        expect(report.violations, explain(report)).toEqual([]);
        expect(report.stats.statuses.running ?? 0).toBe(0);
      }, 120_000);
    }
  });
});
