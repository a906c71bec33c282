import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { keywardCli } from '../../src/cli/cli.js';
import { createTestApp, seedEnterprise, userToken, type TestApp } from '../support/fixtures.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import {
  adminSession,
  dataOf,
  expectFailure,
  loginStatus,
  memberCalls,
  seedMember,
} from './member-helpers.js';

let h: Harness;
let app: TestApp;

beforeAll(async () => {
  h = await startHarness();
  app = await createTestApp(h, { scopes: ['auth_me'] });
});
afterAll(async () => h.close());

const admin = (url: string, payload?: object, key = ADMIN_KEY) =>
  h.app.inject({
    method: 'POST',
    url: `/admin${url}`,
    headers: { authorization: `Bearer ${key}` },
    ...(payload ? { payload } : {}),
  });

describe('admin API: set a member password', () => {
  it('sets the password, ends the member’s sessions and lifts a login lock', async () => {
    const enterprise = await seedEnterprise(h);
    const member = await seedMember(h, enterprise);
    const token = await userToken(h, app, member.account, member.password);
    // Locked from this address through this app, and the account slowed from anywhere.
    const account = member.account.toLowerCase();
    const lockedUntil = new Date(Date.now() + 900_000);
    const { id: appId } = await h.database.db
      .selectFrom('apps')
      .select('id')
      .where('app_key', '=', app.appKey)
      .executeTakeFirstOrThrow();
    await h.database.db
      .insertInto('login_source_attempts')
      .values({ account, address: '127.0.0.1', app_id: appId, failures: 5, locked_until: lockedUntil })
      .execute();
    await h.database.db
      .insertInto('login_attempts')
      .values({ account, failures: 25, locked_until: lockedUntil })
      .onConflict((oc) => oc.column('account').doUpdateSet({ failures: 25, locked_until: lockedUntil }))
      .execute();
    expect((await loginStatus(h, app, member.account, member.password)).statusCode).toBe(400);

    const response = await admin('/members/password', {
      account: member.account.toUpperCase(),
      password: 'Operator-1',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ account: member.account, memberGlobalId: member.globalId });

    expect((await loginStatus(h, app, member.account, 'Operator-1')).statusCode).toBe(200);
    expect((await loginStatus(h, app, member.account, member.password)).statusCode).toBe(400);
    const appTok = (await adminSession(h)).appTok;
    expectFailure(
      await memberCalls(h, appTok, token)('GET', `/enterprise/${enterprise.globalId}/members`),
      '60005',
    );
  });

  it('gives an administrator created without a password its first one', async () => {
    const enterprise = await seedEnterprise(h);
    await h.database.db
      .updateTable('members')
      .set({ password_hash: null })
      .where('global_id', '=', enterprise.adminGlobalId)
      .execute();
    expect((await loginStatus(h, app, enterprise.adminAccount, enterprise.adminPassword)).statusCode).toBe(
      400,
    );
    expect(
      (await admin('/members/password', { account: enterprise.adminAccount, password: 'First-pass1' }))
        .statusCode,
    ).toBe(200);
    expect((await loginStatus(h, app, enterprise.adminAccount, 'First-pass1')).statusCode).toBe(200);
  });

  it.each([
    [{ account: 'nobody@zzzzzz', password: 'Whatever1' }, 404, 'no member with account nobody@zzzzzz'],
    [{ account: 'x@y', password: 'short' }, 400, 'password: password length must lie between 8 and 16'],
    [{ account: 'x@y', password: '' }, 400, 'password: password empty'],
    [{ account: 'x@y' }, 400, 'password: is required'],
  ])('answers %j with %i', async (payload, status, error) => {
    const response = await admin('/members/password', payload);
    expect(response.statusCode).toBe(status);
    expect(response.json()).toEqual({ error });
  });

  it('does not set the password of a deleted member', async () => {
    const enterprise = await seedEnterprise(h);
    const member = await seedMember(h, enterprise);
    await h.database.db.updateTable('members').set({ deleted: true }).where('id', '=', member.id).execute();
    expect(
      (await admin('/members/password', { account: member.account, password: 'Revived-1' })).statusCode,
    ).toBe(404);
  });

  it('refuses a wrong admin key', async () => {
    expect(
      (await admin('/members/password', { account: 'a@b', password: 'Whatever1' }, 'wrong')).statusCode,
    ).toBe(401);
  });
});

describe('admin API: set an enterprise’s member limit', () => {
  it('caps member op 1, counting the administrator, and lifts the cap with null', async () => {
    const session = await adminSession(h);
    const path = `/enterprises/${session.enterprise.globalId}/member-limit`;
    const capped = await admin(path, { memberLimit: '2' });
    expect(capped.json()).toEqual({
      enterpriseGlobalId: session.enterprise.globalId,
      memberLimit: 2,
      memberCount: 1,
    });
    const user = (userName: string) => ({ userName, password: 'Passw0rd!', departmentId: 1, name: userName });
    const add = (names: string[]) =>
      session.call('POST', `/enterprise/${session.enterprise.globalId}/member`, {
        userList: names.map(user),
      });
    const body = expectFailure(await add(['one', 'two']), '60027') as {
      data: { failed: Array<{ userName: string; message: string }> };
    };
    expect(body.data.failed).toEqual([
      { userName: 'two', message: 'the enterprise account may create at most 2 trial member accounts' },
    ]);
    expect((await admin(path, { memberLimit: null })).json()).toMatchObject({
      memberLimit: null,
      memberCount: 2,
    });
    dataOf(await add(['two', 'three']));
  });

  it.each([
    [{ memberLimit: 0 }, 400],
    [{ memberLimit: 'ten' }, 400],
    [{}, 400],
  ])('refuses %j with %i', async (payload, status) => {
    const enterprise = await seedEnterprise(h);
    expect((await admin(`/enterprises/${enterprise.globalId}/member-limit`, payload)).statusCode).toBe(
      status,
    );
  });

  it('answers an unknown enterprise with 404', async () => {
    const response = await admin('/enterprises/no-such-enterprise/member-limit', { memberLimit: 5 });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'no enterprise no-such-enterprise' });
  });
});

describe('keyward member set-password / enterprise set-member-limit', () => {
  let printed: string[];

  beforeAll(async () => {
    const address = await h.app.listen({ port: 0, host: '127.0.0.1' });
    vi.stubEnv('KEYWARD_URL', address);
    vi.stubEnv('KEYWARD_ADMIN_KEY', ADMIN_KEY);
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });

  // The CLI in-process: commander's own mistakes reject with its error, the commands' with theirs.
  const run = async (args: string[]) => {
    printed = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      printed.push(String(line));
    });
    try {
      await keywardCli().parseAsync(args, { from: 'user' });
    } finally {
      spy.mockRestore();
    }
    return printed.join('\n');
  };

  it('sets a password through the running server', async () => {
    const enterprise = await seedEnterprise(h);
    const out = await run([
      'member',
      'set-password',
      '--account',
      enterprise.adminAccount,
      '--password',
      'From-the-cli1',
    ]);
    expect(out).toBe(`password set for ${enterprise.adminAccount}; its sessions were ended`);
    expect((await loginStatus(h, app, enterprise.adminAccount, 'From-the-cli1')).statusCode).toBe(200);
    const json = await run([
      'member',
      'set-password',
      '--account',
      enterprise.adminAccount,
      '--password',
      'Again-cli-2',
      '--json',
    ]);
    expect(JSON.parse(json)).toEqual({
      account: enterprise.adminAccount,
      memberGlobalId: enterprise.adminGlobalId,
    });
  });

  it('fails clearly on a bad password, an unknown account or missing options', async () => {
    const enterprise = await seedEnterprise(h);
    await expect(
      run(['member', 'set-password', '--account', enterprise.adminAccount, '--password', 'short']),
    ).rejects.toThrow('password length must lie between 8 and 16');
    await expect(
      run(['member', 'set-password', '--account', 'ghost@nowhere', '--password', 'Long-enough1']),
    ).rejects.toThrow('no member with account ghost@nowhere');
    await expect(run(['member', 'set-password', '--account', 'a@b'])).rejects.toThrow(
      "required option '--password <PASSWORD>' not specified",
    );
  });

  it('sets and removes a member limit', async () => {
    const enterprise = await seedEnterprise(h);
    expect(await run(['enterprise', 'set-member-limit', enterprise.globalId, '5'])).toBe(
      `${enterprise.globalId}: at most 5 members (1 now)`,
    );
    expect(
      JSON.parse(await run(['enterprise', 'set-member-limit', enterprise.globalId, 'none', '--json'])),
    ).toEqual({
      enterpriseGlobalId: enterprise.globalId,
      memberLimit: null,
      memberCount: 1,
    });
    const row = await h.database.db
      .selectFrom('enterprises')
      .select('member_limit')
      .where('id', '=', enterprise.id)
      .executeTakeFirstOrThrow();
    expect(row.member_limit).toBeNull();
    await expect(run(['enterprise', 'set-member-limit', enterprise.globalId, 'lots'])).rejects.toThrow(
      'the limit must be a whole number from 1 or none',
    );
    await expect(run(['enterprise', 'set-member-limit', 'missing-enterprise', '3'])).rejects.toThrow(
      'no enterprise missing-enterprise',
    );
  });
});
