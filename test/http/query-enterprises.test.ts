import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp, type TestApp } from '../support/fixtures.js';
import { orderGuardSuite } from '../support/guard-suite.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
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
let secondChannel: string;

/** An enterprise made by op 1 with a second customer of the app, one of a foreign channel, and one made by op 2. */
let owner: EnterpriseCustomerData;
let further: { id: string; channelCode: string; channelCustomerId: string };
let foreign: { id: string; channelCode: string; channelCustomerId: string };
let crmOnly: { id: string };

beforeAll(async () => {
  h = await startHarness();
  app = await createTestApp(h, { scopes: ['auth_order'], channels: [uniqueCode('CH'), uniqueCode('CH')] });
  channel = app.channels[0] ?? '';
  secondChannel = app.channels[1] ?? '';
  calls = orderCalls(h, await appToken(h, app));

  owner = dataOf<EnterpriseCustomerData>(
    await calls.post('/enterprise/user/bind', {
      channelCode: channel,
      channelCustomerId: uniqueCode('cust'),
      enterpriseName: 'Query Group',
    }),
  );
  const enterprise = await enterpriseRow(h, owner.enterpriseGlobalId);
  const seeded = await seedCustomer(h, {
    channelCode: secondChannel,
    channelCustomerId: uniqueCode('cust'),
    enterpriseId: enterprise.id,
  });
  further = { id: seeded.id, channelCode: secondChannel, channelCustomerId: seeded.channelCustomerId ?? '' };
  const foreignChannel = uniqueCode('FOREIGN');
  const seededForeign = await seedCustomer(h, {
    channelCode: foreignChannel,
    channelCustomerId: uniqueCode('cust'),
    enterpriseId: enterprise.id,
  });
  foreign = {
    id: seededForeign.id,
    channelCode: foreignChannel,
    channelCustomerId: seededForeign.channelCustomerId ?? '',
  };
  // A customer op 2 made, later added to this enterprise (as a new_buy naming it would).
  const created = dataOf<CreationData>(
    await calls.post('/enterprise/user/create', {
      crmCustomerId: uniqueCode('crm'),
      customerName: 'CRM only',
    }),
  );
  const crmCustomer = await h.database.db
    .selectFrom('customers as c')
    .innerJoin('enterprises as e', 'e.id', 'c.enterprise_id')
    .select('c.id')
    .where('e.global_id', '=', created.enterpriseGlobalId)
    .executeTakeFirstOrThrow();
  await h.database.db
    .updateTable('customers')
    .set({ enterprise_id: enterprise.id, is_default: false })
    .where('id', '=', crmCustomer.id)
    .execute();
  crmOnly = { id: crmCustomer.id };
});
afterAll(async () => h.close());

const query = (params: Record<string, string>) => calls.get('/enterprise/user/query', params);

describe('order op 3: query enterprise master accounts', () => {
  it('lists all customers of the channel customer’s enterprise that the app may see, default first', async () => {
    const data = dataOf<EnterpriseCustomerData[]>(
      await query({ channelCode: further.channelCode, channelCustomerId: further.channelCustomerId }),
    );
    expect(data).toEqual([
      owner,
      {
        customerId: further.id,
        channelCode: further.channelCode,
        channelCustomerId: further.channelCustomerId,
        enterpriseGlobalId: owner.enterpriseGlobalId,
        enterpriseName: 'Query Group',
        isDefault: false,
      },
      {
        customerId: crmOnly.id,
        channelCode: channel,
        channelCustomerId: null,
        enterpriseGlobalId: owner.enterpriseGlobalId,
        enterpriseName: 'Query Group',
        isDefault: false,
      },
    ]);
    expect(data.map((c) => c.customerId)).not.toContain(foreign.id);
  });

  it('treats defaultCustomer=N like no defaultCustomer', async () => {
    const params = { channelCode: owner.channelCode, channelCustomerId: owner.channelCustomerId ?? '' };
    const all = dataOf<EnterpriseCustomerData[]>(await query(params));
    expect(dataOf<EnterpriseCustomerData[]>(await query({ ...params, defaultCustomer: 'N' }))).toEqual(all);
    expect(all).toHaveLength(3);
  });

  it('lists only the default customer with defaultCustomer=Y, whichever customer is asked about', async () => {
    for (const asked of [owner, further]) {
      const data = dataOf<EnterpriseCustomerData[]>(
        await query({
          channelCode: asked.channelCode,
          channelCustomerId: asked.channelCustomerId ?? '',
          defaultCustomer: 'Y',
        }),
      );
      expect(data).toEqual([owner]);
    }
  });

  it('answers [] for an unknown channel customer and for one bound to no enterprise yet', async () => {
    expect(dataOf(await query({ channelCode: channel, channelCustomerId: uniqueCode('none') }))).toEqual([]);
    const unbound = await seedCustomer(h, { channelCode: channel, channelCustomerId: uniqueCode('cust') });
    expect(
      dataOf(await query({ channelCode: channel, channelCustomerId: unbound.channelCustomerId ?? '' })),
    ).toEqual([]);
  });

  it.each([
    [{ channelCustomerId: 'x' }, 'channelCode: is required'],
    [{ channelCode: 'CH' }, 'channelCustomerId: is required'],
    [
      { channelCode: 'CH', channelCustomerId: 'x'.repeat(65) },
      'channelCustomerId: must NOT have more than 64 characters',
    ],
    [
      { channelCode: 'CH', channelCustomerId: '' },
      'channelCustomerId: must NOT have fewer than 1 characters',
    ],
    [
      { channelCode: 'CH', channelCustomerId: 'x', defaultCustomer: 'y' },
      'defaultCustomer: must be one of Y, N',
    ],
  ])('refuses %j with 13004 naming the parameter', async (params, message) => {
    expectFailure(await query(params), '13004', message);
  });
});

describe('order op 3: channels', () => {
  it('refuses a channelCode outside the app’s channels with 60000', async () => {
    expectFailure(
      await query({ channelCode: foreign.channelCode, channelCustomerId: foreign.channelCustomerId }),
      '60000',
    );
  });

  it('shows another app only the customers of its own channels', async () => {
    const other = await createTestApp(h, { scopes: ['auth_order'], channels: [foreign.channelCode] });
    const otherCalls = orderCalls(h, await appToken(h, other));
    const data = dataOf<EnterpriseCustomerData[]>(
      await otherCalls.get('/enterprise/user/query', {
        channelCode: foreign.channelCode,
        channelCustomerId: foreign.channelCustomerId,
      }),
    );
    expect(data.map((c) => c.customerId)).toEqual([foreign.id]);
    // Its enterprise's default customer is in a channel it does not hold: invisible.
    expect(
      dataOf(
        await otherCalls.get('/enterprise/user/query', {
          channelCode: foreign.channelCode,
          channelCustomerId: foreign.channelCustomerId,
          defaultCustomer: 'Y',
        }),
      ),
    ).toEqual([]);
  });
});

orderGuardSuite(() => h, {
  method: 'GET',
  path: () => `${ORDER_PREFIX}/enterprise/user/query`,
});
