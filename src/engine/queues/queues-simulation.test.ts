/**
 * The randomised multi-engine queue simulation (issue #34) on a quick fixed set of seeds: limits, FIFO, rate
 * and liveness audited from the writes as they landed and from the durable timelines, with crashes, freezes,
 * clock jumps, takeovers and storage faults (queues-simulation.test-support.ts). The last test breaks the
 * limit on purpose (mutation M5) and expects the audit to say so. A failure prints the seed; more seeds:
 * `npm run soak` (queues-simulation.soak.ts).
 */
import 'fake-indexeddb/auto';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexedDbStorage } from '../../storage/indexeddb';
import { PostgresStorage } from '../../storage/postgres';
import { createTestDatabase, freshSchema, type TestDatabase } from '../../storage/postgres.test-support';
import { withMutation } from '../mutations';
import { runQueueSimulation, type QueueSimulationReport } from './queues-simulation.test-support';

function explain(report: QueueSimulationReport): string {
  return `seed ${report.seed}: ${report.violations.join('\n')}\nstats ${JSON.stringify(report.stats)}`;
}

/** What every passing run must also show: the faults happened and every queue was exercised. */
function expectExercised(report: QueueSimulationReport): void {
  const { stats } = report;
  expect(stats.crashes + stats.freezes, explain(report)).toBeGreaterThan(0);
  expect(stats.takeovers, explain(report)).toBeGreaterThan(0);
  for (const queue of ['a', 'b', 'c', 'd']) expect(stats.admitted[queue] ?? 0, queue).toBeGreaterThan(0);
  expect(stats.statuses.running ?? 0).toBe(0);
  expect(stats.statuses.pending ?? 0).toBe(0);
}

describe('queues under faults: the randomised multi-engine simulation', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`keeps every limit, FIFO and the rate on MemoryStorage (seed ${seed})`, async () => {
      const report = await runQueueSimulation({ seed });
      expect(report.violations, explain(report)).toEqual([]);
      expectExercised(report);
      // The limits were reached (a run that never fills a queue proves nothing about it).
      expect(report.stats.maxRunning.a, explain(report)).toBe(3);
      expect(report.stats.fifoPairs, explain(report)).toBeGreaterThan(0);
    });
  }

  it('keeps them on IndexedDbStorage over fake-indexeddb (seed 11)', async () => {
    const report = await runQueueSimulation({
      seed: 11,
      workflows: 24,
      steps: 150,
      storage: () =>
        new IndexedDbStorage({
          databaseName: `queue-simulation-${Math.random()}`,
          indexedDB: new IDBFactory(),
          IDBKeyRange,
        }),
    });
    expect(report.violations, explain(report)).toEqual([]);
    expectExercised(report);
  }, 60_000);

  // Over PostgreSQL the run is not deterministic: real I/O decides the interleavings (the audit orders writes
  // that share a key itself: ownership/simulation-audit.test-support.ts).
  describe('over PostgreSQL', () => {
    let database: TestDatabase;
    let opened: PostgresStorage | undefined;
    beforeAll(async () => {
      database = await createTestDatabase();
    }, 60_000);
    afterAll(async () => {
      await opened?.close();
      await database?.drop();
    });

    it('keeps them on PostgresStorage (seed 21)', async () => {
      const report = await runQueueSimulation({
        seed: 21,
        workflows: 24,
        steps: 150,
        storage: async () =>
          (opened = await PostgresStorage.open({
            connectionString: database.url,
            schema: freshSchema(),
            maxConnections: 4,
          })),
      });
      expect(report.violations, explain(report)).toEqual([]);
      expectExercised(report);
    }, 120_000);
  });

  it('fails when the limit is broken (mutation M5, queue-ignores-limit): the audit reports the overrun', async () => {
    const report = await withMutation('queue-ignores-limit', () =>
      runQueueSimulation({ seed: 1, windDownRounds: 40, hungAfterMs: 2000 }),
    );
    expect(report.ok).toBe(false);
    // From the writes as they landed, and from the timelines alone.
    expect(
      report.violations.some((v) => /^concurrency of '(a|b|c|d)' \(\d+\) exceeded/.test(v)),
      explain(report),
    ).toBe(true);
    expect(
      report.violations.some((v) => /^slot \d+ of '\w' is held by \w+ and /.test(v)),
      explain(report),
    ).toBe(true);
    expect(
      report.violations.some((v) => /^timelines: \d+ workflows of '\w' ran at /.test(v)),
      explain(report),
    ).toBe(true);
  }, 60_000);
});
