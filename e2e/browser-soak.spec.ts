/**
 * The browser soak's short version in npm test: three seeds of the short profile (3 tabs at first, 4–5
 * workflows, 8–10 faults each) — the same harness, schedules and checks as `npm run soak:browser`
 * (e2e/soak/, docs/testing.md "The browser soak"). A failing seed says how to replay it.
 */
import { test } from '@playwright/test';
import { defineSeedTests, soakTestOptions } from './soak/seed-tests';

test.use(soakTestOptions);
defineSeedTests([1, 2, 3], 'short');
