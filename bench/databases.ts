import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openEmbedded, openPostgres, type DatabaseHandle } from '../src/db/client.js';
import { migrateToLatest } from '../src/db/migrate.js';

/** A PostgreSQL database of the bench's own, created fresh and dropped at the end. */
export interface BenchDatabase {
  url: string;
  handle: DatabaseHandle;
  version: string;
  drop(): Promise<void>;
}

async function admin<T>(serverUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export async function createPostgres(serverUrl: string): Promise<BenchDatabase> {
  const name = `keyward_bench_${Date.now()}`;
  const version = await admin(serverUrl, async (client) => {
    await client.query(`create database ${name}`);
    const row = await client.query<{ v: string }>(`select current_setting('server_version') as v`);
    return `PostgreSQL ${row.rows[0]?.v ?? '?'}`;
  });
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openPostgres(url.toString());
  await migrateToLatest(handle.db);
  return {
    url: url.toString(),
    handle,
    version,
    async drop() {
      await handle.close();
      await admin(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/** A DATA_DIR for the embedded database, migrated; the caller seeds it and closes it. */
export async function createEmbedded(): Promise<{ dataDir: string; handle: DatabaseHandle; remove(): void }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-bench-'));
  const handle = await openEmbedded({ dataDir });
  await migrateToLatest(handle.db);
  return { dataDir, handle, remove: () => fs.rmSync(dataDir, { recursive: true, force: true }) };
}
