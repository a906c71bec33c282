import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MERCHANDISE_SCHEMA_ID } from '../../src/http/order/license-order-schemas.js';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { seedAsset, seedCustomer } from '../http/enterprise-helpers.js';
import {
  assetNum,
  batch,
  newBuy,
  orderTenant,
  product,
  submit,
  visibleEnterprise,
  type OrderTenant,
} from '../http/order-helpers.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { apiDocument, operationName, type ApiDocument } from './support/api-operations.js';
import { FUZZ_RUNS, FUZZ_TIMEOUT_MS, fuzzOperation, type FuzzSetup } from './support/fuzz-request.js';
import { validValue } from './support/schema-arbitrary.js';
import { changedTables, orderTenantState, type TenantState } from './support/tenant-state.js';

const OPERATIONS = [
  'POST /enterprise/user/bind',
  'POST /enterprise/user/create',
  'GET /enterprise/user/query',
  'POST /enterprise/user/update',
  'POST /shellnums',
  'POST /licenseOrder/batchOrder',
  'GET /licenseOrder/{licenseOrderId}',
  'POST /asset/lock',
  'POST /asset/unlock',
  'GET /asset/{enterpriseGlobalId}/list',
];

// Generated calls of every order-service operation, read from /openapi.json: each answer is a
// proper envelope with a documented code, and a refused call leaves the tenant's data as it was.
const BODY_LIMIT = 256 * 1024;
let h: Harness;
let doc: ApiDocument;
let tenant: OrderTenant;
let bystander: OrderTenant;
let setup: FuzzSetup;
let appId: string;
let bystanderId: string;
let bystanderBefore: TenantState;

const appIdOf = async (appKey: string) =>
  (
    await h.database.db
      .selectFrom('apps')
      .select('id')
      .where('app_key', '=', appKey)
      .executeTakeFirstOrThrow()
  ).id;

/** Data the generated calls may hit: an enterprise, customers, locks, a cloud asset and an order. */
async function seedTenant(t: OrderTenant) {
  const enterprise = await visibleEnterprise(h, t);
  const crmCustomerId = uniqueCode('crm');
  const customer = await seedCustomer(h, {
    channelCode: t.channel,
    channelCustomerId: uniqueCode('cc'),
    crmCustomerId,
    enterpriseId: enterprise.id,
  });
  const locks = await Promise.all(
    ['normal_recover_usbkey', 'lk_auth_usbkey', 'softkey', 'cloud_customer'].map((type) =>
      seedAsset(h, customer.id, type),
    ),
  );
  const num = assetNum();
  // Numbers in Keyward's format op 9 issued to this app: the generated orders also try them on the
  // other tenant, and numbers never issued at all.
  const issued = await h.app.services.assetNumbers.issue(2, await appIdOf(t.app.appKey));
  const [order] = await submit(
    h,
    t,
    batch(t, [newBuy({ customerId: customer.id, assets: [{ assetNos: [num], products: [product()] }] })]),
  );
  return {
    enterprise,
    crmCustomerId,
    customerId: customer.id,
    channelCustomerId: customer.channelCustomerId as string,
    assetNums: [...locks.map((l) => l.assetNum), num, ...issued],
    licenseOrderId: order?.licenseOrderId as string,
  };
}

/** Merchandise nested `depth` levels with one product at the bottom. */
function merchandiseChain(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { merchandiseNum: 'leaf', licenseOrderProductList: [product()] };
  for (let level = 1; level < depth; level += 1) node = { merchandiseNum: `m${level}`, children: [node] };
  return node;
}

beforeAll(async () => {
  h = await startHarness({ BODY_LIMIT_BYTES: String(BODY_LIMIT) });
  doc = await apiDocument(h, ORDER_PREFIX);
  tenant = await orderTenant(h);
  bystander = await orderTenant(h);
  appId = await appIdOf(tenant.app.appKey);
  bystanderId = await appIdOf(bystander.app.appKey);
  const own = await seedTenant(tenant);
  const other = await seedTenant(bystander);
  bystanderBefore = await orderTenantState(h.database.db, { appId: bystanderId, channel: bystander.channel });

  const mine = <T>(value: T, others: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: fc.constant(value), weight: 3 }, { arbitrary: others, weight: 1 });
  const text = fc.string({ minLength: 1, maxLength: 20 });
  const neverIssued = String(Number(own.assetNums.at(-1)) + 1_000_000);
  const nums = fc.array(fc.constantFrom(...own.assetNums, ...other.assetNums, assetNum(), neverIssued), {
    minLength: 1,
    maxLength: 4,
  });
  setup = {
    doc,
    headers: () => ({ authorization: `Bearer ${tenant.token}` }),
    bodyLimitBytes: BODY_LIMIT,
    pathValues: {
      enterpriseGlobalId: fc.constantFrom(
        own.enterprise.globalId,
        other.enterprise.globalId,
        uniqueCode('e'),
      ),
      licenseOrderId: fc.constantFrom(own.licenseOrderId, other.licenseOrderId, uniqueCode('lo')),
    },
    hints: {
      appKey: mine(tenant.app.appKey, fc.constantFrom(bystander.app.appKey, '')),
      channelCode: mine(tenant.channel, fc.constantFrom(bystander.channel, 'CRM')),
      channelCustomerId: mine(
        own.channelCustomerId,
        fc.constantFrom(other.channelCustomerId, uniqueCode('cc')),
      ),
      crmCustomerId: mine(own.crmCustomerId, fc.constantFrom(other.crmCustomerId, uniqueCode('crm'))),
      customerId: fc.constantFrom(own.customerId, other.customerId, null),
      enterpriseGlobalId: fc.constantFrom(own.enterprise.globalId, other.enterprise.globalId, null),
      srcLicenseOrderId: fc.constantFrom(own.licenseOrderId, other.licenseOrderId, null),
      assetNums: nums,
      assetNos: fc.oneof(nums, fc.constant([])),
      extendCode: fc.constantFrom('color', 'seat', ''),
      operatorIdentity: text,
      // Trees as the schema draws them, and now and then a chain far deeper than any real one.
      merchandises: fc.oneof(
        {
          arbitrary: fc.array(
            validValue(
              { $ref: `#/components/schemas/${MERCHANDISE_SCHEMA_ID}` },
              { resolve: doc.resolve, hints: {} },
            ),
            { maxLength: 2 },
          ),
          weight: 6,
        },
        { arbitrary: fc.constantFrom(33, 1_000).map((depth) => [merchandiseChain(depth)]), weight: 1 },
      ),
    },
  };
});
afterAll(async () => h.close());

describe('generated bad input on the order service', () => {
  it('covers every operation of the OpenAPI document, each with its codes', () => {
    const documented = doc.operations.map((op) => operationName(op).replace(ORDER_PREFIX, ''));
    expect(documented.sort()).toEqual([...OPERATIONS].sort());
    for (const op of doc.operations) expect([...op.codes], operationName(op)).toContain('13004');
  });

  it.each(OPERATIONS)(
    '%s answers every generated call with an envelope and changes nothing when it refuses',
    async (name) => {
      const [method, path] = name.split(' ') as [string, string];
      const op = doc.operations.find((o) => o.method === method && o.path === `${ORDER_PREFIX}${path}`);
      if (!op) throw new Error(`${name} is not in the OpenAPI document`);
      const scope = { appId, channel: tenant.channel };
      const seen = await fuzzOperation(h, op, setup, () => orderTenantState(h.database.db, scope));
      // The generator reaches past the guard into validation, not only the nonce check.
      expect(seen.get('13004') ?? 0).toBeGreaterThan(FUZZ_RUNS / 10);
    },
    FUZZ_TIMEOUT_MS,
  );

  it("leaves another tenant's data untouched by all of it", async () => {
    const after = await orderTenantState(h.database.db, { appId: bystanderId, channel: bystander.channel });
    expect(changedTables(bystanderBefore, after)).toEqual([]);
  });
});
