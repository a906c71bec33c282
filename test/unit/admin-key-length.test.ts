import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY_MIN_LENGTH, ensureAdminKey } from '../../src/admin-key.js';
import { loadConfig } from '../../src/config.js';

const dirs: string[] = [];
const dataDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-admin-key-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the admin key a server starts with', () => {
  it('refuses a KEYWARD_ADMIN_KEY shorter than 32 characters, saying how to make one', () => {
    const config = loadConfig({
      DATA_DIR: dataDir(),
      KEYWARD_ADMIN_KEY: 'x'.repeat(ADMIN_KEY_MIN_LENGTH - 1),
    });
    expect(() => ensureAdminKey(config)).toThrow(
      /KEYWARD_ADMIN_KEY is 31 characters long; it must be at least 32.*openssl rand/,
    );
  });

  it('refuses a short key written in DATA_DIR/admin.key', () => {
    const dir = dataDir();
    fs.writeFileSync(path.join(dir, 'admin.key'), 'secret\n', { mode: 0o600 });
    expect(() => ensureAdminKey(loadConfig({ DATA_DIR: dir }))).toThrow(/admin\.key is 6 characters long/);
  });

  it('takes a key of 32 characters, and generates a longer one', () => {
    const key = 'k'.repeat(ADMIN_KEY_MIN_LENGTH);
    expect(ensureAdminKey(loadConfig({ DATA_DIR: dataDir(), KEYWARD_ADMIN_KEY: key })).key).toBe(key);
    const generated = ensureAdminKey(loadConfig({ DATA_DIR: dataDir() }));
    expect(generated.key.length).toBeGreaterThanOrEqual(ADMIN_KEY_MIN_LENGTH);
  });
});
