import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordsHashed } from '../../src/domain/shared/passwords.js';
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

interface Added {
  id: number;
  userId: number;
  globalId: string;
  enterpriseId: number;
  departmentId: number | null;
  departmentName: string | null;
  userName: string;
  name: string;
  remark: string | null;
  deleted: boolean;
  updateTime: number;
  createTime: number;
}
interface AddData {
  succeeded: Added[];
  failed: Array<{ userName: string; message: string }>;
}

let h: Harness;
let s: AdminSession;

beforeAll(async () => {
  h = await startHarness();
  s = await adminSession(h);
});
afterAll(async () => h.close());

const user = (userName: string, extra: Record<string, unknown> = {}) => ({
  userName,
  password: 'Passw0rd!',
  departmentId: 7,
  name: `Name ${userName}`,
  ...extra,
});

const add = (session: AdminSession, payload: unknown) =>
  session.call('POST', `/enterprise/${session.enterprise.globalId}/member`, payload);

async function liveMembers(enterpriseId: number) {
  return h.database.db
    .selectFrom('members')
    .selectAll()
    .where('enterprise_id', '=', enterpriseId)
    .where('deleted', '=', false)
    .orderBy('id')
    .execute();
}

describe('member op 1: add employees', () => {
  it('creates every user and answers the records with numeric ids', async () => {
    const session = await adminSession(h);
    const { enterprise } = session;
    const before = Date.now();
    const data = dataOf<AddData>(
      await add(session, {
        userList: [
          user('alice', { remark: 'first', passwordMobile: '13812345678' }),
          user('Bob2', { departmentId: '12', passwordMobile: '+6591234567' }),
        ],
      }),
    );
    expect(data.failed).toEqual([]);
    expect(data.succeeded).toHaveLength(2);
    const [alice, bob] = data.succeeded;
    expect(alice).toEqual({
      id: expect.any(Number),
      userId: alice?.id,
      globalId: expect.any(String),
      enterpriseId: enterprise.id,
      departmentId: 7,
      departmentName: null,
      userName: `alice@${enterprise.code}`,
      name: 'Name alice',
      remark: 'first',
      deleted: false,
      updateTime: expect.any(Number),
      createTime: expect.any(Number),
    });
    expect(alice?.createTime).toBeGreaterThanOrEqual(before - 1000);
    expect(bob).toMatchObject({ userName: `Bob2@${enterprise.code}`, departmentId: 12, remark: null });

    const rows = await liveMembers(enterprise.id);
    const stored = rows.find((r) => r.global_id === alice?.globalId);
    expect(stored).toMatchObject({ identity: 'member', password_mobile: '13812345678', user_name: 'alice' });
    expect(stored?.password_hash).toMatch(/^\$argon2id\$/);
    expect(JSON.stringify(rows)).not.toContain('Passw0rd!');
  });

  it('lets an added member log in with its password, in any case of its account', async () => {
    const session = await adminSession(h);
    dataOf<AddData>(await add(session, { userList: [user('carol')] }));
    const login = await loginStatus(h, session.app, `CAROL@${session.enterprise.code}`, 'Passw0rd!');
    expect(login.statusCode).toBe(200);
    expect(login.body.token_type).toBe('bearer');
  });

  it.each([
    ['no userName', { userName: undefined }, 'account empty'],
    ['an empty userName', { userName: '' }, 'account empty'],
    [
      'a userName with other characters',
      { userName: 'al-ice' },
      'account may contain only letters and digits',
    ],
    ['a one-letter userName', { userName: 'a' }, 'account may contain only letters and digits'],
    ['a 31-letter userName', { userName: 'a'.repeat(31) }, 'account may contain only letters and digits'],
    ['a numeric userName', { userName: 12345 }, 'account may contain only letters and digits'],
    ['no password', { password: undefined }, 'password empty'],
    ['a 7-character password', { password: 'Abc1234' }, 'password length must lie between 8 and 16'],
    ['a 17-character password', { password: 'A'.repeat(17) }, 'password length must lie between 8 and 16'],
    ['no name', { name: undefined }, 'name empty'],
    ['a blank name', { name: '   ' }, 'name empty'],
    ['a 31-character name', { name: 'n'.repeat(31) }, 'name too long'],
    ['a 201-character remark', { remark: 'r'.repeat(201) }, 'remark too long'],
    ['no departmentId', { departmentId: undefined }, 'group id empty'],
    ['a departmentId that is no number', { departmentId: 'sales' }, 'group id empty'],
    ['a malformed mobile', { passwordMobile: '12345' }, 'mobile number invalid'],
    ['a mobile of an unknown prefix', { passwordMobile: '12812345678' }, 'mobile number invalid'],
  ])('puts a user with %s in failed and creates the others (60027)', async (_what, override, message) => {
    const session = await adminSession(h);
    const bad = { ...user('bad1'), ...override };
    const response = await add(session, { userList: [user('good1'), bad, user('good2')] });
    const body = expectFailure(response, '60027', 'some employees failed to add') as { data: AddData };
    expect(body.data.succeeded.map((m) => m.userName)).toEqual([
      `good1@${session.enterprise.code}`,
      `good2@${session.enterprise.code}`,
    ]);
    const echoed =
      typeof bad.userName === 'string' || typeof bad.userName === 'number' ? String(bad.userName) : '';
    expect(body.data.failed).toEqual([{ userName: echoed, message }]);
    expect((await liveMembers(session.enterprise.id)).map((r) => r.user_name)).toEqual([
      'admin',
      'good1',
      'good2',
    ]);
  });

  it('fails an account that exists, whatever its case, or repeats in the batch', async () => {
    const session = await adminSession(h);
    await seedMember(h, session.enterprise, { userName: 'dave' });
    const body = expectFailure(
      await add(session, {
        userList: [user('Admin'), user('DAVE'), user('erin'), user('Erin', { password: 'Other123!' })],
      }),
      '60027',
    ) as { data: AddData };
    expect(body.data.succeeded.map((m) => m.userName)).toEqual([`erin@${session.enterprise.code}`]);
    expect(body.data.failed).toEqual([
      { userName: 'Admin', message: 'account already exists' },
      { userName: 'DAVE', message: 'account already exists' },
      { userName: 'Erin', message: 'account appears more than once in userList' },
    ]);
  });

  it('answers 60027 with nothing succeeded when every user fails', async () => {
    const body = expectFailure(await add(s, { userList: [user('x')] }), '60027') as { data: AddData };
    expect(body.data).toEqual({
      succeeded: [],
      failed: [{ userName: 'x', message: 'account may contain only letters and digits' }],
    });
  });

  it('reuses the account of a deleted member', async () => {
    const session = await adminSession(h);
    const gone = await seedMember(h, session.enterprise, { userName: 'frank' });
    await h.database.db.updateTable('members').set({ deleted: true }).where('id', '=', gone.id).execute();
    const data = dataOf<AddData>(await add(session, { userList: [user('frank')] }));
    expect(data.succeeded[0]?.globalId).not.toBe(gone.globalId);
  });

  it('counts the administrator against the member limit and says the limit (60009)', async () => {
    const session = await adminSession(h);
    await seedMember(h, session.enterprise);
    await h.database.db
      .updateTable('enterprises')
      .set({ member_limit: 3 })
      .where('id', '=', session.enterprise.id)
      .execute();
    const body = expectFailure(
      await add(session, { userList: [user('bad', { name: '' }), user('one'), user('two'), user('three')] }),
      '60027',
    ) as { data: AddData };
    expect(body.data.succeeded.map((m) => m.userName)).toEqual([`one@${session.enterprise.code}`]);
    const limit = 'the enterprise account may create at most 3 trial member accounts';
    expect(body.data.failed).toEqual([
      { userName: 'bad', message: 'name empty' },
      { userName: 'two', message: limit },
      { userName: 'three', message: limit },
    ]);
    expect(await liveMembers(session.enterprise.id)).toHaveLength(3);
  });

  it('never lets concurrent batches pass the member limit together', async () => {
    const session = await adminSession(h);
    await h.database.db
      .updateTable('enterprises')
      .set({ member_limit: 4 })
      .where('id', '=', session.enterprise.id)
      .execute();
    const batches = await Promise.all(
      ['p', 'q', 'r'].map((prefix) => add(session, { userList: [user(`${prefix}1`), user(`${prefix}2`)] })),
    );
    const succeeded = batches.flatMap((r) => ((r.json() as { data: AddData }).data.succeeded ?? []).length);
    expect(succeeded.reduce((a, b) => a + b, 0)).toBe(3);
    expect(await liveMembers(session.enterprise.id)).toHaveLength(4);
  });

  describe('password hashing', () => {
    it('hashes nothing for users that fail a field check, exist, repeat or find no seat', async () => {
      const session = await adminSession(h);
      await seedMember(h, session.enterprise, { userName: 'gina' });
      await h.database.db
        .updateTable('enterprises')
        .set({ member_limit: 2 })
        .where('id', '=', session.enterprise.id)
        .execute();
      const before = passwordsHashed();
      const body = expectFailure(
        await add(session, {
          userList: [
            user('x'),
            user('weak', { password: 'short' }),
            user('GINA'),
            user('hank'),
            user('HANK'),
            user('ivan'),
          ],
        }),
        '60027',
      ) as { data: AddData };
      expect(body.data.succeeded).toEqual([]);
      expect(passwordsHashed() - before).toBe(0);
    });

    it('hashes each password once when identical calls arrive together', async () => {
      const session = await adminSession(h);
      const userList = ['jo', 'kim', 'lee', 'max', 'ned'].map((name) => user(name));
      const before = passwordsHashed();
      const answers = await Promise.all(Array.from({ length: 8 }, () => add(session, { userList })));
      expect(passwordsHashed() - before).toBe(userList.length);
      const data = answers.map((r) => (r.json() as { data: AddData }).data);
      expect(data.filter((d) => d.succeeded.length === userList.length)).toHaveLength(1);
      for (const d of data.filter((d) => d.succeeded.length === 0)) {
        expect(new Set(d.failed.map((f) => f.message))).toEqual(new Set(['account already exists']));
      }
      expect(await liveMembers(session.enterprise.id)).toHaveLength(userList.length + 1);
    });
  });

  describe('request-level problems reject the whole call', () => {
    it.each([
      ['an empty list', { userList: [] }, '40021'],
      ['no list', {}, '40021'],
      ['a null list', { userList: null }, '40021'],
    ])('answers %s with its code', async (_what, payload, code) => {
      expectFailure(await add(s, payload), code);
    });

    it('answers no body with 40000', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: `${ME_PREFIX}/enterprise/${s.enterprise.globalId}/member?g_nonce=${Date.now()}abcdef`,
        headers: { authorization: `Bearer ${s.appTok}`, usertoken: await adminToken() },
      });
      expectFailure(response, '40000');
    });

    it('answers malformed JSON and a body that is no object with 40000', async () => {
      const raw = async (payload: string) =>
        h.app.inject({
          method: 'POST',
          url: `${ME_PREFIX}/enterprise/${s.enterprise.globalId}/member?g_nonce=${Math.random().toString(36).slice(2)}xyz`,
          headers: {
            authorization: `Bearer ${s.appTok}`,
            usertoken: await adminToken(),
            'content-type': 'application/json',
          },
          payload,
        });
      expectFailure(await raw('{"userList": ['), '40000', 'body: is not valid JSON');
      expectFailure(await raw('[1,2]'), '40000');
    });

    it('names the field when the list or a user is not of the right shape', async () => {
      expectFailure(await add(s, { userList: 'alice' }), '40000', 'userList: must be array');
      expectFailure(await add(s, { userList: [user('ok1'), 'bob'] }), '40000', 'userList[1]: must be object');
    });

    it('refuses more than 100 users with 60013, creating none', async () => {
      const session = await adminSession(h);
      const userList = Array.from({ length: 101 }, (_, i) => user(`many${i}`));
      expectFailure(await add(session, { userList }), '60013', 'upload count exceeds the maximum of 100');
      expect(await liveMembers(session.enterprise.id)).toHaveLength(1);
    });

    it('accepts exactly 100 users', async () => {
      const session = await adminSession(h);
      const userList = Array.from({ length: 100 }, (_, i) => user(`hundred${i}`));
      const data = dataOf<AddData>(await add(session, { userList }));
      expect(data.succeeded).toHaveLength(100);
      expect(await liveMembers(session.enterprise.id)).toHaveLength(101);
    });
  });

  describe('who may add', () => {
    it('refuses a plain member with 33003 and creates nothing', async () => {
      const session = await adminSession(h);
      const plain = await seedMember(h, session.enterprise);
      const call = memberCalls(
        h,
        session.appTok,
        await userToken(h, session.app, plain.account, plain.password),
      );
      expectFailure(
        await call('POST', `/enterprise/${session.enterprise.globalId}/member`, {
          userList: [user('sneaky')],
        }),
        '33003',
      );
      expect(await liveMembers(session.enterprise.id)).toHaveLength(2);
    });

    it("refuses another enterprise's administrator with 70001", async () => {
      const other = await adminSession(h);
      expectFailure(
        await other.call('POST', `/enterprise/${s.enterprise.globalId}/member`, {
          userList: [user('intruder')],
        }),
        '70001',
      );
      expect((await liveMembers(s.enterprise.id)).map((m) => m.user_name)).not.toContain('intruder');
    });
  });
});

async function adminToken(): Promise<string> {
  return userToken(h, s.app, s.enterprise.adminAccount, s.enterprise.adminPassword);
}

memberGuardSuite(() => h, {
  method: 'POST',
  path: ({ enterprise }) => `${ME_PREFIX}/enterprise/${enterprise.globalId}/member`,
  payload: () => ({ userList: [{ userName: 'guarded', password: 'Passw0rd!', departmentId: 1, name: 'G' }] }),
});
