import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkIn,
  checkOut,
  fingerprint,
  leaseOf,
  runtimeWorld,
  type RuntimeWorld,
} from '../http/runtime-helpers.js';
import { buyAsset, productSpec } from '../support/order-fixtures.js';
import { browserAvailable, signInOperator, startConsoleWorld, type ConsoleWorld } from './support/browser.js';

/** A lease's row in the list: its fingerprint (shortened on screen) is the title of its machine cell. */
const leaseRow = (page: Page, fp: string) =>
  page.locator('table.leases tbody tr', { has: page.locator(`code[title="${fp}"]`) });

// Each step waits for the next page to load (waitForURL, a locator's wait) before reading it.
describe.runIf(browserAvailable())('console Leases page (Chromium)', () => {
  let world: ConsoleWorld;
  let runtime: RuntimeWorld;
  let page: Page;
  let problems: string[] = [];
  const live = fingerprint();
  const ended = fingerprint();
  const elsewhere = fingerprint();
  let assetNum = '';
  let crmProductId = '';

  beforeAll(async () => {
    world = await startConsoleWorld();
    runtime = await runtimeWorld(world.harness);
    const product = productSpec({ productName: 'Leased <i>tool</i>' });
    crmProductId = product.crmProductId as string;
    assetNum = await buyAsset(runtime, [product]);
    leaseOf(await checkOut(runtime, { assetNum, crmProductId, fingerprint: live }));
    const gone = leaseOf(await checkOut(runtime, { assetNum, crmProductId, fingerprint: ended }));
    leaseOf(await checkIn(runtime, gone, ended));
    const other = productSpec();
    const otherAsset = await buyAsset(runtime, [other]);
    leaseOf(
      await checkOut(runtime, {
        assetNum: otherAsset,
        crmProductId: other.crmProductId as string,
        fingerprint: elsewhere,
      }),
    );
    ({ page, problems } = await world.newPage());
    page.setDefaultTimeout(8000);
  });
  afterAll(async () => {
    await world?.close();
  });

  it('opens Leases from the navigation, shows the lease, and narrows the list with the filter', async () => {
    await signInOperator(page);
    await page.getByRole('link', { name: 'Leases', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/console/operator/leases');
    expect(await page.getByRole('link', { name: 'Leases', exact: true }).getAttribute('aria-current')).toBe(
      'page',
    );

    expect(await page.getByRole('heading', { name: 'Seats in use now' }).count()).toBe(1);

    // This world's app: both live leases; the checked-in one only when ended leases are included.
    // (Unfiltered, the newest 100 of a shared database need not hold them.)
    await page.getByLabel('App key').fill(runtime.app.appKey);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('app') === runtime.app.appKey);
    expect(await leaseRow(page, live).count()).toBe(1);
    expect(await leaseRow(page, elsewhere).count()).toBe(1);
    expect(await leaseRow(page, ended).count()).toBe(0);
    const row = leaseRow(page, live);
    expect(await row.textContent()).toContain('Leased <i>tool</i>');
    expect(await row.locator('i').count()).toBe(0);
    expect(await row.textContent()).toContain(assetNum);
    // The machine's fingerprint is shortened on screen; its copy button (console.js) copies it whole.
    expect(await row.locator('td.machine button.copy').getAttribute('data-copy')).toBe(live);

    await page.getByLabel('App key').fill('');
    await page.getByLabel('Asset number').fill(assetNum);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('assetNum') === assetNum);
    expect(await leaseRow(page, live).count()).toBe(1);
    expect(await leaseRow(page, elsewhere).count()).toBe(0);
    expect(await page.getByLabel('Asset number').inputValue()).toBe(assetNum);

    await page.getByLabel('include ended leases').check();
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('all') === '1');
    const rows = await page
      .locator('table.leases td.machine code.ident')
      .evaluateAll((cells) => cells.map((c) => c.getAttribute('title')));
    expect(rows.sort()).toEqual([ended, live].sort());
    expect(await leaseRow(page, ended).textContent()).toContain('checked in');
    // Live and ended leases are two tables.
    expect(
      await page.locator('table.leases.live', { has: page.locator(`code[title="${live}"]`) }).count(),
    ).toBe(1);
    expect(
      await page.locator('table.leases.ended', { has: page.locator(`code[title="${ended}"]`) }).count(),
    ).toBe(1);
    expect(await page.getByLabel('include ended leases').isChecked()).toBe(true);
  });

  it('switches to Chinese and keeps the filter', async () => {
    await page.selectOption('select[name="lang"]', 'zh-CN');
    await page.locator('h1', { hasText: '租约' }).waitFor();
    expect(new URL(page.url()).searchParams.get('assetNum')).toBe(assetNum);
    expect(await leaseRow(page, ended).textContent()).toContain('已签入');
  });

  // Last: the page ran its script without an error or a content-policy violation.
  it('logged no script error or content-policy violation', () => {
    expect(problems).toEqual([]);
  });
});
