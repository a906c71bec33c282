import { randomBytes } from 'node:crypto';

// Plain HTTP calls to a running `keyward serve`, for tests of real processes and for the soak
// run. No retries and no token renewal: what the server answers is what the caller sees.

export const ORDER = '/order/api/order/v1';
export const ME = '/me/api/v1';
export const RUNTIME = '/runtime/v1';

export const freshNonce = (): string => randomBytes(12).toString('base64url');
export const freshId = (prefix: string): string => `${prefix}${randomBytes(6).toString('hex')}`;

export interface Answer<T = unknown> {
  status: number;
  code: number | string | undefined;
  data: T;
  body: string;
}

export interface CallOptions {
  headers?: Record<string, string>;
  body?: unknown;
  /** Abort after this long: a server that hangs fails the call instead of the test run. */
  timeoutMs?: number;
}

/** One call; `path` may carry a query, to which a fresh g_nonce is added. */
export async function call<T = unknown>(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Answer<T>> {
  const url = `${base}${path}${path.includes('?') ? '&' : '?'}g_nonce=${freshNonce()}`;
  const response = await fetch(url, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const body = await response.text();
  let parsed: { code?: number | string; data?: T } = {};
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    // not JSON: the caller looks at `body`
  }
  return { status: response.status, code: parsed.code, data: parsed.data as T, body };
}

/** Throws unless the answer is a success envelope; returns its data. */
export function okData<T>(answer: Answer<T>): T {
  if (answer.status !== 200 || answer.code !== 0) throw new Error(`expected success, got ${answer.body}`);
  return answer.data;
}

export interface LiveApp {
  appKey: string;
  appSecret: string;
  channel: string;
}

export async function adminCall<T>(
  base: string,
  adminKey: string,
  method: string,
  path: string,
  body?: unknown,
) {
  const response = await fetch(`${base}/admin${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`admin ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/**
 * A new application on a channel of its own, as `keyward app create` makes it: both services'
 * scopes unless `scopes` names others (the soak adds auth_runtime).
 */
export async function createApp(
  base: string,
  adminKey: string,
  scopes: readonly string[] = ['auth_order', 'auth_me'],
): Promise<LiveApp> {
  const channel = freshId('CH');
  const app = await adminCall<{ appKey: string; appSecret: string }>(base, adminKey, 'POST', '/apps', {
    name: 'reliability',
    scopes,
    channels: [channel],
  });
  return { appKey: app.appKey, appSecret: app.appSecret, channel };
}

async function grant(base: string, app: LiveApp, fields: Record<string, string>): Promise<string> {
  const response = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${app.appKey}:${app.appSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`token: ${response.status} ${text}`);
  return (JSON.parse(text) as { access_token: string }).access_token;
}

export const appToken = (base: string, app: LiveApp) =>
  grant(base, app, { grant_type: 'client_credentials' });

export const memberToken = (base: string, app: LiveApp, account: string, password: string) =>
  grant(base, app, { grant_type: 'password', username: account, password });

export const orderHeaders = (token: string) => ({ authorization: `Bearer ${token}` });
export const memberHeaders = (token: string, user: string) => ({
  authorization: `Bearer ${token}`,
  usertoken: user,
});

export interface LiveEnterprise {
  enterpriseGlobalId: string;
  customerId: string;
  channelCustomerId: string;
  adminAccount: string;
  adminPassword: string;
  adminToken: string;
}

/**
 * An enterprise as a channel builds one: bound with order op 1, its administrator's password set
 * through the admin API, logged in through `app`.
 */
export async function createEnterprise(
  base: string,
  adminKey: string,
  app: LiveApp,
  token: string,
): Promise<LiveEnterprise> {
  const channelCustomerId = freshId('cc');
  const bound = okData(
    await call<{ customerId: string; enterpriseGlobalId: string }>(
      base,
      'POST',
      `${ORDER}/enterprise/user/bind`,
      {
        headers: orderHeaders(token),
        body: {
          channelCode: app.channel,
          channelCustomerId,
          customerName: 'Live Ltd',
          enterpriseName: 'Live Ltd',
        },
      },
    ),
  );
  const shown = await adminCall<{ adminAccount: string }>(
    base,
    adminKey,
    'GET',
    `/enterprises/${bound.enterpriseGlobalId}`,
  );
  const adminPassword = 'Admin-pass1';
  await adminCall(base, adminKey, 'POST', '/members/password', {
    account: shown.adminAccount,
    password: adminPassword,
  });
  return {
    enterpriseGlobalId: bound.enterpriseGlobalId,
    customerId: bound.customerId,
    channelCustomerId,
    adminAccount: shown.adminAccount,
    adminPassword,
    adminToken: await memberToken(base, app, shown.adminAccount, adminPassword),
  };
}

export interface LiveMember {
  globalId: string;
  account: string;
  password: string;
}

/** Plain members added with member op 1. */
export async function addMembers(
  base: string,
  token: string,
  enterprise: LiveEnterprise,
  count: number,
): Promise<LiveMember[]> {
  const password = 'Member-pass1';
  const userList = Array.from({ length: count }, () => {
    const userName = freshId('m');
    return { userName, password, name: userName, departmentId: 1 };
  });
  const data = okData(
    await call<{ succeeded: Array<{ globalId: string; userName: string }> }>(
      base,
      'POST',
      `${ME}/enterprise/${enterprise.enterpriseGlobalId}/member`,
      { headers: memberHeaders(token, enterprise.adminToken), body: { userList } },
    ),
  );
  return data.succeeded.map((m) => ({ globalId: m.globalId, account: m.userName, password }));
}

/** A product line of an order; `overrides` replaces or adds fields (limits such as limitAmount). */
export function product(name = 'Designer', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    crmProductId: freshId('P'),
    productUri: 'gms-1001',
    productName: name,
    gmsPid: 'gms-1001',
    productType: 'tool',
    limitStartDate: 1_700_000_000_000,
    limitEndDate: 4_000_000_000_000,
    limitConcurrent: 5,
    ...overrides,
  };
}

/**
 * A batch of `orders` new purchases for one channel customer, each of `assets` locks carrying
 * `products()` (by default a Designer and a Viewer).
 */
export function purchaseBatch(
  app: LiveApp,
  options: {
    channelCustomerId?: string;
    orders?: number;
    assets?: number;
    syncMode?: 'sync' | 'async';
    products?: () => Array<Record<string, unknown>>;
  } = {},
): { body: Record<string, unknown>; assetNums: string[] } {
  const assetNums: string[] = [];
  const channelCustomerId = options.channelCustomerId ?? freshId('cc');
  const orderList = Array.from({ length: options.orders ?? 1 }, (_, i) => ({
    sequence: i + 1,
    channelCustomerId,
    customerName: 'Live Buyer',
    customerType: 'company',
    licenseType: 'normal_recover_usbkey',
    orderType: 'new_buy',
    assets: Array.from({ length: options.assets ?? 1 }, () => {
      const num = freshId('R');
      assetNums.push(num);
      return { assetNos: [num], products: options.products?.() ?? [product(), product('Viewer')] };
    }),
  }));
  return {
    body: {
      channelCode: app.channel,
      channelOrderId: freshId('CO'),
      syncMode: options.syncMode ?? 'sync',
      orderList,
    },
    assetNums,
  };
}

export function postBatch(base: string, app: LiveApp, token: string, body: unknown, timeoutMs?: number) {
  return call<Array<{ sequence: number; licenseOrderId: string; customerId: string }>>(
    base,
    'POST',
    `${ORDER}/licenseOrder/batchOrder?appKey=${app.appKey}`,
    { headers: orderHeaders(token), body, ...(timeoutMs === undefined ? {} : { timeoutMs }) },
  );
}
