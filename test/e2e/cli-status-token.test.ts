import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { runCli } from '../support/server-process.js';
import { startDemoServer, type DemoServer } from './support/demo-server.js';

// `keyward status`, `keyward token`, the admin key's lookup and the text output's headers against
// a real `keyward serve`, on the embedded database or (PostgreSQL pass) a database of its own.
let live: DemoServer;
let env: Record<string, string>;
let app: { appKey: string; appSecret: string };

const PACKAGE_VERSION = (
  JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as {
    version: string;
  }
).version;

beforeAll(async () => {
  live = await startDemoServer();
  env = live.cliEnv;
  const created = await runCli(
    ['app', 'create', '--name', 'scripts', '--scopes', 'auth_order', '--json'],
    env,
  );
  expect(created.code, created.stderr).toBe(0);
  app = JSON.parse(created.stdout) as { appKey: string; appSecret: string };
});
afterAll(async () => live?.stop());

const shellnums = async (token: string) => {
  const response = await fetch(`${live.server.url}/order/api/order/v1/shellnums?g_nonce=${randomUUID()}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ size: 1 }),
  });
  return ((await response.json()) as { code: unknown }).code;
};

describe('keyward status', () => {
  it('prints the server, its version, database and migrations with --json', async () => {
    const result = await runCli(['status', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const status = JSON.parse(lines[0] ?? '') as { migrations: { applied: number; pending: string[] } };
    expect(status).toEqual({
      url: live.server.url,
      adminUrl: live.server.url,
      version: PACKAGE_VERSION,
      database: onPostgres() ? 'postgres' : 'embedded',
      migrations: { applied: expect.any(Number), pending: [] },
      // A new server: no owner yet, so the admin key is the only way in.
      signIn: { owners: 0, adminKeyEnabled: true },
    });
    expect(status.migrations.applied).toBeGreaterThan(0);
  });

  it('prints the same as text', async () => {
    const result = await runCli(['status'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`server      ${live.server.url} (reachable)`);
    expect(result.stdout).toContain(`version     ${PACKAGE_VERSION}`);
    expect(result.stdout).toContain(`database    ${onPostgres() ? 'PostgreSQL' : 'embedded'}`);
    expect(result.stdout).toMatch(/migrations {2}\d+ applied, none pending/);
    expect(result.stdout).toContain(
      'sign-in     admin key only: no owner yet (keyward operator add --role owner)',
    );
  });

  it('exits 1 with the address it tried when no server answers', async () => {
    for (const args of [['status'], ['status', '--json']]) {
      const result = await runCli(args, { ...env, KEYWARD_URL: 'http://127.0.0.1:9' });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('keyward: cannot reach the Keyward server at http://127.0.0.1:9');
    }
  });

  it('says the server answers without the admin key, and where the CLI looked for one', async () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-nokey-'));
    try {
      const noKey = { ...env, KEYWARD_ADMIN_KEY: '', DATA_DIR: scratch };
      const result = await runCli(['status'], noKey);
      expect(result.code).toBe(2);
      expect(result.stdout).toContain(`server      ${live.server.url} (reachable)`);
      expect(result.stdout).toContain(`version     ${PACKAGE_VERSION}`);
      expect(result.stdout).toContain(`admin API   ${live.server.url}: not read`);
      expect(result.stderr).toContain(
        `keyward: admin key missing: KEYWARD_ADMIN_KEY is not set and ${path.join(scratch, 'admin.key')} does not exist`,
      );
      expect(result.stderr).toContain('and no personal token is kept (keyward login, KEYWARD_TOKEN)');
      expect(result.stderr).toContain(
        "Set KEYWARD_ADMIN_KEY to the server's key, sign in with keyward login",
      );
      const json = await runCli(['status', '--json'], noKey);
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stdout)).toEqual({
        url: live.server.url,
        adminUrl: live.server.url,
        version: PACKAGE_VERSION,
        error: expect.stringMatching(/^admin key missing: /),
      });
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('says the server refused a wrong admin key, and where the CLI found it', async () => {
    const result = await runCli(['status'], { ...env, KEYWARD_ADMIN_KEY: 'wrong' });
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(`server      ${live.server.url} (reachable)`);
    expect(result.stderr).toContain(
      `keyward: admin key wrong: the server at ${live.server.url} refused the key in KEYWARD_ADMIN_KEY`,
    );
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-wrongkey-'));
    try {
      fs.writeFileSync(path.join(scratch, 'admin.key'), 'not-the-key\n');
      const fromFile = await runCli(['app', 'list'], { ...env, KEYWARD_ADMIN_KEY: '', DATA_DIR: scratch });
      expect(fromFile.code).toBe(1);
      expect(fromFile.stderr).toContain(`refused the key in ${path.join(scratch, 'admin.key')}`);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe('keyward token', () => {
  it('prints only an access token that works, from the variables', async () => {
    const result = await runCli(['token'], {
      ...env,
      KEYWARD_APP_KEY: app.appKey,
      KEYWARD_APP_SECRET: app.appSecret,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^[A-Za-z0-9_-]{20,}\n$/);
    expect(await shellnums(result.stdout.trim())).toBe(0);
  });

  it('prints the whole answer with --json, from the options, for the scope asked', async () => {
    const result = await runCli(
      ['token', '--app-key', app.appKey, '--app-secret', app.appSecret, '--scope', 'auth_order', '--json'],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const answer = JSON.parse(lines[0] ?? '') as { access_token: string };
    expect(answer).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      expires_in: expect.any(Number),
      scope: 'auth_order',
    });
    expect(await shellnums(answer.access_token)).toBe(0);
  });

  it("exits 1 with the server's reason when refused, printing no token", async () => {
    const wrong = await runCli(['token', '--app-key', app.appKey, '--app-secret', 'not-the-secret'], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toContain('invalid_client: client authentication failed');
    const scope = await runCli(
      ['token', '--app-key', app.appKey, '--app-secret', app.appSecret, '--scope', 'auth_me'],
      env,
    );
    expect(scope.code).toBe(1);
    expect(scope.stderr).toContain('invalid_scope');
  });

  it('names a missing key or secret', async () => {
    const missing = await runCli(['token', '--app-key', app.appKey], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("required option '--app-secret <APP_SECRET>' not specified");
    const empty = await runCli(['token', '--app-key', app.appKey], { ...env, KEYWARD_APP_SECRET: '' });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('no app secret: give --app-secret or set KEYWARD_APP_SECRET');
  });
});

describe('the admin key', () => {
  it('names where the CLI looked, and the CLI creates no admin.key', async () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-nokey-'));
    try {
      for (const dataDir of [path.join(scratch, 'absent'), scratch]) {
        const result = await runCli(['app', 'list'], { ...env, KEYWARD_ADMIN_KEY: '', DATA_DIR: dataDir });
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('admin key missing: KEYWARD_ADMIN_KEY is not set');
        expect(result.stderr).toContain(path.join(dataDir, 'admin.key'));
      }
      expect(fs.readdirSync(scratch)).toEqual([]);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe('text output', () => {
  it('app list starts with a header line, tab-separated like its rows', async () => {
    const result = await runCli(['app', 'list'], env);
    expect(result.code, result.stderr).toBe(0);
    const [header, ...rows] = result.stdout.trim().split('\n');
    expect(header).toBe(
      'appKey\tstatus\tscopes\tchannels\tofflineLeaseMaxDays\tofflineEarlyReturn\trestrictToChannels\trateLimitPerMinute\tname',
    );
    expect(rows).toContain(`${app.appKey}\tactive\tauth_order\t-\t0\tfalse\tfalse\tdefault\tscripts`);
  });

  it('audit starts with a header line and sends its filters as query parameters', async () => {
    const enterprise = randomUUID();
    const result = await runCli(
      [
        'audit',
        '--enterprise',
        enterprise,
        '--app',
        'some-app',
        '--action',
        'asset.lock',
        '--since',
        '2h',
        '--until',
        '2026-01-31T12:00:00+08:00',
        '--limit',
        '5',
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(
      'time\taction\tsubject\toperator\trequestId\tclientRequestId\toperatorId',
    );
    // What reached the server, from its request log.
    const sent = live.server
      .output()
      .split('\n')
      .flatMap((line) => {
        const url = (JSON.parse(line || '{}') as { req?: { url?: string } }).req?.url;
        return url?.startsWith('/admin/audit?') === true && url.includes(enterprise) ? [url] : [];
      });
    expect(sent).toHaveLength(1);
    const query = new URL(sent[0] ?? '', live.server.url).searchParams;
    expect(query.get('enterprise')).toBe(enterprise);
    expect(query.get('app')).toBe('some-app');
    expect(query.get('action')).toBe('asset.lock');
    expect(query.get('until')).toBe('2026-01-31T04:00:00.000Z');
    expect(query.get('limit')).toBe('5');
    expect(query.get('since')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('the server’s output without LOG_FORMAT, stdout not a terminal', () => {
  it('stays JSON lines, with no banner', () => {
    const lines = live.server.output().trim().split('\n');
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(live.server.output()).not.toContain('npx keyward demo');
  });
});
