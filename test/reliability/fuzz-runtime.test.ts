import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNTIME_PREFIX } from '../../src/http/surface.js';
import { checkOut, fingerprint, leaseOf, runtimeWorld, type RuntimeWorld } from '../http/runtime-helpers.js';
import { startHarness, type Harness } from '../support/harness.js';
import { buyAsset, productSpec } from '../support/order-fixtures.js';
import { apiDocument, operationName, type ApiDocument } from './support/api-operations.js';
import { FUZZ_RUNS, FUZZ_TIMEOUT_MS, fuzzOperation, type FuzzSetup } from './support/fuzz-request.js';
import { changedTables, runtimeTenantState, type TenantState } from './support/tenant-state.js';

const OPERATIONS = [
  'POST /leases',
  'POST /leases/{leaseId}/heartbeat',
  'POST /leases/{leaseId}/check-in',
  'POST /leases/{leaseId}/consume',
  // Offline activation: a connected machine's call (without a member here: 60005 past the schema).
  'POST /activations',
  'POST /activations/return',
];

// Generated calls of every runtime operation, read from /openapi.json: each answer is a proper
// envelope with a documented code (never "500"), and a refused call leaves the app's leases and
// usage as they were, except that a heartbeat answering "revoked" or "expired" ends the lease.
const BODY_LIMIT = 256 * 1024;
let h: Harness;
let doc: ApiDocument;
let world: RuntimeWorld;
let bystander: RuntimeWorld;
let setup: FuzzSetup;
let bystanderBefore: TenantState;

const appIdOf = async (appKey: string) =>
  (
    await h.database.db
      .selectFrom('apps')
      .select('id')
      .where('app_key', '=', appKey)
      .executeTakeFirstOrThrow()
  ).id;

async function seed(w: RuntimeWorld) {
  const product = productSpec({ limitConcurrent: 2, limitAmount: 50 });
  const assetNum = await buyAsset(w, [product]);
  const fp = fingerprint();
  const lease = leaseOf(await checkOut(w, { assetNum, crmProductId: product.crmProductId, fingerprint: fp }));
  return { assetNum, crmProductId: product.crmProductId as string, fp, leaseId: lease.leaseId };
}

beforeAll(async () => {
  h = await startHarness({ BODY_LIMIT_BYTES: String(BODY_LIMIT) });
  doc = await apiDocument(h, RUNTIME_PREFIX);
  world = await runtimeWorld(h);
  bystander = await runtimeWorld(h);
  const own = await seed(world);
  const other = await seed(bystander);
  bystanderBefore = await runtimeTenantState(h.database.db, await appIdOf(bystander.app.appKey));
  const mine = <T>(value: T, others: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: fc.constant(value), weight: 3 }, { arbitrary: others, weight: 1 });
  setup = {
    doc,
    headers: () => ({ authorization: `Bearer ${world.runtimeToken}` }),
    bodyLimitBytes: BODY_LIMIT,
    pathValues: { leaseId: fc.constantFrom(own.leaseId, other.leaseId, crypto.randomUUID()) },
    hints: {
      assetNum: mine(own.assetNum, fc.constantFrom(other.assetNum, 'no-such-lock')),
      crmProductId: mine(own.crmProductId, fc.constantFrom(other.crmProductId, 'P-unknown')),
      fingerprint: mine(own.fp, fc.constantFrom(other.fp, fingerprint())),
    },
  };
});
afterAll(async () => h.close());

describe('generated bad input on the license runtime', () => {
  it('covers every operation of the OpenAPI document, each with its codes', () => {
    const documented = doc.operations.map((op) => operationName(op).replace(RUNTIME_PREFIX, ''));
    expect(documented.sort()).toEqual([...OPERATIONS].sort());
    for (const op of doc.operations) expect([...op.codes], operationName(op)).toContain('90000');
  });

  it.each(OPERATIONS)(
    '%s answers every generated call with an envelope and changes nothing when it refuses',
    async (name) => {
      const [method, path] = name.split(' ') as [string, string];
      const op = doc.operations.find((o) => o.method === method && o.path === `${RUNTIME_PREFIX}${path}`);
      if (!op) throw new Error(`${name} is not in the OpenAPI document`);
      const appId = await appIdOf(world.app.appKey);
      const seen = await fuzzOperation(h, op, setup, () => runtimeTenantState(h.database.db, appId), [
        '90009',
        '90010',
      ]);
      expect(seen.get('90000') ?? 0).toBeGreaterThan(FUZZ_RUNS / 10);
    },
    FUZZ_TIMEOUT_MS,
  );

  it("leaves another app's leases untouched by all of it", async () => {
    const after = await runtimeTenantState(h.database.db, await appIdOf(bystander.app.appKey));
    expect(changedTables(bystanderBefore, after)).toEqual([]);
  });
});
