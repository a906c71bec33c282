import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { consoleTenant, type ConsoleTenant } from './usage-tenant.js';
import { rollAll } from '../support/rollups.js';

// The enterprise administrator's Usage page and its CSV: his products' peak against licensed
// seats, who was refused, who holds a seat now; and nothing of another enterprise, whatever ids
// the query string carries.

let h: Harness;
let a: ConsoleTenant;
let b: ConsoleTenant;

beforeAll(async () => {
  h = await startHarness();
  a = await consoleTenant(h);
  b = await consoleTenant(h);
  await rollAll(h.app.services.usageRollups);
});
afterAll(async () => h.close());

function cells(body: string, cls: string): string[] {
  // A DataTable cell: its kind and class, the value inside whatever elements its kind wraps it in.
  return [...body.matchAll(new RegExp(`<td [^>]*class="${cls}"[^>]*>(?:<[^>]+>)*([^<]*)<`, 'g'))].map(
    (m) => m[1] ?? '',
  );
}

function nothingOf(body: string, other: ConsoleTenant): void {
  expect(body).not.toContain(other.product);
  expect(body).not.toContain(other.assetNum);
  expect(body).not.toContain(other.account);
  expect(body).not.toContain(other.world.enterpriseGlobalId);
}

describe('/console/enterprise/usage', () => {
  for (const lang of ['en', 'zh-CN'] as const) {
    it(`draws each product's chart, its table, who was refused and who holds a seat, in ${lang}`, async () => {
      const page = await a.console.get(`/console/enterprise/usage?bucket=hour`, { 'accept-language': lang });
      expect(page.statusCode, page.body).toBe(200);
      expect(page.body).toContain(lang === 'en' ? 'Who was refused' : '谁被拒绝');
      expect([...page.body.matchAll(/data-series-count="(\d)"/g)].map((m) => m[1])).toEqual(['2']);
      expect(page.body).toContain(`data-product="${a.product}"`);
      const peaks = cells(page.body, 'peak');
      expect(peaks).toHaveLength(48);
      expect(peaks.some((p) => p === '1')).toBe(true);
      expect(cells(page.body, 'denied').reduce((sum, d) => sum + Number(d), 0)).toBe(1);
      // Refused and holding a seat: the same employee, by account.
      expect(page.body.split(a.account).length - 1).toBeGreaterThanOrEqual(2);
      // The refusal's reason in the page's language; the runtime's code and words kept for support.
      const reason = /<td [^>]*class="reason"[^>]*>(.*?)<\/td>/s.exec(page.body)?.[1] ?? '';
      expect(reason).toMatch(
        lang === 'en'
          ? /^All 1 seats of the product are in use \(1 in use\)\.<details/
          : /^该产品的 1 个席位已全部占用（在用 1 个）。<details/,
      );
      expect(reason).toContain('<details class="error-code" data-code="90005">');
      expect(reason).toContain(lang === 'en' ? 'code 90005' : '错误码 90005');
      expect(reason).toContain('all 1 seats of the product are in use (1 in use)');
      expect(page.body).toContain('href="/console/enterprise/usage"');
      nothingOf(page.body, b);
    });
  }

  it('exports the same numbers as CSV', async () => {
    const page = await a.console.get('/console/enterprise/usage?bucket=hour');
    const csv = await a.console.get('/console/enterprise/usage.csv?bucket=hour');
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('product,at,peakSeats,licensedSeats,seatHours,denied');
    expect(lines.slice(1).map((l) => l.split(',')[2])).toEqual(cells(page.body, 'peak'));
    expect(lines.slice(1).every((l) => l.startsWith(`${a.product},`))).toBe(true);
    nothingOf(csv.body, b);
  });

  it('shows nothing of another enterprise whose ids are in the query string', async () => {
    const ids = new URLSearchParams({
      product: b.product,
      enterprise: b.world.enterpriseGlobalId,
      enterpriseId: b.world.enterpriseGlobalId,
      assetNum: b.assetNum,
      bucket: 'hour',
    }).toString();
    const page = await a.console.get(`/console/enterprise/usage?${ids}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('data-series-count');
    expect(page.body).not.toContain(b.account);
    const csv = await a.console.get(`/console/enterprise/usage.csv?${ids}`);
    expect(csv.statusCode).toBe(200);
    expect(csv.body.trim().split('\r\n')).toEqual(['product,at,peakSeats,licensedSeats,seatHours,denied']);
    // B's own administrator sees his.
    const own = await b.console.get('/console/enterprise/usage');
    expect(own.body).toContain(`data-product="${b.product}"`);
    nothingOf(own.body, a);
  });

  it('is not open without an enterprise session', async () => {
    const anonymous = await h.app.inject({ method: 'GET', url: '/console/enterprise/usage.csv' });
    expect([302, 303, 401, 403]).toContain(anonymous.statusCode);
    expect(anonymous.body).not.toContain(a.product);
  });
});
