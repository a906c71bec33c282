import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp, type TestApp } from '../support/fixtures.js';
import { orderGuardSuite } from '../support/guard-suite.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
  countEnterprisesNamed,
  customerRow,
  dataOf,
  enterpriseRow,
  expectFailure,
  membersOf,
  orderCalls,
  seedAsset,
  seedCustomer,
  type CreationData,
  type EnterpriseCustomerData,
} from './enterprise-helpers.js';

let h: Harness;
let app: TestApp;
let calls: ReturnType<typeof orderCalls>;
let channel: string;

beforeAll(async () => {
  h = await startHarness();
  app = await createTestApp(h, { scopes: ['auth_order'], channels: [uniqueCode('CH'), uniqueCode('CH')] });
  channel = app.channels[0] ?? '';
  calls = orderCalls(h, await appToken(h, app));
});
afterAll(async () => h.close());

const create = (payload: unknown) => calls.post('/enterprise/user/create', payload);

function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    crmCustomerId: uniqueCode('crm'),
    customerName: uniqueCode('Gongxin Co '),
    branchName: 'East branch',
    address: '1 Industry Road',
    ...overrides,
  };
}

async function customerByCrm(crmCustomerId: string) {
  return h.database.db
    .selectFrom('customers')
    .selectAll()
    .where('crm_customer_id', '=', crmCustomerId)
    .executeTakeFirst();
}

describe('order op 2: create industry-and-information customer', () => {
  it('creates the enterprise, the customer as default and gongxin, and its administrator', async () => {
    const payload = body();
    const data = dataOf<CreationData>(await create(payload));
    expect(Object.keys(data).sort()).toEqual(['defaultType', 'enterpriseGlobalId', 'members']);
    expect(data.defaultType).toBe(true);

    const enterprise = await enterpriseRow(h, data.enterpriseGlobalId);
    expect(enterprise.name).toBe(payload.customerName);
    expect(enterprise.code).toMatch(/^[a-z0-9]{6}$/);
    const members = await membersOf(h, data.enterpriseGlobalId);
    expect(members).toHaveLength(1);
    expect(members[0]).toMatchObject({
      identity: 'admin',
      account: `admin@${enterprise.code}`,
      password_hash: null,
    });
    expect(data.members).toEqual([{ memberGlobalId: members[0]?.global_id, memberIdentity: 'admin' }]);

    expect(await customerByCrm(String(payload.crmCustomerId))).toMatchObject({
      channel_code: channel,
      channel_customer_id: null,
      name: payload.customerName,
      branch_name: 'East branch',
      address: '1 Industry Road',
      customer_type: 'company',
      enterprise_id: enterprise.id,
      is_default: true,
      gongxin: true,
    });
  });

  it('creates one member per active cloud account the customer holds, each assigned its account', async () => {
    const crmCustomerId = uniqueCode('crm');
    const customer = await seedCustomer(h, {
      channelCode: app.channels[1] ?? '',
      channelCustomerId: uniqueCode('cust'),
      crmCustomerId,
      name: 'Ordered before',
    });
    const accounts = [
      await seedAsset(h, customer.id, 'cloud_account'),
      await seedAsset(h, customer.id, 'cloud_account'),
    ];
    const oddNumber = await seedAsset(h, customer.id, 'cloud_account', { assetNum: `CA-${uniqueCode('')}` });
    await seedAsset(h, customer.id, 'cloud_account', { revoked: true });
    await seedAsset(h, customer.id, 'softkey');
    await seedAsset(h, customer.id, 'cloud_customer');

    const payload = body({ crmCustomerId, customerName: 'CRM name' });
    const data = dataOf<CreationData>(await create(payload));
    expect(data.defaultType).toBe(true);
    const enterprise = await enterpriseRow(h, data.enterpriseGlobalId);
    const members = await membersOf(h, data.enterpriseGlobalId);
    expect(members).toHaveLength(4);
    expect(data.members).toEqual(
      members.map((m) => ({ memberGlobalId: m.global_id, memberIdentity: m.identity })),
    );
    expect(data.members[0]?.memberIdentity).toBe('admin');
    expect(data.members.slice(1).every((m) => m.memberIdentity === 'member')).toBe(true);

    const assignments = await h.database.db
      .selectFrom('asset_assignments as aa')
      .innerJoin('assets as a', 'a.id', 'aa.asset_id')
      .innerJoin('members as m', 'm.id', 'aa.member_id')
      .select(['a.asset_num', 'm.user_name', 'm.account', 'm.identity', 'm.password_hash'])
      .where('a.customer_id', '=', customer.id)
      .execute();
    expect(assignments).toHaveLength(3);
    for (const account of accounts) {
      expect(assignments).toContainEqual({
        asset_num: account.assetNum,
        user_name: account.assetNum,
        account: `${account.assetNum}@${enterprise.code}`,
        identity: 'member',
        password_hash: null,
      });
    }
    // An asset number that is no valid user name gets a stable derived one.
    const odd = assignments.find((a) => a.asset_num === oddNumber.assetNum);
    expect(odd?.user_name).toMatch(/^ca[0-9a-f]{16}$/);
    expect(odd?.account).toBe(`${odd?.user_name}@${enterprise.code}`);

    // The existing customer is bound (its channel kept), not duplicated.
    expect(await customerRow(h, customer.id)).toMatchObject({
      channel_code: customer.channelCode,
      name: 'CRM name',
      enterprise_id: enterprise.id,
      is_default: true,
      gongxin: true,
    });
  });

  /** Op 2 on a CRM customer holding cloud accounts with these numbers; its members by asset number. */
  async function membersFor(numbers: Array<(customerId: string) => Promise<{ assetNum: string }>>) {
    const crmCustomerId = uniqueCode('crm');
    const customer = await seedCustomer(h, { channelCode: channel, crmCustomerId });
    for (const seed of numbers) await seed(customer.id);
    const data = dataOf<CreationData>(await create(body({ crmCustomerId })));
    const enterprise = await enterpriseRow(h, data.enterpriseGlobalId);
    const members = await membersOf(h, data.enterpriseGlobalId);
    expect(data.members).toHaveLength(numbers.length + 1);
    expect(new Set(members.map((m) => m.account.toLowerCase())).size).toBe(members.length);
    for (const m of members) expect(m.account).toBe(`${m.user_name}@${enterprise.code}`);
    const held = await h.database.db
      .selectFrom('asset_assignments as aa')
      .innerJoin('assets as a', 'a.id', 'aa.asset_id')
      .innerJoin('members as m', 'm.id', 'aa.member_id')
      .select(['a.asset_num', 'm.user_name', 'm.identity'])
      .where('a.customer_id', '=', customer.id)
      .execute();
    expect(held).toHaveLength(numbers.length);
    expect(held.every((row) => row.identity === 'member')).toBe(true);
    return new Map(held.map((row) => [row.asset_num, row.user_name]));
  }

  const cloudAccount = (assetNum: string) => (customerId: string) =>
    seedAsset(h, customerId, 'cloud_account', { assetNum });

  it('gives a cloud account numbered admin, in any letter case, a derived member name', async () => {
    const names = await membersFor([cloudAccount('admin'), cloudAccount('ADMIN'), cloudAccount('Admin')]);
    for (const num of ['admin', 'ADMIN', 'Admin']) expect(names.get(num)).toMatch(/^ca[0-9a-f]{16}$/);
  });

  it('gives one of two numbers that differ only in letter case a derived member name', async () => {
    const lower = `acct${uniqueCode('').slice(1)}`;
    const upper = lower.toUpperCase();
    const names = await membersFor([cloudAccount(lower), cloudAccount(upper)]);
    const own = [lower, upper].filter((n) => names.get(n) === n);
    expect(own).toHaveLength(1);
    const other = lower === own[0] ? upper : lower;
    expect(names.get(other)).toMatch(/^ca[0-9a-f]{16}$/);
  });

  it('keeps a number that equals the name derived for another account, and derives that one again', async () => {
    let oddNumber = '';
    let derived = '';
    const names = await membersFor([
      async (customerId) => {
        const asset = await seedAsset(h, customerId, 'cloud_account', { assetNum: `CA-${uniqueCode('')}` });
        oddNumber = asset.assetNum;
        derived = `ca${createHash('sha256').update(asset.id).digest('hex').slice(0, 16)}`;
        return asset;
      },
      (customerId) => cloudAccount(derived)(customerId),
    ]);
    expect(names.get(derived)).toBe(derived);
    expect(names.get(oddNumber)).toMatch(/^ca[0-9a-f]{16}$/);
    expect(names.get(oddNumber)).not.toBe(derived);
  });

  it('returns the same result for a CRM id that has its enterprise already, creating nothing', async () => {
    const crmCustomerId = uniqueCode('crm');
    const customer = await seedCustomer(h, { channelCode: channel, crmCustomerId });
    await seedAsset(h, customer.id, 'cloud_account');
    const payload = body({ crmCustomerId });
    const first = dataOf<CreationData>(await create(payload));
    const again = dataOf<CreationData>(await create({ ...payload, customerName: 'Another name' }));
    expect(again).toEqual(first);
    expect(first.members).toHaveLength(2);
    expect(await membersOf(h, first.enterpriseGlobalId)).toHaveLength(2);
    expect(await countEnterprisesNamed(h, 'Another name')).toBe(0);
    expect((await customerRow(h, customer.id)).name).toBe(payload.customerName);
  });

  it('answers defaultType false for a CRM customer bound as a further customer', async () => {
    const bind = dataOf<EnterpriseCustomerData>(
      await calls.post('/enterprise/user/bind', {
        channelCode: channel,
        channelCustomerId: uniqueCode('cust'),
        enterpriseName: 'Parent Co',
      }),
    );
    const enterprise = await enterpriseRow(h, bind.enterpriseGlobalId);
    const crmCustomerId = uniqueCode('crm');
    await seedCustomer(h, { channelCode: channel, crmCustomerId, enterpriseId: enterprise.id });
    const data = dataOf<CreationData>(await create(body({ crmCustomerId })));
    expect(data.enterpriseGlobalId).toBe(bind.enterpriseGlobalId);
    expect(data.defaultType).toBe(false);
    expect(data.members.map((m) => m.memberIdentity)).toEqual(['admin']);
  });

  it('accepts null optional fields and ignores unknown ones', async () => {
    const payload = {
      crmCustomerId: uniqueCode('crm'),
      customerName: 'Bare Co',
      address: null,
      channelCode: 'X',
    };
    dataOf<CreationData>(await create(payload));
    expect(await customerByCrm(payload.crmCustomerId)).toMatchObject({
      channel_code: channel,
      branch_name: null,
      address: null,
    });
  });

  const long = (n: number) => 'x'.repeat(n);
  it.each([
    [{ crmCustomerId: undefined }, 'crmCustomerId: is required'],
    [{ customerName: undefined }, 'customerName: is required'],
    [{ crmCustomerId: '' }, 'crmCustomerId: must NOT have fewer than 1 characters'],
    [{ crmCustomerId: long(65) }, 'crmCustomerId: must NOT have more than 64 characters'],
    [{ crmCustomerId: 42 }, 'crmCustomerId: must be string'],
    [{ customerName: ' ' }, 'customerName: must not be blank'],
    [{ customerName: long(101) }, 'customerName: must NOT have more than 100 characters'],
    [{ branchName: long(101) }, 'branchName: must NOT have more than 100 characters'],
    [{ address: long(256) }, 'address: must NOT have more than 255 characters'],
    [{ address: ['street'] }, 'address: must be string'],
  ])('refuses %j with 13004 naming the field and writes nothing', async (overrides, message) => {
    const payload = body(overrides);
    expectFailure(await create(payload), '13004', message);
    if (typeof payload.crmCustomerId === 'string') {
      expect(await customerByCrm(payload.crmCustomerId)).toBeUndefined();
    }
  });
});

describe('order op 2: channels', () => {
  it('cannot take over a CRM id held in a channel the app does not have, and changes nothing', async () => {
    const crmCustomerId = uniqueCode('crm');
    const foreign = await seedCustomer(h, {
      channelCode: uniqueCode('FOREIGN'),
      crmCustomerId,
      name: 'Theirs',
    });
    await seedAsset(h, foreign.id, 'cloud_account');
    expectFailure(
      await create(body({ crmCustomerId })),
      '13004',
      'crmCustomerId: is not available to this application',
    );
    expect(await customerRow(h, foreign.id)).toMatchObject({
      name: 'Theirs',
      enterprise_id: null,
      gongxin: false,
    });
  });

  it('does not show another channel’s enterprise to an app that lacks the channel', async () => {
    const payload = body();
    dataOf<CreationData>(await create(payload));
    const other = await createTestApp(h, { scopes: ['auth_order'] });
    const response = await orderCalls(h, await appToken(h, other)).post('/enterprise/user/create', payload);
    expectFailure(response, '13004');
    expect(JSON.stringify(response.json())).not.toContain('enterpriseGlobalId');
  });

  it('refuses an app that holds no channel with 60000', async () => {
    const bare = await createTestApp(h, { scopes: ['auth_order'], channels: [] });
    const payload = body();
    expectFailure(
      await orderCalls(h, await appToken(h, bare)).post('/enterprise/user/create', payload),
      '60000',
    );
    expect(await customerByCrm(String(payload.crmCustomerId))).toBeUndefined();
  });
});

describe('order op 2: concurrency', () => {
  it('creates exactly one enterprise and one set of members for concurrent calls with one CRM id', async () => {
    const crmCustomerId = uniqueCode('crm');
    const customer = await seedCustomer(h, { channelCode: channel, crmCustomerId });
    await seedAsset(h, customer.id, 'cloud_account');
    await seedAsset(h, customer.id, 'cloud_account');
    const payload = body({ crmCustomerId });
    const results = await Promise.all(Array.from({ length: 8 }, () => create(payload)));
    const data = results.map((r) => dataOf<CreationData>(r));
    for (const d of data) expect(d).toEqual(data[0]);
    expect(await countEnterprisesNamed(h, String(payload.customerName))).toBe(1);
    expect(await membersOf(h, data[0]?.enterpriseGlobalId ?? '')).toHaveLength(3);
  });

  it('creates exactly one customer and enterprise for concurrent calls with a new CRM id', async () => {
    const payload = body();
    const results = await Promise.all(Array.from({ length: 8 }, () => create(payload)));
    const data = results.map((r) => dataOf<CreationData>(r));
    for (const d of data) expect(d).toEqual(data[0]);
    expect(await countEnterprisesNamed(h, String(payload.customerName))).toBe(1);
  });
});

orderGuardSuite(() => h, {
  method: 'POST',
  path: () => `${ORDER_PREFIX}/enterprise/user/create`,
  payload: () => ({ crmCustomerId: uniqueCode('crm'), customerName: 'Guarded Co' }),
});
