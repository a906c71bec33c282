import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY } from '../support/harness.js';
import { lockWith, runtimeWorld, type RuntimeWorld } from '../http/runtime-helpers.js';
import { refusedTenant } from '../usage/usage-tenant.js';
import {
  browserAvailable,
  signInEnterprise,
  signInOperator,
  startConsoleWorld,
  type ConsoleWorld,
} from './support/browser.js';
import { rollAll } from '../support/rollups.js';

// The usage pages in Chromium, in both languages: the charts are drawn (a path per series, not
// empty), the table view holds the very numbers the chart draws, no content-policy violation;
// and an enterprise's page shows nothing of another enterprise, whatever its query string names.

/** The chart's padding (src/http/console/usage/chart.tsx): values are read back from the paths. */
const PAD = 28;

interface Tenant {
  world: RuntimeWorld;
  products: string[];
  account: string;
}

/** The values a path draws, read back from its y coordinates and the chart's scale. */
function valuesOf(d: string, max: number, viewBox: string | null): number[] {
  const height = Number((viewBox ?? '').split(' ')[3]);
  return [...d.matchAll(/[ML][\d.]+ ([\d.]+)/g)].map((m) =>
    Math.round(((height - PAD - Number(m[1])) / (height - 2 * PAD)) * max),
  );
}

describe.runIf(browserAvailable())('usage pages (Chromium)', () => {
  let world: ConsoleWorld;
  let a: Tenant;
  let b: Tenant;

  /** A simulated month on two products, and an employee holding the one seat of a third. */
  async function tenant(): Promise<Tenant> {
    const h = world.harness;
    const runtime = await runtimeWorld(h);
    const products = [
      (await lockWith(runtime, { limitConcurrent: 5 })).crmProductId,
      (await lockWith(runtime, { limitConcurrent: 12 })).crmProductId,
    ];
    const simulated = await h.app.inject({
      method: 'POST',
      url: '/admin/usage/simulate',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: { enterprise: runtime.enterpriseGlobalId, app: runtime.app.appKey, days: 30 },
    });
    expect(simulated.statusCode, simulated.body).toBe(200);
    const refused = await refusedTenant(h, runtime);
    return { world: runtime, products: [...products, refused.product], account: refused.account };
  }

  beforeAll(async () => {
    world = await startConsoleWorld();
    a = await tenant();
    b = await tenant();
    await rollAll(world.harness.app.services.usageRollups);
  });
  afterAll(async () => {
    await world?.close();
  });

  async function opened(
    lang: 'en' | 'zh-CN',
    signIn: (page: Page) => Promise<void>,
  ): Promise<{ page: Page; problems: string[] }> {
    const { page, context, problems } = await world.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await context.addInitScript(() => {
      document.addEventListener(
        'securitypolicyviolation',
        (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`),
        true,
      );
    });
    await signIn(page);
    await context.addCookies([{ name: 'keyward_lang', value: lang, url: world.url }]);
    return { page, problems };
  }

  /** Each chart: its series' paths drawn, and its peak series equal to the table beside it. */
  async function chartsMatchTables(page: Page, scope: string, expectedSeries: number[]): Promise<void> {
    const charts = page.locator(`${scope} svg[data-series-count]`);
    expect(await charts.count()).toBe(expectedSeries.length);
    for (let i = 0; i < expectedSeries.length; i++) {
      const chart = charts.nth(i);
      expect(Number(await chart.getAttribute('data-series-count'))).toBe(expectedSeries[i]);
      const paths = chart.locator('path.series');
      expect(await paths.count()).toBe(expectedSeries[i]);
      for (const d of await paths.evaluateAll((els) => els.map((e) => e.getAttribute('d') ?? ''))) {
        expect(d).toMatch(/^M/);
      }
      const box = await chart.boundingBox();
      expect(box?.width ?? 0).toBeGreaterThan(200);
    }
  }

  /** The charts' panels side by side, two to a row: the same top, half the grid's width each. */
  async function twoPerRow(panels: Locator): Promise<void> {
    const boxes = await panels.evaluateAll((els) =>
      els.map((e) => {
        const r = e.getBoundingClientRect();
        return { x: r.x, y: r.y, width: r.width };
      }),
    );
    expect(boxes.length).toBeGreaterThanOrEqual(2);
    const grid = await panels.first().evaluate((e) => e.parentElement?.getBoundingClientRect().width ?? 0);
    boxes.forEach((box, i) => {
      const left = boxes[i - (i % 2)];
      expect(box.y).toBe(left?.y);
      expect(box.width).toBeGreaterThan(grid * 0.45);
      expect(box.width).toBeLessThan(grid * 0.55);
      if (i % 2 === 1) expect(box.x).toBeGreaterThan((left?.x ?? 0) + box.width);
    });
  }

  async function peaksAgree(page: Page, section: ReturnType<Page['locator']>): Promise<void> {
    const chart = section.locator('svg[data-series-count]').first();
    const max = Number(await chart.locator('text').first().textContent());
    const d = (await chart.locator('path.series.peak').getAttribute('d')) ?? '';
    const table = (await section.locator('table.usage-table td.peak').allTextContents()).map(Number);
    expect(table.length).toBeGreaterThan(0);
    expect(valuesOf(d, max, await chart.getAttribute('viewBox'))).toEqual(table);
    expect(table.some((v) => v > 0)).toBe(true);
  }

  /**
   * The pointer over a chart's point: the element under it is that point's column, shaded, whose
   * `<title>` (the browser's hover text) names its time and the peak its table holds.
   */
  async function hoverSaysValues(page: Page, section: Locator): Promise<void> {
    const chart = section.locator('svg[data-series-count]').first();
    const table = await section
      .locator('table.usage-table tbody tr')
      .evaluateAll((rows) =>
        rows.map((r) => [
          r.querySelector('td')?.textContent ?? '',
          r.querySelector('td.peak')?.textContent ?? '',
        ]),
      );
    const columns = chart.locator('rect.point');
    expect(await columns.count()).toBe(table.length);
    // The pointer reaches what is on the screen only.
    await chart.scrollIntoViewIfNeeded();
    for (const i of [0, Math.floor(table.length / 2), table.length - 1]) {
      const box = await columns.nth(i).boundingBox();
      if (box === null) throw new Error(`column ${i} is not drawn`);
      const x = Math.min(Math.max(box.x + box.width / 2, box.x + 1), box.x + box.width - 1);
      const y = box.y + box.height / 2;
      await page.mouse.move(x, y);
      const under = await page.evaluate(
        ([px, py]) => {
          const element = document.elementFromPoint(px ?? 0, py ?? 0);
          return {
            what: element?.outerHTML.slice(0, 200) ?? 'nothing',
            index: element?.getAttribute('data-index') ?? null,
            title: element?.querySelector('title')?.textContent ?? '',
            fill: element === null ? '' : getComputedStyle(element).fill,
          };
        },
        [x, y],
      );
      const [time = '', peak = ''] = table[i] ?? [];
      expect(under.index, under.what).toBe(String(i));
      expect(under.title.startsWith(`${time} — `)).toBe(true);
      expect(under.title).toMatch(new RegExp(` ${peak}( ·|$)`));
      expect(under.fill).not.toBe('rgba(0, 0, 0, 0)');
    }
  }

  for (const lang of ['en', 'zh-CN'] as const) {
    it(`operator usage page in ${lang}: each full license, the platform's two charts, hover values`, async () => {
      const { page, problems } = await opened(lang, signInOperator);
      await page.goto(`/console/operator/usage?enterprise=${a.world.enterpriseGlobalId}`);
      expect(await page.locator('h1').textContent()).toBe(lang === 'en' ? 'Usage' : '用量');
      // Saturation first: each license at capacity in its own chart, above the platform's total.
      const full = page.locator('section.usage.saturated section.usage-license');
      expect(await full.count()).toBeGreaterThan(0);
      for (let i = 0; i < (await full.count()); i++) await peaksAgree(page, full.nth(i));
      const fullTop = (await full.first().boundingBox())?.y ?? Infinity;
      expect(fullTop).toBeLessThan((await page.locator('section.usage.platform').boundingBox())?.y ?? 0);
      await chartsMatchTables(page, 'section.usage.platform', [2, 1]);
      await twoPerRow(page.locator('section.usage.platform .chart-grid > .chart-panel'));
      await peaksAgree(page, page.locator('section.usage.platform'));
      await hoverSaysValues(page, page.locator('section.usage.platform'));
      await hoverSaysValues(page, full.first());
      const denied = (
        await page.locator('section.usage.platform table.usage-table td.denied').allTextContents()
      ).map(Number);
      const chart = page.locator('section.usage.platform svg[data-series-count="1"]');
      const max = Number(await chart.locator('text').first().textContent());
      const d = (await chart.locator('path.series').getAttribute('d')) ?? '';
      expect(valuesOf(d, max, await chart.getAttribute('viewBox'))).toEqual(denied);
      expect(denied.some((v) => v > 0)).toBe(true);
      await page.goto('/console/operator');
      expect(await page.locator('svg.sparkline').count()).toBe(2);
      expect(await page.locator('nav.main-nav a[href="/console/operator/usage"]').count()).toBe(1);
      expect(problems).toEqual([]);
    });

    it(`enterprise usage page in ${lang}: a chart per product, its table, and nothing of another`, async () => {
      const { page, problems } = await opened(lang, (p) =>
        signInEnterprise(p, a.world.admin.account, a.world.admin.password),
      );
      await page.goto('/console/enterprise/usage');
      await chartsMatchTables(page, 'section.usage', [2, 2, 2]);
      await twoPerRow(page.locator('section.usage .chart-grid > .chart-panel'));
      for (const product of a.products) {
        await peaksAgree(page, page.locator(`section.usage-product[data-product="${product}"]`));
      }
      await hoverSaysValues(page, page.locator(`section.usage-product[data-product="${a.products[0]}"]`));
      const text = (await page.locator('main').textContent()) ?? '';
      expect(text).toContain(a.account);
      // The refusal's reason in the page's language; its code folded under Details, for support.
      const reason = page.locator('section.refusals td.reason').first();
      expect(await reason.innerText()).toMatch(
        lang === 'en'
          ? /^All 1 seats of the product are in use \(1 in use\)\./
          : /^该产品的 1 个席位已全部占用（在用 1 个）。/,
      );
      const code = reason.locator('details.error-code .code');
      expect(await code.isVisible()).toBe(false);
      await reason.locator('details.error-code summary').click();
      expect(await code.innerText()).toBe(lang === 'en' ? 'code 90005' : '错误码 90005');
      for (const other of [...b.products, b.account, b.world.enterpriseGlobalId]) {
        expect(text).not.toContain(other);
      }
      expect(await page.locator('nav.main-nav a[href="/console/enterprise/usage"]').count()).toBe(1);
      // Another enterprise's ids in the query string: none of its numbers, products or people.
      for (const query of [
        `product=${b.products[0]}`,
        `enterprise=${b.world.enterpriseGlobalId}&product=${b.products[2]}`,
        `enterpriseId=${b.world.enterpriseGlobalId}`,
      ]) {
        await page.goto(`/console/enterprise/usage?${query}`);
        const shown = (await page.locator('main').textContent()) ?? '';
        expect(shown).not.toContain(b.account);
        for (const product of b.products) {
          expect(await page.locator(`[data-product="${product}"]`).count()).toBe(0);
        }
      }
      // A range chosen in the form: the days chosen, drawn and listed, and the CSV link keeps them.
      const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
      await page.goto('/console/enterprise/usage');
      await page.locator('#field-from').fill(day(-2));
      await page.locator('#field-to').fill(day(0));
      await page.locator('form.filters button[type="submit"]').click();
      await page.waitForURL(/from=/);
      const panel = page.locator(`section.usage-product[data-product="${a.products[2]}"]`);
      expect(await panel.locator('table.usage-table tbody tr').count()).toBe(3);
      await peaksAgree(page, panel);
      const csv = (await page.locator('section.usage a[download]').getAttribute('href')) ?? '';
      expect(csv).toContain(`from=${day(-2)}`);
      expect(csv).toContain(`to=${day(0)}`);
      // A reversed range: named under From, in the page's language, and nothing drawn.
      await page.locator('#field-from').fill(day(0));
      await page.locator('#field-to').fill(day(-2));
      await page.locator('form.filters button[type="submit"]').click();
      await page.waitForURL(new RegExp(`from=${day(0)}`));
      expect(await page.locator('#field-from-error').innerText()).toBe(
        lang === 'en' ? 'The first day must not be after the last.' : '开始日期不能晚于结束日期。',
      );
      expect(await page.locator('#field-from').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('svg[data-series-count]').count()).toBe(0);
      expect(problems).toEqual([]);
    });
  }
});
