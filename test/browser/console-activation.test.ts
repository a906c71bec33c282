import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createActivationRequest,
  verifyActivation,
  type JSONWebKeySet,
} from '../../packages/client/src/index.js';
import { lockWith, runtimeWorld, type RuntimeWorld } from '../http/runtime-helpers.js';
import { ADMIN_KEY } from '../support/harness.js';
import {
  browserAvailable,
  openAdminKeyForm,
  startConsoleWorld,
  type ConsoleWorld,
} from './support/browser.js';

// Offline activation in Chromium, as an administrator does it: the SDK (here the TypeScript one)
// writes a request, the console turns it into an answer code, its QR code and an answer file, and
// the SDK verifies each. KEYWARD_WRITE_SCREENSHOTS=1 saves the pages, in both languages, to docs/img.

const SHOTS =
  process.env.KEYWARD_WRITE_SCREENSHOTS === '1'
    ? path.resolve(import.meta.dirname, '../../docs/img')
    : undefined;

/** Sign-ins by the fields' names, whatever the page's language. */
async function signIn(
  page: Page,
  as: { account: string; password: string } | { adminKey: string },
): Promise<void> {
  if ('adminKey' in as) {
    await page.goto('/console/operator/sign-in');
    await openAdminKeyForm(page);
    await page.locator('input[name="adminKey"]').fill(as.adminKey);
    await page.locator('form:has(input[name="adminKey"]) button[type="submit"]').click();
  } else {
    await page.goto('/console/sign-in');
    await page.locator('input[name="userName"]').fill(as.account);
    await page.locator('input[name="password"]').fill(as.password);
    await page.locator('form[method="post"] button[type="submit"]').click();
  }
  await page.waitForURL(/\/console\/(operator|enterprise)$/);
}

async function shoot(page: Page, name: string): Promise<void> {
  if (SHOTS !== undefined) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

describe.runIf(browserAvailable())('offline activation in the console (Chromium)', () => {
  let world: ConsoleWorld;
  let runtime: RuntimeWorld;
  let dir: string;
  const keys = async (): Promise<JSONWebKeySet> =>
    (await fetch(`${world.url}/.well-known/jwks.json`)).json() as Promise<JSONWebKeySet>;

  beforeAll(async () => {
    world = await startConsoleWorld();
    runtime = await runtimeWorld(world.harness);
    await world.harness.app.services.apps.setOfflineLeaseMaxDays(runtime.app.appKey, 30);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-activation-browser-'));
  }, 120_000);
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await world?.close();
  });

  async function request(fingerprint: string) {
    const l = await lockWith(runtime, { limitConcurrent: 2, productName: 'Simulator' });
    return createActivationRequest({
      appKey: runtime.app.appKey,
      assetNum: l.assetNum,
      crmProductId: l.crmProductId,
      days: 14,
      fingerprint,
    });
  }

  for (const locale of ['en-US', 'zh-CN'] as const) {
    it(`activates a machine by its typed code and its file, ${locale}`, { timeout: 120_000 }, async () => {
      const { page, problems } = await world.newPage({ locale });
      await page.setViewportSize({ width: 1280, height: 900 });
      await signIn(page, { account: runtime.admin.account, password: runtime.admin.password });
      const fp = `fp-browser-${randomBytes(4).toString('hex')}`;
      const pending = await request(fp);
      await page.goto('/console/enterprise/offline-machines');
      await page.locator('#field-request').fill(pending.code);
      await page.locator('form[action$="/activate"] button[type="submit"]').click();
      const code = (await page.locator('#answer-code').inputValue()).trim();
      const lease = await verifyActivation(code, {
        request: pending.request,
        jwks: await keys(),
        fingerprint: fp,
      });
      expect(lease.assetNum).toBe(pending.request.assetNum);
      // The QR code is drawn, from this page's own markup (a data: image the policy allows).
      expect(
        await page.locator('img.qr').evaluate((img) => (img as HTMLImageElement).naturalWidth),
      ).toBeGreaterThan(0);
      // The answer file downloads and verifies on the machine.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('.activation-answer a[download]').click(),
      ]);
      const file = path.join(dir, `${locale}-answer.json`);
      await download.saveAs(file);
      expect(
        await verifyActivation(fs.readFileSync(file, 'utf8'), {
          request: pending.request,
          jwks: await keys(),
          fingerprint: fp,
        }),
      ).toMatchObject({ leaseId: lease.leaseId });
      await expect.poll(() => page.locator(`tr[data-lease="${lease.leaseId}"]`).count()).toBe(1);
      await shoot(
        page,
        locale === 'en-US' ? 'console-enterprise-offline-machines' : 'console-enterprise-offline-machines-zh',
      );
      // The early-return button is a button of its own width, not a light bar as wide as a field.
      const widths = await page.locator('form[action$="/return"]').evaluate((form) => ({
        form: form.getBoundingClientRect().width,
        button: form.querySelector('button[type="submit"]')?.getBoundingClientRect().width ?? 0,
      }));
      expect(widths.button).toBeGreaterThan(0);
      expect(widths.button).toBeLessThan(widths.form / 2);

      // The request file uploaded instead of typed.
      const second = await request(`fp-browser-${randomBytes(4).toString('hex')}`);
      const requestFile = path.join(dir, `${locale}-request.json`);
      fs.writeFileSync(requestFile, JSON.stringify(second.file));
      await page.goto('/console/enterprise/offline-machines');
      await page.locator('#field-request-file').setInputFiles(requestFile);
      await page.locator('form[action$="/activate"] button[type="submit"]').click();
      await expect.poll(() => page.locator('#answer-code').count()).toBe(1);

      // A mistyped request names its group on the page, in the page's language.
      const groups = second.code.split('-');
      groups[1] = `${(groups[1] as string)[0] === 'A' ? 'B' : 'A'}${(groups[1] as string).slice(1)}`;
      await page.locator('#field-request').fill(groups.join('-'));
      await page.locator('form[action$="/activate"] button[type="submit"]').click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('group 2 does not check');
      expect(await page.locator('#field-request').inputValue()).toBe(groups.join('-'));
      expect(problems).toEqual([]);
    });
  }

  it('shows the operator every enterprise’s offline machines', { timeout: 60_000 }, async () => {
    for (const locale of ['en-US', 'zh-CN'] as const) {
      const { page, problems } = await world.newPage({ locale });
      await page.setViewportSize({ width: 1280, height: 900 });
      await signIn(page, { adminKey: ADMIN_KEY });
      await page.goto('/console/operator/offline-machines');
      expect(await page.locator('table.offline-machines tbody tr').count()).toBeGreaterThanOrEqual(2);
      const widths = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(widths).toBeLessThanOrEqual(1280);
      await shoot(
        page,
        locale === 'en-US' ? 'console-operator-offline-machines' : 'console-operator-offline-machines-zh',
      );
      expect(problems).toEqual([]);
    }
  });
});
