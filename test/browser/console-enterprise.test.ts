import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueCode } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetWorld,
  buyAsset,
  buyLentLock,
  type AssetWorld,
} from '../support/order-fixtures.js';
import {
  browserAvailable,
  signInEnterprise,
  startConsoleWorld,
  type ConsoleWorld,
} from './support/browser.js';

const XSS_NAME = '<img src=x onerror=alert(1)>';

/** The employee list's row for an account, as text. */
async function rowOf(page: Page, account: string): Promise<string> {
  await page.goto(`/console/enterprise?q=${encodeURIComponent(account)}`);
  return (await page.locator('tbody tr', { hasText: account }).first().textContent()) ?? '';
}

describe.runIf(browserAvailable())('enterprise console (Chromium)', () => {
  let world: ConsoleWorld;
  let enterprise: AssetWorld;
  let asset: string;
  let lock: string;
  const alerts: string[] = [];

  beforeAll(async () => {
    world = await startConsoleWorld();
    enterprise = await assetWorld(world.harness);
    asset = await buyAsset(enterprise);
    lock = await buyLentLock(enterprise);
  });
  afterAll(async () => {
    await world?.close();
  });
  /** Script errors and content-policy violations of every signed-in page (browser.ts). */
  const pageProblems: string[][] = [];

  async function signedIn(): Promise<Page> {
    const { page, problems: own } = await world.newPage();
    pageProblems.push(own);
    page.on('dialog', (dialog) => {
      if (dialog.type() === 'alert') alerts.push(dialog.message());
      void dialog.accept();
    });
    await signInEnterprise(page, enterprise.admin.account, enterprise.admin.password);
    return page;
  }

  it('adds employees by form and CSV, assigns an asset, lends and returns, and the list follows', async () => {
    const page = await signedIn();
    const code = enterprise.enterpriseCode;

    // One by the form.
    const formUser = uniqueCode('f');
    await page.getByRole('link', { name: 'Add an employee' }).click();
    await page.getByLabel('Account name').fill(formUser);
    await page.getByLabel('Password').fill('Form-pass12');
    await page.getByLabel('Name', { exact: true }).fill('Form Person');
    await page.getByLabel('Department id').fill('2');
    await page.getByRole('button', { name: 'Add employee' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('The employee was added.');
    expect(await rowOf(page, `${formUser}@${code}`.toLowerCase())).toContain('Form Person');

    // Two by CSV, with a bad row between them that is reported while the others are kept.
    const good1 = uniqueCode('c');
    const good2 = uniqueCode('c');
    const bad = uniqueCode('c');
    const csv = [
      'userName,password,name,departmentId,mobile',
      `${good1},Csv-pass123,Csv One,1,13800138000`,
      `${bad},short,Csv Bad,1,`,
      `${good2},Csv-pass456,"${XSS_NAME}",1,`,
    ].join('\r\n');
    await page.goto('/console/enterprise/members/import');
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name: 'staff.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('2 added, 1 not added.');
    const rows = await page.locator('tbody tr').allTextContents();
    expect(rows).toHaveLength(3);
    expect(rows[0]).toContain(good1);
    expect(rows[0]).toContain('added');
    expect(rows[1]).toContain('3');
    expect(rows[1]).toContain(bad);
    expect(rows[1]).toContain('50003');
    expect(rows[1]).toContain('Password: The password must be 8 to 16 characters long.');
    expect(rows[2]).toContain(good2);

    await page.goto('/console/enterprise');
    const names = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(names).toEqual(expect.arrayContaining(['Form Person', 'Csv One', XSS_NAME]));
    expect(names).not.toContain('Csv Bad');
    // The name is text: no element was made of it, and nothing ran.
    expect(await page.locator('main img').count()).toBe(0);
    expect(alerts).toEqual([]);

    // Assign the asset to the first CSV employee on the assets page.
    const holder = `${good1}@${code}`.toLowerCase();
    await page.getByRole('link', { name: 'Assets', exact: true }).click();
    await page.getByLabel('Asset number').fill(asset);
    await page.getByLabel('Employee account').fill(good1);
    await page.getByRole('button', { name: 'Assign' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('The asset was assigned.');
    expect(await page.locator('tbody tr', { hasText: asset }).textContent()).toContain(holder);
    expect(await rowOf(page, holder)).toContain(asset);

    // Lend it to the lent lock from the employee's page; the list shows the lock.
    await page.getByRole('link', { name: holder }).first().click();
    await page.getByLabel('Lent lock').selectOption(lock);
    // Nothing is ticked until the administrator chooses what goes on the lock.
    const offered = page.locator('input[name="assetIds"]');
    expect(await offered.count()).toBeGreaterThan(0);
    expect(await page.locator('input[name="assetIds"]:checked').count()).toBe(0);
    await page.getByRole('checkbox', { name: asset }).check();
    await page.getByRole('button', { name: 'Lend' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toContain('The assets were lent to the lock.');
    expect(await rowOf(page, holder)).toContain(lock);

    // Return it from the lent locks page; the list no longer shows the lock.
    await page.getByRole('link', { name: 'Lent locks' }).click();
    const lockRow = page.locator('tbody tr', { hasText: lock });
    expect(await lockRow.textContent()).toContain(holder);
    await lockRow.getByRole('button', { name: 'Return' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('The lent lock was returned.');
    expect(await page.locator('tbody tr', { hasText: lock }).textContent()).toContain('Free');
    expect(await rowOf(page, holder)).not.toContain(lock);
  });

  it("answers 404 for another enterprise's member and asset ids in the URL", async () => {
    const other = await assetWorld(world.harness);
    const stranger = await addMember(other);
    const theirAsset = await assetIdOf(other, await buyAsset(other));
    const page = await signedIn();
    const member = await page.goto(`/console/enterprise/members/${stranger.globalId}`);
    expect(member?.status()).toBe(404);
    expect(await page.getByRole('alert').textContent()).toContain('Not found');
    const assetPage = await page.goto(`/console/enterprise/assets/${theirAsset}`);
    expect(assetPage?.status()).toBe(404);
    const mine = await page.goto(`/console/enterprise/assets/${await assetIdOf(enterprise, asset)}`);
    expect(mine?.status()).toBe(200);
  });

  it('shows the lockout message after five wrong passwords', async () => {
    const locked = await assetWorld(world.harness);
    const { page } = await world.newPage();
    const attempt = async (password: string) => {
      await page.goto('/console/sign-in');
      await page.getByLabel('Account').fill(locked.admin.account);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      return (await page.getByRole('alert').textContent()) ?? '';
    };
    // The 3rd and 4th failures make the next try wait 2 s and 4 s; a try during the wait is
    // answered with the lockout message without being counted, so each wrong password waits it out.
    for (let refused = 0; refused < 5;) {
      const answer = await attempt(`wrong-${refused}`);
      if (answer.includes('Wrong account or password')) refused++;
      else await page.waitForTimeout(1000);
    }
    expect(await attempt(locked.admin.password)).toContain('Too many failed attempts');
    // Longer than any slow-down: the fifth failure locked the account here for a quarter of an hour.
    await page.waitForTimeout(5000);
    expect(await attempt(locked.admin.password)).toContain('Too many failed attempts');
  });

  // Last: every page the tests above opened ran its script without a content-policy violation.
  it('logged no script error or content-policy violation on any page', () => {
    expect(pageProblems.length).toBeGreaterThan(0);
    expect(pageProblems.flat()).toEqual([]);
  });
});
