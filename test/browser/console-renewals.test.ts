import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetWorld, buyAsset, productSpec, type AssetWorld } from '../support/order-fixtures.js';
import { browserAvailable, signInOperator, startConsoleWorld, type ConsoleWorld } from './support/browser.js';

// Renewals in sight, as Chromium shows them: a license ending in 10 days on the operator's
// dashboard and on its enterprise's page, in English and Chinese, within a 1,280 px window.
// Screenshots of each go to a folder of this run (printed), to be looked at.

const DAY = 86_400_000;
const shots = path.join(os.tmpdir(), `keyward-renewals-${process.pid}`);

describe.runIf(browserAvailable())('renewals in the operator console (Chromium)', () => {
  let world: ConsoleWorld;
  let enterprise: AssetWorld;
  let assetNum: string;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    world = await startConsoleWorld();
    enterprise = await assetWorld(world.harness);
    assetNum = await buyAsset(enterprise, [
      productSpec({ limitEndDate: Date.now() + 10 * DAY, limitConcurrent: 5, productName: 'Modeler Pro' }),
    ]);
    ({ page, problems } = await world.newPage());
    await page.setViewportSize({ width: 1280, height: 900 });
    page.setDefaultTimeout(8000);
    mkdirSync(shots, { recursive: true });
    console.log(`renewals screenshots in ${shots}`);
  });
  afterAll(async () => {
    await world?.close();
  });

  /** The row of the world's license in the renewals section, and that the page fits the window. */
  async function renewalRow(lang: 'en' | 'zh-CN', url: string, shot: string) {
    await page.context().addCookies([{ name: 'keyward_lang', value: lang, url: world.url }]);
    await page.goto(url);
    const section = page.locator('section[data-expiring-licenses]');
    await section.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(shots, `${shot}-${lang}.png`), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${url} in ${lang} is wider than the window`).toBeLessThanOrEqual(0);
    return section.locator(`tr[data-asset="${assetNum}"]`);
  }

  it('shows a license ending in 10 days on the dashboard and its enterprise’s page, in both languages', async () => {
    await signInOperator(page);
    const dashboard = await renewalRow('en', '/console/operator', 'dashboard');
    await expect
      .poll(() => page.locator('section[data-expiring-licenses] h2').textContent())
      .toBe('Licenses ending within 30 days');
    expect(await dashboard.locator('td').nth(1).textContent()).toBe('10 days');
    expect(await dashboard.locator('td[data-seats]').textContent()).toBe('0 of 5');
    // One click from the dashboard to the license's enterprise (the asset number links to its own page).
    await dashboard
      .locator(`a[href="/console/operator/enterprises/${enterprise.enterpriseGlobalId}"]`)
      .click();
    await expect
      .poll(() => new URL(page.url()).pathname)
      .toBe(`/console/operator/enterprises/${enterprise.enterpriseGlobalId}`);
    expect(await page.locator(`section[data-expiring-licenses] tr[data-asset="${assetNum}"]`).count()).toBe(
      1,
    );

    const zh = await renewalRow('zh-CN', '/console/operator', 'dashboard');
    expect(await page.locator('section[data-expiring-licenses] h2').textContent()).toBe('30 天内到期的许可');
    expect(await zh.locator('td').nth(1).textContent()).toBe('10 天');
    expect(await zh.locator('td[data-seats]').textContent()).toBe('0 / 5');

    for (const lang of ['en', 'zh-CN'] as const) {
      const row = await renewalRow(
        lang,
        `/console/operator/enterprises/${enterprise.enterpriseGlobalId}`,
        'enterprise',
      );
      expect(await row.count()).toBe(1);
      expect(await row.locator('td').nth(2).textContent()).toBe(assetNum);
    }
    expect(problems).toEqual([]);
  });
});
