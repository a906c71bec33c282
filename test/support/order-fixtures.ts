import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { ME_PREFIX, ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp, userToken, type TestApp } from './fixtures.js';
import { ADMIN_KEY, nonce, uniqueCode, type Harness } from './harness.js';

// An enterprise built the way a channel builds one: bound with order op 1, its assets bought
// with batchOrder, its administrator's password set through the admin API. Nothing is written
// to the tables directly, so member-center tests see what real orders leave behind.

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

export type Call = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  payload?: unknown,
) => Promise<Reply>;

export interface MemberSession {
  globalId: string;
  account: string;
  password: string;
  /** Member-center calls as this member, each with a fresh nonce. */
  call: Call;
}

export interface AssetWorld {
  h: Harness;
  /** One app with both scopes: the channel's order system and the enterprise console. */
  app: TestApp;
  token: string;
  channel: string;
  channelCustomerId: string;
  customerId: string;
  enterpriseGlobalId: string;
  enterpriseCode: string;
  admin: MemberSession;
  /** Order-service calls of the app, each with a fresh nonce. */
  order: Call;
}

export function assetNo(prefix = 'A'): string {
  return `${prefix}${randomBytes(6).toString('hex')}`;
}

export function productSpec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    crmProductId: uniqueCode('P'),
    productUri: 'gms-2001',
    productName: 'Modeler',
    gmsPid: 'gms-2001',
    productType: 'tool',
    limitStartDate: 1_700_000_000_000,
    // Far off (2096): servers on the shared test database send license.expiring as an end nears,
    // and a suite's licenses must not start raising notices as the calendar moves on.
    limitEndDate: 4_000_000_000_000,
    limitConcurrent: 3,
    ...overrides,
  };
}

function caller(h: Harness, prefix: string, headers: Record<string, string>): Call {
  return (method, path, payload) =>
    h.app.inject({
      method,
      url: `${prefix}${path}${path.includes('?') ? '&' : '?'}g_nonce=${nonce()}`,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}

export function memberCaller(h: Harness, world: { token: string }, userTok: string): Call {
  return caller(h, ME_PREFIX, { authorization: `Bearer ${world.token}`, usertoken: userTok });
}

export function okData<T>(response: Reply): T {
  const body = response.json() as { code: unknown; message: string; data: T };
  expect(response.statusCode, response.body).toBe(200);
  expect(body.code).toBe(0);
  return body.data;
}

/** An admin API call with the admin key that must succeed: its answer. */
export async function adminCall(
  h: Harness,
  method: 'GET' | 'POST',
  url: string,
  payload?: object,
): Promise<unknown> {
  const response = await h.app.inject({
    method,
    url: `/admin${url}`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    ...(payload === undefined ? {} : { payload }),
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** A fresh enterprise bound to a fresh channel customer, with a logged-in administrator. */
export async function assetWorld(
  h: Harness,
  scopes: string[] = ['auth_order', 'auth_me'],
): Promise<AssetWorld> {
  const app = await createTestApp(h, { scopes });
  const token = await appToken(h, app);
  const channel = app.channels[0] as string;
  const order = caller(h, ORDER_PREFIX, { authorization: `Bearer ${token}` });
  const channelCustomerId = uniqueCode('cc');
  const bound = okData<{ customerId: string; enterpriseGlobalId: string }>(
    await order('POST', '/enterprise/user/bind', {
      channelCode: channel,
      channelCustomerId,
      customerName: 'Lending Ltd',
      enterpriseName: 'Lending Ltd',
    }),
  );
  const shown = (await adminCall(h, 'GET', `/enterprises/${bound.enterpriseGlobalId}`)) as {
    enterpriseCode: string;
    adminAccount: string;
  };
  const password = 'Admin-pass1';
  const set = (await adminCall(h, 'POST', '/members/password', {
    account: shown.adminAccount,
    password,
  })) as { memberGlobalId: string };
  const world = { token };
  const adminToken = await userToken(h, app, shown.adminAccount, password);
  return {
    h,
    app,
    token,
    channel,
    channelCustomerId,
    customerId: bound.customerId,
    enterpriseGlobalId: bound.enterpriseGlobalId,
    enterpriseCode: shown.enterpriseCode,
    admin: {
      globalId: set.memberGlobalId,
      account: shown.adminAccount,
      password,
      call: memberCaller(h, world, adminToken),
    },
    order,
  };
}

export interface AssetSpec {
  assetNos?: string[];
  borrowedUsbKey?: boolean;
  products?: unknown[];
  merchandises?: unknown[];
}

/** One sync new_buy for the world's customer; answers its license order id. */
export async function buy(
  world: AssetWorld,
  assets: AssetSpec[],
  licenseType = 'normal_recover_usbkey',
): Promise<string> {
  const data = okData<Array<{ licenseOrderId: string }>>(
    await world.h.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/licenseOrder/batchOrder?appKey=${world.app.appKey}&g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${world.token}` },
      payload: {
        channelCode: world.channel,
        channelOrderId: uniqueCode('CO'),
        syncMode: 'sync',
        orderList: [
          {
            sequence: 1,
            channelCustomerId: world.channelCustomerId,
            licenseType,
            orderType: 'new_buy',
            assets,
          },
        ],
      },
    }),
  );
  return (data[0] as { licenseOrderId: string }).licenseOrderId;
}

/** An asset with the given products (one by default); answers its number. */
export async function buyAsset(world: AssetWorld, products: unknown[] = [productSpec()]): Promise<string> {
  const num = assetNo('A');
  await buy(world, [{ assetNos: [num], products }]);
  return num;
}

/** A lent lock (a refillable lock with borrowedUsbKey) holding one product of its own. */
export async function buyLentLock(world: AssetWorld): Promise<string> {
  const num = assetNo('L');
  await buy(world, [
    { assetNos: [num], borrowedUsbKey: true, products: [productSpec({ productName: 'Own' })] },
  ]);
  return num;
}

/** Asset number → asset id, from member op 6. */
export async function assetIds(world: AssetWorld): Promise<Map<string, string>> {
  const items = okData<Array<{ assetNum: string; assetId: string }>>(
    await world.admin.call('GET', `/enterprise/${world.enterpriseGlobalId}/asset/assetNums`),
  );
  return new Map(items.map((i) => [i.assetNum, i.assetId]));
}

export async function assetIdOf(world: AssetWorld, assetNum: string): Promise<string> {
  const id = (await assetIds(world)).get(assetNum);
  if (id === undefined) throw new Error(`asset ${assetNum} is not listed`);
  return id;
}

/** A plain member added with member op 1 and logged in. */
export async function addMember(world: AssetWorld): Promise<MemberSession> {
  const userName = uniqueCode('m');
  const password = 'Member-pass1';
  const data = okData<{ succeeded: Array<{ globalId: string; userName: string }> }>(
    await world.admin.call('POST', `/enterprise/${world.enterpriseGlobalId}/member`, {
      userList: [{ userName, password, name: userName, departmentId: 1 }],
    }),
  );
  const added = data.succeeded[0] as { globalId: string; userName: string };
  const token = await userToken(world.h, world.app, added.userName, password);
  return {
    globalId: added.globalId,
    account: added.userName,
    password,
    call: memberCaller(world.h, world, token),
  };
}

export function privileges(world: AssetWorld, memberGlobalId: string, body: unknown): Promise<Reply> {
  return world.admin.call('POST', `/enterprise/member/${memberGlobalId}/privileges`, body);
}

/** Assigns asset numbers to a member with member op 9; must succeed. */
export async function assign(world: AssetWorld, memberGlobalId: string, addAssets: string[]): Promise<void> {
  okData(await privileges(world, memberGlobalId, { addAssets }));
}

export function borrow(
  session: MemberSession,
  memberGlobalId: string,
  borrowedUsbKey: string,
  assetIDs: string[],
): Promise<Reply> {
  return session.call('POST', `/enterprise/member/${memberGlobalId}/borrow`, { borrowedUsbKey, assetIDs });
}

export function giveBack(
  session: MemberSession,
  memberGlobalId: string,
  borrowedUsbKey: string,
): Promise<Reply> {
  return session.call('POST', `/enterprise/member/${memberGlobalId}/return`, { borrowedUsbKey });
}

export interface LentLockItem {
  assetId: string;
  assetNum: string;
  borrowedFlag: boolean;
  cloudAccountGlobalId: string | null;
}

export interface AssetNumItem {
  assetNum: string;
  assetId: string;
  cloudAccountGlobalId: string | null;
  borrowedFlag: boolean;
  onlineFlag: boolean;
}

export async function listAssetNums(world: AssetWorld): Promise<AssetNumItem[]> {
  return okData(await world.admin.call('GET', `/enterprise/${world.enterpriseGlobalId}/asset/assetNums`));
}

export async function listLentLocks(world: AssetWorld): Promise<LentLockItem[]> {
  return okData(await world.admin.call('GET', `/enterprise/${world.enterpriseGlobalId}/asset/borrowUsbKeys`));
}

export interface ProductItem {
  id: string;
  assetId: string | null;
  assetNum: string | null;
  productName: string;
  crmProductId: string;
  limitConcurrent: number | null;
  limitAmount: number | null;
  merchandiseInsId: string | null;
}

export interface MerchandiseItem {
  id: string;
  merchandiseNum: string;
  parentId: string | null;
  children: MerchandiseItem[] | null;
  productInstanceList: ProductItem[] | null;
}

export interface AssetProducts {
  productInstanceList: ProductItem[];
  children: MerchandiseItem[];
}

export async function productsUnder(world: AssetWorld, assetId: string): Promise<AssetProducts> {
  return okData(await world.admin.call('GET', `/enterprise/asset/${assetId}/merchandiseProducts`));
}

/** Every product name in op 7's answer, merchandise included, sorted. */
export function productNames(view: AssetProducts): string[] {
  const names = view.productInstanceList.map((p) => p.productName);
  const stack = [...view.children];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    names.push(...(node.productInstanceList ?? []).map((p) => p.productName));
    stack.push(...(node.children ?? []));
  }
  return names.sort();
}

/** Order op 6 or 7 on these numbers; answers each lock's status. */
export async function setLocked(world: AssetWorld, assetNums: string[], locked: boolean): Promise<number[]> {
  const data = okData<Array<{ status: number }>>(
    await world.order('POST', locked ? '/asset/lock' : '/asset/unlock', {
      assetNums,
      operatorIdentity: 'ops@example.com',
    }),
  );
  return data.map((d) => d.status);
}

/** A revocation order (delete_asset or delete_product) for the world's customer; must succeed. */
export async function revoke(
  world: AssetWorld,
  orderType: 'delete_asset' | 'delete_product',
  assets: unknown[],
): Promise<void> {
  okData(
    await world.h.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/licenseOrder/batchOrder?appKey=${world.app.appKey}&g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${world.token}` },
      payload: {
        channelCode: world.channel,
        channelOrderId: uniqueCode('CO'),
        syncMode: 'sync',
        orderList: [
          {
            sequence: 1,
            channelCustomerId: world.channelCustomerId,
            licenseType: 'normal_recover_usbkey',
            orderType,
            assets,
          },
        ],
      },
    }),
  );
}
