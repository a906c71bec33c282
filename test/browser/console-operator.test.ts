import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrderWorker } from '../../src/jobs/order-worker.js';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { batch, newBuy, submit, type OrderTenant } from '../http/order-helpers.js';
import { appToken } from '../support/fixtures.js';
import { nonce, uniqueCode } from '../support/harness.js';
import { browserAvailable, signInOperator, startConsoleWorld, type ConsoleWorld } from './support/browser.js';

const PAGE_LIMIT = 150 * 1024;

/** The apps table's row of one app. */
const appRow = (page: Page, name: string) => page.locator('table.apps tbody tr', { hasText: name });

async function createApp(page: Page, name: string, options: { channel: string; pending: boolean }) {
  await page.goto('/console/operator/apps');
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('auth_order').check();
  await page.getByLabel('auth_me').check();
  await page.locator('#field-channels').fill(options.channel);
  await page.locator(`input[name="status"][value="${options.pending ? 'pending' : 'active'}"]`).check();
  await page.getByRole('button', { name: 'Create app' }).click();
  await expect.poll(() => page.getByRole('status').textContent()).toContain('is created');
}

describe.runIf(browserAvailable())('console operator area (Chromium)', () => {
  let world: ConsoleWorld;
  let page: Page;
  const dialogs: string[] = [];
  let problems: string[] = [];

  beforeAll(async () => {
    world = await startConsoleWorld();
    ({ page, problems } = await world.newPage());
    page.setDefaultTimeout(8000);
    // Confirmations are accepted; every dialog is remembered (an alert would mean script ran).
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}:${dialog.message()}`);
      void dialog.accept();
    });
  });
  let signedIn = false;
  /** One operator session for the file (signing in polls, which only a test may do). */
  async function operatorPage(): Promise<Page> {
    if (!signedIn) await signInOperator(page);
    signedIn = true;
    return page;
  }
  afterAll(async () => {
    await world?.close();
  });

  it('creates an app, shows its secret once, approves it, logs its orders and audit rows, and rotates it', async () => {
    await operatorPage();
    const h = world.harness;
    const name = uniqueCode('Channel ERP');
    const channel = uniqueCode('CH');
    await createApp(page, name, { channel, pending: true });

    // The secret: on the answer to the post, and nowhere once the page is loaded again.
    const secret = (await page.locator('[data-secret]').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const row = appRow(page, name);
    const appKey = (await row.locator('code').first().textContent()) ?? '';
    expect(appKey).toMatch(/^kw_/);
    await expect.poll(() => row.locator('td').nth(4).textContent()).toBe('pending');
    expect(page.url()).not.toContain(secret);
    await page.reload();
    expect(await page.locator('[data-secret]').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    expect(await appRow(page, name).count()).toBe(1);
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => c.value).join(' ')).not.toContain(secret);

    await appRow(page, name).getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('is approved');
    await expect.poll(() => appRow(page, name).locator('td').nth(4).textContent()).toBe('active');

    // An async batch through the order API: queued, so the log shows it accepted.
    const app = { appKey, appSecret: secret, channels: [channel] };
    const tenant: OrderTenant = { app, channel, token: await appToken(h, app) };
    const body = batch(tenant, [newBuy()], { syncMode: 'async' });
    const [order] = await submit(h, tenant, body);
    const batchRow = page.locator(`tr[data-channel-order="${String(body.channelOrderId)}"]`);
    await page.goto('/console/operator/orders');
    await expect.poll(() => batchRow.locator('[data-status]').getAttribute('data-status')).toBe('accepted');
    expect(await batchRow.locator('td.request pre').textContent()).toContain(String(body.channelOrderId));
    // What the app sent, not what Keyward made of it: its field names, no defaults filled in.
    const received = (await batchRow.locator('td.request pre').textContent()) ?? '';
    expect(received).toContain('"orderList"');
    expect(received).not.toContain('"orders"');
    expect(received).not.toContain('null');
    // Folded: the body opens on demand rather than widening the table.
    expect(await batchRow.locator('td.request details').getAttribute('open')).toBeNull();
    await page.selectOption('select[name="status"]', 'accepted');
    await page.getByRole('button', { name: 'Filter' }).click();
    expect(await batchRow.count()).toBe(1);

    const worker = startOrderWorker(h.app.services.orders, h.app.log, { pollMs: 20 });
    try {
      await expect
        .poll(
          async () => {
            await page.goto('/console/operator/orders');
            return batchRow.locator('[data-status]').getAttribute('data-status');
          },
          { timeout: 15_000, interval: 200 },
        )
        .toBe('completed');
    } finally {
      await worker.stop();
    }
    expect(await batchRow.locator(`[data-order="${order?.licenseOrderId}"]`).textContent()).toContain(
      'completed',
    );

    // The audit log by action, and the same filters as a CSV file.
    await page.goto('/console/operator/audit');
    await page.selectOption('#field-action', 'app.created');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('action')).toBe('app.created');
    const auditRow = page.locator('table.audit tbody tr', { hasText: appKey });
    expect(await auditRow.count()).toBe(1);
    expect(await auditRow.textContent()).toContain('admin-console');
    const actions = await page
      .locator('table.audit tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    expect(new Set(actions)).toEqual(new Set(['app.created']));
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^keyward-audit-.*\.csv$/);
    const csv = await readFile(String(await download.path()), 'utf8');
    expect(csv.split('\r\n')[0]).toContain('id,created_at,action,subject');
    expect(csv).toContain(`,app.created,${appKey},`);

    // Rotating with "revoke old tokens": the token made with the old secret is refused at once.
    const lookup = () =>
      h.app.inject({
        method: 'GET',
        url: `${ORDER_PREFIX}/licenseOrder/${order?.licenseOrderId}?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${tenant.token}` },
      });
    expect((await lookup()).json()).toMatchObject({ code: 0 });
    // Found by the apps page's search: other tests' apps may have pushed it off the first page.
    await page.goto(`/console/operator/apps?${new URLSearchParams({ q: name })}`);
    const rotating = appRow(page, name);
    await rotating.getByLabel('revoke old tokens').check();
    await rotating.getByRole('button', { name: 'Rotate secret' }).click();
    await expect
      .poll(() => page.getByRole('status').first().textContent())
      .toContain('old tokens are revoked');
    expect(dialogs.some((d) => d.startsWith('confirm:') && d.includes(appKey))).toBe(true);
    const rotated = (await page.locator('[data-secret]').textContent())?.trim() ?? '';
    expect(rotated).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(rotated).not.toBe(secret);
    // The business envelope's refusal of a revoked token (as test/http/admin.test.ts).
    expect((await lookup()).json()).toMatchObject({ code: '60000' });
    await expect(appToken(h, app)).rejects.toThrow();
    expect(await appToken(h, { ...app, appSecret: rotated })).toEqual(expect.any(String));
  });

  it('shows markup in an app name as text, never as an element', async () => {
    await operatorPage();
    const payload = '<img src=x onerror=alert(1)>';
    await createApp(page, payload, { channel: uniqueCode('CH'), pending: false });
    await page.reload();
    const cells = page.locator('table.apps td.app-name', { hasText: payload });
    expect(await cells.count()).toBeGreaterThan(0);
    expect(await cells.first().textContent()).toBe(payload);
    expect(await page.locator('table.apps img').count()).toBe(0);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs.filter((d) => d.startsWith('alert:'))).toEqual([]);
  });

  it("sets an app's longest offline lease from its row", async () => {
    await operatorPage();
    const name = uniqueCode('Runtime');
    await createApp(page, name, { channel: uniqueCode('CH'), pending: false });
    await page.goto(`/console/operator/apps?${new URLSearchParams({ q: name })}`);
    const appKey = (await appRow(page, name).locator('code').first().textContent()) ?? '';
    const days = page.getByLabel(`Longest offline lease of app ${appKey}, in days`);
    expect(await days.inputValue()).toBe('0');
    await days.fill('21');
    await appRow(page, name).getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toContain('longest offline lease is saved');
    await page.goto(`/console/operator/apps?${new URLSearchParams({ q: name })}`);
    expect(await page.getByLabel(`Longest offline lease of app ${appKey}, in days`).inputValue()).toBe('21');
    expect(await world.harness.app.services.apps.list()).toContainEqual(
      expect.objectContaining({ appKey, offlineLeaseMaxDays: 21 }),
    );
  });

  it('fits the apps table, actions included, on a 1280-pixel screen', async () => {
    await operatorPage();
    const name = `Wide ${Date.now()}`;
    await createApp(page, name, { channel: `W${Date.now()}`, pending: false });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto('/console/operator/apps');
    const widths = await page.evaluate(() => {
      const wrap = document.querySelector('.table-wrap');
      return {
        page: document.documentElement.scrollWidth,
        wrapScroll: wrap?.scrollWidth ?? 0,
        wrapClient: wrap?.clientWidth ?? 0,
      };
    });
    expect(widths.page).toBeLessThanOrEqual(1280);
    expect(widths.wrapClient).toBeGreaterThan(0);
    expect(widths.wrapScroll).toBeLessThanOrEqual(widths.wrapClient);
    await expect
      .poll(() => appRow(page, name).getByRole('button', { name: 'Disable' }).isVisible())
      .toBe(true);
  });

  it('keeps every main page under 150 KB', async () => {
    await operatorPage();
    for (const url of [
      '/console/operator',
      '/console/operator/apps',
      '/console/operator/enterprises',
      '/console/operator/orders',
      '/console/operator/leases',
      '/console/operator/webhooks',
      '/console/operator/audit',
    ]) {
      const response = await page.goto(url);
      expect(response?.status(), url).toBe(200);
      expect(Buffer.byteLength(await (response?.text() ?? Promise.resolve(''))), url).toBeLessThan(
        PAGE_LIMIT,
      );
    }
  });

  // Last: every page the tests above opened ran its script without a content-policy violation.
  it('logged no script error or content-policy violation on any page', () => {
    expect(problems).toEqual([]);
  });
});
