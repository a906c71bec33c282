import { randomBytes } from 'node:crypto';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import type { App } from '../../src/http/app-type.js';
import type { Services } from '../../src/services.js';
import { openPostgres } from '../../src/db/client.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openTestDatabase, testDatabaseUrl } from './database.js';
import { createScratchDatabase } from './scratch-database.js';
import { TEST_ENV } from './test-env.js';

/** As long as a server takes (src/admin-key.ts): tests start real servers with it too. */
export const ADMIN_KEY = 'test-admin-key-for-the-suite-0123456789';

export interface Harness {
  app: App & { services: Services };
  database: DatabaseHandle;
  config: Config;
  close(): Promise<void>;
}

/**
 * One server per test file, on the suite's database. Tests isolate themselves with fresh ids
 * (a new app, enterprise or channel customer), never by wiping tables.
 */
export async function startHarness(
  env: Record<string, string> = {},
  options: { now?: () => number; database?: DatabaseHandle } = {},
): Promise<Harness> {
  const config = loadConfig({ DATA_DIR: '/nonexistent-test-data', ...TEST_ENV, ...env });
  const database = options.database ?? (await openTestDatabase());
  const app = await buildApp({
    config,
    db: database.db,
    adminKey: ADMIN_KEY,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  await app.ready();
  return {
    app,
    database,
    config,
    async close() {
      await app.close();
      await database.close();
    },
  };
}

/**
 * A server on a database no other test file sees: for a test that must change what every
 * operator shares (every owner demoted, say), which on the suite's shared PostgreSQL database
 * would reach the files running beside it. Embedded, every harness already has its own copy; on
 * PostgreSQL this is a scratch database, migrated, and dropped on close.
 */
export async function startIsolatedHarness(env: Record<string, string> = {}): Promise<Harness> {
  if (testDatabaseUrl() === undefined) return startHarness(env);
  const scratch = await createScratchDatabase('keyward_isolated');
  const database = await openPostgres(scratch.url);
  await migrateToLatest(database.db);
  const harness = await startHarness(env, { database });
  return {
    ...harness,
    async close() {
      await harness.close();
      await scratch.drop();
    },
  };
}

export function nonce(): string {
  return randomBytes(12).toString('base64url');
}

export function uniqueCode(prefix = 'c'): string {
  return `${prefix}${randomBytes(6).toString('hex')}`;
}

/**
 * The rate counter's window is the wall-clock minute: a test that counts calls against the limit
 * starts far enough from the minute's end that all its calls fall in one window.
 */
export async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}
