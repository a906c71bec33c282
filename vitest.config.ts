import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Password hashing and PGlite are CPU-heavy: two workers fit this size of machine.
    maxWorkers: 2,
    testTimeout: 30_000,
    // Hooks may start real servers (see START_LIMIT_MS in test/support/server-process.ts).
    hookTimeout: 120_000,
  },
});
