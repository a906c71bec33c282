import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nonce } from '../support/harness.js';
import { assetWorld, buyAsset, okData, setLocked, type AssetWorld } from '../support/order-fixtures.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { browserAvailable, signInOperator, startConsoleWorld, type ConsoleWorld } from './support/browser.js';

/** The page's width and its table's, as console-operator.test.ts measures the apps table. */
async function widths(page: Page, table: string) {
  return page.evaluate((selector) => {
    const wrap = document.querySelector(selector)?.closest('.table-wrap');
    return {
      page: document.documentElement.scrollWidth,
      wrapScroll: wrap?.scrollWidth ?? 0,
      wrapClient: wrap?.clientWidth ?? 0,
    };
  }, table);
}

async function expectFits(page: Page, table: string) {
  const measured = await widths(page, table);
  expect(measured.page, table).toBeLessThanOrEqual(1280);
  expect(measured.wrapClient, table).toBeGreaterThan(0);
  expect(measured.wrapScroll, table).toBeLessThanOrEqual(measured.wrapClient);
}

/** A long path with no place to break: the tables must still fit, the url breaking anywhere. */
const PATH = `/crm/${'hookssegment'.repeat(16)}`;

/** A time as the replay form takes it: UTC, to the second. */
const field = (at: Date) => at.toISOString().slice(0, 19);

// Each step waits for the next page to load (waitForURL, a locator's wait) before reading it.
describe.runIf(browserAvailable())('console Webhooks pages (Chromium)', () => {
  let world: ConsoleWorld;
  let receiver: Receiver;
  let app: AssetWorld;
  let page: Page;
  let problems: string[] = [];
  const dialogs: string[] = [];
  let endpointId = '';
  let secret = '';
  let answer = 503;
  /** Before the event, to the second: the replay's range starts here. */
  let from = new Date();

  const deliver = () => world.harness.app.services.webhookDeliveries.deliverDue(10, [endpointId]);
  const deliveries = () => world.harness.app.services.webhookAdmin.listDeliveries({ endpointId, limit: 10 });

  beforeAll(async () => {
    world = await startConsoleWorld({
      WEBHOOK_ALLOW_HTTP: '1',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    receiver = await startReceiver();
    receiver.on(PATH, (_req, res) => res.writeHead(answer).end(answer === 503 ? 'down' : ''));
    // The app registers its endpoint through the webhooks API, as a channel system would.
    app = await assetWorld(world.harness, ['auth_order', 'auth_me', 'auth_webhooks']);
    const created = okData<{ id: string; secret: string }>(
      await world.harness.app.inject({
        method: 'POST',
        url: `/v1/webhooks/endpoints?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${app.token}` },
        payload: {
          url: `${receiver.url}${PATH}`,
          // Types this test makes no event of, but a long filter for the table to hold.
          eventTypes: ['asset.locked', 'member.deleted', 'lease.denied', 'lease.revoked', 'app.disabled'],
        },
      }),
    );
    endpointId = created.id;
    secret = created.secret;
    from = new Date(Math.floor(Date.now() / 1000) * 1000);
    const assetNum = await buyAsset(app);
    await setLocked(app, [assetNum], true);
    // The receiver is down: the first attempt fails with 503 and another is scheduled.
    expect(await deliver()).toBe(1);
    ({ page, problems } = await world.newPage());
    page.setDefaultTimeout(8000);
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}:${dialog.message()}`);
      void dialog.accept();
    });
    await page.setViewportSize({ width: 1280, height: 900 });
  });
  afterAll(async () => {
    await receiver?.close();
    await world?.close();
  });

  it("opens Webhooks from the navigation and shows the app's endpoint, its failure and no secret", async () => {
    // Signing in polls, which only a test may do.
    await signInOperator(page);
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/console/operator/webhooks');
    // Filtered by the app: unfiltered, the first 100 endpoints of a shared database need not hold it.
    await page.getByLabel('App key').fill(app.app.appKey);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('app') === app.app.appKey);
    const row = page.locator(`tr[data-endpoint="${endpointId}"]`);
    expect(await row.count()).toBe(1);
    const text = (await row.textContent()) ?? '';
    expect(text).toContain(app.app.appKey);
    expect(text).toContain(`${receiver.url}${PATH}`);
    expect(text).toContain('asset.locked');
    expect(text).toContain('enabled');
    expect(await row.locator('[data-failures]').textContent()).toBe('1');
    expect(text).toContain('HTTP 503');
    expect(await page.content()).not.toContain(secret);
    await expectFits(page, 'table.webhooks');
  });

  it('shows the delivery, retries it now, and sees it delivered once the receiver is back', async () => {
    await page.locator(`tr[data-endpoint="${endpointId}"]`).getByRole('link', { name: 'Deliveries' }).click();
    await page.waitForURL((url) => url.pathname === `/console/operator/webhooks/${endpointId}`);
    const [delivery] = await deliveries();
    const row = page.locator(`tr[data-delivery="${delivery?.id}"]`);
    expect(await row.getAttribute('data-status')).toBe('pending');
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('asset.locked');
    expect(text).toContain(String(delivery?.eventId));
    expect(text).toMatch(/HTTP 503 · \d+ ms/);
    expect(text).not.toContain('status 503');
    await expectFits(page, 'table.deliveries');

    // Its next attempt is minutes away with backoff; "Retry now" makes it due at once.
    await row.getByRole('button', { name: 'Retry now' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe(`Delivery ${delivery?.id} is due now.`);
    const [due] = await deliveries();
    expect(due?.nextAttemptAt.getTime()).toBeLessThanOrEqual(Date.now());
    answer = 204;
    expect(await deliver()).toBe(1);
    await page.reload();
    const delivered = page.locator(`tr[data-delivery="${delivery?.id}"]`);
    expect(await delivered.getAttribute('data-status')).toBe('delivered');
    expect(await delivered.getByRole('button', { name: 'Retry now' }).count()).toBe(0);
    expect(await delivered.textContent()).toContain('HTTP 204');
    expect(await page.locator('dl.facts').textContent()).toContain('HTTP 204');
  });

  it('refuses a reversed range beside its field and queues nothing', async () => {
    const to = new Date(Date.now() + 2000);
    await page.getByLabel('From (UTC)').fill(field(to));
    await page.getByLabel('To (UTC)').fill(field(from));
    await page.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => page.locator('#field-from-error').textContent()).toBe('From must be before To.');
    expect(await page.getByLabel('From (UTC)').getAttribute('aria-invalid')).toBe('true');
    expect((await deliveries()).map((d) => d.status)).toEqual(['delivered']);
  });

  it('changes language from a refused form back to the page the form was on', async () => {
    const endpointPage = `/console/operator/webhooks/${endpointId}`;
    // Still on the refused replay's answer, shown at the post's address.
    expect(new URL(page.url()).pathname).toBe(`${endpointPage}/replay`);
    await page.getByLabel('Language').selectOption('zh-CN');
    await page.waitForURL((url) => url.pathname === endpointPage);
    await expect.poll(() => page.getByRole('heading', { name: '重放一个时间段' }).count()).toBe(1);
    // In Chinese, the refusal is worded in Chinese too.
    const to = new Date(Date.now() + 2000);
    await page.locator('#field-from').fill(field(to));
    await page.locator('#field-to').fill(field(from));
    await page.getByRole('button', { name: '重放', exact: true }).click();
    await expect
      .poll(() => page.locator('#field-from-error').textContent())
      .toBe('开始时间必须早于结束时间。');
    await page.getByLabel('语言').selectOption('en');
    await page.waitForURL((url) => url.pathname === endpointPage);
    await expect.poll(() => page.getByRole('heading', { name: 'Replay a time range' }).count()).toBe(1);
  });

  it('replays the time range, asking first, and the event is pending again', async () => {
    const to = new Date(Math.ceil((Date.now() + 1) / 1000) * 1000);
    await page.getByLabel('From (UTC)').fill(field(from));
    await page.getByLabel('To (UTC)').fill(field(to));
    await page.getByRole('button', { name: 'Replay' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('One event is queued to this endpoint again.');
    expect(dialogs.some((d) => d.startsWith('confirm:') && d.includes(endpointId))).toBe(true);
    const [replayed] = await deliveries();
    expect(await page.locator(`tr[data-delivery="${replayed?.id}"]`).getAttribute('data-status')).toBe(
      'pending',
    );
    expect(await deliver()).toBe(1);
    expect(receiver.received.filter((r) => r.path === PATH).map((r) => r.headers['webhook-id'])).toEqual([
      replayed?.eventId,
      replayed?.eventId,
      replayed?.eventId,
    ]);
  });

  it('finds both actions in the audit log, made by the console', async () => {
    await page.getByRole('link', { name: 'This endpoint in the audit log' }).click();
    await page.waitForURL((url) => url.searchParams.get('subject') === endpointId);
    const replayRow = page.locator('table.audit tbody tr[data-action="webhook.replayed"]');
    expect(await replayRow.count()).toBe(1);
    expect(await replayRow.textContent()).toContain('admin-console');
    // The detail may be folded and pretty-printed: "queued": 1.
    expect(await replayRow.textContent()).toMatch(/"queued": ?1/);

    const [delivery] = await deliveries();
    await page.goto(
      `/console/operator/audit?${new URLSearchParams({ action: 'webhook.delivery_retried', subject: String(delivery?.id) })}`,
    );
    const retryRow = page.locator('table.audit tbody tr[data-action="webhook.delivery_retried"]');
    expect(await retryRow.count()).toBe(1);
    expect(await retryRow.textContent()).toContain('admin-console');
    expect(await retryRow.textContent()).toContain(endpointId);
  });

  it('switches to Chinese on the endpoint page', async () => {
    await page.goto(`/console/operator/webhooks/${endpointId}`);
    await page.selectOption('select[name="lang"]', 'zh-CN');
    await page.locator('h2', { hasText: '重放一个时间段' }).waitFor();
    expect(await page.locator('table.deliveries').textContent()).toContain('已送达');
    await expectFits(page, 'table.deliveries');
  });

  // Last: every page above ran its script without an error or a content-policy violation.
  it('logged no script error or content-policy violation', () => {
    expect(problems).toEqual([]);
  });
});
