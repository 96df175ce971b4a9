import { defineConfig } from 'vitest/config';

/**
 * `npm test`'s package phase (scripts/run-tests.mjs): the package as users get it — built, packed, linted,
 * its API and size checked, and the example consumers in examples/ run from the tarball
 * (examples/package.test.ts). One file, its tests in order: they share the tarball the global setup makes.
 */
export default defineConfig({
  test: {
    include: ['examples/package.test.ts'],
    environment: 'node',
    globalSetup: ['examples/package.global-setup.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    fileParallelism: false,
  },
});
