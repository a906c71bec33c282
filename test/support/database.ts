import fs from 'node:fs';
import { inject } from 'vitest';
import { openEmbedded, openPostgres, type DatabaseHandle } from '../../src/db/client.js';

export const onPostgres = (): boolean => inject('databaseUrl') !== undefined;

/** The suite's database: the run's PostgreSQL database, or a fresh copy of the migrated snapshot. */
export async function openTestDatabase(): Promise<DatabaseHandle> {
  const url = inject('databaseUrl');
  if (url !== undefined) return openPostgres(url);
  const file = inject('snapshotFile');
  if (file === undefined) throw new Error('global setup provided no database');
  return openEmbedded({ loadDataDir: new Blob([fs.readFileSync(file)]) });
}

export function testDatabaseUrl(): string | undefined {
  return inject('databaseUrl');
}
