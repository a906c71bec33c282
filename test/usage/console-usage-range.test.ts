import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorClient, type ConsoleClient } from '../support/console-client.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { consoleTenant, type ConsoleTenant } from './usage-tenant.js';
import { rollAll } from '../support/rollups.js';

// The usage pages' date range (from, to: UTC days, blank for the default): both pages and their
// CSV read the days chosen, a year by day fits, and a date that is not a day, a reversed or too
// long range, a control character or a 10 kB value is named next to its field or refused as
// input, never answered with 500. The enterprise page stays its session's enterprise's.

const DAY_MS = 86_400_000;

let h: Harness;
let a: ConsoleTenant;
let b: ConsoleTenant;
let op: ConsoleClient;

beforeAll(async () => {
  h = await startHarness();
  a = await consoleTenant(h);
  b = await consoleTenant(h);
  await rollAll(h.app.services.usageRollups);
  op = await operatorClient(h);
});
afterAll(async () => h.close());

const day = (offset: number) => new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);

/**
 * The page without the operator's charts of each license at capacity (the same range, license by
 * license): what is left is one series, the platform's or the product's.
 */
function series(body: string): string {
  const start = body.indexOf('<section class="usage saturated">');
  return start < 0
    ? body
    : body.slice(0, start) + body.slice(body.indexOf('<section class="licenses', start));
}

/** The table view's times, one a bucket. */
function times(body: string): string[] {
  return [...series(body).matchAll(/<tr data-at="\d+"><td[^>]*>(?:<[^>]+>)*([^<]*)</g)].map(
    (m) => m[1] ?? '',
  );
}

function cells(body: string, cls: string): string[] {
  // A DataTable cell: its kind and class, the value inside whatever elements its kind wraps it in.
  return [...series(body).matchAll(new RegExp(`<td [^>]*class="${cls}"[^>]*>(?:<[^>]+>)*([^<]*)<`, 'g'))].map(
    (m) => m[1] ?? '',
  );
}

/** The sentence shown under a field, if any. */
function fieldError(body: string, field: string): string | undefined {
  return new RegExp(`<small id="field-${field}-error"[^>]*>([^<]*)</small>`).exec(body)?.[1];
}

function csvHref(body: string): string {
  const href = /<a href="([^"]*\.csv\?[^"]*)" download/.exec(body)?.[1];
  expect(href, 'a CSV link').toBeDefined();
  return (href as string).replace(/&amp;/g, '&');
}

/**
 * A filter a page cannot apply: the page answers with the sentence under `field` and draws nothing;
 * its CSV is refused (400) naming the field.
 */
async function expectNamed(
  page: { name: string; client: ConsoleClient; url: string },
  query: string,
  field: 'from' | 'to',
  sentence: string | RegExp,
  headers: Record<string, string> = {},
): Promise<void> {
  const where = `${page.name} ${query}`;
  const shown = await page.client.get(`${page.url}&${query}`, headers);
  expect(shown.statusCode, where).toBe(200);
  expect(fieldError(shown.body, field), where).toMatch(sentence);
  expect(shown.body, where).toContain(`id="field-${field}" name="${field}" type="date"`);
  expect(shown.body, where).toContain('aria-invalid="true"');
  expect(shown.body, where).not.toContain('data-series-count');
  const csv = await page.client.get(`${page.url.replace('/usage?', '/usage.csv?')}&${query}`);
  expect(csv.statusCode, where).toBe(400);
  expect(csv.body, where).toMatch(new RegExp(`^${field}: `));
}

const pages = () =>
  [
    { name: 'operator', client: op, url: `/console/operator/usage?product=${a.product}` },
    { name: 'enterprise', client: a.console, url: `/console/enterprise/usage?product=${a.product}` },
  ] as const;

describe('the usage pages\u2019 date range', () => {
  it('shows the days chosen, its refusal on the day it happened, and a CSV of the same range', async () => {
    for (const { name, client, url } of pages()) {
      const page = await client.get(`${url}&from=${day(-2)}&to=${day(0)}`);
      expect(page.statusCode, `${name}: ${page.body}`).toBe(200);
      expect(times(page.body), name).toEqual([day(-2), day(-1), day(0)]);
      expect(cells(page.body, 'denied'), name).toEqual(['0', '0', '1']);
      expect(page.body, name).toContain(`value="${day(-2)}"`);
      const href = csvHref(page.body);
      expect(href, name).toContain(`from=${day(-2)}`);
      expect(href, name).toContain(`to=${day(0)}`);
      const csv = await client.get(href);
      expect(csv.statusCode, name).toBe(200);
      const rows = csv.body.trim().split('\r\n').slice(1);
      expect(
        rows.map((r) => /\d{4}-\d\d-\d\dT/.exec(r)?.[0].slice(0, 10)),
        name,
      ).toEqual([day(-2), day(-1), day(0)]);
    }
  });

  it('lists who was refused in the range only; who holds a seat now whatever the range', async () => {
    const year = new Date().getUTCFullYear() - 1;
    const page = await a.console.get(`/console/enterprise/usage?from=${year}-03-01&to=${year}-03-31`);
    expect(page.statusCode).toBe(200);
    const refusals = /<section class="refusals">(.*?)<\/section>/s.exec(page.body)?.[1] ?? '';
    expect(refusals).toContain('Nobody was refused a seat in this period.');
    expect(refusals).not.toContain(a.account);
    const holders = /<section class="holders">(.*?)<\/section>/s.exec(page.body)?.[1] ?? '';
    expect(holders).toContain(a.account);
    const today = await a.console.get(`/console/enterprise/usage?from=${day(0)}`);
    expect(/<section class="refusals">(.*?)<\/section>/s.exec(today.body)?.[1]).toContain(a.account);
  });

  it('takes a year by day, and a leap year\u2019s 366 days', async () => {
    for (const { name, client, url } of pages()) {
      for (const days of [365, 366]) {
        const page = await client.get(`${url}&from=${day(1 - days)}&to=${day(0)}&bucket=day`);
        expect(page.statusCode, name).toBe(200);
        expect(fieldError(page.body, 'from'), name).toBeUndefined();
        const shown = times(page.body);
        expect(shown, name).toHaveLength(days);
        expect([shown[0], shown.at(-1)], name).toEqual([day(1 - days), day(0)]);
        expect(cells(page.body, 'denied').at(-1), name).toBe('1');
      }
    }
    // A calendar year with nothing in it: every day of it on the operator's page, each zero.
    const empty = await op.get(`/console/operator/usage?product=${a.product}&from=2024-01-01&to=2024-12-31`);
    expect(times(empty.body)).toHaveLength(366);
    expect(new Set(cells(empty.body, 'peak'))).toEqual(new Set(['0']));
  });

  it('names the field of a date that is not a day, in the page\u2019s language', async () => {
    const notADay = 'This is not a day: write it as YYYY-MM-DD.';
    for (const page of pages()) {
      await expectNamed(page, 'from=2025-02-30', 'from', notADay);
      await expectNamed(page, 'from=yesterday', 'from', notADay);
      await expectNamed(page, 'to=2025-13-01', 'to', notADay);
      await expectNamed(page, 'to=2025-1-1', 'to', notADay);
      await expectNamed(page, 'from=2025-02-30', 'from', '这不是有效的日期，请按 YYYY-MM-DD 填写。', {
        'accept-language': 'zh-CN',
      });
    }
  });

  it('names `from` when the range is reversed or too long', async () => {
    for (const page of pages()) {
      const reversed = 'from=2025-03-10&to=2025-03-01';
      await expectNamed(page, reversed, 'from', 'The first day must not be after the last.');
      await expectNamed(page, reversed, 'from', '开始日期不能晚于结束日期。', { 'accept-language': 'zh-CN' });
      expect(fieldError((await page.client.get(`${page.url}&${reversed}`)).body, 'to')).toBeUndefined();
      // One day is a range: from and to the same day.
      const one = await page.client.get(`${page.url}&from=${day(0)}&to=${day(0)}`);
      expect(times(one.body), page.name).toEqual([day(0)]);
      // The ends of the calendar by day are more than one answer holds.
      await expectNamed(page, 'from=1970-01-01&to=9998-12-31', 'from', /^At most 8784 periods in one view/);
      // By hour a page draws 31 days at most (each hour a point and a row); the 32nd is refused,
      // also when `to` is left to today.
      const hours = /^At most 744 periods in one view/;
      await expectNamed(page, 'from=2025-01-01&to=2025-02-01&bucket=hour', 'from', hours);
      await expectNamed(page, `from=${day(-40)}&bucket=hour`, 'from', hours);
      await expectNamed(page, 'from=2024-01-01&to=2025-12-31&bucket=hour', 'from', hours);
      const month = await page.client.get(`${page.url}&from=2025-01-01&to=2025-01-31&bucket=hour`);
      expect(month.statusCode, page.name).toBe(200);
      expect(fieldError(month.body, 'from'), page.name).toBeUndefined();
    }
  });

  it('names the field of a day too early or too late to count, never failing', async () => {
    const outside = 'Choose a day from 1970-01-01 to 9998-12-31.';
    for (const page of pages()) {
      await expectNamed(page, 'to=0001-01-01', 'to', outside);
      await expectNamed(page, 'from=0000-01-01&to=0000-01-31', 'from', outside);
      await expectNamed(page, 'from=1969-12-31', 'from', outside);
      await expectNamed(page, 'from=9999-12-01', 'from', outside);
      await expectNamed(page, 'to=9999-12-31', 'to', outside);
      // The first and the last day that count are shown.
      for (const query of ['to=1970-01-05', 'from=9998-12-31&to=9998-12-31']) {
        const shown = await page.client.get(`${page.url}&${query}`);
        expect(shown.statusCode, `${page.name} ${query}`).toBe(200);
        expect(shown.body, `${page.name} ${query}`).not.toContain('field-error');
      }
    }
    // The admin API behind the operator's page: the same refusal, as input (it answered 500).
    for (const query of ['to=9999-12-31T23:00:00Z', 'from=0000-06-01T00:00:00Z&to=0000-06-30T00:00:00Z']) {
      const api = await h.app.inject({
        method: 'GET',
        url: `/admin/usage?${query}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(api.statusCode, query).toBe(400);
      expect(api.body, query).toContain('must be a day from 1970-01-01 to 9998-12-31');
    }
    const early = await op.get(`/console/operator/usage?to=1970-01-05`);
    expect(times(early.body)).toEqual(['1970-01-01', '1970-01-02', '1970-01-03', '1970-01-04', '1970-01-05']);
  });

  it('refuses a control character as input naming the field, and a 10 kB value cleanly', async () => {
    for (const { name, client, url } of pages()) {
      for (const field of ['from', 'to']) {
        const bell = await client.get(`${url}&${field}=2025-01-01%07`);
        expect(bell.statusCode, `${name} ${field}`).toBe(400);
        expect(bell.body, `${name} ${field}`).toContain(`${field}: must not contain the character U+0007`);
        const long = await client.get(`${url}&${field}=${'9'.repeat(10_000)}`);
        expect(long.statusCode, `${name} ${field}`).toBe(200);
        expect(fieldError(long.body, field), `${name} ${field}`).toBe(
          'This is not a day: write it as YYYY-MM-DD.',
        );
        // The field shows at most what a date could be, not the whole value again.
        const shown = new RegExp(`id="field-${field}" name="${field}" type="date" value="([^"]*)"`).exec(
          long.body,
        );
        expect(shown?.[1]?.length, `${name} ${field}`).toBeLessThanOrEqual(40);
      }
      const product = await client.get(`${url.split('?')[0]}?product=${'p'.repeat(10_000)}&from=${day(-1)}`);
      expect(product.statusCode, name).toBe(200);
      const typed = /name="product"[^>]* value="([^"]*)"|<option value="(p+)"/.exec(product.body);
      expect((typed?.[1] ?? typed?.[2] ?? '').length, name).toBe(255);
    }
  });

  it('keeps the enterprise page to its own enterprise whatever the range and the query name', async () => {
    const ids = new URLSearchParams({
      product: b.product,
      enterprise: b.world.enterpriseGlobalId,
      enterpriseId: b.world.enterpriseGlobalId,
      from: day(-3),
      to: day(0),
      bucket: 'day',
    }).toString();
    const page = await a.console.get(`/console/enterprise/usage?${ids}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('data-series-count');
    expect(page.body).not.toContain(b.account);
    expect(page.body).not.toContain(`data-product="${b.product}"`);
    const csv = await a.console.get(`/console/enterprise/usage.csv?${ids}`);
    expect(csv.statusCode).toBe(200);
    expect(csv.body.trim().split('\r\n')).toEqual(['product,at,peakSeats,licensedSeats,seatHours,denied']);
    // Without the product filter: A's own product and employee, none of B's.
    const own = await a.console.get(
      `/console/enterprise/usage?enterprise=${b.world.enterpriseGlobalId}&from=${day(-3)}`,
    );
    expect(own.body).toContain(`data-product="${a.product}"`);
    expect(own.body).toContain(a.account);
    expect(own.body).not.toContain(b.account);
    expect(own.body).not.toContain(b.product);
    const href = csvHref(own.body);
    expect(href.split('?')[1]).not.toContain('enterprise');
    expect((await a.console.get(href)).body).not.toContain(b.product);
  });
});
