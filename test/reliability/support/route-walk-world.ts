import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { expect } from 'vitest';
import { CONSOLE_CLIENT_KEY } from '../../../src/domain/console/console-client.js';
import type { Access } from '../../../src/http/access/access.js';
import { RUNTIME_PREFIX, WEBHOOKS_PREFIX } from '../../../src/http/surface.js';
import { enterpriseClient } from '../../support/console-client.js';
import { appToken, userToken } from '../../support/fixtures.js';
import { nonce, uniqueCode, type Harness } from '../../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetWorld,
  buy,
  buyAsset,
  productSpec,
  type AssetWorld,
} from '../../support/order-fixtures.js';
import {
  memberTenantState,
  orderTenantState,
  runtimeTenantState,
  webhooksTenantState,
  type TenantState,
} from './tenant-state.js';

export interface Credentials {
  headers: Record<string, string>;
  /** The CSRF token of the caller's console session, for console forms. */
  csrf?: string;
}

export type WalkCaller = (access: Access) => Credentials;

/** The victim (A), the other tenant (B), and what each caller sends for a route's kind of access. */
export interface WalkWorld {
  a: AssetWorld;
  b: AssetWorld;
  /** A path parameter's name → the victim's object of that kind. */
  params: Record<string, string>;
  /** Everything of A's that an answer to someone else must not contain. */
  secrets: string[];
  callers: Record<'none' | 'plainMember' | 'otherAdmin' | 'wrongScope', WalkCaller>;
  appId: string;
  enterprise: { id: number; code: string };
}

const SCOPES = ['auth_order', 'auth_me', 'auth_runtime', 'auth_webhooks'];

/** A world with one of everything a route can name, owned by A. */
export async function buildWalkWorld(h: Harness): Promise<WalkWorld> {
  const [a, b] = [await assetWorld(h, SCOPES), await assetWorld(h, SCOPES)];
  const appId = (
    await h.database.db
      .selectFrom('apps')
      .select('id')
      .where('app_key', '=', a.app.appKey)
      .executeTakeFirstOrThrow()
  ).id;
  const enterprise = await h.database.db
    .selectFrom('enterprises')
    .select(['id', 'code'])
    .where('global_id', '=', a.enterpriseGlobalId)
    .executeTakeFirstOrThrow();

  // A's endpoint first, so the orders below raise deliveries to it.
  const endpointUrl = `https://hooks.example.com/${uniqueCode('walk-')}`;
  const endpoint = await h.app.inject({
    method: 'POST',
    url: `${WEBHOOKS_PREFIX}/endpoints?g_nonce=${nonce()}`,
    headers: { authorization: `Bearer ${a.token}` },
    payload: { url: endpointUrl },
  });
  expect(endpoint.json(), endpoint.body).toMatchObject({ code: 0 });
  const endpointData = (endpoint.json() as { data: { id: string; secret: string } }).data;

  const plain = await addMember(a);
  const product = productSpec({ productName: 'Secret Suite A', limitConcurrent: 5 });
  const assetNum = await buyAsset(a, [product]);
  const licenseOrderId = await buy(a, [{ products: [productSpec()] }], 'cloud_customer');
  const lease = await h.app.inject({
    method: 'POST',
    url: `${RUNTIME_PREFIX}/leases?g_nonce=${nonce()}`,
    headers: { authorization: `Bearer ${a.token}` },
    payload: {
      fingerprint: `fp-${randomBytes(8).toString('hex')}`,
      crmProductId: product.crmProductId,
      assetNum,
    },
  });
  expect(lease.json(), lease.body).toMatchObject({ code: 0 });
  const leaseId = (lease.json() as { data: { leaseId: string } }).data.leaseId;
  const delivery = await sql<{ id: string }>`
    select id::text as id from webhook_deliveries where endpoint_id = ${endpointData.id} limit 1
  `.execute(h.database.db);
  const deliveryId = delivery.rows[0]?.id;
  expect(deliveryId, 'a delivery to A’s endpoint').toBeDefined();

  const plainUser = await userToken(h, a.app, plain.account, plain.password);
  const adminUser = await userToken(h, a.app, a.admin.account, a.admin.password);
  const otherAdminUser = await userToken(h, b.app, b.admin.account, b.admin.password);
  const aConsole = await enterpriseClient(h, a.admin.account, a.admin.password);
  const bConsole = await enterpriseClient(h, b.admin.account, b.admin.password);
  const orderOnly = await appToken(h, a.app, 'auth_order');
  const meOnly = await appToken(h, a.app, 'auth_me');

  const names = await h.database.db
    .selectFrom('members')
    .select(['name', 'account', 'global_id'])
    .where('global_id', 'in', [a.admin.globalId, plain.globalId])
    .execute();

  const assetId = await assetIdOf(a, assetNum);
  return {
    a,
    b,
    appId,
    enterprise,
    params: {
      enterpriseGlobalId: a.enterpriseGlobalId,
      globalId: a.enterpriseGlobalId,
      memberGlobalId: plain.globalId,
      assetId,
      licenseOrderId,
      leaseId,
      endpointId: endpointData.id,
      deliveryId: deliveryId as string,
      appKey: a.app.appKey,
      name: 'console.css',
    },
    secrets: [
      a.enterpriseGlobalId,
      a.enterpriseCode,
      a.customerId,
      a.channelCustomerId,
      assetId,
      licenseOrderId,
      leaseId,
      'Secret Suite A',
      endpointUrl,
      endpointData.secret,
      ...names.flatMap((n) => [n.name ?? '', n.account, n.global_id]),
      // Every enterprise's administrator is named alike: that name tells nothing of A's.
    ].filter((s) => s !== '' && s !== 'Administrator'),
    callers: {
      none: () => ({ headers: {} }),
      // A member of A with nothing but his own user token: no app token of his own, no console.
      plainMember: (access): Credentials =>
        access.who === 'member'
          ? { headers: { authorization: `Bearer ${a.token}`, usertoken: plainUser } }
          : { headers: { authorization: `Bearer ${plainUser}`, usertoken: plainUser } },
      // B's administrator with everything B has: its app's token, his user token, his console.
      otherAdmin: () => ({
        headers: {
          authorization: `Bearer ${b.token}`,
          usertoken: otherAdminUser,
          cookie: bConsole.cookie,
        },
        csrf: bConsole.csrf,
      }),
      // A's own credentials of the wrong kind: a token without the route's scope, and, on the
      // operator's surfaces, A's administrator signed in to his console.
      wrongScope: (access): Credentials => {
        switch (access.who) {
          case 'app':
            return {
              headers: { authorization: `Bearer ${access.scope === 'auth_order' ? meOnly : orderOnly}` },
            };
          case 'runtime':
            return { headers: { authorization: `Bearer ${orderOnly}` } };
          case 'member':
            return { headers: { authorization: `Bearer ${orderOnly}`, usertoken: adminUser } };
          default:
            return {
              headers: { authorization: `Bearer ${a.token}`, usertoken: adminUser, cookie: aConsole.cookie },
              csrf: aConsole.csrf,
            };
        }
      },
    },
  };
}

/** Digests of A's data, its app's, and the platform's console client: what no refused call may change. */
export async function walkState(h: Harness, world: WalkWorld): Promise<TenantState> {
  const db = h.database.db;
  // The console's own client too: the walk has its database to itself (startIsolatedHarness).
  const watched = [world.a.app.appKey, world.b.app.appKey, CONSOLE_CLIENT_KEY];
  const apps = await sql<{ digest: string }>`
    select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest
      from apps t where app_key = any(${watched}::text[])
  `.execute(db);
  const deliveries = await sql<{ digest: string }>`
    select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest
      from webhook_deliveries t where endpoint_id in (select id from webhook_endpoints where app_id = ${world.appId})
  `.execute(db);
  const prefix = (state: TenantState, name: string) =>
    Object.fromEntries(Object.entries(state).map(([k, v]) => [`${name}.${k}`, v]));
  return {
    apps: apps.rows[0]?.digest ?? '',
    deliveries: deliveries.rows[0]?.digest ?? '',
    ...prefix(await orderTenantState(db, { appId: world.appId, channel: world.a.channel }), 'order'),
    ...prefix(await memberTenantState(db, world.enterprise), 'member'),
    ...prefix(await runtimeTenantState(db, world.appId), 'runtime'),
    ...prefix(await webhooksTenantState(db, world.appId), 'webhooks'),
  };
}
