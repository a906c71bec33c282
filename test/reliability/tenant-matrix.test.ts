import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/domain/shared/secrets.js';
import { ME_PREFIX, ORDER_PREFIX, WEBHOOKS_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp, passwordLogin, userToken } from '../support/fixtures.js';
import { nonce, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetWorld,
  assign,
  buy,
  buyAsset,
  buyLentLock,
  productSpec,
  type AssetWorld,
  type MemberSession,
} from '../support/order-fixtures.js';
import {
  changedTables,
  memberTenantState,
  orderTenantState,
  webhooksTenantState,
  type TenantState,
} from './support/tenant-state.js';

// Every operation of both services and of the webhooks API, called on one tenant's data by everyone
// who must not reach it: each caller gets its code, no answer carries the tenant's data, and nothing
// of it changes.
let h: Harness;
let a: AssetWorld;
let b: AssetWorld;
let plain: MemberSession;
let target: MemberSession;
let ids: {
  assetNum: string;
  /** A number order op 9 issued to A that A has not used yet. */
  issued: string;
  assetId: string;
  lentLock: string;
  licenseOrderId: string;
  crmCustomerId: string;
  /** A webhook endpoint of A's app. */
  endpointId: string;
};
/** Everything of A's an answer to someone else must not contain. */
let secrets: string[];
let before: { order: TenantState; member: TenantState; webhooks: TenantState };
let appId: string;

type Caller =
  'otherAdmin' | 'plainMember' | 'disabledApp' | 'noScope' | 'otherChannel' | 'revoked' | 'expired';
const CALLERS: Caller[] = [
  'otherAdmin',
  'plainMember',
  'disabledApp',
  'noScope',
  'otherChannel',
  'revoked',
  'expired',
];
let headersOf: Record<Caller, Record<string, string>>;
/** The order service's caller without its scope: an app with `auth_me` only. */
let orderNoScope: Record<string, string>;
/** The webhooks API's caller without its scope: A's own app, its token asked for `auth_order` only. */
let webhooksNoScope: Record<string, string>;

async function kill(token: string, column: 'expires_at' | 'revoked_at'): Promise<void> {
  const past = new Date(Date.now() - 1000);
  await h.database.db
    .updateTable('tokens')
    .set(column === 'expires_at' ? { expires_at: past } : { revoked_at: past })
    .where('token_hash', '=', sha256(token))
    .execute();
}

async function state() {
  const enterprise = await h.database.db
    .selectFrom('enterprises')
    .select(['id', 'code'])
    .where('global_id', '=', a.enterpriseGlobalId)
    .executeTakeFirstOrThrow();
  return {
    order: await orderTenantState(h.database.db, { appId, channel: a.channel }),
    member: await memberTenantState(h.database.db, enterprise),
    webhooks: await webhooksTenantState(h.database.db, appId),
  };
}

beforeAll(async () => {
  h = await startHarness();
  // Both apps have webhooks too: B's endpoints API is the one that must not reach A's endpoint.
  const scopes = ['auth_order', 'auth_me', 'auth_webhooks'];
  [a, b] = [await assetWorld(h, scopes), await assetWorld(h, scopes)];
  appId = (
    await h.database.db
      .selectFrom('apps')
      .select('id')
      .where('app_key', '=', a.app.appKey)
      .executeTakeFirstOrThrow()
  ).id;
  plain = await addMember(a);
  target = await addMember(a);
  const assetNum = await buyAsset(a, [productSpec({ productName: 'Secret Suite A' })]);
  const lentLock = await buyLentLock(a);
  await assign(a, target.globalId, [assetNum]);
  const licenseOrderId = await buy(a, [{ products: [productSpec()] }], 'cloud_customer');
  const crmCustomerId = uniqueCode('crm');
  const created = await a.order('POST', '/enterprise/user/create', {
    crmCustomerId,
    customerName: 'Crm Customer A',
  });
  expect(created.statusCode, created.body).toBe(200);
  const [issued] = await h.app.services.assetNumbers.issue(1, appId);
  const endpointUrl = `https://hooks.example.com/${uniqueCode('a-route-')}`;
  const endpoint = await h.app.inject({
    method: 'POST',
    url: `${WEBHOOKS_PREFIX}/endpoints?g_nonce=${nonce()}`,
    headers: { authorization: `Bearer ${a.token}` },
    payload: { url: endpointUrl, eventTypes: ['order.completed'] },
  });
  expect(endpoint.json(), endpoint.body).toMatchObject({ code: 0 });
  const endpointData = (endpoint.json() as { data: { id: string; secret: string } }).data;
  ids = {
    assetNum,
    issued: issued as string,
    assetId: await assetIdOf(a, assetNum),
    lentLock,
    licenseOrderId,
    crmCustomerId,
    endpointId: endpointData.id,
  };

  // The callers, each with what it would send: app token, user token, or both.
  const disabled = await createTestApp(h, { scopes, channels: [a.channel] });
  const disabledApp = await appToken(h, disabled);
  const disabledUser = await userToken(h, disabled, a.admin.account, a.admin.password);
  await h.app.services.apps.disable(disabled.appKey);
  const orderOnly = await createTestApp(h, { scopes: ['auth_order'] });
  const meOnly = await createTestApp(h, { scopes: ['auth_me'] });
  const revokedApp = await appToken(h, a.app);
  await kill(revokedApp, 'revoked_at');
  const expiredApp = await appToken(h, a.app);
  await kill(expiredApp, 'expires_at');
  // A member whose password is reset loses its sessions; its token is the revoked one.
  const revokedUser = await userToken(h, a.app, target.account, target.password);
  const reset = await a.admin.call(
    'PUT',
    `/enterprise/${a.enterpriseGlobalId}/member/${target.globalId}/resetPassword`,
    {
      password: 'Another-pass2',
    },
  );
  expect(reset.statusCode, reset.body).toBe(200);
  const expiredUser = await userToken(h, a.app, a.admin.account, a.admin.password);
  await kill(expiredUser, 'expires_at');
  const adminUser = await userToken(h, a.app, a.admin.account, a.admin.password);
  const plainUser = await userToken(h, a.app, plain.account, plain.password);
  const otherAdmin = await userToken(h, b.app, b.admin.account, b.admin.password);

  headersOf = {
    otherAdmin: { authorization: `Bearer ${b.token}`, usertoken: otherAdmin },
    plainMember: { authorization: `Bearer ${a.token}`, usertoken: plainUser },
    disabledApp: { authorization: `Bearer ${disabledApp}`, usertoken: disabledUser },
    noScope: { authorization: `Bearer ${await appToken(h, orderOnly)}`, usertoken: adminUser },
    otherChannel: { authorization: `Bearer ${b.token}`, usertoken: adminUser },
    revoked: { authorization: `Bearer ${revokedApp}`, usertoken: revokedUser },
    expired: { authorization: `Bearer ${expiredApp}`, usertoken: expiredUser },
  };
  orderNoScope = { authorization: `Bearer ${await appToken(h, meOnly)}` };
  webhooksNoScope = { authorization: `Bearer ${await appToken(h, a.app, 'auth_order')}` };

  const names = await h.database.db
    .selectFrom('members')
    .select(['name', 'account', 'global_id'])
    .where('global_id', 'in', [a.admin.globalId, plain.globalId, target.globalId])
    .execute();
  secrets = [
    a.enterpriseGlobalId,
    a.enterpriseCode,
    a.customerId,
    a.channelCustomerId,
    ids.assetId,
    ids.lentLock,
    ids.licenseOrderId,
    'Secret Suite A',
    'Lending Ltd',
    'Crm Customer A',
    endpointUrl,
    endpointData.secret,
    ...names.flatMap((n) => [n.name ?? '', n.account, n.global_id]),
  ].filter((s) => s !== '');
  before = await state();
});
afterAll(async () => h.close());

type Surface = 'order' | 'me' | 'webhooks';

interface Operation {
  name: string;
  surface: Surface;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: () => string;
  payload?: () => unknown;
  /** Codes by caller where they differ from the surface's default. */
  codes?: Partial<Record<Caller, string | number>>;
}

const orderOps: Operation[] = [
  {
    name: 'bind a customer in A’s channel',
    surface: 'order',
    method: 'POST',
    path: () => '/enterprise/user/bind',
    payload: () => ({ channelCode: a.channel, channelCustomerId: a.channelCustomerId, enterpriseName: 'X' }),
    codes: { otherChannel: '60000' },
  },
  {
    name: 'query A’s enterprise',
    surface: 'order',
    method: 'GET',
    path: () => `/enterprise/user/query?channelCode=${a.channel}&channelCustomerId=${a.channelCustomerId}`,
    codes: { otherChannel: '60000' },
  },
  {
    name: 'update A’s CRM customer',
    surface: 'order',
    method: 'POST',
    path: () => '/enterprise/user/update',
    payload: () => ({ crmCustomerId: ids.crmCustomerId, customerName: 'Taken over' }),
    codes: { otherChannel: '13004' },
  },
  {
    name: 'obtain asset numbers',
    surface: 'order',
    method: 'POST',
    path: () => '/shellnums',
    payload: () => ({ size: 1 }),
    // Numbers are no tenant's data: another channel's app simply gets its own.
    codes: { otherChannel: 0 },
  },
  {
    name: 'order in A’s channel',
    surface: 'order',
    method: 'POST',
    path: () => `/licenseOrder/batchOrder?appKey=${b.app.appKey}`,
    payload: () => ({
      channelCode: a.channel,
      channelOrderId: uniqueCode('CO'),
      syncMode: 'sync',
      orderList: [
        {
          sequence: 1,
          customerId: a.customerId,
          licenseType: 'softkey',
          orderType: 'delete_asset',
          assets: [{ assetNos: [ids.assetNum] }],
        },
      ],
    }),
    codes: { otherChannel: '60000' },
  },
  {
    name: 'revoke A’s asset from another channel',
    surface: 'order',
    method: 'POST',
    path: () => `/licenseOrder/batchOrder?appKey=${b.app.appKey}`,
    payload: () => ({
      channelCode: b.channel,
      channelOrderId: uniqueCode('CO'),
      syncMode: 'sync',
      orderList: [
        {
          sequence: 1,
          customerId: a.customerId,
          licenseType: 'normal_recover_usbkey',
          orderType: 'delete_asset',
          assets: [{ assetNos: [ids.assetNum] }],
        },
      ],
    }),
    codes: { otherChannel: '13004' },
  },
  {
    name: 'buy the number op 9 issued to A',
    surface: 'order',
    method: 'POST',
    path: () => `/licenseOrder/batchOrder?appKey=${b.app.appKey}`,
    payload: () => ({
      channelCode: b.channel,
      channelOrderId: uniqueCode('CO'),
      syncMode: 'sync',
      orderList: [
        {
          sequence: 1,
          channelCustomerId: uniqueCode('cc'),
          licenseType: 'normal_recover_usbkey',
          orderType: 'new_buy',
          assets: [{ assetNos: [ids.issued], products: [productSpec()] }],
        },
      ],
    }),
    codes: { otherChannel: '13004' },
  },
  {
    name: 'look up A’s license order',
    surface: 'order',
    method: 'GET',
    path: () => `/licenseOrder/${ids.licenseOrderId}`,
    codes: { otherChannel: '13004' },
  },
  {
    name: 'disable A’s locks',
    surface: 'order',
    method: 'POST',
    path: () => '/asset/lock',
    payload: () => ({ assetNums: [ids.assetNum, ids.lentLock], operatorIdentity: 'intruder' }),
    codes: { otherChannel: 0 },
  },
  {
    name: 'enable A’s locks',
    surface: 'order',
    method: 'POST',
    path: () => '/asset/unlock',
    payload: () => ({ assetNums: [ids.assetNum, ids.lentLock], operatorIdentity: 'intruder' }),
    codes: { otherChannel: 0 },
  },
  {
    name: 'list A’s enterprise assets',
    surface: 'order',
    method: 'GET',
    path: () => `/asset/${a.enterpriseGlobalId}/list`,
    codes: { otherChannel: '13004' },
  },
];

const memberOps: Operation[] = [
  {
    name: 'add members to A',
    surface: 'me',
    method: 'POST',
    path: () => `/enterprise/${a.enterpriseGlobalId}/member`,
    payload: () => ({
      userList: [{ userName: 'intruder', password: 'Intruder-1', name: 'I', departmentId: 1 }],
    }),
  },
  {
    name: 'edit A’s member',
    surface: 'me',
    method: 'PUT',
    path: () => `/enterprise/${a.enterpriseGlobalId}/member/${target.globalId}`,
    payload: () => ({ name: 'Renamed' }),
  },
  {
    name: 'reset the password of A’s member',
    surface: 'me',
    method: 'PUT',
    path: () => `/enterprise/${a.enterpriseGlobalId}/member/${target.globalId}/resetPassword`,
    payload: () => ({ password: 'Stolen-pass1' }),
  },
  {
    name: 'delete A’s member',
    surface: 'me',
    method: 'DELETE',
    path: () => `/enterprise/${a.enterpriseGlobalId}/member/${target.globalId}`,
  },
  {
    name: 'list A’s members',
    surface: 'me',
    method: 'GET',
    path: () => `/enterprise/${a.enterpriseGlobalId}/members`,
  },
  {
    name: 'list A’s asset numbers',
    surface: 'me',
    method: 'GET',
    path: () => `/enterprise/${a.enterpriseGlobalId}/asset/assetNums`,
  },
  {
    name: 'list the products of A’s asset',
    surface: 'me',
    method: 'GET',
    path: () => `/enterprise/asset/${ids.assetId}/merchandiseProducts`,
    codes: { otherAdmin: '60024' },
  },
  {
    name: 'list A’s lent locks',
    surface: 'me',
    method: 'GET',
    path: () => `/enterprise/${a.enterpriseGlobalId}/asset/borrowUsbKeys`,
  },
  {
    name: 'configure the assets of A’s member',
    surface: 'me',
    method: 'POST',
    path: () => `/enterprise/member/${target.globalId}/privileges`,
    payload: () => ({ deleteAssets: [ids.assetNum] }),
    codes: { otherAdmin: '60026' },
  },
  {
    name: 'lend the assets of A’s member',
    surface: 'me',
    method: 'POST',
    path: () => `/enterprise/member/${target.globalId}/borrow`,
    payload: () => ({ borrowedUsbKey: ids.lentLock, assetIDs: [ids.assetId] }),
    codes: { otherAdmin: '60026' },
  },
  {
    name: 'return what A’s member lent',
    surface: 'me',
    method: 'POST',
    path: () => `/enterprise/member/${target.globalId}/return`,
    payload: () => ({ borrowedUsbKey: ids.lentLock }),
    codes: { otherAdmin: '60026' },
  },
];

/** Another app's endpoint is answered exactly as one that does not exist: 95001. */
const webhookOps: Operation[] = [
  {
    name: 'get A’s endpoint',
    surface: 'webhooks',
    method: 'GET',
    path: () => `/endpoints/${ids.endpointId}`,
  },
  {
    name: 'list endpoints',
    surface: 'webhooks',
    method: 'GET',
    path: () => '/endpoints',
    // Another app lists its own endpoints: none of A's is among them (no answer carries its url).
    codes: { otherChannel: 0 },
  },
  {
    name: 'change A’s endpoint',
    surface: 'webhooks',
    method: 'PATCH',
    path: () => `/endpoints/${ids.endpointId}`,
    payload: () => ({ url: 'https://intruder.example/hook', eventTypes: null, enabled: true }),
  },
  {
    name: 'rotate the secret of A’s endpoint',
    surface: 'webhooks',
    method: 'POST',
    path: () => `/endpoints/${ids.endpointId}/rotate-secret`,
    payload: () => ({ overlapSeconds: 0 }),
  },
  {
    name: 'delete A’s endpoint',
    surface: 'webhooks',
    method: 'DELETE',
    path: () => `/endpoints/${ids.endpointId}`,
  },
];

/** What each caller gets from a surface unless the operation says otherwise. */
const DEFAULTS: Record<Surface, Record<Caller, string | undefined>> = {
  // The order service knows apps only: the member callers do not apply to it.
  order: {
    otherAdmin: undefined,
    plainMember: undefined,
    disabledApp: '60000',
    noScope: '60000',
    otherChannel: undefined,
    revoked: '60000',
    expired: '60000',
  },
  me: {
    // A path naming A's enterprise is refused at the guard; other paths find nothing of A's.
    otherAdmin: '70001',
    plainMember: '33003',
    disabledApp: '60000',
    noScope: '60000',
    // A's administrator's session, carried by another app: the user token is not that app's.
    otherChannel: '70001',
    revoked: '60005',
    expired: '60005',
  },
  // The webhooks API knows apps only; another app with the scope finds no endpoint of A's.
  webhooks: {
    otherAdmin: undefined,
    plainMember: undefined,
    disabledApp: '60000',
    noScope: '60000',
    otherChannel: '95001',
    revoked: '60000',
    expired: '60000',
  },
};

function headers(op: Operation, caller: Caller): Record<string, string> {
  const given = headersOf[caller];
  if (op.surface === 'webhooks' && caller === 'noScope') return webhooksNoScope;
  if (op.surface === 'order' || op.surface === 'webhooks') {
    if (caller === 'noScope') return orderNoScope;
    return { authorization: given.authorization as string };
  }
  // Revoked and expired user tokens travel with a live app token, so the user token is judged.
  if (caller === 'revoked' || caller === 'expired') {
    return { authorization: `Bearer ${a.token}`, usertoken: given.usertoken as string };
  }
  return given;
}

const PREFIX: Record<Surface, string> = { order: ORDER_PREFIX, me: ME_PREFIX, webhooks: WEBHOOKS_PREFIX };

const cases = [...orderOps, ...memberOps, ...webhookOps].flatMap((op) =>
  CALLERS.map((caller) => ({
    op,
    caller,
    expected: op.codes?.[caller] ?? DEFAULTS[op.surface][caller],
  })).filter((c) => c.expected !== undefined),
);

describe('tenant isolation: every operation against everyone who must not reach A', () => {
  it.each(cases.map((c) => [c.op.name, c.caller, c] as const))('%s, as %s', async (_name, _caller, c) => {
    const { op, caller, expected } = c;
    const path = op.path();
    const response = await h.app.inject({
      method: op.method,
      url: `${PREFIX[op.surface]}${path}${path.includes('?') ? '&' : '?'}g_nonce=${nonce()}`,
      headers: headers(op, caller),
      ...(op.payload ? { payload: op.payload() as object } : {}),
    });
    const body = response.json() as { code: unknown; data?: unknown };
    expect(body.code, response.body).toBe(expected);
    // Nothing of A's that the caller did not send itself may come back.
    const sent = `${path} ${JSON.stringify(op.payload?.() ?? '')}`;
    for (const secret of secrets) {
      if (!sent.includes(secret)) expect(response.body, `leaks ${secret}`).not.toContain(secret);
    }
  });

  it('leaves all of A’s data as it was', async () => {
    const after = await state();
    expect(changedTables(before.order, after.order)).toEqual([]);
    expect(changedTables(before.member, after.member)).toEqual([]);
    expect(changedTables(before.webhooks, after.webhooks)).toEqual([]);
  });
});

describe('guessing a password', () => {
  it('slows and then locks out an account, even for the right password', async () => {
    const login = (password: string) =>
      h.app.inject({
        method: 'POST',
        url: '/oauth2/token',
        payload: {
          grant_type: 'password',
          client_id: a.app.appKey,
          client_secret: a.app.appSecret,
          username: plain.account,
          password,
        },
      });
    const describe = async (password: string) =>
      ((await login(password)).json() as { error_description?: string }).error_description;
    // Time passing is simulated: each wait the account was given is over before the next guess.
    const waitOut = () =>
      h.database.db
        .updateTable('login_source_attempts')
        .set({ locked_until: new Date(Date.now() - 1000) })
        .where('account', '=', plain.account.toLowerCase())
        .execute();
    for (let i = 0; i < 3; i += 1)
      expect(await describe(`wrong-${i}-guess`)).toBe('wrong account or password');
    // Slowed: the fourth guess, straight after the third, is refused without being checked.
    expect(await describe(plain.password)).toMatch(/too many failed attempts/);
    for (let i = 3; i < 5; i += 1) {
      await waitOut();
      expect(await describe(`wrong-${i}-guess`)).toBe('wrong account or password');
    }
    // Locked: the right password is refused for the next quarter of an hour.
    const row = await h.database.db
      .selectFrom('login_source_attempts')
      .select('locked_until')
      .where('account', '=', plain.account.toLowerCase())
      .executeTakeFirstOrThrow();
    expect((row.locked_until?.getTime() ?? 0) - Date.now()).toBeGreaterThan(14 * 60_000);
    const right = await login(plain.password);
    expect(right.statusCode).toBe(400);
    expect(right.json()).toMatchObject({ error: 'invalid_grant' });
    expect(right.body).not.toContain('access_token');
  });

  it('keeps another tenant’s guesses from locking A’s administrator out of A’s own app', async () => {
    const login = (client: { appKey: string; appSecret: string }, password: string) =>
      passwordLogin(h, client, a.admin.account, password);
    // B's app, from the same address as A's console, guesses until it is locked.
    for (let i = 0; i < 5; i += 1) {
      await h.database.db
        .updateTable('login_source_attempts')
        .set({ locked_until: new Date(Date.now() - 1000) })
        .where('account', '=', a.admin.account.toLowerCase())
        .execute();
      expect((await login(b.app, `wrong-${i}-guess`)).statusCode).toBe(400);
    }
    expect((await login(b.app, a.admin.password)).json()).toMatchObject({
      error_description: 'too many failed attempts; try again later',
    });
    const own = await login(a.app, a.admin.password);
    expect(own.statusCode, own.body).toBe(200);
  });
});
