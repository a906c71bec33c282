import type { Config } from '../config.js';
import { openEmbedded, openPostgres, type DatabaseHandle } from './client.js';

/** PostgreSQL when DATABASE_URL is set, else the embedded database in DATA_DIR. */
export function openDatabase(config: Config): Promise<DatabaseHandle> {
  return config.databaseUrl === undefined
    ? openEmbedded({ dataDir: config.dataDir })
    : openPostgres(config.databaseUrl);
}
