import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../support/database.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server-process.js';

// Two `keyward serve` processes on one PostgreSQL: what one instance learns, the other knows at once.
const url = testDatabaseUrl();
const ADMIN_KEY = randomBytes(16).toString('hex');
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  if (url === undefined) return;
  const env = { DATABASE_URL: url, KEYWARD_ADMIN_KEY: ADMIN_KEY, DATA_DIR: '/tmp/keyward-instances' };
  [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
});
afterAll(async () => {
  if (url === undefined) return;
  await Promise.all([a.stop(), b.stop()]);
});

const nonce = () => randomBytes(12).toString('hex');

async function token(base: string, key: string, secret: string): Promise<string> {
  const response = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

async function shellnums(
  base: string,
  bearer: string,
  n: string,
): Promise<{ code: unknown; data?: string[] }> {
  const response = await fetch(`${base}/order/api/order/v1/shellnums?g_nonce=${n}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ size: 10 }),
  });
  return (await response.json()) as { code: unknown; data?: string[] };
}

describe.runIf(url !== undefined)('two instances on one PostgreSQL', () => {
  let appKey: string;
  let bearer: string;

  beforeAll(async () => {
    const created = await runCli(['app', 'create', '--name', 'shared', '--scopes', 'auth_order', '--json'], {
      KEYWARD_URL: a.url,
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
    });
    const app = JSON.parse(created.stdout) as { appKey: string; appSecret: string };
    appKey = app.appKey;
    bearer = await token(a.url, app.appKey, app.appSecret);
  });

  it('accepts a token issued by one instance on the other', async () => {
    expect((await shellnums(b.url, bearer, nonce())).code).toBe(0);
  });

  it('refuses on one instance a nonce used on the other', async () => {
    const n = nonce();
    expect((await shellnums(a.url, bearer, n)).code).toBe(0);
    expect((await shellnums(b.url, bearer, n)).code).toBe('70001');
  });

  it('never issues one asset number twice across instances', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => shellnums(i % 2 === 0 ? a.url : b.url, bearer, nonce())),
    );
    const all = results.flatMap((r) => r.data ?? []);
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
  });

  it('refuses the tokens of a secret rotated with --revoke-tokens on both instances at once', async () => {
    const created = await runCli(['app', 'create', '--name', 'rotated', '--scopes', 'auth_order', '--json'], {
      KEYWARD_URL: a.url,
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
    });
    const app = JSON.parse(created.stdout) as { appKey: string; appSecret: string };
    const old = await token(a.url, app.appKey, app.appSecret);
    expect((await shellnums(b.url, old, nonce())).code).toBe(0);
    const rotated = await runCli(['app', 'rotate-secret', app.appKey, '--revoke-tokens'], {
      KEYWARD_URL: b.url,
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
    });
    expect(rotated.code).toBe(0);
    expect((await shellnums(a.url, old, nonce())).code).toBe('60000');
    expect((await shellnums(b.url, old, nonce())).code).toBe('60000');
  });

  it('refuses a disabled app on both instances at once', async () => {
    const disabled = await runCli(['app', 'disable', appKey], {
      KEYWARD_URL: b.url,
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
    });
    expect(disabled.code).toBe(0);
    expect((await shellnums(a.url, bearer, nonce())).code).toBe('60000');
    expect((await shellnums(b.url, bearer, nonce())).code).toBe('60000');
  });
});
