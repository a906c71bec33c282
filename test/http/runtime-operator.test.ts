import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { TEST_ENV } from '../support/test-env.js';
import { buyAsset, productSpec } from '../support/order-fixtures.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  leaseOf,
  runtimeWorld,
  type RuntimeWorld,
} from './runtime-helpers.js';

// What an operator sees of the runtime: leases in the admin API, seats in use at /metrics.

let h: Harness;
let world: RuntimeWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
});
afterAll(async () => h.close());

const admin = (url: string, key = ADMIN_KEY) =>
  h.app.inject({ method: 'GET', url: `/admin${url}`, headers: { authorization: `Bearer ${key}` } });

describe('leases in the admin API and seats in /metrics', () => {
  it('lists live leases per product and holder, ended ones with --all', async () => {
    const product = productSpec();
    const crmProductId = product.crmProductId as string;
    const assetNum = await buyAsset(world, [product]);
    const fpA = fingerprint();
    const a = leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fpA }));
    const fpB = fingerprint();
    leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fpB }));
    leaseOf(await checkIn(world, a, fpA));

    const live = await admin(`/runtime/leases?product=${crmProductId}`);
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual([
      expect.objectContaining({
        appKey: world.app.appKey,
        assetNum,
        crmProductId,
        holderKind: 'lock',
        holder: assetNum,
        fingerprint: fpB,
        endedAt: null,
      }),
    ]);
    const all = (await admin(`/runtime/leases?product=${crmProductId}&all=1`)).json() as Array<{
      fingerprint: string;
      endReason: string | null;
    }>;
    expect(all.map((l) => [l.fingerprint, l.endReason])).toEqual([
      [fpB, null],
      [fpA, 'checked_in'],
    ]);

    // Product ids are tenants' data: in the labels only where the operator asks for them.
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^keyward_runtime_seats_in_use \d+$/m);
    expect(metrics.body).not.toContain(crmProductId);
    // A second server on the same database, whose operator asked for them.
    const config = loadConfig({
      ...TEST_ENV,
      DATA_DIR: '/nonexistent-test-data',
      METRICS_PRODUCT_LABELS: '1',
    });
    const labelled = await buildApp({ config, db: h.database.db, adminKey: ADMIN_KEY });
    try {
      const perProduct = await labelled.inject({ method: 'GET', url: '/metrics' });
      expect(perProduct.body).toContain(`keyward_runtime_seats_in_use{product="${crmProductId}"} 1`);
    } finally {
      await labelled.close();
    }
  });

  it('creates an application with all three scopes through the admin API', async () => {
    const created = await h.app.inject({
      method: 'POST',
      url: '/admin/apps',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: {
        name: 'vendor runtime',
        scopes: ['auth_order', 'auth_me', 'auth_runtime'],
        channels: ['CRM'],
      },
    });
    expect(created.statusCode, created.body).toBe(200);
    expect((created.json() as { scopes: string[] }).scopes).toEqual([
      'auth_order',
      'auth_me',
      'auth_runtime',
    ]);
  });

  it('refuses without the admin key and names a bad filter', async () => {
    expect((await admin('/runtime/leases', 'wrong')).statusCode).toBe(401);
    const bad = await admin('/runtime/leases?limit=0');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/limit/);
  });
});
