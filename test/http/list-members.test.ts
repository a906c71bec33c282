import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListedMemberView } from '../../src/domain/members/member-views.js';
import type { PageInfo } from '../../src/domain/members/page-info.js';
import { ME_PREFIX } from '../../src/http/surface.js';
import { userToken } from '../support/fixtures.js';
import { memberGuardSuite } from '../support/guard-suite.js';
import { startHarness, type Harness } from '../support/harness.js';
import {
  adminSession,
  dataOf,
  expectFailure,
  memberCalls,
  seedAsset,
  seedMember,
  type AdminSession,
  type SeededMember,
} from './member-helpers.js';

type Page = PageInfo<ListedMemberView>;

let h: Harness;
let s: AdminSession;
/** s's enterprise: the administrator, then these twelve, in creation order. */
let staff: SeededMember[];

beforeAll(async () => {
  h = await startHarness();
  s = await adminSession(h);
  staff = [];
  for (let i = 0; i < 12; i += 1) {
    staff.push(
      await seedMember(h, s.enterprise, {
        userName: `staff${String(i).padStart(2, '0')}`,
        name: i % 3 === 0 ? `Zhang Wei ${i}` : `Li Na ${i}`,
        departmentId: i % 2 === 0 ? 100 : 200,
      }),
    );
  }
});
afterAll(async () => h.close());

const list = (session: AdminSession, query: Record<string, string> = {}) =>
  session.call('GET', `/enterprise/${session.enterprise.globalId}/members`, undefined, query);

const names = (page: Page) => page.list.map((m) => m.userName.split('@')[0]);

describe('member op 5: list employees', () => {
  it('lists the administrator first and every record field as the spec types it', async () => {
    const session = await adminSession(h);
    const member = await seedMember(h, session.enterprise, { userName: 'kim', departmentId: 9 });
    await h.database.db
      .updateTable('members')
      .set({ remark: 'note', password_mobile: '13700000000' })
      .where('id', '=', member.id)
      .execute();
    const second = await seedAsset(h, session.enterprise, { memberId: member.id, assetNum: '9100000002' });
    const first = await seedAsset(h, session.enterprise, { memberId: member.id, assetNum: '9100000001' });
    await seedAsset(h, session.enterprise, { memberId: member.id, revoked: true });
    expect([first.assetNum, second.assetNum]).toEqual(['9100000001', '9100000002']);

    const page = dataOf<Page>(await list(session));
    expect(page.total).toBe(2);
    expect(names(page)).toEqual(['admin', 'kim']);
    const [admin, kim] = page.list;
    expect(admin).toMatchObject({
      globalId: session.enterprise.adminGlobalId,
      assetNums: [],
      departmentId: null,
    });
    expect(kim).toEqual({
      id: String(member.id),
      userId: String(member.id),
      globalId: member.globalId,
      enterpriseId: String(session.enterprise.id),
      departmentId: 9,
      departmentName: null,
      userName: `kim@${session.enterprise.code}`,
      passwordMobile: '13700000000',
      name: 'kim',
      assetNums: ['9100000001', '9100000002'],
      borrowNum: null,
      onlineFlag: false,
      remark: 'note',
      deleted: false,
      updateTime: expect.any(Number),
      createTime: expect.any(Number),
      boundUserInfo: null,
    });
  });

  it('pages 10 at a time by default, in creation order', async () => {
    const first = dataOf<Page>(await list(s));
    expect(first).toMatchObject({
      pageNum: 1,
      pageSize: 10,
      size: 10,
      total: 13,
      pages: 2,
      startRow: 1,
      endRow: 10,
      nextPage: 2,
      isFirstPage: true,
      hasNextPage: true,
      navigatePages: 8,
      navigatepageNums: [1, 2],
      orderBy: null,
    });
    expect(names(first)).toEqual(['admin', ...staff.slice(0, 9).map((m) => m.account.split('@')[0])]);
    const second = dataOf<Page>(await list(s, { pageNum: '2' }));
    expect(second).toMatchObject({
      pageNum: 2,
      size: 3,
      startRow: 11,
      endRow: 13,
      isLastPage: true,
      prePage: 1,
    });
    expect(names(second)).toEqual(['staff09', 'staff10', 'staff11']);
  });

  it('answers a page past the end empty, keeping its number', async () => {
    const page = dataOf<Page>(await list(s, { pageNum: '9', pageSize: '5' }));
    expect(page).toMatchObject({
      pageNum: 9,
      size: 0,
      list: [],
      total: 13,
      pages: 3,
      startRow: 0,
      endRow: 0,
    });
  });

  it('accepts pageSize up to 500 and ignores empty numeric parameters', async () => {
    const page = dataOf<Page>(await list(s, { pageSize: '500', pageNum: '', departmentId: '' }));
    expect(page).toMatchObject({ pageSize: 500, size: 13, pages: 1 });
  });

  it('filters by department', async () => {
    const page = dataOf<Page>(await list(s, { departmentId: '200' }));
    expect(page.total).toBe(6);
    expect(names(page)).toEqual(['staff01', 'staff03', 'staff05', 'staff07', 'staff09', 'staff11']);
  });

  it('matches the keyword case-insensitively inside the name or the account', async () => {
    const byName = dataOf<Page>(await list(s, { keyword: 'zhang WEI' }));
    expect(names(byName)).toEqual(['staff00', 'staff03', 'staff06', 'staff09']);
    const byAccount = dataOf<Page>(await list(s, { keyword: 'STAFF1' }));
    expect(names(byAccount)).toEqual(['staff10', 'staff11']);
    const both = dataOf<Page>(
      await list(s, { keyword: 'zhang', departmentId: '100', pageSize: '1', pageNum: '2' }),
    );
    expect(both).toMatchObject({ total: 2, pages: 2, size: 1 });
    expect(names(both)).toEqual(['staff06']);
  });

  it('treats % and _ in the keyword as plain characters', async () => {
    expect(dataOf<Page>(await list(s, { keyword: '%' })).total).toBe(0);
    expect(dataOf<Page>(await list(s, { keyword: 'staff_1' })).total).toBe(0);
  });

  it('never lists deleted members', async () => {
    const session = await adminSession(h);
    const gone = await seedMember(h, session.enterprise, { name: 'Gone' });
    await h.database.db.updateTable('members').set({ deleted: true }).where('id', '=', gone.id).execute();
    const page = dataOf<Page>(await list(session));
    expect(page.total).toBe(1);
    expect(page.list.map((m) => m.globalId)).not.toContain(gone.globalId);
    expect(dataOf<Page>(await list(session, { keyword: 'gone' })).total).toBe(0);
  });

  it("never lists another enterprise's members", async () => {
    const other = await adminSession(h);
    await seedMember(h, other.enterprise, { userName: 'staff99', name: 'Zhang Wei other' });
    const page = dataOf<Page>(await list(s, { keyword: 'staff', pageSize: '100' }));
    expect(page.total).toBe(12);
    expect(page.list.every((m) => m.enterpriseId === String(s.enterprise.id))).toBe(true);
  });

  it.each([
    [{ pageSize: '501' }, 'pageSize: must be <= 500'],
    [{ pageSize: '0' }, 'pageSize: must be >= 1'],
    [{ pageNum: '0' }, 'pageNum: must be >= 1'],
    [{ pageNum: 'two' }, 'pageNum: must be integer'],
    [{ departmentId: 'sales' }, 'departmentId: must be integer'],
  ])('refuses %j with 40000 naming the parameter', async (query, message) => {
    expectFailure(await list(s, query), '40000', message);
  });

  describe('who may list', () => {
    it('refuses a plain member with 33003', async () => {
      const member = staff[0] as SeededMember;
      const call = memberCalls(h, s.appTok, await userToken(h, s.app, member.account, member.password));
      expectFailure(await call('GET', `/enterprise/${s.enterprise.globalId}/members`), '33003');
    });

    it("refuses another enterprise's administrator with 70001", async () => {
      const other = await adminSession(h);
      expectFailure(await other.call('GET', `/enterprise/${s.enterprise.globalId}/members`), '70001');
    });
  });
});

memberGuardSuite(() => h, {
  method: 'GET',
  path: ({ enterprise }) => `${ME_PREFIX}/enterprise/${enterprise.globalId}/members`,
});
