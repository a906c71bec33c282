import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { appToken, createTestApp } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { buyAsset, productSpec } from '../support/order-fixtures.js';
import {
  fingerprint,
  leaseOf,
  refusalOf,
  runtimeCaller,
  runtimeWorld,
  type RuntimeWorld,
} from './runtime-helpers.js';

// limitConcurrent = 3 and 20 machines starting at once: exactly 3 leases, whichever instance each
// machine reaches. On PostgreSQL the calls are split across two server instances sharing it.

let h: Harness;
let second: Harness | undefined;
let world: RuntimeWorld;

beforeAll(async () => {
  h = await startHarness();
  if (onPostgres()) second = await startHarness();
  world = await runtimeWorld(h);
});
afterAll(async () => {
  await second?.close();
  await h.close();
});

describe('seats under concurrent check-outs', () => {
  it('20 parallel check-outs from different machines get exactly 3 seats', async () => {
    const product = productSpec({ limitConcurrent: 3 });
    const assetNum = await buyAsset(world, [product]);
    const callers = [
      world.runtime,
      second === undefined ? world.runtime : runtimeCaller(second, world.runtimeToken),
    ];
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (callers[i % 2] ?? world.runtime)('/leases', {
          assetNum,
          crmProductId: product.crmProductId,
          fingerprint: fingerprint(),
        }),
      ),
    );
    const codes = replies.map((r) => (r.json() as { code: number | string }).code);
    expect(codes.filter((c) => c === 0)).toHaveLength(3);
    expect(codes.filter((c) => c === '90005')).toHaveLength(17);
    const live = await h.database.db
      .selectFrom('runtime_leases')
      .innerJoin('assets', 'assets.id', 'runtime_leases.asset_id')
      .select('runtime_leases.id')
      .where('assets.asset_num', '=', assetNum)
      .where('runtime_leases.ended_at', 'is', null)
      .execute();
    expect(live).toHaveLength(3);
  });

  it.each([2, 1])('the same machine checking out 10 times at once holds one seat (of %i)', async (seats) => {
    // With one seat, a check-out that waited for the machine's turn and missed the lease the first
    // committed must resume it, not answer 90005 for a seat its own machine holds.
    const product = productSpec({ limitConcurrent: seats });
    const assetNum = await buyAsset(world, [product]);
    const fp = fingerprint();
    const replies = await Promise.all(
      Array.from({ length: 10 }, () =>
        world.runtime('/leases', { assetNum, crmProductId: product.crmProductId, fingerprint: fp }),
      ),
    );
    const ids = new Set(replies.map((r) => (r.json() as { data?: { leaseId: string } }).data?.leaseId));
    expect(ids.size).toBe(1);
    expect(ids.has(undefined)).toBe(false);
  });

  it('refuses a machine whose seat of the license is held through another app, and keeps that lease', async () => {
    // One live lease per machine and license, whichever app made it: the second app's check-out
    // is answered 90005 (the machine's seat is in use), not resumed and not an error.
    const product = productSpec({ limitConcurrent: 5 });
    const assetNum = await buyAsset(world, [product]);
    const other = await createTestApp(h, { scopes: ['auth_runtime'], channels: world.app.channels });
    const otherRuntime = runtimeCaller(h, await appToken(h, other));
    const fp = fingerprint();
    const body = { assetNum, crmProductId: product.crmProductId, fingerprint: fp };
    const first = leaseOf(await world.runtime('/leases', body));
    refusalOf(await otherRuntime('/leases', body), '90005');
    const live = await h.database.db
      .selectFrom('runtime_leases')
      .select(['id', 'ended_at'])
      .where('fingerprint', '=', fp)
      .execute();
    expect(live).toEqual([{ id: first.leaseId, ended_at: null }]);
    // The first app still resumes its own lease.
    const again = leaseOf(await world.runtime('/leases', body));
    expect(again).toMatchObject({ leaseId: first.leaseId, status: 'resumed' });
  });
});
