import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { openPostgres } from '../../src/db/client.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { PgliteDialect } from '../../src/db/pglite-dialect.js';
import type { Database } from '../../src/db/schema.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string | undefined;
    snapshotFile: string | undefined;
  }
}

/**
 * With DATABASE_URL the suite runs on PostgreSQL, in a fresh database of its own (dropped at the
 * end) so parallel runs never meet. Without it, each test file loads a migrated PGlite snapshot
 * made here once: initdb and migrations would cost seconds per file.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const name = `keyward_test_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const handle = await openPostgres(url.toString());
    await migrateToLatest(handle.db);
    await handle.close();
    project.provide('databaseUrl', url.toString());
    project.provide('snapshotFile', undefined);
    return async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    };
  }
  const pglite = await PGlite.create();
  const db = new Kysely<Database>({ dialect: new PgliteDialect(pglite) });
  await migrateToLatest(db);
  const blob = await pglite.dumpDataDir('gzip');
  await pglite.close();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-test-'));
  const file = path.join(dir, 'snapshot.tar.gz');
  fs.writeFileSync(file, Buffer.from(await blob.arrayBuffer()));
  project.provide('databaseUrl', undefined);
  project.provide('snapshotFile', file);
  return async () => {
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
