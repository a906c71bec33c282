import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetWorld, type AssetWorld } from '../support/order-fixtures.js';
import {
  browserAvailable,
  signInEnterprise,
  signInOperator,
  startConsoleWorld,
  type ConsoleWorld,
} from './support/browser.js';

// A filter's text field shows its whole placeholder, in both languages: cut, "Search by name or
// accou" or "名称、企业编码、全局 ID 或" leaves the reader to guess what the field takes.

const PAGES = {
  operator: ['/console/operator/enterprises', '/console/operator/leases'],
  enterprise: ['/console/enterprise'],
};

/** The placeholders wider than their field's text box, with both widths. */
function cutPlaceholders(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const canvas = document.createElement('canvas').getContext('2d');
    if (canvas === null) return ['no canvas'];
    const cut: string[] = [];
    for (const input of Array.from(document.querySelectorAll<HTMLInputElement>('input[placeholder]'))) {
      if (input.placeholder === '') continue;
      const style = getComputedStyle(input);
      canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const needed = canvas.measureText(input.placeholder).width;
      const box = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      if (needed > box) cut.push(`"${input.placeholder}" needs ${Math.ceil(needed)} px, has ${box} px`);
    }
    return cut;
  });
}

describe.runIf(browserAvailable())('search fields (Chromium)', () => {
  let world: ConsoleWorld;
  let enterprise: AssetWorld;

  beforeAll(async () => {
    world = await startConsoleWorld();
    enterprise = await assetWorld(world.harness);
  });
  afterAll(async () => {
    await world?.close();
  });

  it('show their whole placeholder, in English and in Chinese', { timeout: 60_000 }, async () => {
    const operator = await world.newPage();
    await operator.page.setViewportSize({ width: 1280, height: 800 });
    await signInOperator(operator.page);
    const admin = await world.newPage();
    await admin.page.setViewportSize({ width: 1280, height: 800 });
    await signInEnterprise(admin.page, enterprise.admin.account, enterprise.admin.password);
    for (const lang of ['en-US', 'zh-CN']) {
      for (const [{ page }, urls] of [
        [operator, PAGES.operator],
        [admin, PAGES.enterprise],
      ] as const) {
        await page.context().addCookies([{ name: 'keyward_lang', value: lang, url: world.url }]);
        for (const url of urls) {
          await page.goto(url);
          expect(await page.locator('input[placeholder]').count(), url).toBeGreaterThan(0);
          expect(await cutPlaceholders(page), `${url} (${lang})`).toEqual([]);
        }
      }
    }
    expect([...operator.problems, ...admin.problems]).toEqual([]);
  });
});
