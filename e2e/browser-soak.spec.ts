/**
 * The browser soak's short version in npm test: three seeds of the short profile (3 tabs at first, 4–5
 * workflows, 8–10 faults each) — the same harness, schedules and checks as `npm run soak:browser`
 * (e2e/soak/, docs/testing.md "The browser soak"). A failing seed says how to replay it.
 */
import { defineSeedTests } from './soak/seed-tests';

defineSeedTests([1, 2, 3], 'short');
