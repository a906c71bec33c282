import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import { randomSecret } from './domain/shared/secrets.js';

export function adminKeyFile(config: Config): string {
  return path.join(config.dataDir, 'admin.key');
}

/**
 * The admin API's bearer key: KEYWARD_ADMIN_KEY, else the key generated at first start into
 * DATA_DIR/admin.key (mode 0600), which the CLI on the same machine reads.
 */
export function resolveAdminKey(config: Config): string {
  if (config.adminKey !== undefined) return config.adminKey;
  const file = adminKeyFile(config);
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const key = randomSecret();
  try {
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    // Another process wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw error;
  }
}
