import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorClient, type ConsoleClient } from '../support/console-client.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  leaseOf,
  lockWith,
  refusalOf,
  runtimeWorld,
} from '../http/runtime-helpers.js';
import { rollAll } from '../support/rollups.js';

// The operator's Usage page: two server-drawn charts (peak against licensed, refusals), the table
// of the same numbers, and their CSV, in both languages.

let h: Harness;
let op: ConsoleClient;
let product: string;
let enterprise: string;

beforeAll(async () => {
  h = await startHarness();
  const world = await runtimeWorld(h);
  const lock = await lockWith(world, { limitConcurrent: 1 });
  product = lock.crmProductId;
  const fp = fingerprint();
  const lease = leaseOf(await checkOut(world, { ...lock, fingerprint: fp }));
  refusalOf(await checkOut(world, { ...lock, fingerprint: fingerprint() }), '90005');
  leaseOf(await checkIn(world, lease, fp));
  // A license used below its seats: the least used list has a line.
  const roomy = await lockWith(world, { limitConcurrent: 2 });
  const roomyFp = fingerprint();
  leaseOf(await checkIn(world, leaseOf(await checkOut(world, { ...roomy, fingerprint: roomyFp })), roomyFp));
  enterprise = world.enterpriseGlobalId;
  await rollAll(h.app.services.usageRollups);
  op = await operatorClient(h);
});
afterAll(async () => h.close());

function cells(body: string, cls: string): string[] {
  // A DataTable cell: its kind and class, the value inside whatever elements its kind wraps it in.
  return [...body.matchAll(new RegExp(`<td [^>]*class="${cls}"[^>]*>(?:<[^>]+>)*([^<]*)<`, 'g'))].map(
    (m) => m[1] ?? '',
  );
}

describe('/console/operator/usage', () => {
  for (const lang of ['en', 'zh-CN'] as const) {
    it(`draws the charts and their table in ${lang}`, async () => {
      const page = await op.get(`/console/operator/usage?product=${product}&bucket=hour`, {
        'accept-language': lang,
      });
      expect(page.statusCode, page.body).toBe(200);
      expect(page.body).toContain(lang === 'en' ? 'Peak seats against seats licensed' : '峰值席位与授权席位');
      // Saturation first: the full license's own chart, then the platform's two, apart.
      expect([...page.body.matchAll(/data-series-count="(\d)"/g)].map((m) => m[1])).toEqual(['2', '2', '1']);
      expect(page.body.match(/<path d="M/g)?.length).toBe(5);
      const saturated = page.body.slice(page.body.indexOf('<section class="usage saturated">'));
      expect(saturated.indexOf(`data-product="${product}"`)).toBeGreaterThan(0);
      expect(page.body.indexOf('<section class="usage saturated">')).toBeLessThan(
        page.body.indexOf('<section class="usage platform">'),
      );
      const api = (
        await h.app.inject({
          method: 'GET',
          url: `/admin/usage?product=${product}&bucket=hour`,
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).json() as { series: Array<{ peakSeats: number; denied: number }> };
      const platform = page.body.slice(page.body.indexOf('<section class="usage platform">'));
      expect(cells(platform, 'peak')).toEqual(api.series.map((p) => String(p.peakSeats)));
      expect(cells(platform, 'denied')).toEqual(api.series.map((p) => String(p.denied)));
      expect(api.series.some((p) => p.peakSeats === 1)).toBe(true);
      expect(page.body).toContain(product);
      // The licenses tables show the enterprise's name: their column says so, not "global id".
      const all = await op.get(`/console/operator/usage?enterprise=${enterprise}&bucket=hour`, {
        'accept-language': lang,
      });
      const licenses = all.body.slice(all.body.indexOf('<section class="licenses least-used">'));
      expect(licenses).toContain('<table');
      const headers = [...licenses.matchAll(/<th[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
      expect(headers).toContain(lang === 'en' ? 'Enterprise' : '企业');
      expect(headers.join(' ')).not.toMatch(/global id|全局 ID/);
    });

    it(`shows each full license apart, the least used without it, and every point's values in ${lang}`, async () => {
      const page = await op.get(`/console/operator/usage?product=${product}&bucket=hour`, {
        'accept-language': lang,
      });
      const body = page.body;
      const panel = body.slice(
        body.indexOf(`<section class="chart-panel usage-license" data-product="${product}">`),
        body.indexOf('</section>', body.indexOf('usage-license')),
      );
      expect(panel).toContain(lang === 'en' ? 'peak 1 of 1' : '峰值 1 / 授权 1');
      // Each of the 48 hours has its column and its values on hover, on every chart of the page.
      const titles = [...body.matchAll(/<rect class="point"[^>]*><title>([^<]*)<\/title><\/rect>/g)].map(
        (m) => m[1] ?? '',
      );
      expect(titles).toHaveLength(3 * 48);
      const full = titles
        .slice(0, 48)
        .find((title) => title.includes(lang === 'en' ? 'Peak seats: 1' : '峰值席位: 1'));
      expect(full).toMatch(
        lang === 'en'
          ? /^\d{4}-\d\d-\d\dT\d\d:00 — Peak seats: 1 · Seats licensed: 1$/
          : /^\d{4}-\d\d-\d\dT\d\d:00 — 峰值席位: 1 · 授权席位: 1$/,
      );
      const least = body.slice(body.indexOf('<section class="licenses least-used">'));
      expect(least.slice(0, least.indexOf('</section>'))).not.toContain(`<code>${product}</code>`);
      // What utilization is, said where it is shown.
      expect(body).toContain(
        lang === 'en'
          ? 'Utilization is the seat-hours used divided by the seat-hours licensed over the period'
          : '利用率是期间内使用的席位小时除以授权的席位小时',
      );
    });
  }

  it('exports the same numbers as CSV, and names a bad filter', async () => {
    const csv = await op.get(`/console/operator/usage.csv?product=${product}&bucket=hour`);
    expect(csv.statusCode).toBe(200);
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('at,peakSeats,licensedSeats,seatHours,utilization,denied,consumed');
    expect(lines).toHaveLength(49);
    expect(lines.some((l) => l.split(',')[5] === '1')).toBe(true);
    const bad = await op.get('/console/operator/usage?enterprise=no-such-enterprise');
    expect(bad.statusCode).toBe(200);
    expect(bad.body).toContain('no-such-enterprise');
    // An unknown product is named under its field, and nothing is drawn.
    const unknown = await op.get('/console/operator/usage?product=nosuch');
    expect(unknown.statusCode).toBe(200);
    expect(unknown.body).toMatch(/id="field-product-error"[^>]*>[^<]*nosuch is unknown/);
    expect(unknown.body).not.toContain('data-series-count');
  });
});
