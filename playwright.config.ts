import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';
import { chromiumArgs, resolveChromium } from './e2e/fixtures/chromium';
import { slowdown } from './e2e/fixtures/load';

/**
 * End-to-end tests drive the built studio (`vite build` + `vite preview`) in real Chromium. Several pages of
 * one browser context share IndexedDB, Web Locks and BroadcastChannel, exactly like tabs. The browser is
 * never downloaded: see `resolveChromium`.
 *
 * Under load (docs/testing.md): `SHUTTLE_E2E_LOAD=1` makes the global setup (e2e/fixtures/load.ts) start two
 * busy-loop processes for the run and stop them after it; `SHUTTLE_E2E_CPU_THROTTLE=<rate>` throttles every
 * studio page's CPU through DevTools (the fixtures apply it) and multiplies the default test and expect
 * timeouts by the rate (`slowdown`): they bound the tests' own steps, which run on the throttled threads.
 */
const port = Number(process.env.SHUTTLE_E2E_PORT ?? 4173);
/**
 * The studio the tests load is built into a folder of this run's own (per port), not `dist/`: a build in the
 * same work tree meanwhile (`npm start`, another test run on another port) empties and refills `dist/`, and a
 * tab opened then gets a 404. `dist/` is still refreshed from this build at the start, for the `shuttle dev`
 * fleet of the server-mode specs, which serves `dist/`.
 */
const outDir = join(tmpdir(), `shuttle-e2e-dist-${port}`);
const refreshDist = `node -e ${JSON.stringify(
  `const fs = require('node:fs'); fs.rmSync('dist', { recursive: true, force: true }); fs.cpSync(${JSON.stringify(outDir)}, 'dist', { recursive: true });`,
)}`;

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000 * slowdown(),
  expect: { timeout: 15_000 * slowdown() },
  reporter: [['list'], ['json', { outputFile: '.test-reports/e2e.json' }]],
  globalSetup: './e2e/fixtures/load.ts',
  use: {
    baseURL: `http://localhost:${port}`,
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: resolveChromium(),
      args: [...chromiumArgs],
    },
    trace: 'retain-on-failure',
  },
  webServer: {
    command: `npx vite build --logLevel warn --outDir ${outDir} --emptyOutDir && ${refreshDist} && npx vite preview --outDir ${outDir} --port ${port} --strictPort`,
    url: `http://localhost:${port}`,
    reuseExistingServer: false,
    timeout: 180_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
