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

beforeAll(async () => {
  h = await startHarness();
  const world = await runtimeWorld(h);
  const lock = await lockWith(world, { limitConcurrent: 1 });
  product = lock.crmProductId;
  const fp = fingerprint();
  const lease = leaseOf(await checkOut(world, { ...lock, fingerprint: fp }));
  refusalOf(await checkOut(world, { ...lock, fingerprint: fingerprint() }), '90005');
  leaseOf(await checkIn(world, lease, fp));
  await rollAll(h.app.services.usageRollups);
  op = await operatorClient(h);
});
afterAll(async () => h.close());

function cells(body: string, cls: string): string[] {
  return [...body.matchAll(new RegExp(`<td class="${cls}">([^<]*)</td>`, 'g'))].map((m) => m[1] ?? '');
}

describe('/console/operator/usage', () => {
  for (const lang of ['en', 'zh-CN'] as const) {
    it(`draws the charts and their table in ${lang}`, async () => {
      const page = await op.get(`/console/operator/usage?product=${product}&bucket=hour`, {
        'accept-language': lang,
      });
      expect(page.statusCode, page.body).toBe(200);
      expect(page.body).toContain(lang === 'en' ? 'Peak seats against seats licensed' : '峰值席位与授权席位');
      expect([...page.body.matchAll(/data-series-count="(\d)"/g)].map((m) => m[1])).toEqual(['2', '1']);
      expect(page.body.match(/<path d="M/g)?.length).toBe(3);
      const api = (
        await h.app.inject({
          method: 'GET',
          url: `/admin/usage?product=${product}&bucket=hour`,
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).json() as { series: Array<{ peakSeats: number; denied: number }> };
      expect(cells(page.body, 'peak')).toEqual(api.series.map((p) => String(p.peakSeats)));
      expect(cells(page.body, 'denied')).toEqual(api.series.map((p) => String(p.denied)));
      expect(api.series.some((p) => p.peakSeats === 1)).toBe(true);
      expect(page.body).toContain(product);
      // The licenses tables show the enterprise's name: their column says so, not "global id".
      const licenses = page.body.slice(page.body.indexOf('<table', page.body.lastIndexOf('<h2')));
      const headers = [...licenses.matchAll(/<th[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
      expect(headers).toContain(lang === 'en' ? 'Enterprise' : '企业');
      expect(headers.join(' ')).not.toMatch(/global id|全局 ID/);
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
  });
});
