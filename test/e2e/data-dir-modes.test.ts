import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addMembers, appToken, createApp, createEnterprise } from '../reliability/support/live-api.js';
import { onPostgres } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

// DATA_DIR holds the embedded database (its WAL carries accounts and password hashes) and the
// generated admin key: nobody but its owner may read, write or enter any of it.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-modes-'));
const dataDir = path.join(root, 'data');
const env = { DATA_DIR: dataDir, DATABASE_URL: '', KEYWARD_ADMIN_KEY: '' };
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Every folder and file under `dir` whose mode is not 0700 (folders) or 0600 (files). */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  const pending = [dir];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const stat = fs.lstatSync(next);
    if (stat.isSymbolicLink()) continue;
    const mode = stat.mode & 0o777;
    if (mode !== (stat.isDirectory() ? 0o700 : 0o600)) found.push(`${mode.toString(8)} ${next}`);
    if (stat.isDirectory()) for (const entry of fs.readdirSync(next)) pending.push(path.join(next, entry));
  }
  return found;
}

function loosen(dir: string): void {
  const pending = [dir];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const stat = fs.lstatSync(next);
    fs.chmodSync(next, stat.isDirectory() ? 0o755 : 0o666);
    if (stat.isDirectory()) for (const entry of fs.readdirSync(next)) pending.push(path.join(next, entry));
  }
}

const warnings = (server: ServerProcess) =>
  server
    .output()
    .split('\n')
    .filter((line) => line.includes('open to other users'));

async function someWrites(server: ServerProcess): Promise<void> {
  const adminKey = fs.readFileSync(path.join(dataDir, 'admin.key'), 'utf8').trim();
  const app = await createApp(server.url, adminKey);
  const token = await appToken(server.url, app);
  const enterprise = await createEnterprise(server.url, adminKey, app, token);
  await addMembers(server.url, token, enterprise, 3);
}

describe.skipIf(onPostgres())('DATA_DIR modes', { timeout: 120_000 }, () => {
  it('creates DATA_DIR owner-only and keeps every file in it so, while serving and after', async () => {
    const server = await startServerProcess(env);
    try {
      expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(openToOthers(dataDir)).toEqual([]);
      await someWrites(server);
      expect(openToOthers(dataDir)).toEqual([]);
    } finally {
      await server.stop();
    }
    expect(openToOthers(dataDir)).toEqual([]);
    expect(warnings(server)).toEqual([]);
  });

  it('repairs a DATA_DIR open to others at start, warning once without a secret', async () => {
    const adminKey = fs.readFileSync(path.join(dataDir, 'admin.key'), 'utf8').trim();
    loosen(dataDir);
    const repairing = await startServerProcess(env);
    try {
      expect(openToOthers(dataDir)).toEqual([]);
      await someWrites(repairing);
    } finally {
      await repairing.stop();
    }
    const said = warnings(repairing);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(dataDir);
    expect(repairing.output()).not.toContain(adminKey);
    expect(openToOthers(dataDir)).toEqual([]);

    // Nothing left to repair at the next start.
    const next = await startServerProcess(env);
    await next.stop();
    expect(warnings(next)).toEqual([]);
  });
});
