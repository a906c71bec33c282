import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { CustomersRepository } from '../../src/domain/customers/customers.repository.js';
import { newGlobalId } from '../../src/domain/shared/ids.js';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import {
  appToken,
  createTestApp,
  seedEnterprise,
  type TestApp,
  type TestEnterprise,
} from '../support/fixtures.js';
import { nonce, uniqueCode, type Harness } from '../support/harness.js';

export interface OrderResult {
  sequence: number;
  licenseOrderId: string;
  customerId: string;
}

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

/** One app with `auth_order` on a channel of its own, and a token: a tenant of the order service. */
export interface OrderTenant {
  app: TestApp;
  channel: string;
  token: string;
}

export async function orderTenant(h: Harness): Promise<OrderTenant> {
  const app = await createTestApp(h, { scopes: ['auth_order', 'auth_me'] });
  return { app, channel: app.channels[0] as string, token: await appToken(h, app) };
}

/** A fresh asset number, unique across the run. */
export function assetNum(prefix = 'K'): string {
  return `${prefix}${randomBytes(6).toString('hex')}`;
}

export function product(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    crmProductId: uniqueCode('P'),
    productUri: 'gms-1001',
    productName: 'Designer',
    gmsPid: 'gms-1001',
    productType: 'tool',
    limitStartDate: 1_700_000_000_000,
    limitEndDate: 1_731_536_000_000,
    limitConcurrent: 5,
    ...overrides,
  };
}

/** A new_buy of one refillable lock with one product for a channel customer nobody knows yet. */
export function newBuy(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sequence: 1,
    channelCustomerId: uniqueCode('cc'),
    customerName: 'Acme Ltd',
    customerType: 'company',
    licenseType: 'normal_recover_usbkey',
    orderType: 'new_buy',
    assets: [{ assetNos: [assetNum()], products: [product()] }],
    ...overrides,
  };
}

export function batch(
  tenant: OrderTenant,
  orderList: unknown[],
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    channelCode: tenant.channel,
    channelOrderId: uniqueCode('CO'),
    syncMode: 'sync',
    orderList,
    ...overrides,
  };
}

export function postBatch(
  h: Harness,
  tenant: OrderTenant,
  body: unknown,
  options: { appKey?: string | null } = {},
): Promise<Reply> {
  const appKey = options.appKey === undefined ? tenant.app.appKey : options.appKey;
  const query = new URLSearchParams({ g_nonce: nonce(), ...(appKey === null ? {} : { appKey }) });
  return h.app.inject({
    method: 'POST',
    url: `${ORDER_PREFIX}/licenseOrder/batchOrder?${query.toString()}`,
    headers: { authorization: `Bearer ${tenant.token}` },
    payload: body as object,
  });
}

/** Posts a batch that must succeed and returns its result items. */
export async function submit(h: Harness, tenant: OrderTenant, body: unknown): Promise<OrderResult[]> {
  const response = await postBatch(h, tenant, body);
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { data: OrderResult[] }).data;
}

export function orderCall(
  h: Harness,
  tenant: OrderTenant,
  method: 'GET' | 'POST',
  path: string,
  payload?: unknown,
  query: Record<string, string> = {},
): Promise<Reply> {
  return h.app.inject({
    method,
    url: `${ORDER_PREFIX}${path}?${new URLSearchParams({ ...query, g_nonce: nonce() }).toString()}`,
    headers: { authorization: `Bearer ${tenant.token}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

export function expectFailure(response: Reply, code: string, message?: string | RegExp): void {
  expect(response.statusCode, response.body).toBe(299);
  const body = response.json() as { code: string; message: string };
  expect(body.code).toBe(code);
  if (typeof message === 'string') expect(body.message).toBe(message);
  else if (message !== undefined) expect(body.message).toMatch(message);
}

/** An enterprise the tenant can see: it has a customer in the tenant's channel. */
export async function visibleEnterprise(h: Harness, tenant: OrderTenant): Promise<TestEnterprise> {
  const enterprise = await seedEnterprise(h);
  await new CustomersRepository(h.database.db).insertIfAbsent({
    id: newGlobalId(),
    channelCode: tenant.channel,
    channelCustomerId: uniqueCode('dc'),
    crmCustomerId: null,
    name: 'Default customer',
    customerType: 'company',
    branchCode: null,
    branchName: null,
    address: null,
    securityMobile: null,
    enterpriseId: enterprise.id,
    isDefault: true,
    gongxin: false,
  });
  return enterprise;
}

export async function assetRow(h: Harness, num: string) {
  return h.database.db.selectFrom('assets').selectAll().where('asset_num', '=', num).executeTakeFirst();
}

export async function productsOn(h: Harness, num: string) {
  return h.database.db
    .selectFrom('product_instances as p')
    .innerJoin('assets as a', 'a.id', 'p.asset_id')
    .selectAll('p')
    .where('a.asset_num', '=', num)
    .orderBy('p.id')
    .execute();
}
