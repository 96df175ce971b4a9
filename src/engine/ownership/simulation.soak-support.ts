/**
 * `npm run soak`: the long randomised ownership simulation. Seeds are split into batches across two files
 * so both cores work. `SHUTTLE_SOAK_SEEDS` sets how many seeds in all (default 2000); `SHUTTLE_SEED` runs
 * one seed alone (to reproduce a failure). Every failing seed is printed with its violations.
 */
import { describe, expect, it } from 'vitest';
import { runSimulation } from './simulation.test-support';

const total = Number(process.env.SHUTTLE_SOAK_SEEDS ?? 2000);
const single = process.env.SHUTTLE_SEED === undefined ? null : Number(process.env.SHUTTLE_SEED);
const batch = 50;

export function soak(part: number, parts: number): void {
  const seeds =
    single !== null
      ? part === 0
        ? [single]
        : []
      : Array.from({ length: total }, (_, i) => 1000 + i).filter((_, i) => i % parts === part);
  describe(`ownership soak, part ${part + 1} of ${parts}`, () => {
    if (seeds.length === 0) it.skip('no seeds for this part', () => undefined);
    for (let start = 0; start < seeds.length; start += batch) {
      const group = seeds.slice(start, start + batch);
      it(`seeds ${group[0]}…${group[group.length - 1]}`, async () => {
        const failures: string[] = [];
        for (const seed of group) {
          const report = await runSimulation({ seed });
          if (!report.ok) {
            const message = `seed ${seed} FAILED (reproduce: SHUTTLE_SEED=${seed} npm run soak):\n  ${report.violations.join('\n  ')}`;
            console.error(message);
            failures.push(message);
          }
        }
        expect(failures).toEqual([]);
      }, 600_000);
    }
  });
}
