import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LOCKOUT, LoginService } from '../../src/domain/members/login.service.js';
import {
  createTestApp,
  passwordLogin,
  seedEnterprise,
  type TestApp,
  type TestEnterprise,
} from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { seedMember } from './member-helpers.js';

let h: Harness;
let app: TestApp;
let enterprise: TestEnterprise;

beforeAll(async () => {
  h = await startHarness();
  app = await createTestApp(h, { scopes: ['auth_me'] });
  enterprise = await seedEnterprise(h);
});
afterAll(async () => h.close());

const LOCKED = 'too many failed attempts; try again later';
const WRONG = 'wrong account or password';
/** The address `inject` calls come from unless told otherwise. */
const HOME = '127.0.0.1';

interface From {
  address?: string;
  client?: TestApp;
}

async function login(account: string, password: string, from: From = {}) {
  const client = from.client ?? app;
  const response = await passwordLogin(h, client, account, password, {
    remoteAddress: from.address ?? HOME,
  });
  return { statusCode: response.statusCode, body: response.json() as Record<string, unknown> };
}

const appIdOf = async (client: TestApp) =>
  (
    await h.database.db
      .selectFrom('apps')
      .select('id')
      .where('app_key', '=', client.appKey)
      .executeTakeFirstOrThrow()
  ).id;

/** The count of one account from one address through one app. */
const attempts = async (account: string, from: From = {}) =>
  h.database.db
    .selectFrom('login_source_attempts')
    .selectAll()
    .where('account', '=', account.toLowerCase())
    .where('address', '=', from.address ?? HOME)
    .where('app_id', '=', await appIdOf(from.client ?? app))
    .executeTakeFirst();

/** The count of one account from anywhere. */
const accountAttempts = (account: string) =>
  h.database.db
    .selectFrom('login_attempts')
    .selectAll()
    .where('account', '=', account.toLowerCase())
    .executeTakeFirst();

/** Lets time pass for the account: every wait it was given, from anywhere, is over. */
async function waitOut(account: string): Promise<void> {
  const past = new Date(Date.now() - 1000);
  await h.database.db
    .updateTable('login_source_attempts')
    .set({ locked_until: past })
    .where('account', '=', account.toLowerCase())
    .execute();
  await h.database.db
    .updateTable('login_attempts')
    .set({ locked_until: past })
    .where('account', '=', account.toLowerCase())
    .execute();
}

async function fail(account: string, times: number, from: From = {}): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    await waitOut(account);
    const refused = await login(account, 'not-the-password', from);
    expect(refused.body).toMatchObject({ error: 'invalid_grant', error_description: WRONG });
  }
}

const waitOf = (row: { locked_until: Date | null; updated_at: Date } | undefined) =>
  (row?.locked_until?.getTime() ?? 0) - (row?.updated_at.getTime() ?? 0);

describe('repeated failed logins from one address through one app', () => {
  it('lets two mistakes pass and forgets them after a right password', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 2);
    expect((await attempts(member.account))?.locked_until).toBeNull();
    expect((await login(member.account, member.password)).statusCode).toBe(200);
    expect(await attempts(member.account)).toBeUndefined();
    // The account-wide count keeps the two failures, not the right attempt.
    expect((await accountAttempts(member.account))?.failures).toBe(2);
  });

  it('slows the account after the third failure: even the right password waits', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 3);
    const row = await attempts(member.account);
    expect(row?.failures).toBe(3);
    expect(waitOf(row)).toBe(LOGIN_LOCKOUT.source.slowBaseSeconds * 1000);
    const early = await login(member.account, member.password);
    expect(early.statusCode).toBe(400);
    expect(early.body).toEqual({ error: 'invalid_grant', error_description: LOCKED });
    await waitOut(member.account);
    expect((await login(member.account, member.password)).statusCode).toBe(200);
  });

  it('doubles the wait after the fourth failure', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 4);
    expect(waitOf(await attempts(member.account))).toBe(2 * LOGIN_LOCKOUT.source.slowBaseSeconds * 1000);
  });

  it('locks the account for 15 minutes at the fifth failure, without looking at passwords', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 5);
    const row = await attempts(member.account);
    expect(row?.failures).toBe(5);
    expect(waitOf(row)).toBe(15 * 60 * 1000);
    for (const password of [member.password, 'another-guess']) {
      expect((await login(member.account, password)).body).toEqual({
        error: 'invalid_grant',
        error_description: LOCKED,
      });
    }
    // Refused attempts are not even counted: nothing was checked.
    expect((await attempts(member.account))?.failures).toBe(5);
    expect((await accountAttempts(member.account))?.failures).toBe(5);
  });

  it('starts counting afresh once the lock has run out', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 5);
    await h.database.db
      .updateTable('login_source_attempts')
      .set({ locked_until: new Date(Date.now() - 1000), updated_at: new Date(Date.now() - 16 * 60 * 1000) })
      .where('account', '=', member.account.toLowerCase())
      .execute();
    await fail(member.account, 1);
    expect((await attempts(member.account))?.failures).toBe(1);
    expect((await login(member.account, member.password)).statusCode).toBe(200);
  });

  it('forgets mistakes more than 15 minutes apart', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 4);
    const longAgo = new Date(Date.now() - 16 * 60 * 1000);
    for (const table of ['login_source_attempts', 'login_attempts'] as const) {
      await h.database.db
        .updateTable(table)
        .set({ updated_at: longAgo })
        .where('account', '=', member.account.toLowerCase())
        .execute();
    }
    await fail(member.account, 1);
    expect(await attempts(member.account)).toMatchObject({ failures: 1, locked_until: null });
    expect(await accountAttempts(member.account)).toMatchObject({ failures: 1, locked_until: null });
  });

  it('counts an account in any letter case as one', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account.toUpperCase(), 2);
    await fail(member.account, 1);
    expect((await attempts(member.account))?.failures).toBe(3);
  });

  it('locks an unknown account the same way, so locks reveal no accounts', async () => {
    const ghost = `ghost@${enterprise.code}`;
    await fail(ghost, 5);
    expect((await login(ghost, 'x')).body).toEqual({ error: 'invalid_grant', error_description: LOCKED });
  });

  it('lets concurrent guesses through only until the account is slowed', async () => {
    const member = await seedMember(h, enterprise);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => login(member.account, 'parallel-guess')),
    );
    const descriptions = answers.map((a) => a.body.error_description);
    const slowFrom = LOGIN_LOCKOUT.source.slowFromAttempt;
    expect(descriptions.filter((d) => d === WRONG)).toHaveLength(slowFrom);
    expect(descriptions.filter((d) => d === LOCKED)).toHaveLength(10 - slowFrom);
    expect((await attempts(member.account))?.failures).toBe(slowFrom);
  });

  it(
    'never refuses a right password for the attempts of many right logins at once',
    { timeout: 180_000 },
    async () => {
      // Failures are counted, not attempts: right logins from one address through one app all pass,
      // however many arrive together (they take turns on the account: see LoginService.verify).
      const member = await seedMember(h, enterprise);
      const answers = await Promise.all(
        Array.from({ length: 60 }, () => login(member.account, member.password)),
      );
      expect(answers.map((a) => a.statusCode).filter((status) => status !== 200)).toEqual([]);
      expect((await attempts(member.account))?.failures ?? 0).toBe(0);
    },
  );

  it('still refuses right passwords while earlier failures keep the source waiting', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, LOGIN_LOCKOUT.source.slowFromAttempt);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => login(member.account, member.password)),
    );
    expect(answers.map((a) => a.body.error_description)).toEqual(Array(5).fill(LOCKED));
  });

  it('purges records that no longer slow or lock anything, and keeps live locks', async () => {
    const idle = await seedMember(h, enterprise);
    const locked = await seedMember(h, enterprise);
    await fail(idle.account, 1);
    await fail(locked.account, 5);
    const longAgo = new Date(Date.now() - 16 * 60 * 1000);
    const accounts = [idle.account.toLowerCase(), locked.account.toLowerCase()];
    for (const table of ['login_source_attempts', 'login_attempts'] as const) {
      await h.database.db
        .updateTable(table)
        .set({ updated_at: longAgo })
        .where('account', 'in', accounts)
        .execute();
    }
    await h.app.services.login.purgeStale();
    expect(await attempts(idle.account)).toBeUndefined();
    expect(await accountAttempts(idle.account)).toBeUndefined();
    expect(await attempts(locked.account)).toBeDefined();
  });
});

describe('a lock stays with the address and the app that earned it', () => {
  const ATTACKER = '203.0.113.66';
  const VICTIM = '198.51.100.7';

  it('lets the victim log in from another address while the attacker stays locked', async () => {
    const victim = await seedMember(h, enterprise);
    await fail(victim.account, 5, { address: ATTACKER });
    expect((await login(victim.account, victim.password, { address: ATTACKER })).body).toEqual({
      error: 'invalid_grant',
      error_description: LOCKED,
    });
    expect((await login(victim.account, victim.password, { address: VICTIM })).statusCode).toBe(200);
    // The victim's success forgives nothing of the attacker's.
    expect((await login(victim.account, victim.password, { address: ATTACKER })).body).toEqual({
      error: 'invalid_grant',
      error_description: LOCKED,
    });
    expect((await attempts(victim.account, { address: ATTACKER }))?.failures).toBe(5);
  });

  it('lets the victim log in through its own app while another tenant’s app is locked on the same address', async () => {
    const victim = await seedMember(h, enterprise);
    const intruder = await createTestApp(h, { scopes: ['auth_me'] });
    await fail(victim.account, 5, { client: intruder });
    expect((await login(victim.account, victim.password, { client: intruder })).body).toMatchObject({
      error_description: LOCKED,
    });
    expect((await login(victim.account, victim.password, { client: app })).statusCode).toBe(200);
    expect((await login(victim.account, 'guess', { client: intruder })).body).toMatchObject({
      error_description: LOCKED,
    });
  });

  it('counts an IPv6 network of 64 bits as one address', async () => {
    const victim = await seedMember(h, enterprise);
    for (let i = 1; i <= 5; i += 1)
      await fail(victim.account, 1, { address: `2001:db8:1:2::${i.toString(16)}` });
    expect(
      (await login(victim.account, victim.password, { address: '2001:db8:1:2:ffff::9' })).body,
    ).toMatchObject({
      error_description: LOCKED,
    });
    expect((await login(victim.account, victim.password, { address: '2001:db8:1:3::1' })).statusCode).toBe(
      200,
    );
  });
});

describe('the address behind a proxy', () => {
  const guess = (target: Harness, account: string, forwarded: string, password = 'not-the-password') =>
    passwordLogin(target, app, account, password, { headers: { 'x-forwarded-for': forwarded } });

  it('ignores X-Forwarded-For by default, so a client cannot pose as a fresh address', async () => {
    const member = await seedMember(h, enterprise);
    for (let i = 1; i <= 5; i += 1) {
      await waitOut(member.account);
      expect((await guess(h, member.account, `192.0.2.${i}`)).statusCode).toBe(400);
    }
    const right = await guess(h, member.account, '192.0.2.99', member.password);
    expect(right.json()).toMatchObject({ error_description: LOCKED });
  });

  it('believes X-Forwarded-For from the proxies TRUST_PROXY names', async () => {
    const proxied = await startHarness({ TRUST_PROXY: '127.0.0.1' });
    try {
      const client = await createTestApp(proxied, { scopes: ['auth_me'] });
      const home = await seedEnterprise(proxied);
      const member = await seedMember(proxied, home);
      const attempt = (forwarded: string, password: string) =>
        passwordLogin(proxied, client, member.account, password, {
          headers: { 'x-forwarded-for': forwarded },
        });
      for (let i = 0; i < 5; i += 1) {
        await proxied.database.db
          .updateTable('login_source_attempts')
          .set({ locked_until: new Date(Date.now() - 1000) })
          .where('account', '=', member.account.toLowerCase())
          .execute();
        expect((await attempt('203.0.113.66', 'not-the-password')).statusCode).toBe(400);
      }
      expect((await attempt('203.0.113.66', member.password)).json()).toMatchObject({
        error_description: LOCKED,
      });
      expect((await attempt('198.51.100.7', member.password)).statusCode).toBe(200);
    } finally {
      await proxied.close();
    }
  });
});

describe('an account guessed at from many addresses', () => {
  const address = (i: number) => `192.0.2.${i}`;

  it('slows the addresses that failed on it, never locks them, once the failures add up', async () => {
    const victim = await seedMember(h, enterprise);
    const { slowFromAttempt, waitSeconds } = LOGIN_LOCKOUT.account;
    for (let i = 1; i < slowFromAttempt; i += 1) await fail(victim.account, 1, { address: address(i) });
    expect((await accountAttempts(victim.account))?.locked_until).toBeNull();
    await fail(victim.account, 1, { address: address(slowFromAttempt) });
    const row = await accountAttempts(victim.account);
    expect(row?.failures).toBe(slowFromAttempt);
    expect(waitOf(row)).toBe(waitSeconds * 1000);
    // Right away, a right password from an address that failed on the account waits its turn...
    expect((await login(victim.account, victim.password, { address: address(1) })).body).toEqual({
      error: 'invalid_grant',
      error_description: LOCKED,
    });
    // ...and after the short wait it gets in: the backoff never grows into a lock.
    for (let i = 0; i < 10; i += 1) await fail(victim.account, 1, { address: address(100 + i) });
    expect(waitOf(await accountAttempts(victim.account))).toBe(waitSeconds * 1000);
    await waitOut(victim.account);
    expect((await login(victim.account, victim.password, { address: address(2) })).statusCode).toBe(200);
  });

  it('never makes an address that has not failed on it wait, however many failed elsewhere', async () => {
    const victim = await seedMember(h, enterprise);
    const { slowFromAttempt } = LOGIN_LOCKOUT.account;
    for (let i = 1; i <= slowFromAttempt + 5; i += 1) await fail(victim.account, 1, { address: address(i) });
    // The account's backoff runs, and runs on (as if the guesses went on)...
    await h.database.db
      .updateTable('login_attempts')
      .set({ locked_until: new Date(Date.now() + 3600_000) })
      .where('account', '=', victim.account.toLowerCase())
      .execute();
    // ...yet the right password from an address that has not failed gets in at once, and so does
    // one through an app it has not failed with on an address that has.
    expect((await login(victim.account, victim.password, { address: address(200) })).statusCode).toBe(200);
    const other = await createTestApp(h, { scopes: ['auth_me'] });
    expect(
      (await login(victim.account, victim.password, { address: address(1), client: other })).statusCode,
    ).toBe(200);
    // A source whose failure is older than the window has not failed on it either.
    await h.database.db
      .updateTable('login_source_attempts')
      .set({ updated_at: new Date(Date.now() - 16 * 60 * 1000) })
      .where('account', '=', victim.account.toLowerCase())
      .where('address', '=', address(2))
      .execute();
    expect((await login(victim.account, victim.password, { address: address(2) })).statusCode).toBe(200);
    // An address that failed within the window waits with the account, the right password included.
    expect((await login(victim.account, victim.password, { address: address(3) })).body).toEqual({
      error: 'invalid_grant',
      error_description: LOCKED,
    });
    // A fresh address has its one guess checked, and then waits too.
    expect((await login(victim.account, 'fresh-guess', { address: address(201) })).body).toEqual({
      error: 'invalid_grant',
      error_description: WRONG,
    });
    expect((await login(victim.account, victim.password, { address: address(201) })).body).toEqual({
      error: 'invalid_grant',
      error_description: LOCKED,
    });
  });

  it('counts parallel guesses from many addresses exactly, and admits none past the backoff', async () => {
    // A backoff far longer than the test, so that "past it" does not depend on the machine's speed.
    const patient = new LoginService(h.database.db, {
      ...LOGIN_LOCKOUT,
      account: { ...LOGIN_LOCKOUT.account, waitSeconds: 3600 },
    });
    const victim = await seedMember(h, enterprise);
    const appId = await appIdOf(app);
    const guesses = () =>
      Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          patient.verify(victim.account, 'parallel-guess', { ip: address(i + 1), appId }),
        ),
      );
    // Each address's first guess is checked, backoff or not: none has failed on the account yet.
    const first = await guesses();
    expect(first.filter((o) => o.status === 'refused')).toHaveLength(30);
    expect((await accountAttempts(victim.account))?.failures).toBe(30);
    // Now that each has, the account's backoff holds them all: nothing checked, nothing counted.
    const second = await guesses();
    expect(second.filter((o) => o.status === 'locked')).toHaveLength(30);
    expect((await accountAttempts(victim.account))?.failures).toBe(30);
  });
});
