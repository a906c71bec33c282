import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomersRepository } from '../../src/domain/customers/customers.repository.js';
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
  seedCustomer,
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

const bind = (payload: unknown) => calls.post('/enterprise/user/bind', payload);

function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    channelCode: channel,
    channelCustomerId: uniqueCode('cust'),
    customerName: 'Acme Shop',
    branchName: 'North branch',
    enterpriseName: uniqueCode('Acme Group '),
    passwordMobile: '13800138000',
    ...overrides,
  };
}

describe('order op 1: bind customer to enterprise master account', () => {
  it('creates an enterprise with the customer as default and an administrator without a password', async () => {
    const payload = body();
    const data = dataOf<EnterpriseCustomerData>(await bind(payload));
    expect(Object.keys(data).sort()).toEqual([
      'channelCode',
      'channelCustomerId',
      'customerId',
      'enterpriseGlobalId',
      'enterpriseName',
      'isDefault',
    ]);
    expect(data).toMatchObject({
      channelCode: channel,
      channelCustomerId: payload.channelCustomerId,
      enterpriseName: payload.enterpriseName,
      isDefault: true,
    });

    const enterprise = await enterpriseRow(h, data.enterpriseGlobalId);
    expect(enterprise.code).toMatch(/^[a-z0-9]{6}$/);
    expect(enterprise.name).toBe(payload.enterpriseName);
    const members = await membersOf(h, data.enterpriseGlobalId);
    expect(members).toHaveLength(1);
    expect(members[0]).toMatchObject({
      identity: 'admin',
      user_name: 'admin',
      account: `admin@${enterprise.code}`,
      password_hash: null,
    });
    const meApp = await createTestApp(h, { scopes: ['auth_me'] });
    const login = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: {
        grant_type: 'password',
        client_id: meApp.appKey,
        client_secret: meApp.appSecret,
        username: `admin@${enterprise.code}`,
        password: 'Whatever123',
      },
    });
    expect(login.statusCode).toBe(400);

    const customer = await customerRow(h, data.customerId);
    expect(customer).toMatchObject({
      channel_code: channel,
      channel_customer_id: payload.channelCustomerId,
      name: 'Acme Shop',
      branch_name: 'North branch',
      security_mobile: '13800138000',
      customer_type: 'company',
      enterprise_id: enterprise.id,
      is_default: true,
      gongxin: false,
    });
  });

  it('returns the existing record unchanged when the channel customer is bound already', async () => {
    const payload = body();
    const first = dataOf<EnterpriseCustomerData>(await bind(payload));
    const again = dataOf<EnterpriseCustomerData>(
      await bind({ ...payload, enterpriseName: 'Renamed', customerName: 'Other', passwordMobile: null }),
    );
    expect(again).toEqual(first);
    expect((await enterpriseRow(h, first.enterpriseGlobalId)).name).toBe(payload.enterpriseName);
    expect(await customerRow(h, first.customerId)).toMatchObject({
      name: 'Acme Shop',
      security_mobile: '13800138000',
    });
    expect(await membersOf(h, first.enterpriseGlobalId)).toHaveLength(1);
    expect(await countEnterprisesNamed(h, 'Renamed')).toBe(0);
  });

  it('binds a customer that an order created without an enterprise instead of creating another', async () => {
    const seeded = await seedCustomer(h, {
      channelCode: channel,
      channelCustomerId: uniqueCode('cust'),
      name: 'Old name',
      branchName: 'Old branch',
      customerType: 'personal',
      address: 'Kept street 1',
    });
    const data = dataOf<EnterpriseCustomerData>(
      await bind(
        body({ channelCustomerId: seeded.channelCustomerId, customerName: 'New name', branchName: null }),
      ),
    );
    expect(data.customerId).toBe(seeded.id);
    expect(data.isDefault).toBe(true);
    const row = await customerRow(h, seeded.id);
    expect(row).toMatchObject({
      name: 'New name',
      branch_name: 'Old branch',
      address: 'Kept street 1',
      customer_type: 'personal',
      security_mobile: '13800138000',
      is_default: true,
    });
    expect(row.enterprise_id).toBe((await enterpriseRow(h, data.enterpriseGlobalId)).id);
  });

  it('answers a customer bound as a further customer of an enterprise with isDefault false', async () => {
    const owner = dataOf<EnterpriseCustomerData>(await bind(body()));
    const enterprise = await enterpriseRow(h, owner.enterpriseGlobalId);
    const further = await seedCustomer(h, {
      channelCode: app.channels[1] ?? '',
      channelCustomerId: uniqueCode('cust'),
      enterpriseId: enterprise.id,
    });
    const data = dataOf<EnterpriseCustomerData>(
      await bind(body({ channelCode: further.channelCode, channelCustomerId: further.channelCustomerId })),
    );
    expect(data).toEqual({
      customerId: further.id,
      channelCode: further.channelCode,
      channelCustomerId: further.channelCustomerId,
      enterpriseGlobalId: owner.enterpriseGlobalId,
      enterpriseName: enterprise.name,
      isDefault: false,
    });
  });

  it('accepts null, blank and absent optional fields and ignores unknown ones', async () => {
    const payload = {
      channelCode: channel,
      channelCustomerId: uniqueCode('cust'),
      enterpriseName: '  Trimmed Co  ',
      customerName: null,
      branchName: '   ',
      passwordMobile: '',
      somethingElse: { nested: true },
    };
    const data = dataOf<EnterpriseCustomerData>(await bind(payload));
    expect(data.enterpriseName).toBe('Trimmed Co');
    expect(await customerRow(h, data.customerId)).toMatchObject({
      name: null,
      branch_name: null,
      security_mobile: null,
    });
  });

  it('accepts an E.164 security mobile', async () => {
    const data = dataOf<EnterpriseCustomerData>(await bind(body({ passwordMobile: '+6591234567' })));
    expect((await customerRow(h, data.customerId)).security_mobile).toBe('+6591234567');
  });

  const long = (n: number) => 'x'.repeat(n);
  it.each([
    [{ channelCode: undefined }, 'channelCode: is required'],
    [{ channelCustomerId: undefined }, 'channelCustomerId: is required'],
    [{ enterpriseName: undefined }, 'enterpriseName: is required'],
    [{ channelCustomerId: '' }, 'channelCustomerId: must NOT have fewer than 1 characters'],
    [{ channelCustomerId: long(65) }, 'channelCustomerId: must NOT have more than 64 characters'],
    [{ channelCustomerId: 12345 }, 'channelCustomerId: must be string'],
    [{ channelCode: long(65) }, 'channelCode: must NOT have more than 64 characters'],
    [{ enterpriseName: '' }, 'enterpriseName: must NOT have fewer than 1 characters'],
    [{ enterpriseName: '   ' }, 'enterpriseName: must not be blank'],
    [{ enterpriseName: long(101) }, 'enterpriseName: must NOT have more than 100 characters'],
    [{ customerName: long(101) }, 'customerName: must NOT have more than 100 characters'],
    [{ customerName: 7 }, 'customerName: must be string'],
    [{ branchName: long(101) }, 'branchName: must NOT have more than 100 characters'],
    [{ passwordMobile: long(21) }, 'passwordMobile: must NOT have more than 20 characters'],
    [
      { passwordMobile: '12345' },
      'passwordMobile: must be a mainland mobile number (1[3-9] and 9 digits) or E.164 (+country number)',
    ],
  ])('refuses %j with 13004 naming the field and writes nothing', async (overrides, message) => {
    const payload = body(overrides);
    expectFailure(await bind(payload), '13004', message);
    const id = payload.channelCustomerId;
    if (typeof id === 'string' && typeof payload.channelCode === 'string') {
      expect(
        await new CustomersRepository(h.database.db).findByChannel(payload.channelCode, id),
      ).toBeUndefined();
    }
    if (typeof payload.enterpriseName === 'string') {
      expect(await countEnterprisesNamed(h, payload.enterpriseName.trim())).toBe(0);
    }
  });

  it('refuses a body that is not a JSON object with 13004', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/enterprise/user/bind?g_nonce=${uniqueCode('n')}`,
      headers: { authorization: `Bearer ${await appToken(h, app)}`, 'content-type': 'application/json' },
      payload: '{"channelCode":',
    });
    expectFailure(response, '13004', 'body: is not valid JSON');
  });
});

describe('order op 1: channels', () => {
  it('refuses a channelCode outside the app’s channels with 60000 and writes nothing', async () => {
    const payload = body({ channelCode: uniqueCode('FOREIGN') });
    expectFailure(await bind(payload), '60000');
    expect(
      await new CustomersRepository(h.database.db).findByChannel(
        String(payload.channelCode),
        String(payload.channelCustomerId),
      ),
    ).toBeUndefined();
    expect(await countEnterprisesNamed(h, String(payload.enterpriseName))).toBe(0);
  });

  it('keeps the same channel customer id of another channel apart', async () => {
    const other = await createTestApp(h, { scopes: ['auth_order'] });
    const otherCalls = orderCalls(h, await appToken(h, other));
    const shared = uniqueCode('cust');
    const theirs = dataOf<EnterpriseCustomerData>(
      await otherCalls.post(
        '/enterprise/user/bind',
        body({ channelCode: other.channels[0], channelCustomerId: shared }),
      ),
    );
    expectFailure(await bind(body({ channelCode: other.channels[0], channelCustomerId: shared })), '60000');
    const ours = dataOf<EnterpriseCustomerData>(await bind(body({ channelCustomerId: shared })));
    expect(ours.customerId).not.toBe(theirs.customerId);
    expect(ours.enterpriseGlobalId).not.toBe(theirs.enterpriseGlobalId);
    expect(ours.isDefault).toBe(true);
  });
});

describe('order op 1: concurrency', () => {
  it('creates exactly one enterprise when the same new customer is bound concurrently', async () => {
    const payload = body();
    const results = await Promise.all(Array.from({ length: 8 }, () => bind(payload)));
    const data = results.map((r) => dataOf<EnterpriseCustomerData>(r));
    for (const d of data) expect(d).toEqual(data[0]);
    expect(await countEnterprisesNamed(h, String(payload.enterpriseName))).toBe(1);
    expect(await membersOf(h, data[0]?.enterpriseGlobalId ?? '')).toHaveLength(1);
  });

  it('binds an order-created customer exactly once under concurrent calls', async () => {
    const seeded = await seedCustomer(h, { channelCode: channel, channelCustomerId: uniqueCode('cust') });
    const payload = body({ channelCustomerId: seeded.channelCustomerId });
    const results = await Promise.all(Array.from({ length: 8 }, () => bind(payload)));
    const data = results.map((r) => dataOf<EnterpriseCustomerData>(r));
    for (const d of data) expect(d).toEqual({ ...data[0], customerId: seeded.id });
    expect(await countEnterprisesNamed(h, String(payload.enterpriseName))).toBe(1);
  });
});

orderGuardSuite(() => h, {
  method: 'POST',
  path: () => `${ORDER_PREFIX}/enterprise/user/bind`,
  payload: ({ app: guardApp }) => ({
    channelCode: guardApp.channels[0],
    channelCustomerId: uniqueCode('cust'),
    enterpriseName: 'Guarded Co',
  }),
});
