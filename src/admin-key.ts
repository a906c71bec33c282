import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import { randomSecret } from './domain/shared/secrets.js';

export function adminKeyFile(config: Config): string {
  return path.join(config.dataDir, 'admin.key');
}

/** Where the admin key came from: all the start banner says of it. */
export type AdminKeySource = { source: 'variable' } | { source: 'file'; file: string; generated: boolean };

/** The admin key and where it came from. */
export type AdminKey = AdminKeySource & { key: string };

/**
 * The key as it stands: KEYWARD_ADMIN_KEY, else DATA_DIR/admin.key; undefined when neither holds
 * one. Never creates anything: the CLI reads with this, and only the server writes the file.
 */
export function readAdminKey(config: Config): string | undefined {
  if (config.adminKey !== undefined) return config.adminKey;
  try {
    const key = fs.readFileSync(adminKeyFile(config), 'utf8').trim();
    return key === '' ? undefined : key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The shortest admin key the server starts with: a guessable key would hold the whole platform. */
export const ADMIN_KEY_MIN_LENGTH = 32;

function checked(admin: AdminKey): AdminKey {
  if (admin.key.length >= ADMIN_KEY_MIN_LENGTH) return admin;
  const where = admin.source === 'variable' ? 'KEYWARD_ADMIN_KEY' : admin.file;
  throw new Error(
    `the admin key in ${where} is ${admin.key.length} characters long; it must be at least ` +
      `${ADMIN_KEY_MIN_LENGTH}. Make one with: openssl rand -base64 32 (or unset KEYWARD_ADMIN_KEY ` +
      'and delete the file to have one generated)',
  );
}

/**
 * The admin API's bearer key for the server: KEYWARD_ADMIN_KEY, else DATA_DIR/admin.key, generated
 * (mode 0600) at the first start, which the CLI on the same machine reads.
 */
export function ensureAdminKey(config: Config): AdminKey {
  return checked(findOrMakeAdminKey(config));
}

function findOrMakeAdminKey(config: Config): AdminKey {
  if (config.adminKey !== undefined) return { key: config.adminKey, source: 'variable' };
  const file = adminKeyFile(config);
  const existing = readAdminKey(config);
  if (existing !== undefined) return { key: existing, source: 'file', file, generated: false };
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const key = randomSecret();
  try {
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return { key, source: 'file', file, generated: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // Another process wrote it first: use theirs. An empty file is no key, and not replaced unasked.
  const theirs = readAdminKey(config);
  if (theirs === undefined) {
    throw new Error(`${file} holds no key: delete it to have one generated, or set KEYWARD_ADMIN_KEY`);
  }
  return { key: theirs, source: 'file', file, generated: false };
}
