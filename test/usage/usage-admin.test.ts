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
  leastUsed: Array<{ product: string; assetNum: string; utilization: number | null }>;
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
    // Full in an hour: listed at capacity, so not among the least used as well.
    expect(report.leastUsed.map((l) => l.product)).not.toContain(product);
  });

  it('lists a license at capacity in no other list, whatever the range and bucket', async () => {
    for (const bucket of ['hour', 'day']) {
      const report = (
        await admin(`/usage?enterprise=${world.enterpriseGlobalId}&bucket=${bucket}`)
      ).json() as Report;
      const full = new Set(report.atCapacity.map((l) => `${l.product} ${l.assetNum}`));
      expect(full.size).toBeGreaterThan(0);
      for (const l of report.leastUsed) {
        expect(full.has(`${l.product} ${l.assetNum}`), bucket).toBe(false);
      }
    }
  });

  it('narrows to an enterprise and an app, and answers days by default', async () => {
    const reply = await admin(`/usage?enterprise=${world.enterpriseGlobalId}&app=${world.app.appKey}`);
    const report = reply.json() as Report;
    expect(report.bucket).toBe('day');
    expect(report.series).toHaveLength(30);
    expect(report.deniedByCode).toEqual({ '90005': 2 });
  });

  it('names a product nothing answers to as unknown, not a range of zeros', async () => {
    const name = `no-such-product-${world.app.appKey}`;
    const reply = await admin(`/usage?product=${name}`);
    expect(reply.statusCode, reply.body).toBe(400);
    expect((reply.json() as { error: string }).error).toBe(
      `product: ${name} is unknown: no license or usage names it`,
    );
    // A product with no usage in the range is still known: its empty periods are the answer.
    const quiet = await admin(`/usage?product=${product}&from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z`);
    expect(quiet.statusCode, quiet.body).toBe(200);
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
    // The series is the first block; the licenses' lists follow it after a blank line.
    const days =
      (await runCli(['usage', '--product', product], cliEnv)).stdout.split('\n\n')[0]?.split('\n') ?? [];
    expect(days[0]?.startsWith('day (UTC)\t')).toBe(true);
    expect(days.slice(1).every((l) => /^\d{4}-\d\d-\d\d\t/.test(l))).toBe(true);
    const json = await runCli(['usage', '--product', product, '--json'], cliEnv);
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as Report).deniedByCode).toEqual({ '90005': 2 });
    const bad = await runCli(['usage', '--bucket', 'week'], cliEnv);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('hour or day');
  });

  it('prints the licenses at capacity and the least used after the series', async () => {
    const table = await runCli(
      ['usage', '--enterprise', world.enterpriseGlobalId, '--bucket', 'hour'],
      cliEnv,
    );
    expect(table.code, table.stderr).toBe(0);
    const blocks = table.stdout.trim().split('\n\n');
    expect(blocks).toHaveLength(3);
    const [full = [], least = []] = blocks.slice(1).map((b) => b.split('\n'));
    expect(full[0]).toMatch(/^Licenses most often at capacity/);
    expect(full[1]).toBe(
      'product\tassetNum\tenterprise\tlicensedSeats\tpeakSeats\tutilization\thoursAtCapacity',
    );
    const row = full.find((l) => l.startsWith(`${product}\t`))?.split('\t');
    expect(row?.slice(3, 5)).toEqual(['1', '1']);
    expect(Number(row?.[6])).toBeGreaterThanOrEqual(1);
    expect(least[0]).toMatch(/^Licenses least used, never at capacity \(utilization: /);
    expect(least.some((l) => l.startsWith(`${product}\t`))).toBe(false);
  });

  it('names an unknown product and exits 1, printing no table', async () => {
    const result = await runCli(['usage', '--product', 'nosuch'], cliEnv);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('product: nosuch is unknown: no license or usage names it');
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
