import { defineConfig } from 'vitest/config';

/**
 * `npm run soak`: only the long simulation files (`*.soak.ts`), two at a time. With
 * `SHUTTLE_SOAK_STORAGE=postgres` they share one throwaway PostgreSQL server, as the test suite does.
 */
export default defineConfig({
  test: {
    include: ['src/**/*.soak.ts'],
    environment: 'node',
    testTimeout: 600_000,
    fileParallelism: true,
    maxWorkers: 2,
    ...(process.env.SHUTTLE_SOAK_STORAGE === 'postgres'
      ? { globalSetup: ['src/server/postgres.global-setup.ts'] }
      : {}),
  },
});
