/**
 * `npm run soak`: the long randomised ownership simulation. Seeds are split into batches across two files
 * so both cores work. `SHUTTLE_SOAK_SEEDS` sets how many seeds in all (default 2000), from
 * `SHUTTLE_SOAK_FIRST_SEED` (default 1000: seeds 1000–2999), so a long count can be run in parts at one
 * commit; `SHUTTLE_SEED` runs one seed alone (to reproduce a failure). `SHUTTLE_SOAK_STORAGE=postgres` runs them over a throwaway
 * PostgreSQL (a fresh schema per seed) instead of memory. Every failing seed is printed with its violations.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../storage/postgres';
import { createTestDatabase, freshSchema, type TestDatabase } from '../../storage/postgres.test-support';
import type { Storage } from '../../storage/types';
import { runSimulation } from './simulation.test-support';

const onPostgres = process.env.SHUTTLE_SOAK_STORAGE === 'postgres';

const total = Number(process.env.SHUTTLE_SOAK_SEEDS ?? 2000);
const first = Number(process.env.SHUTTLE_SOAK_FIRST_SEED ?? 1000);
const single = process.env.SHUTTLE_SEED === undefined ? null : Number(process.env.SHUTTLE_SEED);
const batch = 50;

export function soak(part: number, parts: number): void {
  const seeds =
    single !== null
      ? part === 0
        ? [single]
        : []
      : Array.from({ length: total }, (_, i) => first + i).filter((_, i) => i % parts === part);
  describe(`ownership soak${onPostgres ? ' over PostgreSQL' : ''}, part ${part + 1} of ${parts}`, () => {
    let database: TestDatabase | undefined;
    afterAll(() => database?.drop());
    /** A fresh schema per seed, closed when the seed is done. */
    const withStore = async (run: (storage?: () => Promise<Storage>) => Promise<void>) => {
      if (!onPostgres) return run();
      database ??= await createTestDatabase();
      const url = database.url;
      let opened: PostgresStorage | undefined;
      try {
        await run(
          async () =>
            (opened = await PostgresStorage.open({
              connectionString: url,
              schema: freshSchema(),
              maxConnections: 4,
            })),
        );
      } finally {
        await opened?.close();
      }
    };
    if (seeds.length === 0) it.skip('no seeds for this part', () => undefined);
    for (let start = 0; start < seeds.length; start += batch) {
      const group = seeds.slice(start, start + batch);
      it(`seeds ${group[0]}…${group[group.length - 1]}`, async () => {
        const failures: string[] = [];
        for (const seed of group)
          await withStore(async (storage) => {
            const report = await runSimulation({ seed, ...(storage ? { storage } : {}) });
            if (!report.ok) {
              const env = onPostgres ? 'SHUTTLE_SOAK_STORAGE=postgres ' : '';
              const message = `seed ${seed} FAILED (reproduce: ${env}SHUTTLE_SEED=${seed} npm run soak):\n  ${report.violations.join('\n  ')}`;
              console.error(message);
              failures.push(message);
            }
          });
        expect(failures).toEqual([]);
      }, 600_000);
    }
  });
}
