/**
 * `npm run soak:browser`: the real-browser chaos soak (docs/testing.md, "The browser soak"). Seeds 1…30 of
 * the full profile by default; `SHUTTLE_BROWSER_SOAK_SEEDS=n` runs seeds 1…n (`SHUTTLE_BROWSER_SOAK_FIRST_SEED`
 * moves the start), `SHUTTLE_SEED=n` replays seed n alone, and `SHUTTLE_BROWSER_SOAK_PROFILE=short` runs the
 * short profile of npm test's version (e2e/browser-soak.spec.ts).
 */
import type { ProfileName } from './schedule';
import { test } from '@playwright/test';
import { defineSeedTests, soakTestOptions } from './seed-tests';

function integer(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not ${raw}.`);
  return value;
}

const profile = (process.env.SHUTTLE_BROWSER_SOAK_PROFILE ?? 'full') as ProfileName;
if (profile !== 'full' && profile !== 'short')
  throw new Error(`SHUTTLE_BROWSER_SOAK_PROFILE must be full or short, not ${String(profile)}.`);

const replay = process.env.SHUTTLE_SEED;
const first = integer('SHUTTLE_BROWSER_SOAK_FIRST_SEED', 1);
const seeds =
  replay !== undefined && replay !== ''
    ? [integer('SHUTTLE_SEED', 0)]
    : Array.from({ length: integer('SHUTTLE_BROWSER_SOAK_SEEDS', 30) }, (_, index) => first + index);

test.use(soakTestOptions);
defineSeedTests(seeds, profile);
