import { defineConfig } from 'vitest/config';

/**
 * `npm run soak:cluster`: the cluster fault suite's random schedules (src/server/cluster.fault-soak.ts), one
 * file, one schedule at a time (they share one PostgreSQL server and three network namespaces). Needs root.
 */
export default defineConfig({
  test: {
    include: ['src/server/cluster.fault-soak.ts'],
    environment: 'node',
    testTimeout: 600_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
