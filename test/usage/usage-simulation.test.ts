import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enterpriseClient } from '../support/console-client.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { lockWith, runtimeWorld, type RuntimeWorld } from '../http/runtime-helpers.js';

// POST /admin/usage/simulate (what `keyward demo` loads): a month of usage for a new enterprise's
// licenses, with a product at capacity and its refusals; refused for an enterprise with history.

let h: Harness;
let world: RuntimeWorld;
let busy: string;

const simulate = (body: Record<string, unknown>) =>
  h.app.inject({
    method: 'POST',
    url: '/admin/usage/simulate',
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: body,
  });

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  busy = (await lockWith(world, { limitConcurrent: 5 })).crmProductId;
  await lockWith(world, { limitConcurrent: 20 });
});
afterAll(async () => h.close());

describe('POST /admin/usage/simulate', () => {
  it('writes a month of rollups the usage report and the enterprise page read', async () => {
    const started = Date.now();
    const answer = await simulate({ enterprise: world.enterpriseGlobalId, app: world.app.appKey, days: 30 });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(Date.now() - started).toBeLessThan(5000);
    const result = answer.json() as { licenses: number; hours: number; denied: number; atCapacity: string };
    expect(result.licenses).toBe(2);
    expect(result.atCapacity).toBe(busy);
    expect(result.denied).toBeGreaterThan(0);
    const report = await h.app.services.usage.report({ enterprise: world.enterpriseGlobalId, bucket: 'day' });
    expect(report.series.filter((p) => p.peakSeats > 0).length).toBeGreaterThan(15);
    expect(report.atCapacity.map((l) => l.product)).toContain(busy);
    expect(Object.keys(report.deniedByCode)).toEqual(['90005']);
    const page = await (
      await enterpriseClient(h, world.admin.account, world.admin.password)
    ).get('/console/enterprise/usage');
    expect([...page.body.matchAll(/data-series-count="2"/g)]).toHaveLength(2);
  });

  it('refuses an enterprise with usage history, and unknown names', async () => {
    const again = await simulate({ enterprise: world.enterpriseGlobalId, app: world.app.appKey });
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('enterprise');
    const unknown = await simulate({ enterprise: 'no-such-enterprise', app: world.app.appKey });
    expect(unknown.statusCode).toBe(400);
    expect(
      (await simulate({ enterprise: world.enterpriseGlobalId, app: 'nope', days: 500 })).statusCode,
    ).toBe(400);
  });
});
