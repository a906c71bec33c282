import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp, type TestApp } from '../support/fixtures.js';
import { orderGuardSuite } from '../support/guard-suite.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
  customerRow,
  dataOf,
  enterpriseRow,
  expectFailure,
  orderCalls,
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
  app = await createTestApp(h, { scopes: ['auth_order'] });
  channel = app.channels[0] ?? '';
  calls = orderCalls(h, await appToken(h, app));
});
afterAll(async () => h.close());

const update = (payload: unknown) => calls.post('/enterprise/user/update', payload);

/** A channel customer with a CRM id, made the default of a new enterprise by op 1. */
async function boundCustomer(): Promise<{ crmCustomerId: string; bound: EnterpriseCustomerData }> {
  const crmCustomerId = uniqueCode('crm');
  const seeded = await seedCustomer(h, {
    channelCode: channel,
    channelCustomerId: uniqueCode('cust'),
    crmCustomerId,
    name: 'Before',
    branchName: 'Old branch',
    address: 'Old street',
  });
  const bound = dataOf<EnterpriseCustomerData>(
    await calls.post('/enterprise/user/bind', {
      channelCode: channel,
      channelCustomerId: seeded.channelCustomerId,
      enterpriseName: 'Before',
    }),
  );
  return { crmCustomerId, bound };
}

describe('order op 4: update enterprise customer information', () => {
  it('updates name, branch and address, answering success without data', async () => {
    const { crmCustomerId, bound } = await boundCustomer();
    const response = await update({
      crmCustomerId,
      customerName: 'After',
      branchName: 'New branch',
      address: 'New street 9',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ code: 0, message: 'success' });
    expect(await customerRow(h, bound.customerId)).toMatchObject({
      name: 'After',
      branch_name: 'New branch',
      address: 'New street 9',
    });
  });

  it('renames the enterprise with its default customer, as op 3 then shows', async () => {
    const { crmCustomerId, bound } = await boundCustomer();
    dataOf(await update({ crmCustomerId, customerName: '  Renamed Group  ' }));
    expect((await enterpriseRow(h, bound.enterpriseGlobalId)).name).toBe('Renamed Group');
    const listed = dataOf<EnterpriseCustomerData[]>(
      await calls.get('/enterprise/user/query', {
        channelCode: channel,
        channelCustomerId: bound.channelCustomerId ?? '',
      }),
    );
    expect(listed).toEqual([{ ...bound, enterpriseName: 'Renamed Group' }]);
  });

  it('renames an enterprise that op 2 created for the CRM customer', async () => {
    const crmCustomerId = uniqueCode('crm');
    const created = dataOf<CreationData>(
      await calls.post('/enterprise/user/create', { crmCustomerId, customerName: 'Gongxin Before' }),
    );
    dataOf(await update({ crmCustomerId, customerName: 'Gongxin After' }));
    expect((await enterpriseRow(h, created.enterpriseGlobalId)).name).toBe('Gongxin After');
  });

  it('leaves the enterprise name alone when a further customer is renamed', async () => {
    const { bound } = await boundCustomer();
    const enterprise = await enterpriseRow(h, bound.enterpriseGlobalId);
    const crmCustomerId = uniqueCode('crm');
    const further = await seedCustomer(h, {
      channelCode: channel,
      crmCustomerId,
      enterpriseId: enterprise.id,
    });
    dataOf(await update({ crmCustomerId, customerName: 'Further renamed' }));
    expect((await customerRow(h, further.id)).name).toBe('Further renamed');
    expect((await enterpriseRow(h, bound.enterpriseGlobalId)).name).toBe('Before');
  });

  it('updates a customer that belongs to no enterprise yet', async () => {
    const crmCustomerId = uniqueCode('crm');
    const unbound = await seedCustomer(h, { channelCode: channel, crmCustomerId, name: 'Loose' });
    dataOf(await update({ crmCustomerId, address: 'Somewhere 1' }));
    expect(await customerRow(h, unbound.id)).toMatchObject({ name: 'Loose', address: 'Somewhere 1' });
  });

  it('keeps fields that are absent, null or blank', async () => {
    const { crmCustomerId, bound } = await boundCustomer();
    dataOf(await update({ crmCustomerId, customerName: null, branchName: '  ', unknownField: 1 }));
    expect(await customerRow(h, bound.customerId)).toMatchObject({
      name: 'Before',
      branch_name: 'Old branch',
      address: 'Old street',
    });
    expect((await enterpriseRow(h, bound.enterpriseGlobalId)).name).toBe('Before');
  });

  it('refuses an unknown crmCustomerId with 13004', async () => {
    expectFailure(
      await update({ crmCustomerId: uniqueCode('crm'), customerName: 'X' }),
      '13004',
      'crmCustomerId: no customer has this CRM id',
    );
  });

  const long = (n: number) => 'x'.repeat(n);
  it.each([
    [{ crmCustomerId: undefined }, 'crmCustomerId: is required'],
    [{ crmCustomerId: '' }, 'crmCustomerId: must NOT have fewer than 1 characters'],
    [{ crmCustomerId: long(65) }, 'crmCustomerId: must NOT have more than 64 characters'],
    [{ customerName: long(101) }, 'customerName: must NOT have more than 100 characters'],
    [{ branchName: long(101) }, 'branchName: must NOT have more than 100 characters'],
    [{ address: long(256) }, 'address: must NOT have more than 255 characters'],
    [{ address: 5 }, 'address: must be string'],
  ])('refuses %j with 13004 naming the field and changes nothing', async (overrides, message) => {
    const { crmCustomerId, bound } = await boundCustomer();
    expectFailure(
      await update({ crmCustomerId, customerName: 'Changed', address: 'Changed', ...overrides }),
      '13004',
      message,
    );
    expect(await customerRow(h, bound.customerId)).toMatchObject({ name: 'Before', address: 'Old street' });
    expect((await enterpriseRow(h, bound.enterpriseGlobalId)).name).toBe('Before');
  });
});

describe('order op 4: channels', () => {
  it('answers a customer of another channel exactly as an unknown one and changes nothing', async () => {
    const crmCustomerId = uniqueCode('crm');
    const foreign = await seedCustomer(h, {
      channelCode: uniqueCode('FOREIGN'),
      crmCustomerId,
      name: 'Theirs',
    });
    const unknown = (await update({ crmCustomerId: 'absent-crm-id', customerName: 'Mine' })).json();
    const response = await update({ crmCustomerId, customerName: 'Mine' });
    expectFailure(response, '13004');
    expect(response.json()).toEqual(unknown);
    expect((await customerRow(h, foreign.id)).name).toBe('Theirs');
  });
});

orderGuardSuite(() => h, {
  method: 'POST',
  path: () => `${ORDER_PREFIX}/enterprise/user/update`,
  payload: () => ({ crmCustomerId: uniqueCode('crm'), customerName: 'Guarded' }),
});
