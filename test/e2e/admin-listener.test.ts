import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../support/database.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server-process.js';

// The admin API creates applications and sets passwords: with a listener of its own it is not on
// the public one at all. Real processes, since which listener a request came through is the point.
const ADMIN_KEY = randomBytes(24).toString('hex');
const dirs: string[] = [];
const servers: ServerProcess[] = [];

async function start(env: Record<string, string>): Promise<{ server: ServerProcess; adminUrl: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-admin-listener-'));
  dirs.push(dataDir);
  const server = await startServerProcess({
    DATABASE_URL: testDatabaseUrl() ?? '',
    DATA_DIR: dataDir,
    KEYWARD_ADMIN_KEY: ADMIN_KEY,
    ...env,
  });
  servers.push(server);
  // The line comes right after the public listener's.
  for (let i = 0; i < 100 && !/admin API listening at/.test(server.output()); i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const match = /admin API listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(server.output());
  if (!match?.[1]) throw new Error(`no admin listener:\n${server.output()}`);
  return { server, adminUrl: match[1] };
}

afterAll(async () => {
  for (const server of servers) if (server.child.exitCode === null) await server.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const get = (url: string, key?: string) =>
  fetch(url, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });

describe('the admin API on a listener of its own (ADMIN_PORT)', { timeout: 120_000 }, () => {
  let publicUrl: string;
  let adminUrl: string;
  beforeAll(async () => {
    const started = await start({ ADMIN_PORT: '0' });
    publicUrl = started.server.url;
    adminUrl = started.adminUrl;
  });

  it('answers /admin/* on the public listener as an unknown path, key or not', async () => {
    for (const key of [ADMIN_KEY, undefined]) {
      const answer = await get(`${publicUrl}/admin/apps`, key);
      expect(answer.status).toBe(404);
      expect(await answer.json()).toMatchObject({ code: '404' });
    }
    expect((await get(`${publicUrl}/healthz`)).status).toBe(200);
  });

  it('serves /admin/* alone on the admin listener, still behind the admin key', async () => {
    const listed = await get(`${adminUrl}/admin/apps`, ADMIN_KEY);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('server')).toBeNull();
    expect(listed.headers.get('x-powered-by')).toBeNull();
    expect(listed.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await get(`${adminUrl}/admin/apps`)).status).toBe(401);
    expect((await get(`${adminUrl}/healthz`)).status).toBe(404);
    expect((await get(`${adminUrl}/order/api/order/v1/shellnums`)).status).toBe(404);
  });

  it('is found by the CLI through KEYWARD_ADMIN_URL, and named when it is missing', async () => {
    const env = { KEYWARD_URL: publicUrl, KEYWARD_ADMIN_KEY: ADMIN_KEY };
    const listed = await runCli(['app', 'list', '--json'], { ...env, KEYWARD_ADMIN_URL: adminUrl });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual(expect.any(Array));
    const lost = await runCli(['app', 'list'], env);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toContain('does not serve the admin API');
    expect(lost.stderr).toContain('KEYWARD_ADMIN_URL');
  });
});

describe('an admin key too short to hold the platform', { timeout: 120_000 }, () => {
  it('stops the server at start, saying how to make a key', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-admin-listener-'));
    dirs.push(dataDir);
    const started = startServerProcess({
      DATABASE_URL: testDatabaseUrl() ?? '',
      DATA_DIR: dataDir,
      KEYWARD_ADMIN_KEY: 'admin',
    });
    await expect(started).rejects.toThrow(/exited with 1[\s\S]*at least 32[\s\S]*openssl rand/);
  });
});

describe('a public HOST without ADMIN_PORT', { timeout: 120_000 }, () => {
  it('keeps the admin API off the public listener, on loopback', async () => {
    const { server, adminUrl } = await start({ HOST: '0.0.0.0' });
    expect((await get(`${server.url}/admin/apps`, ADMIN_KEY)).status).toBe(404);
    expect((await get(`${adminUrl}/admin/apps`, ADMIN_KEY)).status).toBe(200);
  });
});
