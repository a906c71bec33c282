import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server-process.js';

// The commands of OPERATIONS.md against a real `keyward serve` on the embedded database, with the
// admin key generated into DATA_DIR the way a new user meets it. Embedded-only: the PostgreSQL pass
// covers real processes in instances.test.ts.
let dataDir: string;
let server: ServerProcess;
let env: Record<string, string>;

beforeAll(async () => {
  if (onPostgres()) return;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-cli-'));
  const base = { DATA_DIR: dataDir, DATABASE_URL: '', KEYWARD_ADMIN_KEY: '' };
  server = await startServerProcess(base);
  env = { ...base, KEYWARD_URL: server.url };
});
afterAll(async () => {
  if (onPostgres()) return;
  // Already stopped by the graceful-shutdown test unless that failed or did not run.
  await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

// Each test runs the CLI a dozen times, a process each: on a loaded machine, past the default 30 s.
describe.skipIf(onPostgres())('keyward CLI', { timeout: 90_000 }, () => {
  it('generates the admin key into DATA_DIR with mode 0600', () => {
    const stat = fs.statSync(path.join(dataDir, 'admin.key'));
    expect(stat.mode & 0o777).toBe(0o600);
  });

  it('creates an app and prints exactly the documented JSON', async () => {
    const result = await runCli(
      [
        'app',
        'create',
        '--name',
        'crm',
        '--scopes',
        'auth_order,auth_me',
        '--channels',
        'CRM,SHOP',
        '--json',
      ],
      env,
    );
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const app = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(Object.keys(app)).toEqual(['appKey', 'appSecret', 'scopes', 'channels', 'status']);
    expect(app).toMatchObject({
      scopes: ['auth_order', 'auth_me'],
      channels: ['CRM', 'SHOP'],
      status: 'active',
    });

    const token = await fetch(`${server.url}/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${String(app.appKey)}:${String(app.appSecret)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
  });

  it('creates a pending app, approves, lists, rotates and disables it', async () => {
    const created = JSON.parse(
      (
        await runCli(
          ['app', 'create', '--name', 'shop', '--scopes', 'auth_order', '--pending', '--json'],
          env,
        )
      ).stdout,
    ) as {
      appKey: string;
      appSecret: string;
      status: string;
    };
    expect(created.status).toBe('pending');
    expect((await runCli(['app', 'approve', created.appKey], env)).stdout).toContain('active');
    const listed = await runCli(['app', 'list'], env);
    expect(listed.stdout).toContain(created.appKey);
    expect(listed.stdout).not.toContain(created.appSecret);
    const rotated = JSON.parse(
      (await runCli(['app', 'rotate-secret', created.appKey, '--json'], env)).stdout,
    ) as { appSecret: string };
    expect(rotated.appSecret).not.toBe(created.appSecret);
    expect((await runCli(['app', 'disable', created.appKey], env)).stdout).toContain('disabled');
  });

  it('rotates a secret keeping or revoking the old tokens, and says which', async () => {
    const app = JSON.parse(
      (await runCli(['app', 'create', '--name', 'crm', '--scopes', 'auth_order', '--json'], env)).stdout,
    ) as { appKey: string; appSecret: string };
    const token = await fetch(`${server.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: app.appKey,
        client_secret: app.appSecret,
      }),
    });
    const old = ((await token.json()) as { access_token: string }).access_token;
    const call = async () => {
      const response = await fetch(`${server.url}/order/api/order/v1/shellnums?g_nonce=${randomUUID()}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${old}`, 'content-type': 'application/json' },
        body: JSON.stringify({ size: 1 }),
      });
      return ((await response.json()) as { code: unknown }).code;
    };

    // Text output says the tokens were kept, and they still work.
    const kept = await runCli(['app', 'rotate-secret', app.appKey], env);
    expect(kept.code).toBe(0);
    expect(kept.stdout).toMatch(/tokens: +kept/);
    expect(await call()).toBe(0);

    // --json says they were revoked, and the old token is refused at its next call.
    const revoked = await runCli(['app', 'rotate-secret', app.appKey, '--revoke-tokens', '--json'], env);
    expect(revoked.code).toBe(0);
    const lines = revoked.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ appKey: app.appKey, tokensRevoked: true });
    expect(await call()).toBe('60000');
  });

  it('sets the longest offline lease of an app and lists it', async () => {
    const app = JSON.parse(
      (await runCli(['app', 'create', '--name', 'runtime', '--scopes', 'auth_runtime', '--json'], env))
        .stdout,
    ) as { appKey: string };
    const set = await runCli(['app', 'set-offline-days', app.appKey, '30'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout.trim()).toBe(`${app.appKey}: offline leases of up to 30 days`);
    const row = (await runCli(['app', 'list'], env)).stdout.split('\n').find((l) => l.startsWith(app.appKey));
    expect(row?.split('\t')).toEqual([
      app.appKey,
      'active',
      'auth_runtime',
      '-',
      '30',
      'false',
      'false',
      'default',
      'runtime',
    ]);

    const none = await runCli(['app', 'set-offline-days', app.appKey, '0', '--json'], env);
    expect(JSON.parse(none.stdout)).toMatchObject({ appKey: app.appKey, offlineLeaseMaxDays: 0 });

    for (const days of ['366', '-1', 'ten']) {
      const refused = await runCli(['app', 'set-offline-days', app.appKey, days], env);
      expect(refused.code, days).toBe(1);
      expect(refused.stderr).toContain(`days must be a whole number from 0 to 365, got "${days}"`);
    }
    const unknown = await runCli(['app', 'set-offline-days', 'kw_nope', '3'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no application kw_nope');
  });

  it("sets an app's early return and channel restriction, and says what they mean", async () => {
    const app = JSON.parse(
      (
        await runCli(
          [
            'app',
            'create',
            '--name',
            'modeler',
            '--scopes',
            'auth_runtime,auth_me',
            '--channels',
            'CRM',
            '--json',
          ],
          env,
        )
      ).stdout,
    ) as { appKey: string };
    const set = await runCli(
      ['app', 'set', app.appKey, '--offline-early-return', '--restrict-to-channels'],
      env,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout.trim().split('\n')).toEqual([
      `${app.appKey}: changed: a checked-in offline lease frees its seat at once (early return)`,
      `${app.appKey}: changed: member logins only for the enterprises of its channels (CRM)`,
    ]);
    // The same again changes nothing, and says so; a setting not given is not reported.
    const again = await runCli(['app', 'set', app.appKey, '--offline-early-return'], env);
    expect(again.stdout.trim().split('\n')).toEqual([
      `${app.appKey}: unchanged: a checked-in offline lease frees its seat at once (early return)`,
    ]);
    const row = (await runCli(['app', 'list'], env)).stdout.split('\n').find((l) => l.startsWith(app.appKey));
    expect(row?.split('\t').slice(5, 7)).toEqual(['true', 'true']);
    const back = await runCli(['app', 'set', app.appKey, '--no-restrict-to-channels', '--json'], env);
    expect(JSON.parse(back.stdout)).toMatchObject({ offlineEarlyReturn: true, restrictToChannels: false });

    const nothing = await runCli(['app', 'set', app.appKey], env);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('nothing to set: give --offline-early-return');
    const bare = JSON.parse(
      (await runCli(['app', 'create', '--name', 'bare', '--scopes', 'auth_me', '--json'], env)).stdout,
    ) as { appKey: string };
    const refused = await runCli(['app', 'set', bare.appKey, '--restrict-to-channels'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the application has no channels');
  });

  it("sets an app's own rate limit, lists it, refuses a bad one and restores the default", async () => {
    const app = JSON.parse(
      (await runCli(['app', 'create', '--name', 'fleet', '--scopes', 'auth_runtime', '--json'], env)).stdout,
    ) as { appKey: string };
    const limited = await runCli(['app', 'set', app.appKey, '--rate-limit', '1200000'], env);
    expect(limited.stdout.trim()).toBe(
      `${app.appKey}: changed: at most 1200000 calls a minute, all instances together`,
    );
    const listedLimit = (await runCli(['app', 'list'], env)).stdout
      .split('\n')
      .find((l) => l.startsWith(app.appKey));
    expect(listedLimit?.split('\t')[7]).toBe('1200000');
    for (const bad of ['0', '1.5', 'lots']) {
      const refusedLimit = await runCli(['app', 'set', app.appKey, '--rate-limit', bad], env);
      expect(refusedLimit.code, bad).toBe(1);
      expect(refusedLimit.stderr).toContain('--rate-limit: a whole number');
    }
    const restored = await runCli(['app', 'set', app.appKey, '--rate-limit', 'default'], env);
    expect(restored.stdout).toContain("changed: the server's rate limit");
  });

  it('changes keyward-console, the console client, only with --force, saying every enterprise sign-in ends', async () => {
    for (const args of [
      ['app', 'disable', 'keyward-console'],
      ['app', 'rotate-secret', 'keyward-console', '--revoke-tokens'],
      ['app', 'set-offline-days', 'keyward-console', '3'],
      ['app', 'set', 'keyward-console', '--offline-early-return'],
    ]) {
      const refused = await runCli(args, env);
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.stderr).toContain("keyward-console is the console's own sign-in client");
      expect(refused.stderr).toContain('every enterprise');
      expect(refused.stderr).toContain('--force on the CLI');
    }
    const listed = JSON.parse((await runCli(['app', 'list', '--json'], env)).stdout) as Array<
      Record<string, unknown>
    >;
    expect(listed.find((a) => a.appKey === 'keyward-console')).toMatchObject({
      status: 'active',
      offlineLeaseMaxDays: 0,
      offlineEarlyReturn: false,
    });
    const forced = await runCli(['app', 'set-offline-days', 'keyward-console', '2', '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout.trim()).toBe('keyward-console: offline leases of up to 2 days');
    const disabled = await runCli(['app', 'disable', 'keyward-console', '--force'], env);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout.trim()).toBe('keyward-console is disabled');
  });

  it('fails with a clear message and exit 1 on a mistake or a wrong admin key', async () => {
    const unknown = await runCli(['app', 'disable', 'kw_nope'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no application kw_nope');
    const wrongKey = await runCli(['app', 'list'], { ...env, KEYWARD_ADMIN_KEY: 'wrong' });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('admin key');
  });

  it('rotates the runtime signing key and lists both keys, the new one current', async () => {
    const keyFile = path.join(dataDir, 'runtime-keys.json');
    // Made at the start, before any lease.
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    const rotated = await runCli(['keys', 'rotate', '--json'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    const lines = rotated.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const { kid, previousKid } = JSON.parse(lines[0] ?? '') as { kid: string; previousKid: string };
    expect(kid).not.toBe(previousKid);

    const listed = JSON.parse((await runCli(['keys', 'list', '--json'], env)).stdout) as {
      source: string;
      keys: Array<{ kid: string; current: boolean; retiredAt: number | null }>;
    };
    expect(listed.source).toBe('file');
    expect(listed.keys).toEqual([
      expect.objectContaining({ kid: previousKid, current: false, retiredAt: expect.any(Number) }),
      expect.objectContaining({ kid, current: true, retiredAt: null }),
    ]);
    const text = await runCli(['keys', 'list'], env);
    expect(text.stdout.split('\n')[0]).toBe('kid\tcreated\tretired\tcurrent');
    expect(text.stdout).toContain(kid);

    const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as {
      keys: Array<{ kid: string }>;
    };
    expect(jwks.keys.map((k) => k.kid)).toEqual([previousKid, kid]);
  });

  it("answers a relay's request through the admin API, naming what it cannot grant", async () => {
    const relayDir = path.join(dataDir, 'relay');
    const jwks = await (await fetch(`${server.url}/.well-known/jwks.json`)).text();
    fs.writeFileSync(path.join(dataDir, 'vendor-jwks.json'), jwks);
    const relayEnv = { ...env, KEYWARD_RELAY_FINGERPRINT: 'cli-relay-machine-1' };
    const init = await runCli(
      [
        'relay',
        'init',
        '--dir',
        relayDir,
        '--vendor-jwks',
        path.join(dataDir, 'vendor-jwks.json'),
        '--ask',
        'NO-SUCH-LOCK=2',
      ],
      relayEnv,
    );
    expect(init.code, init.stderr).toBe(0);
    const out = path.join(dataDir, 'grant.jwt');
    const grant = await runCli(['relay', 'grant', path.join(relayDir, 'request.jwt'), '--out', out], env);
    expect(grant.code).toBe(1);
    expect(grant.stderr).toContain('asks.licenses[0].assetNum: no lock has this number');
    expect(fs.existsSync(out)).toBe(false);
    const missing = await runCli(['relay', 'grant', path.join(dataDir, 'absent.jwt')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('absent.jwt: cannot be read');
  });

  it('refuses a second server on the same data directory', async () => {
    await expect(startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: '' })).rejects.toThrow(
      /in use by process/,
    );
  });

  it('logs no secret while serving', () => {
    expect(server.output()).not.toMatch(/appSecret|access_token|client_secret/);
  });
});

describe.skipIf(onPostgres())('graceful shutdown', () => {
  // Runs after the tests above and stops their server, which has served all of them, rather than
  // start a fresh one only to stop it (a fresh start runs initdb and every migration: 10-17 s on
  // a loaded 2-core machine). Then a second server on the same directory, stopped with SIGINT.
  it('closes on SIGTERM with exit 0, releasing the data directory', { timeout: 120_000 }, async () => {
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'keyward.lock'))).toBe(false);
    const second = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: '' });
    expect(await second.stop('SIGINT')).toBe(0);
  });

  it('migrates with `keyward migrate` and reports when up to date', { timeout: 120_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-migrate-'));
    try {
      const first = await runCli(['migrate'], { DATA_DIR: dir, DATABASE_URL: '' });
      expect(first.code).toBe(0);
      expect(first.stdout).toContain('applied 0001_platform');
      const again = await runCli(['migrate'], { DATA_DIR: dir, DATABASE_URL: '' });
      expect(again.stdout).toContain('up to date');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
