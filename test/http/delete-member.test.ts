import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MembersService } from '../../src/domain/members/members.service.js';
import { ME_PREFIX } from '../../src/http/surface.js';
import { userToken } from '../support/fixtures.js';
import { memberGuardSuite } from '../support/guard-suite.js';
import { nonce, startHarness, type Harness } from '../support/harness.js';
import {
  adminSession,
  dataOf,
  expectFailure,
  loginStatus,
  memberCalls,
  seedAsset,
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

const memberPath = (session: AdminSession, memberGlobalId: string) =>
  `/enterprise/${session.enterprise.globalId}/member/${memberGlobalId}`;

const row = (id: number) =>
  h.database.db.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

const assignmentsOf = (memberId: number) =>
  h.database.db
    .selectFrom('asset_assignments')
    .select('asset_id')
    .where('member_id', '=', memberId)
    .execute();

const memberCount = async (enterpriseId: number) =>
  (
    await h.database.db
      .selectFrom('enterprises')
      .select('member_count')
      .where('id', '=', enterpriseId)
      .executeTakeFirstOrThrow()
  ).member_count;

describe('member op 4: delete an employee', () => {
  it('deletes softly, releases the assets, revokes the tokens and stops logins', async () => {
    const member = await seedMember(h, s.enterprise);
    const asset = await seedAsset(h, s.enterprise, { memberId: member.id });
    const token = await userToken(h, s.app, member.account, member.password);
    const countBefore = await memberCount(s.enterprise.id);

    const response = await s.call('DELETE', memberPath(s, member.globalId));
    expect(response.json()).toEqual({ code: 0, message: 'success', data: null });

    expect(await row(member.id)).toMatchObject({ deleted: true });
    expect(await assignmentsOf(member.id)).toEqual([]);
    const kept = await h.database.db
      .selectFrom('assets')
      .select('revoked')
      .where('id', '=', asset.id)
      .executeTakeFirstOrThrow();
    expect(kept.revoked).toBe(false);
    const revoked = await h.database.db
      .selectFrom('tokens')
      .select('revoked_at')
      .where('member_id', '=', member.id)
      .execute();
    expect(revoked.length).toBeGreaterThan(0);
    expect(revoked.every((t) => t.revoked_at !== null)).toBe(true);
    expect(await memberCount(s.enterprise.id)).toBe(countBefore - 1);

    expectFailure(
      await memberCalls(h, s.appTok, token)('DELETE', memberPath(s, s.enterprise.adminGlobalId)),
      '60005',
    );
    expect((await loginStatus(h, s.app, member.account, member.password)).body.error).toBe('invalid_grant');
  });

  it('ignores a Content-Type header sent without a body', async () => {
    const member = await seedMember(h, s.enterprise);
    const response = await h.app.inject({
      method: 'DELETE',
      url: `${ME_PREFIX}${memberPath(s, member.globalId)}?g_nonce=${nonce()}`,
      headers: {
        authorization: `Bearer ${s.appTok}`,
        usertoken: await userToken(h, s.app, s.enterprise.adminAccount, s.enterprise.adminPassword),
        'content-type': 'application/json',
      },
    });
    dataOf(response);
    expect(await row(member.id)).toMatchObject({ deleted: true });
  });

  it('answers 60002 for the same member a second time', async () => {
    const member = await seedMember(h, s.enterprise);
    dataOf(await s.call('DELETE', memberPath(s, member.globalId)));
    expectFailure(await s.call('DELETE', memberPath(s, member.globalId)), '60002', 'user not found');
  });

  it('refuses to delete the administrator with 33003', async () => {
    const body = expectFailure(await s.call('DELETE', memberPath(s, s.enterprise.adminGlobalId)), '33003');
    expect(body.cause).toBe('the enterprise administrator cannot be deleted');
    const admin = await h.database.db
      .selectFrom('members')
      .select('deleted')
      .where('global_id', '=', s.enterprise.adminGlobalId)
      .executeTakeFirstOrThrow();
    expect(admin.deleted).toBe(false);
  });

  it('answers 60002 for an unknown or foreign member and leaves the foreign one alone', async () => {
    const other = await adminSession(h);
    const foreign = await seedMember(h, other.enterprise);
    const asset = await seedAsset(h, other.enterprise, { memberId: foreign.id });
    for (const id of ['0190aaaa-0000-7000-8000-000000000000', foreign.globalId]) {
      expectFailure(await s.call('DELETE', memberPath(s, id)), '60002', 'user not found');
    }
    expect(await row(foreign.id)).toMatchObject({ deleted: false });
    expect(await assignmentsOf(foreign.id)).toEqual([{ asset_id: asset.id }]);
  });

  it('runs the release hooks in the same transaction: a failing hook undoes the deletion', async () => {
    const member = await seedMember(h, s.enterprise);
    await seedAsset(h, s.enterprise, { memberId: member.id });
    const token = await userToken(h, s.app, member.account, member.password);
    const seen: number[] = [];
    const failing = new MembersService(h.database.db, {
      releaseOnDelete: [
        async (trx, m) => {
          seen.push(m.id);
          // Proves the hook sees the deletion, uncommitted, through the transaction it is given.
          const inside = await trx
            .selectFrom('members')
            .select('deleted')
            .where('id', '=', m.id)
            .executeTakeFirst();
          expect(inside?.deleted).toBe(true);
          throw new Error('lent lock could not be returned');
        },
      ],
    });
    const actor = { appId: null, operator: 'test', requestId: null, clientRequestId: null };
    await expect(failing.delete(s.enterprise.id, member.globalId, actor)).rejects.toThrow('lent lock');
    expect(seen).toEqual([member.id]);
    expect(await row(member.id)).toMatchObject({ deleted: false });
    expect(await assignmentsOf(member.id)).toHaveLength(1);
    const audited = await h.database.db
      .selectFrom('audit_log')
      .select('action')
      .where('subject', '=', member.account)
      .execute();
    expect(audited).toEqual([]);
    expectFailure(await memberCalls(h, s.appTok, token)('DELETE', memberPath(s, member.globalId)), '33003');
  });

  describe('who may delete', () => {
    it('refuses a plain member, even on itself, with 33003', async () => {
      const member = await seedMember(h, s.enterprise);
      const victim = await seedMember(h, s.enterprise);
      const call = memberCalls(h, s.appTok, await userToken(h, s.app, member.account, member.password));
      for (const target of [victim.globalId, member.globalId]) {
        expectFailure(await call('DELETE', memberPath(s, target)), '33003');
      }
      expect(await row(victim.id)).toMatchObject({ deleted: false });
      expect(await row(member.id)).toMatchObject({ deleted: false });
    });

    it("refuses another enterprise's administrator with 70001", async () => {
      const member = await seedMember(h, s.enterprise);
      const other = await adminSession(h);
      expectFailure(await other.call('DELETE', memberPath(s, member.globalId)), '70001');
      expect(await row(member.id)).toMatchObject({ deleted: false });
    });
  });
});

memberGuardSuite(() => h, {
  method: 'DELETE',
  path: ({ enterprise }) =>
    `${ME_PREFIX}/enterprise/${enterprise.globalId}/member/0190aaaa-0000-7000-8000-000000000000`,
});
