import { defineConfig } from 'vitest/config';

/** `npm run soak`: only the long simulation files (`*.soak.ts`), two at a time. */
export default defineConfig({
  test: {
    include: ['src/**/*.soak.ts'],
    environment: 'node',
    testTimeout: 600_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
