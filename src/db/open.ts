import type { Config } from '../config.js';
import { openEmbedded, openPostgres, type DatabaseHandle } from './client.js';
import { makeOwnerOnly } from './data-dir-modes.js';

/** PostgreSQL when DATABASE_URL is set, else the embedded database in DATA_DIR. */
export async function openDatabase(config: Config): Promise<DatabaseHandle> {
  if (config.databaseUrl !== undefined) return openPostgres(config.databaseUrl, config.database);
  const handle = await openEmbedded({ dataDir: config.dataDir });
  // The embedded database unpacks its first cluster, and rewrites its cache files at each start,
  // open to everyone whatever the umask; what it creates later honours it.
  makeOwnerOnly(config.dataDir);
  return handle;
}
