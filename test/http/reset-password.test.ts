import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX } from '../../src/http/surface.js';
import { userToken } from '../support/fixtures.js';
import { memberGuardSuite } from '../support/guard-suite.js';
import { startHarness, type Harness } from '../support/harness.js';
import {
  adminSession,
  dataOf,
  expectFailure,
  loginStatus,
  memberCalls,
  seedMember,
  type AdminSession,
} from './member-helpers.js';

let h: Harness;
let s: AdminSession;

beforeAll(async () => {
  h = await startHarness();
  s = await adminSession(h);
});
afterAll(async () => h.close());

const resetPath = (session: AdminSession, memberGlobalId: string) =>
  `/enterprise/${session.enterprise.globalId}/member/${memberGlobalId}/resetPassword`;

/** Any member-center call that proves a user token still works (or not). */
const probe = (session: AdminSession, token: string) =>
  memberCalls(h, session.appTok, token)('PUT', resetPath(session, 'nobody'), { password: 'Whatever1' });

describe('member op 3: reset a password', () => {
  it('sets the new password, refuses the old one and revokes the member’s tokens only', async () => {
    const member = await seedMember(h, s.enterprise);
    const bystander = await seedMember(h, s.enterprise);
    const memberToken = await userToken(h, s.app, member.account, member.password);
    const bystanderToken = await userToken(h, s.app, bystander.account, bystander.password);

    const response = await s.call('PUT', resetPath(s, member.globalId), { password: 'N3w-password' });
    expect(response.json()).toEqual({ code: 0, message: 'success', data: null });

    expect((await loginStatus(h, s.app, member.account, member.password)).body.error).toBe('invalid_grant');
    expect((await loginStatus(h, s.app, member.account, 'N3w-password')).statusCode).toBe(200);
    expectFailure(await probe(s, memberToken), '60005');
    // The bystander is a plain member: its token still gets past the guard, to the permission check.
    expectFailure(await probe(s, bystanderToken), '33003');
  });

  it('lets a member reset its own password, ending its own sessions', async () => {
    const member = await seedMember(h, s.enterprise);
    const token = await userToken(h, s.app, member.account, member.password);
    const own = memberCalls(h, s.appTok, token);
    dataOf(await own('PUT', resetPath(s, member.globalId), { password: 'Mine-2024' }));
    expect((await loginStatus(h, s.app, member.account, 'Mine-2024')).statusCode).toBe(200);
    expectFailure(await own('PUT', resetPath(s, member.globalId), { password: 'Again-2024' }), '60005');
  });

  it('lifts a login lock, so the member can log in at once', async () => {
    const member = await seedMember(h, s.enterprise);
    for (let i = 0; i < 5; i += 1) await loginStatus(h, s.app, member.account, 'wrong-guess');
    await h.database.db
      .updateTable('login_attempts')
      .set({ locked_until: new Date(Date.now() + 900_000) })
      .where('account', '=', member.account.toLowerCase())
      .execute();
    dataOf(await s.call('PUT', resetPath(s, member.globalId), { password: 'Fresh-start1' }));
    expect((await loginStatus(h, s.app, member.account, 'Fresh-start1')).statusCode).toBe(200);
  });

  it.each([
    [{}, '40001', 'password empty'],
    [{ password: '' }, '40001', 'password empty'],
    [{ password: 'Short1!' }, '50003', 'password length must lie between 8 and 16'],
    [{ password: 'x'.repeat(17) }, '50003', 'password length must lie between 8 and 16'],
    [{ password: 12345678 }, '40000', 'password: must be string'],
  ])('refuses %j with %s and keeps the old password', async (payload, code, message) => {
    const member = await seedMember(h, s.enterprise);
    const token = await userToken(h, s.app, member.account, member.password);
    expectFailure(await s.call('PUT', resetPath(s, member.globalId), payload), code, message);
    expect((await loginStatus(h, s.app, member.account, member.password)).statusCode).toBe(200);
    expectFailure(await probe(s, token), '33003');
  });

  it('accepts exactly 8 and exactly 16 characters', async () => {
    const member = await seedMember(h, s.enterprise);
    dataOf(await s.call('PUT', resetPath(s, member.globalId), { password: 'a'.repeat(8) }));
    dataOf(await s.call('PUT', resetPath(s, member.globalId), { password: 'b'.repeat(16) }));
    expect((await loginStatus(h, s.app, member.account, 'b'.repeat(16))).statusCode).toBe(200);
  });

  it('answers 60002 for an unknown, deleted or foreign member alike', async () => {
    const deleted = await seedMember(h, s.enterprise);
    await h.database.db.updateTable('members').set({ deleted: true }).where('id', '=', deleted.id).execute();
    const other = await adminSession(h);
    const foreign = await seedMember(h, other.enterprise);
    for (const id of ['0190aaaa-0000-7000-8000-000000000000', deleted.globalId, foreign.globalId]) {
      expectFailure(
        await s.call('PUT', resetPath(s, id), { password: 'Hijack-123' }),
        '60002',
        'user not found',
      );
    }
    expect((await loginStatus(h, other.app, foreign.account, foreign.password)).statusCode).toBe(200);
  });

  describe('who may reset', () => {
    it('refuses a plain member resetting someone else with 33003', async () => {
      const member = await seedMember(h, s.enterprise);
      const victim = await seedMember(h, s.enterprise);
      const call = memberCalls(h, s.appTok, await userToken(h, s.app, member.account, member.password));
      for (const target of [victim.globalId, s.enterprise.adminGlobalId]) {
        expectFailure(await call('PUT', resetPath(s, target), { password: 'Taken-over1' }), '33003');
      }
      expect((await loginStatus(h, s.app, victim.account, victim.password)).statusCode).toBe(200);
    });

    it("refuses another enterprise's administrator with 70001", async () => {
      const member = await seedMember(h, s.enterprise);
      const other = await adminSession(h);
      expectFailure(
        await other.call('PUT', resetPath(s, member.globalId), { password: 'Taken-over1' }),
        '70001',
      );
    });
  });
});

memberGuardSuite(() => h, {
  method: 'PUT',
  path: ({ enterprise }) =>
    `${ME_PREFIX}/enterprise/${enterprise.globalId}/member/0190aaaa-0000-7000-8000-000000000000/resetPassword`,
  payload: () => ({ password: 'Guarded-1' }),
});
