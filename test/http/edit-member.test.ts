import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX } from '../../src/http/surface.js';
import { userToken } from '../support/fixtures.js';
import { memberGuardSuite } from '../support/guard-suite.js';
import { startHarness, type Harness } from '../support/harness.js';
import {
  adminSession,
  dataOf,
  expectFailure,
  memberCalls,
  seedMember,
  type AdminSession,
  type SeededMember,
} from './member-helpers.js';

let h: Harness;
let s: AdminSession;

beforeAll(async () => {
  h = await startHarness();
  s = await adminSession(h);
});
afterAll(async () => h.close());

const edit = (session: AdminSession, memberGlobalId: string, payload?: unknown) =>
  session.call('PUT', `/enterprise/${session.enterprise.globalId}/member/${memberGlobalId}`, payload);

const row = (id: number) =>
  h.database.db.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function freshMember(): Promise<SeededMember> {
  const member = await seedMember(h, s.enterprise, {
    userName: `ed${Date.now() % 1e8}${Math.floor(Math.random() * 1e4)}`,
  });
  await h.database.db
    .updateTable('members')
    .set({ remark: 'old remark', password_mobile: '13900000000', updated_at: new Date(Date.now() - 60_000) })
    .where('id', '=', member.id)
    .execute();
  return member;
}

describe('member op 2: edit an employee', () => {
  it('changes name, department, remark and mobile, and answers data null', async () => {
    const member = await freshMember();
    const before = await row(member.id);
    const response = await edit(s, member.globalId, {
      name: 'Renamed',
      departmentId: '42',
      remark: 'new remark',
      passwordMobile: '+447700900123',
    });
    expect(response.json()).toEqual({ code: 0, message: 'success', data: null });
    const after = await row(member.id);
    expect(after).toMatchObject({
      name: 'Renamed',
      department_id: 42,
      remark: 'new remark',
      password_mobile: '+447700900123',
      user_name: before.user_name,
      account: before.account,
      password_hash: before.password_hash,
    });
    expect(after.updated_at.getTime()).toBeGreaterThan(before.updated_at.getTime());
  });

  it('changes only the fields given, and clears remark and mobile with null', async () => {
    const member = await freshMember();
    dataOf(await edit(s, member.globalId, { name: 'Only name' }));
    expect(await row(member.id)).toMatchObject({ name: 'Only name', remark: 'old remark', department_id: 1 });
    dataOf(await edit(s, member.globalId, { remark: null, passwordMobile: null }));
    expect(await row(member.id)).toMatchObject({ name: 'Only name', remark: null, password_mobile: null });
  });

  it('accepts the unchanged userName echoed back, bare or as the account', async () => {
    const member = await freshMember();
    const bare = member.account.split('@')[0] ?? '';
    dataOf(await edit(s, member.globalId, { userName: bare, name: 'Echo one' }));
    dataOf(await edit(s, member.globalId, { userName: member.account.toUpperCase(), name: 'Echo two' }));
    expect((await row(member.id)).name).toBe('Echo two');
  });

  it('lets the administrator edit itself', async () => {
    dataOf(await edit(s, s.enterprise.adminGlobalId, { name: 'Chief' }));
    const admin = await h.database.db
      .selectFrom('members')
      .select('name')
      .where('global_id', '=', s.enterprise.adminGlobalId)
      .executeTakeFirstOrThrow();
    expect(admin.name).toBe('Chief');
  });

  it.each([
    [{ name: 'n'.repeat(31) }, '30002', 'name too long'],
    [{ remark: 'r'.repeat(201) }, '30003', 'remark too long'],
    [{ name: '' }, '40022', 'name empty'],
    [{ passwordMobile: '555-0100' }, '10004', 'mobile number invalid'],
    [{ departmentId: 'sales' }, '40000', 'departmentId: must be integer'],
    [{ departmentId: null }, '40000', 'departmentId: must be integer'],
    [{ name: 12 }, '40000', 'name: must be string'],
    [{}, '40000', 'parameter empty'],
    [{ userName: 'someoneelse', name: 'x' }, '40000', 'parameter empty'],
  ])('refuses %j with %s and changes nothing', async (payload, code, message) => {
    const member = await freshMember();
    const before = await row(member.id);
    expectFailure(await edit(s, member.globalId, payload), code, message);
    expect(await row(member.id)).toEqual(before);
  });

  it('names the field in the cause when userName would change', async () => {
    const member = await freshMember();
    const body = expectFailure(await edit(s, member.globalId, { userName: 'other', name: 'x' }), '40000');
    expect(body.cause).toBe('userName: cannot be changed');
  });

  it('refuses no body with 40000', async () => {
    const member = await freshMember();
    expectFailure(await edit(s, member.globalId), '40000');
  });

  it('answers 60002 for an unknown, deleted or foreign member alike', async () => {
    const deleted = await freshMember();
    await h.database.db.updateTable('members').set({ deleted: true }).where('id', '=', deleted.id).execute();
    const other = await adminSession(h);
    const foreign = await seedMember(h, other.enterprise, { name: 'Untouched' });
    for (const id of ['0190aaaa-0000-7000-8000-000000000000', deleted.globalId, foreign.globalId]) {
      expectFailure(await edit(s, id, { name: 'Hijacked' }), '60002', 'user not found');
    }
    expect((await row(foreign.id)).name).toBe('Untouched');
  });

  describe('who may edit', () => {
    it('refuses a plain member, even on itself, with 33003', async () => {
      const member = await freshMember();
      const call = memberCalls(h, s.appTok, await userToken(h, s.app, member.account, member.password));
      for (const target of [member.globalId, s.enterprise.adminGlobalId]) {
        expectFailure(
          await call('PUT', `/enterprise/${s.enterprise.globalId}/member/${target}`, { name: 'Self' }),
          '33003',
        );
      }
      expect((await row(member.id)).name).not.toBe('Self');
    });

    it("refuses another enterprise's administrator with 70001", async () => {
      const member = await freshMember();
      const other = await adminSession(h);
      expectFailure(
        await other.call('PUT', `/enterprise/${s.enterprise.globalId}/member/${member.globalId}`, {
          name: 'X',
        }),
        '70001',
      );
    });
  });
});

memberGuardSuite(() => h, {
  method: 'PUT',
  path: ({ enterprise }) =>
    `${ME_PREFIX}/enterprise/${enterprise.globalId}/member/${enterprise.adminGlobalId}`,
  payload: () => ({ name: 'Guarded' }),
});
