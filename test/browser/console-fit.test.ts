import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredRoutes } from '../../src/http/access/enforce.js';
import { batch, newBuy, submit, type OrderTenant } from '../http/order-helpers.js';
import { ADMIN_KEY, nonce, uniqueCode } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetWorld,
  assign,
  buyAsset,
  buyLentLock,
  okData,
  productSpec,
  setLocked,
  type AssetWorld,
} from '../support/order-fixtures.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { lockWith, runtimeCaller } from '../http/runtime-helpers.js';
import { newRelay, relayReport, relayRequest } from '../support/relay-files.js';
import { operatorLinks } from '../../src/http/console/operator/links.js';
import {
  browserAvailable,
  signInEnterprise,
  signInOperator,
  startConsoleWorld,
  type ConsoleWorld,
} from './support/browser.js';

// Every console page, in both languages, with long data (long names, a long unbroken word, long
// request bodies, many rows), at 1280×800: the page never scrolls sideways and no element reaches
// past the screen's right edge, inside a scrolling table or not (issue 31 §3); and no identifier
// or code in a table (an asset number, a lease id, an app key, an event type) takes more than one
// line (issue 41 §2).

const WIDTH = 1280;
const LONG_WORD = 'Supercalifragilisticexpialidociousbutlongerstill';
const LONG_NAME = `Northwind Industrial Automation Licensing Gateway ${LONG_WORD}`;

interface Overflow {
  scrollWidth: number;
  offenders: string[];
  /** Identifiers and codes in a table that take more than one line (issue 41 §2). */
  wrapped: string[];
  /** How many identifiers and codes were measured: a page with tables has some. */
  identifiers: number;
}

/**
 * The page's width, the elements whose right edge passes the viewport's, and the identifiers
 * (DataTable's id and code cells, and any code in a table cell) whose text takes more than one
 * line: the distinct tops of its text's line boxes (a shortened identifier's hidden middle has no
 * width and is not counted). A folded JSON detail's summary may wrap between field names.
 */
function measure(page: Page): Promise<Overflow> {
  return page.evaluate((width) => {
    const offenders: string[] = [];
    for (const element of Array.from(document.body.querySelectorAll('*'))) {
      const box = element.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      if (box.right > width + 0.5) {
        const name = `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).replace(/ /g, '.')}` : ''}`;
        offenders.push(
          `${name} right=${Math.round(box.right)} "${(element.textContent ?? '').slice(0, 40)}"`,
        );
      }
    }
    const wrapped: string[] = [];
    const codes = Array.from(document.body.querySelectorAll('code.ident, td code')).filter(
      (code) => code.closest('details') === null,
    );
    for (const code of codes) {
      const range = document.createRange();
      range.selectNodeContents(code);
      const tops = new Set<number>();
      for (const rect of Array.from(range.getClientRects())) {
        if (rect.width < 1 || rect.height < 1) continue;
        // Two rects of one line differ in top by less than a pixel or two (a span, a font's metrics).
        const top = Math.round(rect.top / 4);
        if (![top - 1, top, top + 1].some((t) => tops.has(t))) tops.add(top);
      }
      if (tops.size > 1) wrapped.push(`"${code.textContent ?? ''}" on ${tops.size} lines`);
    }
    return {
      scrollWidth: document.documentElement.scrollWidth,
      offenders: offenders.slice(0, 5),
      wrapped: wrapped.slice(0, 5),
      identifiers: codes.length,
    };
  }, WIDTH);
}

describe.runIf(browserAvailable())('every console page fits 1280 pixels (Chromium)', () => {
  let world: ConsoleWorld;
  let receiver: Receiver;
  let enterprise: AssetWorld;
  const operatorPages: string[] = [];
  const enterprisePages: string[] = [];
  /** Identifiers measured on pages with tables: the one-line check saw some. */
  let measuredIds = 0;

  beforeAll(async () => {
    world = await startConsoleWorld({ WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1' });
    const h = world.harness;
    receiver = await startReceiver();
    const longPath = `/${'a-rather-long-receiver-path-segment/'.repeat(4)}${LONG_WORD}`;
    receiver.on(longPath, (_req, res) => res.writeHead(503).end(`down: ${LONG_NAME}`));
    enterprise = await assetWorld(h, ['auth_order', 'auth_me', 'auth_runtime', 'auth_webhooks']);

    // An app with a long name and channel, and its rows in the apps table.
    const channel = uniqueCode(`NORTHWIND_DISTRIBUTION_${LONG_WORD.slice(0, 20)}`);
    await h.app.inject({
      method: 'POST',
      url: '/admin/apps',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: {
        name: LONG_NAME,
        scopes: ['auth_order', 'auth_me', 'auth_runtime', 'auth_webhooks'],
        channels: [channel],
      },
    });

    // Members with long names, many of them; assets assigned, a lent lock.
    const members = [];
    for (let i = 0; i < 35; i++) members.push(await addMember(enterprise));
    const first = members[0]!;
    const assets = [];
    for (let i = 0; i < 6; i++) assets.push(await buyAsset(enterprise));
    await assign(enterprise, first.globalId, assets.slice(0, 4));
    await buyLentLock(enterprise);
    await h.database.db
      .updateTable('members')
      .set({ name: '长名字的员工张三李四王五赵六钱七孙八周九吴十郑十一王十二' })
      .where('global_id', '=', first.globalId)
      .execute();

    // An async batch of many orders with long customer names: a long request body.
    const tenant: OrderTenant = { app: enterprise.app, channel: enterprise.channel, token: enterprise.token };
    await submit(
      h,
      tenant,
      batch(
        tenant,
        Array.from({ length: 8 }, (_, i) => newBuy({ sequence: i + 1, customerName: `${LONG_NAME} ${i}` })),
        { syncMode: 'async' },
      ),
    );

    // A webhook endpoint with a long URL that fails, with a delivery to show.
    const endpoint = okData<{ id: string }>(
      await h.app.inject({
        method: 'POST',
        url: `/v1/webhooks/endpoints?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${enterprise.token}` },
        payload: { url: `${receiver.url}${longPath}`, eventTypes: ['asset.locked', 'asset.unlocked'] },
      }),
    );
    await setLocked(enterprise, [assets[5]!], true);
    await h.app.services.webhookDeliveries.deliverDue(10, [endpoint.id]);

    // A license with a long name, checked out by a machine with a long fingerprint: the
    // drill-down pages (its asset, its lease, its employee, its order) with data to fit.
    const spec = productSpec({ productName: LONG_NAME });
    const drillAsset = await buyAsset(enterprise, [spec]);
    await assign(enterprise, first.globalId, [drillAsset]);
    const checkedOut = await runtimeCaller(h, enterprise.token)('/leases', {
      assetNum: drillAsset,
      crmProductId: spec.crmProductId,
      fingerprint: `fp-${LONG_WORD}`,
    });
    const leaseId = okData<{ leaseId: string }>(checkedOut).leaseId;
    const batchId = (await h.database.db.selectFrom('order_batches').select('id').executeTakeFirstOrThrow())
      .id;

    // A relay granted seats of the enterprise's lock, with a report: the Relays pages' table and
    // the usage pages' "via relay" (issue 42).
    const relay = await newRelay();
    const relayLock = await lockWith(enterprise, { limitConcurrent: 5, productName: LONG_NAME });
    const actor = { appId: null, operator: 'console-fit', requestId: null, clientRequestId: null };
    const grant = await h.app.services.relayGrants.grant(
      await relayRequest(relay, [{ ...relayLock, seats: 3 }]),
      actor,
    );
    await h.app.services.relayReports.importReport(await relayReport(relay, grant.grantId, relayLock), actor);

    operatorPages.push(
      operatorLinks.asset(drillAsset),
      operatorLinks.lease(leaseId),
      operatorLinks.member(first.globalId),
      operatorLinks.order(batchId),
      '/console/operator',
      '/console/operator/apps',
      '/console/operator/enterprises',
      `/console/operator/enterprises/${enterprise.enterpriseGlobalId}`,
      '/console/operator/orders',
      '/console/operator/leases?all=1',
      '/console/operator/offline-machines',
      '/console/operator/relays',
      '/console/operator/webhooks',
      `/console/operator/webhooks/${endpoint.id}`,
      '/console/operator/audit',
      '/console/operator/usage',
      `/console/operator/usage?bucket=hour&app=${relay.relayId}`,
      `/console/operator/search?q=${encodeURIComponent(LONG_WORD)}`,
      '/console/operator/operators',
      '/console/operator/account',
    );
    enterprisePages.push(
      '/console/enterprise',
      '/console/enterprise/members/new',
      '/console/enterprise/members/import',
      `/console/enterprise/members/${first.globalId}`,
      '/console/enterprise/assets',
      `/console/enterprise/assets/${encodeURIComponent(await assetIdOf(enterprise, assets[0]!))}`,
      '/console/enterprise/lent-locks',
      '/console/enterprise/offline-machines',
      '/console/enterprise/relays',
      '/console/enterprise/usage',
      '/console/enterprise/usage?bucket=hour',
    );
  });
  afterAll(async () => {
    await receiver?.close();
    await world?.close();
  });

  /** Visits each page in the language and measures it; answers the pages that did not fit. */
  async function misfits(page: Page, locale: 'en' | 'zh-CN', pages: string[]): Promise<string[]> {
    await page.context().addCookies([{ name: 'keyward_lang', value: locale, url: world.url }]);
    const found: string[] = [];
    for (const url of pages) {
      const response = await page.goto(url);
      expect(response?.status(), url).toBe(200);
      expect(await page.locator('html').getAttribute('lang'), url).toBe(locale);
      const { scrollWidth, offenders, wrapped, identifiers } = await measure(page);
      if (scrollWidth > WIDTH || offenders.length > 0)
        found.push(`${locale} ${url}: scrollWidth ${scrollWidth}; ${offenders.join('; ')}`);
      if (wrapped.length > 0)
        found.push(`${locale} ${url}: identifiers broken over lines: ${wrapped.join('; ')}`);
      if (page.url().includes('/console/') && (await page.locator('td').count()) > 0)
        measuredIds += identifiers;
    }
    return found;
  }

  async function desktop(): Promise<{ page: Page; problems: string[] }> {
    const { page, problems } = await world.newPage();
    await page.setViewportSize({ width: WIDTH, height: 800 });
    return { page, problems };
  }

  it('measures every page the server declares without a parameter (nobody keeps the list up)', () => {
    const measured = new Set([...operatorPages, ...enterprisePages].map((p) => p.split('?')[0]));
    const missed = declaredRoutes(world.harness.app)
      .filter((r) => r.method === 'GET' && !r.url.includes(':') && !r.url.endsWith('.csv'))
      .filter((r) => r.access.who === 'enterprise-session' || r.access.who === 'operator-session')
      // The sign-in's own steps (a new password, an enrolment) are not pages the admin key has.
      .filter((r) => !(r.access.who === 'operator-session' && r.access.duringSignIn === true))
      .map((r) => r.url)
      .filter((url) => !measured.has(url));
    expect(missed).toEqual([]);
  });

  it('fits the signed-out pages', async () => {
    const { page, problems } = await desktop();
    const pages = ['/console', '/console/sign-in', '/console/operator/sign-in'];
    expect([...(await misfits(page, 'en', pages)), ...(await misfits(page, 'zh-CN', pages))]).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('fits every operator page, in English and Chinese', async () => {
    const { page, problems } = await desktop();
    await signInOperator(page);
    measuredIds = 0;
    const found = [
      ...(await misfits(page, 'en', operatorPages)),
      ...(await misfits(page, 'zh-CN', operatorPages)),
    ];
    expect(found).toEqual([]);
    expect(measuredIds).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });

  it('fits every enterprise page, in English and Chinese', async () => {
    const { page, problems } = await desktop();
    await signInEnterprise(page, enterprise.admin.account, enterprise.admin.password);
    measuredIds = 0;
    const found = [
      ...(await misfits(page, 'en', enterprisePages)),
      ...(await misfits(page, 'zh-CN', enterprisePages)),
    ];
    expect(found).toEqual([]);
    expect(measuredIds).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  it('sees an identifier broken over lines (the one-line check measures what it should)', async () => {
    const { page } = await desktop();
    await signInOperator(page);
    await page.goto('/console/operator/audit');
    expect((await measure(page)).wrapped).toEqual([]);
    // The rule every identifier has, undone, in columns too narrow for one.
    // (Through the CSS object model: the console's content policy refuses a style element.)
    await page.evaluate(() => {
      for (const code of Array.from(document.querySelectorAll<HTMLElement>('code.ident, td code'))) {
        code.style.whiteSpace = 'normal';
        code.style.wordBreak = 'break-all';
      }
      for (const cell of Array.from(document.querySelectorAll<HTMLElement>('td')))
        cell.style.maxWidth = '2.5rem';
    });
    expect((await measure(page)).wrapped.length).toBeGreaterThan(0);
  });

  it('keeps a Chinese status word on one line in the apps table', async () => {
    const { page } = await desktop();
    await signInOperator(page);
    await page.context().addCookies([{ name: 'keyward_lang', value: 'zh-CN', url: world.url }]);
    await page.goto('/console/operator/apps');
    const heights = await page
      .locator('table.apps td.status .badge')
      .evaluateAll((badges) => badges.map((b) => b.getClientRects().length));
    expect(heights.length).toBeGreaterThan(0);
    expect(heights.every((lines) => lines === 1)).toBe(true);
  });
});
