import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { startHarness, type Harness } from '../support/harness.js';
import { buyAsset, productSpec } from '../support/order-fixtures.js';
import { fingerprint, runtimeCaller, runtimeWorld, type RuntimeWorld } from './runtime-helpers.js';

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
});
