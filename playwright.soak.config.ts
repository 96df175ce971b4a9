import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';
import base from './playwright.config';

/**
 * `npm run soak:browser`: the real-browser chaos soak (e2e/soak/, docs/testing.md "The browser soak"). The
 * same browser, port rule (`SHUTTLE_E2E_PORT`) and time limits as `playwright.config.ts`, with:
 * - only the soak's files (`*.soak.ts`), one test per seed, each allowed as long as its schedule needs;
 * - the studio built into a folder of its own (under the system's temporary folder, per port), not `dist/`:
 *   a soak runs for half an hour, and a build in the same work tree meanwhile (`npm start`, another test
 *   run) would replace the files it serves — a tab opened after that gets a 404;
 * - no JSON report (npm test's `.test-reports/e2e.json` stays untouched) and no traces (a seed's report is
 *   its own `report.json`).
 */
const port = Number(process.env.SHUTTLE_E2E_PORT ?? 4173);
const outDir = join(tmpdir(), `shuttle-soak-dist-${port}`);

export default defineConfig({
  ...base,
  testDir: 'e2e/soak',
  testMatch: '**/*.soak.ts',
  timeout: 300_000,
  reporter: [['list']],
  use: { ...base.use, trace: 'off' },
  webServer: {
    command: `npx vite build --logLevel warn --outDir ${outDir} --emptyOutDir && npx vite preview --outDir ${outDir} --port ${port} --strictPort`,
    url: `http://localhost:${port}`,
    reuseExistingServer: false,
    timeout: 180_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
