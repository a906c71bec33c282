import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LOCKOUT } from '../../src/domain/members/login.service.js';
import { createTestApp, seedEnterprise, type TestApp, type TestEnterprise } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { loginStatus, seedMember } from './member-helpers.js';

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

const attempts = (account: string) =>
  h.database.db
    .selectFrom('login_attempts')
    .selectAll()
    .where('account', '=', account.toLowerCase())
    .executeTakeFirst();

/** Lets time pass for the account: its current wait is over. */
const waitOut = (account: string) =>
  h.database.db
    .updateTable('login_attempts')
    .set({ locked_until: new Date(Date.now() - 1000) })
    .where('account', '=', account.toLowerCase())
    .execute();

async function fail(account: string, times: number): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    await waitOut(account);
    const refused = await loginStatus(h, app, account, 'not-the-password');
    expect(refused.body).toMatchObject({ error: 'invalid_grant', error_description: WRONG });
  }
}

describe('repeated failed logins', () => {
  it('lets two mistakes pass and forgets them after a right password', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 2);
    expect((await attempts(member.account))?.locked_until).toBeNull();
    expect((await loginStatus(h, app, member.account, member.password)).statusCode).toBe(200);
    expect(await attempts(member.account)).toBeUndefined();
  });

  it('slows the account after the third failure: even the right password waits', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 3);
    const row = await attempts(member.account);
    expect(row?.failures).toBe(3);
    const wait = (row?.locked_until?.getTime() ?? 0) - (row?.updated_at.getTime() ?? 0);
    expect(wait).toBe(LOGIN_LOCKOUT.slowBaseSeconds * 1000);
    const early = await loginStatus(h, app, member.account, member.password);
    expect(early.statusCode).toBe(400);
    expect(early.body).toEqual({ error: 'invalid_grant', error_description: LOCKED });
    await waitOut(member.account);
    expect((await loginStatus(h, app, member.account, member.password)).statusCode).toBe(200);
  });

  it('doubles the wait after the fourth failure', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 4);
    const row = await attempts(member.account);
    expect((row?.locked_until?.getTime() ?? 0) - (row?.updated_at.getTime() ?? 0)).toBe(
      2 * LOGIN_LOCKOUT.slowBaseSeconds * 1000,
    );
  });

  it('locks the account for 15 minutes at the fifth failure, without looking at passwords', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 5);
    const row = await attempts(member.account);
    expect(row?.failures).toBe(5);
    expect((row?.locked_until?.getTime() ?? 0) - (row?.updated_at.getTime() ?? 0)).toBe(15 * 60 * 1000);
    for (const password of [member.password, 'another-guess']) {
      expect((await loginStatus(h, app, member.account, password)).body).toEqual({
        error: 'invalid_grant',
        error_description: LOCKED,
      });
    }
    // Refused attempts are not even counted: nothing was checked.
    expect((await attempts(member.account))?.failures).toBe(5);
  });

  it('starts counting afresh once the lock has run out', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 5);
    await h.database.db
      .updateTable('login_attempts')
      .set({ locked_until: new Date(Date.now() - 1000), updated_at: new Date(Date.now() - 16 * 60 * 1000) })
      .where('account', '=', member.account.toLowerCase())
      .execute();
    await fail(member.account, 1);
    expect((await attempts(member.account))?.failures).toBe(1);
    expect((await loginStatus(h, app, member.account, member.password)).statusCode).toBe(200);
  });

  it('forgets mistakes more than 15 minutes apart', async () => {
    const member = await seedMember(h, enterprise);
    await fail(member.account, 4);
    await h.database.db
      .updateTable('login_attempts')
      .set({ updated_at: new Date(Date.now() - 16 * 60 * 1000) })
      .where('account', '=', member.account.toLowerCase())
      .execute();
    await fail(member.account, 1);
    expect(await attempts(member.account)).toMatchObject({ failures: 1, locked_until: null });
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
    expect((await loginStatus(h, app, ghost, 'x')).body).toEqual({
      error: 'invalid_grant',
      error_description: LOCKED,
    });
  });

  it('lets concurrent guesses through only until the account is slowed', async () => {
    const member = await seedMember(h, enterprise);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => loginStatus(h, app, member.account, 'parallel-guess')),
    );
    const descriptions = answers.map((a) => a.body.error_description);
    expect(descriptions.filter((d) => d === WRONG)).toHaveLength(LOGIN_LOCKOUT.slowFromAttempt);
    expect(descriptions.filter((d) => d === LOCKED)).toHaveLength(10 - LOGIN_LOCKOUT.slowFromAttempt);
    expect((await attempts(member.account))?.failures).toBe(LOGIN_LOCKOUT.slowFromAttempt);
  });

  it('purges records that no longer slow or lock anything, and keeps live locks', async () => {
    const idle = await seedMember(h, enterprise);
    const locked = await seedMember(h, enterprise);
    await fail(idle.account, 1);
    await fail(locked.account, 5);
    const longAgo = new Date(Date.now() - 16 * 60 * 1000);
    await h.database.db
      .updateTable('login_attempts')
      .set({ updated_at: longAgo })
      .where('account', 'in', [idle.account.toLowerCase(), locked.account.toLowerCase()])
      .execute();
    await h.app.services.login.purgeStale();
    expect(await attempts(idle.account)).toBeUndefined();
    expect(await attempts(locked.account)).toBeDefined();
  });
});
