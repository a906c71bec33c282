import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/server-process.js';
import { startDemoServer, type DemoServer } from './support/demo-server.js';

// `keyward operator …`, `keyward login` and `logout` against a real `keyward serve`: the owner's
// first steps with the admin key, then the CLI signed in with personal tokens instead, each act
// audited by the name of who did it, and a role that lacks a permission refused.
let live: DemoServer;
let keyEnv: Record<string, string>;
let home: string;
let tokenEnv: Record<string, string>;

beforeAll(async () => {
  live = await startDemoServer();
  keyEnv = live.cliEnv;
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-home-'));
  // No admin key anywhere: not in the environment, not in a DATA_DIR beside the CLI.
  tokenEnv = {
    KEYWARD_URL: live.server.url,
    KEYWARD_ADMIN_KEY: '',
    DATA_DIR: path.join(home, 'no-data'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
  };
});
afterAll(async () => {
  await live?.stop();
  fs.rmSync(home, { recursive: true, force: true });
});

async function ok(args: string[], env: Record<string, string>, input?: string): Promise<string> {
  const result = await runCli(args, env, input);
  expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

async function addWithToken(name: string, email: string, role: string): Promise<string> {
  JSON.parse(
    await ok(['operator', 'add', '--name', name, '--email', email, '--role', role, '--json'], keyEnv),
  );
  const created = JSON.parse(
    await ok(['operator', 'token', 'create', '--operator', email, '--name', 'cli', '--json'], keyEnv),
  ) as { token: string };
  return created.token;
}

// Each step spawns the CLI (a second or two each): more than the suite's 30 s under a loaded machine.
describe('keyward operator and keyward login', { timeout: 90_000 }, () => {
  it('signs the CLI in with a personal token kept 0600 in the config directory, and out again', async () => {
    const token = await addWithToken('Ada Lee', 'ada@example.com', 'owner');
    const before = await runCli(['app', 'list'], tokenEnv);
    expect(before.code).toBe(1);
    expect(before.stderr).toMatch(/admin key missing: .*keyward login/);

    const signedIn = await ok(['login'], tokenEnv, `${token}\n`);
    expect(signedIn).toMatch(/signed in to .* as Ada Lee \(owner\);/);
    const file = path.join(home, 'config', 'keyward', 'credentials.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);

    const app = JSON.parse(
      await ok(['app', 'create', '--name', 'by-ada', '--scopes', 'auth_order', '--json'], tokenEnv),
    ) as { appKey: string };
    // A second operator, by KEYWARD_TOKEN, acts on the same app: the audit log names both.
    const bob = await addWithToken('Bob Admin', 'bob@example.com', 'admin');
    await ok(['app', 'disable', app.appKey], { ...tokenEnv, KEYWARD_TOKEN: bob });
    const audit = JSON.parse(await ok(['audit', '--subject', app.appKey, '--json'], tokenEnv)) as Array<{
      action: string;
      operator: string;
    }>;
    expect(audit.map((r) => [r.action, r.operator])).toEqual([
      ['app.disabled', 'Bob Admin'],
      ['app.created', 'Ada Lee'],
    ]);
    const text = await ok(['audit', '--subject', app.appKey], tokenEnv);
    expect(text).toContain('Bob Admin');
    expect(text).toContain('Ada Lee');

    await ok(['logout'], tokenEnv);
    const after = await runCli(['app', 'list'], tokenEnv);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/admin key missing/);
  });

  it("refuses what a role lacks, a wrong token at login, and lists and revokes a person's tokens", async () => {
    const sam = await addWithToken('Sam Support', 'sam@example.com', 'support');
    const samEnv = { ...tokenEnv, KEYWARD_TOKEN: sam };
    expect(await ok(['app', 'list'], samEnv)).toContain('appKey');
    const refused = await runCli(['app', 'create', '--name', 'x', '--scopes', 'auth_order'], samEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not allowed: this needs the write permission/);

    const wrong = await runCli(['login'], tokenEnv, 'kwp_not-a-real-token\n');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/personal token refused .*token wrong/);
    expect(fs.existsSync(path.join(home, 'config', 'keyward', 'credentials.json'))).toBe(true);

    const tokens = JSON.parse(await ok(['operator', 'token', 'list', '--json'], samEnv)) as Array<{
      id: string;
    }>;
    expect(tokens).toHaveLength(1);
    await ok(['operator', 'token', 'revoke', tokens[0]?.id ?? ''], samEnv);
    const revoked = await runCli(['app', 'list'], samEnv);
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toMatch(/token revoked/);
  });

  it('resets a lost second factor and sets the two-factor rule, owners only', async () => {
    expect(await ok(['operator', 'two-factor', 'require', 'status'], keyEnv)).toContain(
      'up to each operator',
    );
    const on = JSON.parse(await ok(['operator', 'two-factor', 'require', 'on', '--json'], keyEnv)) as {
      required: boolean;
    };
    expect(on.required).toBe(true);
    expect(await ok(['operator', 'two-factor', 'require', 'status'], keyEnv)).toContain(
      'required of everyone',
    );
    await ok(['operator', 'two-factor', 'require', 'off'], keyEnv);
    const bad = await runCli(['operator', 'two-factor', 'require', 'maybe'], keyEnv);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('on, off or status');

    await addWithToken('Eve Auditor', 'eve@example.com', 'auditor');
    expect(await ok(['operator', 'two-factor', 'reset', 'eve@example.com'], keyEnv)).toContain(
      'second factor removed',
    );
    const missing = await runCli(['operator', 'two-factor', 'reset', 'nobody@example.com'], keyEnv);
    expect(missing.code).toBe(1);
    const dan = await addWithToken('Dan Admin', 'dan@example.com', 'admin');
    const refused = await runCli(['operator', 'two-factor', 'require', 'on'], {
      ...tokenEnv,
      KEYWARD_TOKEN: dan,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/needs the operators permission/);
  });
});
