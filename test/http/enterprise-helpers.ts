import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import {
  CustomersRepository,
  type CustomerRecord,
  type NewCustomer,
} from '../../src/domain/customers/customers.repository.js';
import { newGlobalId } from '../../src/domain/shared/ids.js';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { nonce, type Harness } from '../support/harness.js';

export interface Envelope<T> {
  code: number | string;
  message: string;
  data?: T;
  cause?: string;
}

export interface EnterpriseCustomerData {
  customerId: string;
  channelCode: string;
  channelCustomerId: string | null;
  enterpriseGlobalId: string;
  enterpriseName: string;
  isDefault: boolean;
}

export interface CreationData {
  enterpriseGlobalId: string;
  defaultType: boolean;
  members: Array<{ memberGlobalId: string; memberIdentity: 'admin' | 'member' }>;
}

/** Order-service calls of one app token, each with a fresh nonce. */
export function orderCalls(h: Harness, token: string) {
  return {
    post: (path: string, payload: unknown) =>
      h.app.inject({
        method: 'POST',
        url: `${ORDER_PREFIX}${path}?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${token}` },
        payload: payload as object,
      }),
    get: (path: string, query: Record<string, string>) =>
      h.app.inject({
        method: 'GET',
        url: `${ORDER_PREFIX}${path}?${new URLSearchParams({ ...query, g_nonce: nonce() }).toString()}`,
        headers: { authorization: `Bearer ${token}` },
      }),
  };
}

export function expectFailure(
  response: { statusCode: number; json: () => unknown },
  code: string,
  message?: string,
): void {
  expect(response.statusCode).toBe(299);
  const body = response.json() as Envelope<unknown>;
  expect(body.code).toBe(code);
  if (message !== undefined) expect(body.message).toBe(message);
}

export function dataOf<T>(response: { statusCode: number; json: () => unknown }): T {
  const body = response.json() as Envelope<T>;
  expect(response.statusCode, JSON.stringify(body)).toBe(200);
  expect(body.code).toBe(0);
  expect(body.message).toBe('success');
  return body.data as T;
}

/** A customer as a `new_buy` order leaves it: in a channel, bound to no enterprise unless told. */
export async function seedCustomer(h: Harness, fields: Partial<NewCustomer>): Promise<CustomerRecord> {
  const customer = await new CustomersRepository(h.database.db).insertIfAbsent({
    id: newGlobalId(),
    channelCode: null,
    channelCustomerId: null,
    crmCustomerId: null,
    name: null,
    customerType: null,
    branchCode: null,
    branchName: null,
    address: null,
    securityMobile: null,
    enterpriseId: null,
    isDefault: false,
    gongxin: false,
    ...fields,
  });
  if (!customer) throw new Error('seed customer conflicted');
  return customer;
}

export async function seedAsset(
  h: Harness,
  customerId: string,
  licenseType: string,
  options: { revoked?: boolean; assetNum?: string } = {},
): Promise<{ id: string; assetNum: string }> {
  const id = newGlobalId();
  const assetNum = options.assetNum ?? `7${String(randomInt(1e9)).padStart(9, '0')}`;
  await h.database.db
    .insertInto('assets')
    .values({
      id,
      asset_num: assetNum,
      license_type: licenseType,
      customer_id: customerId,
      grantable: true,
      locked: false,
      freezing: false,
      borrowed_usb_key: false,
      transfered_asset_num: false,
      revoked: options.revoked ?? false,
    })
    .execute();
  return { id, assetNum };
}

export async function customerRow(h: Harness, id: string) {
  return h.database.db.selectFrom('customers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function enterpriseRow(h: Harness, globalId: string) {
  return h.database.db
    .selectFrom('enterprises')
    .selectAll()
    .where('global_id', '=', globalId)
    .executeTakeFirstOrThrow();
}

export async function membersOf(h: Harness, enterpriseGlobalId: string) {
  return h.database.db
    .selectFrom('members as m')
    .innerJoin('enterprises as e', 'e.id', 'm.enterprise_id')
    .select(['m.id', 'm.global_id', 'm.user_name', 'm.account', 'm.identity', 'm.password_hash', 'm.name'])
    .where('e.global_id', '=', enterpriseGlobalId)
    .orderBy('m.id')
    .execute();
}

export async function countEnterprisesNamed(h: Harness, name: string): Promise<number> {
  const rows = await h.database.db.selectFrom('enterprises').select('id').where('name', '=', name).execute();
  return rows.length;
}
