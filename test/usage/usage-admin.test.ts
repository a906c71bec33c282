import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { runCli } from '../support/server-process.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  leaseOf,
  lockWith,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
} from '../http/runtime-helpers.js';
import { rollAll } from '../support/rollups.js';

// GET /admin/usage and `keyward usage`: what the rollups hold, filtered, with bad filters named;
// /metrics counts the refusals.

interface Point {
  at: number;
  peakSeats: number;
  licensedSeats: number | null;
  seatHours: number;
  utilization: number | null;
  denied: number;
  deniedByCode: Record<string, number>;
  consumed: number;
}
interface Report {
  bucket: string;
  from: number;
  to: number;
  series: Point[];
  deniedByCode: Record<string, number>;
  atCapacity: Array<{ product: string; assetNum: string; bucketsAtCapacity: number }>;
  leastUsed: Array<{ product: string; utilization: number | null }>;
}

let h: Harness;
let world: RuntimeWorld;
let product: string;
let cliEnv: Record<string, string>;

const admin = (url: string) =>
  h.app.inject({ method: 'GET', url: `/admin${url}`, headers: { authorization: `Bearer ${ADMIN_KEY}` } });

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  const lock = await lockWith(world, { limitConcurrent: 1, limitAmount: 100 });
  product = lock.crmProductId;
  const fp = fingerprint();
  const lease = leaseOf(await checkOut(world, { ...lock, fingerprint: fp }));
  refusalOf(await checkOut(world, { ...lock, fingerprint: fingerprint() }), '90005');
  refusalOf(await checkOut(world, { ...lock, fingerprint: fingerprint() }), '90005');
  const consumed = await world.runtime(`/leases/${lease.leaseId}/consume`, { fingerprint: fp, amount: 7 });
  expect(consumed.statusCode, consumed.body).toBe(200);
  leaseOf(await checkIn(world, lease, fp));
  await rollAll(h.app.services.usageRollups);
  cliEnv = { KEYWARD_URL: await h.app.listen({ port: 0, host: '127.0.0.1' }), KEYWARD_ADMIN_KEY: ADMIN_KEY };
});
afterAll(async () => h.close());

describe('GET /admin/usage', () => {
  it("answers the product's hours: the seat taken, the refusals by code, the amount consumed", async () => {
    const reply = await admin(`/usage?product=${product}&bucket=hour`);
    expect(reply.statusCode, reply.body).toBe(200);
    const report = reply.json() as Report;
    expect(report.bucket).toBe('hour');
    expect(report.series).toHaveLength(48);
    const now = report.series.at(-1);
    const all = report.series.filter((p) => p.peakSeats > 0 || p.denied > 0 || p.consumed > 0);
    expect(all.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...report.series.map((p) => p.peakSeats))).toBe(1);
    expect(report.series.some((p) => p.licensedSeats === 1)).toBe(true);
    expect(report.deniedByCode).toEqual({ '90005': 2 });
    expect(report.series.reduce((sum, p) => sum + p.consumed, 0)).toBe(7);
    expect(now).toBeDefined();
    expect(report.atCapacity.map((l) => l.product)).toEqual([product]);
  });

  it('narrows to an enterprise and an app, and answers days by default', async () => {
    const reply = await admin(`/usage?enterprise=${world.enterpriseGlobalId}&app=${world.app.appKey}`);
    const report = reply.json() as Report;
    expect(report.bucket).toBe('day');
    expect(report.series).toHaveLength(30);
    expect(report.deniedByCode).toEqual({ '90005': 2 });
    // A name no file checks out: refusals of another file's made-up product share the database.
    const other = (await admin(`/usage?product=no-such-product-${world.app.appKey}`)).json() as Report;
    expect(other.series.every((p) => p.peakSeats === 0 && p.denied === 0)).toBe(true);
  });

  it('refuses a bad filter with the field named', async () => {
    const cases: Array<[string, string]> = [
      ['/usage?bucket=week', 'bucket'],
      ['/usage?from=yesterday', 'from'],
      ['/usage?from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from'],
      ['/usage?from=2000-01-01T00:00:00Z&bucket=hour', 'from'],
      ['/usage?enterprise=no-such-enterprise', 'enterprise'],
      ['/usage?app=no-such-app', 'app'],
    ];
    for (const [url, field] of cases) {
      const reply = await admin(url);
      expect(reply.statusCode, url).toBe(400);
      expect((reply.json() as { error: string }).error, url).toContain(field);
    }
  });
});

describe('keyward usage', () => {
  it('prints the table and the JSON of the same report', async () => {
    const table = await runCli(['usage', '--product', product, '--bucket', 'hour', '--from', '2h'], cliEnv);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      'hour (UTC)\tpeakSeats\tlicensedSeats\tseatHours\tutilization\tdenied\tdeniedByCode\tconsumed',
    );
    expect(lines.some((l) => l.includes('90005:2'))).toBe(true);
    // Buckets as people read them: an hour, a day; not an ISO timestamp of its first millisecond.
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:00\t/);
    const days = (await runCli(['usage', '--product', product], cliEnv)).stdout.trim().split('\n');
    expect(days[0]?.startsWith('day (UTC)\t')).toBe(true);
    expect(days.slice(1).every((l) => /^\d{4}-\d\d-\d\d\t/.test(l))).toBe(true);
    const json = await runCli(['usage', '--product', product, '--json'], cliEnv);
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as Report).deniedByCode).toEqual({ '90005': 2 });
    const bad = await runCli(['usage', '--bucket', 'week'], cliEnv);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('hour or day');
  });
});

describe('/metrics', () => {
  it('counts refused check-outs by code', async () => {
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
    const line = metrics.body
      .split('\n')
      .find((l) => l.startsWith('keyward_runtime_checkouts_refused_total{code="90005"}'));
    expect(Number(line?.split(' ').at(-1))).toBeGreaterThanOrEqual(2);
  });
});
