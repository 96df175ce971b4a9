/**
 * `npm run soak`: the queue simulation (queues-simulation.test-support.ts) over many seeds, beside the
 * ownership soak. `SHUTTLE_QUEUE_SOAK_SEEDS` sets how many (default 500), from `SHUTTLE_QUEUE_SOAK_FIRST_SEED`
 * (default 1000); `SHUTTLE_SEED` runs one seed alone (to reproduce a failure; the ownership soak runs it too).
 * `SHUTTLE_SOAK_STORAGE=postgres` runs them over a throwaway PostgreSQL (a fresh schema per seed). Every
 * failing seed is printed with its violations.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../storage/postgres';
import { createTestDatabase, freshSchema, type TestDatabase } from '../../storage/postgres.test-support';
import { runQueueSimulation } from './queues-simulation.test-support';

const onPostgres = process.env.SHUTTLE_SOAK_STORAGE === 'postgres';
const total = Number(process.env.SHUTTLE_QUEUE_SOAK_SEEDS ?? 500);
const first = Number(process.env.SHUTTLE_QUEUE_SOAK_FIRST_SEED ?? 1000);
const single = process.env.SHUTTLE_SEED === undefined ? null : Number(process.env.SHUTTLE_SEED);
const seeds = single !== null ? [single] : Array.from({ length: total }, (_, i) => first + i);
const batch = 50;

describe(`queue soak${onPostgres ? ' over PostgreSQL' : ''}`, () => {
  let database: TestDatabase | undefined;
  afterAll(() => database?.drop());
  for (let start = 0; start < seeds.length; start += batch) {
    const group = seeds.slice(start, start + batch);
    it(`seeds ${group[0]}…${group[group.length - 1]}`, async () => {
      const failures: string[] = [];
      for (const seed of group) {
        let opened: PostgresStorage | undefined;
        if (onPostgres) database ??= await createTestDatabase();
        const url = database?.url;
        try {
          const report = await runQueueSimulation({
            seed,
            ...(url
              ? {
                  storage: async () =>
                    (opened = await PostgresStorage.open({
                      connectionString: url,
                      schema: freshSchema(),
                      maxConnections: 4,
                    })),
                }
              : {}),
          });
          if (!report.ok) {
            const env = onPostgres ? 'SHUTTLE_SOAK_STORAGE=postgres ' : '';
            const message = `queue seed ${seed} FAILED (reproduce: ${env}SHUTTLE_SEED=${seed} npm run soak):\n  ${report.violations.join('\n  ')}`;
            console.error(message);
            failures.push(message);
          }
        } finally {
          await opened?.close();
        }
      }
      expect(failures).toEqual([]);
    }, 600_000);
  }
});
