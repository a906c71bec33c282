import fc from 'fast-check';
import { sql } from 'kysely';
import { CONSOLE_CLIENT_KEY } from '../../../src/domain/console/console-client.js';
import { WEBHOOKS_PREFIX } from '../../../src/http/surface.js';
import { appIdOf } from '../../http/audit-helpers.js';
import { nonce, uniqueCode, type Harness } from '../../support/harness.js';
import { adminCall, assetWorld, buyAsset, type AssetWorld } from '../../support/order-fixtures.js';
import type { Hints } from './schema-arbitrary.js';
import { adminTenantState, type AdminScope, type TenantState } from './tenant-state.js';

// What the admin fuzzer aims at: two tenants (A and B, each an app with an enterprise, an asset, a
// webhook endpoint and a delivery) and operators, the fuzzer's own among them. Path parameters and
// fields take their ids, each other's, and ids that name nothing.

export interface AdminWorld {
  /** The fuzzer's personal token: an owner's, so every route is open to it. */
  token: string;
  /** Path parameter values by name. */
  pathValues: Record<string, fc.Arbitrary<string>>;
  /** Body and query fields by name. */
  hints: Hints;
  state(): Promise<TenantState>;
}

interface Operator {
  id: string;
  email: string;
  tokenId: string;
  token: string;
}

async function operator(h: Harness, role: 'owner' | 'admin'): Promise<Operator> {
  const email = `${uniqueCode(role)}@example.com`;
  const added = (await adminCall(h, 'POST', '/operators', { name: `Fuzz ${role}`, email, role })) as {
    operator: { id: string };
  };
  const created = (await adminCall(h, 'POST', `/operators/${added.operator.id}/tokens`, {
    name: 'fuzz',
  })) as {
    token: string;
    view: { id: string };
  };
  return { id: added.operator.id, email, tokenId: created.view.id, token: created.token };
}

interface Tenant {
  world: AssetWorld;
  appId: string;
  assetNum: string;
  endpointId: string;
  deliveryId: string;
}

/** A tenant whose endpoint has a delivery: the endpoint first, then an order that raises one. */
async function tenant(h: Harness): Promise<Tenant> {
  const world = await assetWorld(h, ['auth_order', 'auth_me', 'auth_runtime', 'auth_webhooks']);
  const endpoint = await h.app.inject({
    method: 'POST',
    url: `${WEBHOOKS_PREFIX}/endpoints?g_nonce=${nonce()}`,
    headers: { authorization: `Bearer ${world.token}` },
    payload: { url: `https://hooks.example.com/${uniqueCode('fuzz-')}` },
  });
  const endpointId = (endpoint.json() as { data: { id: string } }).data.id;
  const assetNum = await buyAsset(world);
  const delivery = await sql<{ id: string }>`
    select id::text as id from webhook_deliveries where endpoint_id = ${endpointId} limit 1
  `.execute(h.database.db);
  const deliveryId = delivery.rows[0]?.id;
  if (deliveryId === undefined) throw new Error('the order raised no delivery');
  return { world, appId: await appIdOf(h, world.app.appKey), assetNum, endpointId, deliveryId };
}

/** One letter of an id percent-encoded: the same id, spelled as a check on the URL's text would miss. */
function respelled(id: string): string {
  const at = id.search(/[A-Za-z]/);
  if (at < 0) return id;
  return `${id.slice(0, at)}%${id.charCodeAt(at).toString(16).toUpperCase()}${id.slice(at + 1)}`;
}

/** Mostly the given ids (A's, B's), now and then one that names nothing. */
const ids = (known: string[], unknown: fc.Arbitrary<string>) =>
  fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 4 }, { arbitrary: unknown, weight: 1 });

const instant = fc.oneof(
  fc
    .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc.constantFrom('2024-02-30T00:00:00Z', '2024-01-01', '0000-01-01T00:00:00Z', '+275760-09-13T00:00:00Z'),
);

export async function buildAdminWorld(h: Harness): Promise<AdminWorld> {
  const [a, b] = [await tenant(h), await tenant(h)];
  const fuzzer = await operator(h, 'owner');
  // A second token of the fuzzer's own: revoking it through /operators/me is the fuzzer's right.
  const spare = (await adminCall(h, 'POST', `/operators/${fuzzer.id}/tokens`, { name: 'spare' })) as {
    view: { id: string };
  };
  const [owner, colleague] = [await operator(h, 'owner'), await operator(h, 'admin')];
  const others = [owner, colleague];

  const scope: AdminScope = {
    appKeys: [a.world.app.appKey, b.world.app.appKey, CONSOLE_CLIENT_KEY],
    appIds: [a.appId, b.appId],
    enterpriseGlobalIds: [a.world.enterpriseGlobalId, b.world.enterpriseGlobalId],
    operatorIds: [fuzzer.id, ...others.map((o) => o.id)],
    caller: fuzzer.id,
  };
  const both = <T>(pick: (t: Tenant) => T) => [pick(a), pick(b)];
  const appKeys = both((t) => t.world.app.appKey);
  const enterprises = both((t) => t.world.enterpriseGlobalId);
  const endpoints = both((t) => t.endpointId);

  return {
    token: fuzzer.token,
    // Never the fuzzer's own operator nor its working token: disabling, demoting or revoking them
    // would end the fuzz's own credential, which is no refusal to check. The console's own client
    // is left out too: with `force` it is the operator's to change, and other tests sign in with it.
    pathValues: {
      appKey: ids([...appKeys, ...appKeys.map(respelled)], fc.constant(`kw_${uniqueCode()}`)),
      enterpriseGlobalId: ids([...enterprises, ...enterprises.map(respelled)], fc.uuid()),
      operator: ids(
        others.flatMap((o) => [o.id, o.email, respelled(o.email)]),
        fc.oneof(fc.uuid(), fc.constant(`${uniqueCode('nobody')}@example.com`)),
      ),
      tokenId: ids([spare.view.id, ...others.map((o) => o.tokenId)], fc.uuid()),
      endpointId: ids(endpoints, fc.constant(`ep_${uniqueCode()}`)),
      deliveryId: ids(
        both((t) => t.deliveryId),
        fc.constantFrom('999999999999', '0', '1'),
      ),
    },
    hints: {
      account: ids(
        both((t) => t.world.admin.account),
        fc.constant(`${uniqueCode('nobody')}@x`),
      ),
      enterprise: ids(enterprises, fc.uuid()),
      app: ids([...appKeys, a.appId], fc.constant(`kw_${uniqueCode()}`)),
      endpoint: ids(endpoints, fc.constant(`ep_${uniqueCode()}`)),
      assetNum: ids(
        both((t) => t.assetNum),
        fc.constant('9'.repeat(20)),
      ),
      email: fc.oneof(
        fc.constant(null).map(() => `${uniqueCode('new')}@example.com`),
        fc.constantFrom(owner.email, owner.email.toUpperCase(), 'not-an-email', ' a@b.c '),
      ),
      scopes: fc.subarray(['auth_order', 'auth_me', 'auth_runtime', 'auth_webhooks', 'auth_admin', '']),
      channels: fc.array(fc.constantFrom(a.world.channel, uniqueCode('CH'), '', ' '), { maxLength: 3 }),
      since: instant,
      until: instant,
      from: instant,
      to: instant,
    },
    state: () => adminTenantState(h.database.db, scope),
  };
}
