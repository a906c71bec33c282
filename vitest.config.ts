import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests use the client's source, as the rest of the workspace does (tsconfig.json paths); the
  // packed package is tried on its own in test/e2e/client-package.test.ts.
  resolve: {
    alias: { '@keyward/client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) },
  },
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
