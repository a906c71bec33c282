import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enterpriseClient, operatorClient, type ConsoleClient } from '../support/console-client.js';
import { nonce, startHarness, type Harness } from '../support/harness.js';
import { assetWorld, buyAsset, okData, setLocked, type AssetWorld } from '../support/order-fixtures.js';
import { translator } from '../../src/http/console/i18n/index.js';
import { translatedError } from '../../src/http/console/operator/webhook-errors.js';
import { insertAppEvents } from '../webhooks/outbox-fixtures.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

// The operator console's webhooks pages: `GET /admin/webhooks/endpoints` and `…/deliveries`, and
// the retry and replay actions, through the same service, behind the operator's session. Every
// refusal changes nothing: no audit row, no delivery touched.

const WEBHOOKS = '/console/operator/webhooks';
const SCOPES = ['auth_order', 'auth_me', 'auth_webhooks'];

let h: Harness;
let receiver: Receiver;
let world: AssetWorld;
let other: AssetWorld;
let op: ConsoleClient;
let endpoint: { id: string; secret: string };
let theirs: { id: string; secret: string };
let deliveryId: number;

/** An endpoint registered by the app itself, through the webhooks API. */
async function createEndpoint(w: AssetWorld, path: string, eventTypes?: string[]) {
  return okData<{ id: string; secret: string }>(
    await h.app.inject({
      method: 'POST',
      url: `/v1/webhooks/endpoints?g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${w.token}` },
      payload: { url: `${receiver.url}${path}`, ...(eventTypes === undefined ? {} : { eventTypes }) },
    }),
  );
}

/** One asset.locked event in the world's channel (and an asset.unlocked one). */
async function lockOne(w: AssetWorld): Promise<void> {
  const num = await buyAsset(w);
  await setLocked(w, [num], true);
  await setLocked(w, [num], false);
}

const deliveriesOf = (endpointId: string) =>
  h.app.services.webhookAdmin.listDeliveries({ endpointId, limit: 1000 });

const auditRows = (action: 'webhook.delivery_retried' | 'webhook.replayed', subject: string) =>
  h.app.services.audit.list({ action, subject, limit: 10 });

/** The next whole second, once it has come. */
async function nextWholeSecond(): Promise<Date> {
  const next = Math.floor(Date.now() / 1000) * 1000 + 1000;
  await new Promise((resolve) => setTimeout(resolve, next - Date.now() + 5));
  return new Date(next);
}

const page = (url: string, headers: Record<string, string> = {}) => op.get(url, headers);

/** One row of a table, as markup, by its data attribute. */
function rowOf(body: string, attribute: string, value: string | number): string {
  const row = body.split(`<tr ${attribute}="${value}"`)[1]?.split('</tr>')[0];
  expect(row, `a row ${attribute}=${value}`).toBeDefined();
  return row as string;
}

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_TIMEOUT_MS: '600' });
  receiver = await startReceiver();
  receiver.on('/down', (_req, res) => res.writeHead(503).end('down'));
  world = await assetWorld(h, SCOPES);
  other = await assetWorld(h, SCOPES);
  endpoint = await createEndpoint(world, '/down', ['asset.locked']);
  theirs = await createEndpoint(other, '/theirs');
  await lockOne(world);
  expect(await h.app.services.webhookDeliveries.deliverDue(10, [endpoint.id])).toBe(1);
  const [delivery] = await deliveriesOf(endpoint.id);
  deliveryId = delivery?.id ?? 0;
  op = await operatorClient(h);
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

describe('the webhooks page', () => {
  it('sends a browser without an operator session to sign in', async () => {
    for (const url of [WEBHOOKS, `${WEBHOOKS}/${endpoint.id}`]) {
      const anonymous = await h.app.inject({ method: 'GET', url });
      expect(anonymous.statusCode, url).toBe(303);
      expect(anonymous.headers.location).toBe('/console/operator/sign-in?note=expired');
    }
  });

  it("lists an app's endpoints with their health and last attempt, never a secret", async () => {
    const listed = await page(`${WEBHOOKS}?app=${world.app.appKey}`);
    expect(listed.statusCode).toBe(200);
    expect(listed.body).toContain('href="/console/operator/webhooks" aria-current="page"');
    const row = rowOf(listed.body, 'data-endpoint', endpoint.id);
    expect(row).toContain(`<code class="ident">${world.app.appKey}</code>`);
    expect(row).toContain(`${receiver.url}/down`);
    expect(row).toContain('asset.locked');
    expect(row).toContain('data-status="enabled"');
    expect(row).toContain('data-failures="1"');
    expect(row).toContain('HTTP 503');
    expect(row).toContain(`href="/console/operator/webhooks/${endpoint.id}"`);
    expect(listed.body).not.toContain(theirs.id);
    for (const secret of [endpoint.secret, theirs.secret, 'whsec_'])
      expect(listed.body).not.toContain(secret);

    const everyApp = await page(`${WEBHOOKS}`);
    expect(everyApp.statusCode).toBe(200);
    expect(everyApp.body).not.toContain('whsec_');
  });

  it('refuses an unknown app, an overlong key and a control character, naming the field', async () => {
    const unknown = await page(`${WEBHOOKS}?app=kw_nope`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('No app has the key kw_nope.');
    expect(unknown.body).toMatch(/id="field-app"[^>]*aria-invalid="true"/);
    expect(unknown.body).not.toContain('<table');

    const long = await page(`${WEBHOOKS}?app=${'k'.repeat(101)}`);
    expect(long.statusCode).toBe(400);
    expect(long.body).toContain('An app key has at most 100 characters.');

    const control = await page(`${WEBHOOKS}?app=kw%01x`);
    expect(control.statusCode).toBe(400);
    expect(control.body).toContain('app: must not contain the character U+0001');
  });

  it('speaks Chinese', async () => {
    const zh = await page(`${WEBHOOKS}?app=${world.app.appKey}`, { 'accept-language': 'zh-CN' });
    expect(zh.body).toContain('连续失败');
    expect(zh.body).toContain('最近一次尝试');
  });
});

describe("an endpoint's deliveries", () => {
  it('shows each delivery with its event, attempts and the last outcome, filtered by status', async () => {
    const shown = await page(`${WEBHOOKS}/${endpoint.id}`);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).not.toContain(endpoint.secret);
    const [delivery] = await deliveriesOf(endpoint.id);
    const row = rowOf(shown.body, 'data-delivery', deliveryId);
    expect(row).toContain('data-status="pending"');
    expect(row).toContain('<code class="ident">asset.locked</code>');
    expect(row).toContain(String(delivery?.eventId));
    expect(row).toContain('<td data-kind="number">1</td>');
    expect(row).toMatch(/HTTP 503 · \d+ ms/);
    // The error column does not say "status 503" again beside "HTTP 503".
    expect(row).toContain('<td data-kind="text" class="error">—</td>');
    expect(row).not.toContain('status 503');
    expect(row).toContain(`datetime="${delivery?.nextAttemptAt.toISOString()}"`);
    expect(row).toContain('Retry now');

    const failed = await page(`${WEBHOOKS}/${endpoint.id}?status=failed`);
    expect(failed.statusCode).toBe(200);
    expect(failed.body).not.toContain('data-delivery=');
    expect(failed.body).toContain('No deliveries with this status.');
    expect(failed.body).toContain('<option value="failed" selected>');

    const pending = await page(`${WEBHOOKS}/${endpoint.id}?status=pending`);
    expect(pending.body).toContain(`data-delivery="${deliveryId}"`);
  });

  it('shows an error that says more than the status code in the error column', async () => {
    receiver.on('/moved', (_req, res) => res.writeHead(302, { location: '/elsewhere' }).end());
    // A world of its own, so that the other endpoints' deliveries stay as the later tests expect.
    const elsewhere = await assetWorld(h, SCOPES);
    const moved = await createEndpoint(elsewhere, '/moved', ['asset.locked']);
    await lockOne(elsewhere);
    expect(await h.app.services.webhookDeliveries.deliverDue(10, [moved.id])).toBe(1);
    const [delivery] = await deliveriesOf(moved.id);
    const row = rowOf((await page(`${WEBHOOKS}/${moved.id}`)).body, 'data-delivery', String(delivery?.id));
    expect(row).toMatch(/HTTP 302 · \d+ ms/);
    expect(row).toContain(
      '<td data-kind="text" class="error"><small><span data-error="redirect not followed">answered with a redirect, which is not followed</span></small></td>',
    );
    // What Keyward wrote is stored in English and read in the page's language.
    const zh = await page(`${WEBHOOKS}/${moved.id}`, { 'accept-language': 'zh-CN' });
    const zhRow = rowOf(zh.body, 'data-delivery', String(delivery?.id));
    expect(zhRow).toContain('>应答为重定向，不予跟随</span>');
    expect(zhRow).not.toContain('>redirect not followed<');
  });

  it('translates what Keyward wrote about an attempt, and quotes what it did not write', async () => {
    const t = (e: string) => translatedError(translator('zh-CN'), e);
    expect(t('timed out after 600 ms')).toBe('600 毫秒内无应答');
    expect(t('request failed: ECONNREFUSED')).toBe('请求失败（ECONNREFUSED）');
    expect(t('status 503')).toBe('应答 HTTP 503');
    expect(t('host example.test resolves only to private, loopback, link-local or reserved addresses')).toBe(
      '主机 example.test 只解析到私有、回环、链路本地或保留地址',
    );
    expect(t('down for maintenance')).toBeUndefined();
    // Text Keyward did not write is quoted as received, in its own language.
    const failing = await createEndpoint(world, '/quoted');
    await h.database.db
      .updateTable('webhook_endpoints')
      .set({ status: 'disabled', disabled_reason: 'the receiver said: <b>nope</b>' })
      .where('id', '=', failing.id)
      .execute();
    const zh = await page(`${WEBHOOKS}?app=${world.app.appKey}`, { 'accept-language': 'zh-CN' });
    expect(rowOf(zh.body, 'data-endpoint', failing.id)).toContain(
      '<q class="received" lang="en" data-error="the receiver said: &lt;b>nope&lt;/b>">the receiver said: &lt;b>nope&lt;/b></q>',
    );
  });

  it('refuses a status that is not one, naming the field', async () => {
    const bad = await page(`${WEBHOOKS}/${endpoint.id}?status=lost`);
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Status: choose pending, delivered or failed.');
    expect(bad.body).toMatch(/id="field-status"[^>]*aria-invalid="true"/);
    expect(bad.body).not.toContain('data-delivery=');
    const control = await page(`${WEBHOOKS}/${endpoint.id}?status=pending%1b`);
    expect(control.statusCode).toBe(400);
    expect(control.body).toContain('status: must not contain the character U+001B');
  });

  it('answers unknown and malformed endpoint ids with the not-found page', async () => {
    for (const id of [
      'ep_0123456789abcdef01234567',
      theirs.id.replace(/.$/, 'z'),
      'a'.repeat(65),
      'ep_%3Cx%3E',
    ]) {
      const response = await page(`${WEBHOOKS}/${id}`);
      expect(response.statusCode, id).toBe(404);
      expect(response.body).toContain('Not found');
    }
  });

  it('pages 50 deliveries at a time, newest first', async () => {
    const many = await createEndpoint(world, '/many');
    const at = new Date('2021-05-01T00:00:00Z');
    await insertAppEvents(h, world.app.appKey, { idPrefix: `evt_${many.id}_`, at, count: 55 });
    await h.app.services.webhookAdmin.replay(many.id, at, new Date(at.getTime() + 1000), {
      requestId: 'test',
      clientRequestId: null,
    });
    const ids = (await deliveriesOf(many.id)).map((d) => d.id);
    expect(ids).toHaveLength(55);
    const first = await page(`${WEBHOOKS}/${many.id}`);
    const shown = [...first.body.matchAll(/<tr data-delivery="(\d+)"/g)].map((m) => Number(m[1]));
    expect(shown).toEqual(ids.slice(0, 50));
    const older = /<a href="([^"]+)">Older deliveries<\/a>/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    expect(older).toBe(`${WEBHOOKS}/${many.id}?before=${ids[49]}`);
    const second = await page(String(older));
    expect([...second.body.matchAll(/<tr data-delivery="(\d+)"/g)].map((m) => Number(m[1]))).toEqual(
      ids.slice(50),
    );
    expect(second.body).not.toContain('Older deliveries');
    expect(second.body).toContain('Newest deliveries');
  });
});

describe('retry now', () => {
  it('makes a delivery due now, audited as the console, and says so on the endpoint page', async () => {
    await h.database.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: new Date(Date.now() + 3600_000) })
      .where('id', '=', deliveryId)
      .execute();
    const before = Date.now();
    const retried = await op.post(`${WEBHOOKS}/deliveries/${deliveryId}/retry`, { endpoint: endpoint.id });
    expect(retried.statusCode, retried.body).toBe(303);
    expect(retried.headers.location).toBe(`${WEBHOOKS}/${endpoint.id}?done=retried&delivery=${deliveryId}`);
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery?.nextAttemptAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(delivery?.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(await auditRows('webhook.delivery_retried', String(deliveryId))).toMatchObject([
      {
        operator: 'admin-console',
        detail: { endpointId: endpoint.id, eventId: delivery?.eventId, previousStatus: 'pending' },
      },
    ]);
    const shown = await page(String(retried.headers.location));
    expect(shown.body).toContain(`Delivery ${deliveryId} is due now.`);
  });

  it('refuses a delivered one on its endpoint page, and changes nothing', async () => {
    const ok = await createEndpoint(world, '/ok', ['asset.locked']);
    await lockOne(world);
    expect(await h.app.services.webhookDeliveries.deliverDue(10, [ok.id])).toBe(1);
    const [delivered] = await deliveriesOf(ok.id);
    expect(delivered?.status).toBe('delivered');
    const shown = await page(`${WEBHOOKS}/${ok.id}`);
    expect(rowOf(shown.body, 'data-delivery', String(delivered?.id))).not.toContain('Retry now');

    const refused = await op.post(`${WEBHOOKS}/deliveries/${delivered?.id}/retry`, { endpoint: ok.id });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain(
      `Delivery ${delivered?.id} was delivered. To send its event again, replay its time range.`,
    );
    expect(refused.body).toContain(`data-delivery="${delivered?.id}"`);
    // In the console's language, not the admin API's English sentence.
    const zh = await op.post(
      `${WEBHOOKS}/deliveries/${delivered?.id}/retry`,
      { endpoint: ok.id },
      { headers: { 'accept-language': 'zh-CN' } },
    );
    expect(zh.statusCode).toBe(400);
    expect(zh.body).toContain(`投递 ${delivered?.id} 已送达`);
    expect(zh.body).not.toContain('was delivered');
    expect((await deliveriesOf(ok.id))[0]).toEqual(delivered);
    expect(await auditRows('webhook.delivery_retried', String(delivered?.id))).toEqual([]);
  });

  it('answers unknown and malformed delivery ids with the not-found page', async () => {
    for (const id of ['999999999999', '0', 'abc', '-1', '1e3', '12345678901234567890']) {
      const response = await op.post(`${WEBHOOKS}/deliveries/${id}/retry`, { endpoint: endpoint.id });
      expect(response.statusCode, id).toBe(404);
      expect(response.body).toContain('Not found');
    }
  });

  it('refuses a post without the CSRF token or from another site', async () => {
    const noToken = await op.post(`${WEBHOOKS}/deliveries/${deliveryId}/retry`, {}, { csrf: false });
    expect(noToken.statusCode).toBe(403);
    const crossSite = await op.post(
      `${WEBHOOKS}/deliveries/${deliveryId}/retry`,
      {},
      { headers: { 'sec-fetch-site': 'cross-site' } },
    );
    expect(crossSite.statusCode).toBe(403);
    expect(await auditRows('webhook.delivery_retried', String(deliveryId))).toHaveLength(1);
  });
});

describe('replay', () => {
  it("queues the range's events again, audited as the console, and says how many", async () => {
    const late = await createEndpoint(world, '/late', ['asset.locked']);
    // The form's fields are UTC, to the second: the range starts at a whole second after the
    // events of the tests before, and ends at one after this test's events.
    const from = await nextWholeSecond();
    await lockOne(world);
    await lockOne(other);
    const to = new Date(Math.ceil((Date.now() + 1) / 1000) * 1000);
    const field = (at: Date) => at.toISOString().slice(0, 19);
    const replayed = await op.post(`${WEBHOOKS}/${late.id}/replay`, { from: field(from), to: field(to) });
    expect(replayed.statusCode, replayed.body).toBe(303);
    expect(replayed.headers.location).toBe(`${WEBHOOKS}/${late.id}?done=replayed&queued=1`);
    const queued = await deliveriesOf(late.id);
    expect(queued.map((d) => [d.eventType, d.status])).toEqual([['asset.locked', 'pending']]);
    expect(await auditRows('webhook.replayed', late.id)).toMatchObject([
      {
        operator: 'admin-console',
        detail: {
          appKey: world.app.appKey,
          from: from.toISOString(),
          to: to.toISOString(),
          queued: 1,
        },
      },
    ]);
    const shown = await page(String(replayed.headers.location));
    expect(shown.body).toContain('One event is queued to this endpoint again.');
    expect(shown.body).toContain(`data-delivery="${queued[0]?.id}"`);
  });

  it('refuses bad and reversed ranges and control characters, naming the field, and changes nothing', async () => {
    const target = await createEndpoint(world, '/refused');
    const url = `${WEBHOOKS}/${target.id}/replay`;
    const cases: Array<[Record<string, string>, string, string | undefined]> = [
      [{ from: '', to: '2026-01-02T00:00' }, 'From (UTC): this is not a date and time.', 'from'],
      [{ from: 'yesterday', to: '2026-01-02T00:00' }, 'From (UTC): this is not a date and time.', 'from'],
      [
        { from: '2026-02-31T00:00', to: '2026-03-05T00:00' },
        'From (UTC): this is not a date and time.',
        'from',
      ],
      [{ from: '2026-01-01T00:00' }, 'To (UTC): this is not a date and time.', 'to'],
      [
        { from: '2026-01-01T00:00', to: '2026-01-01 00:00:00Z' },
        'To (UTC): this is not a date and time.',
        'to',
      ],
      [{ from: '2026-01-02T00:00', to: '2026-01-01T00:00' }, 'From must be before To.', 'from'],
      [{ from: '2026-01-01T00:00', to: '2026-01-01T00:00' }, 'From must be before To.', 'from'],
      [
        { from: '2026-01-01T00:00\u0007', to: '2026-01-02T00:00' },
        'from: must not contain the character U+0007',
        undefined,
      ],
    ];
    for (const [form, message, field] of cases) {
      const refused = await op.post(url, form);
      expect(refused.statusCode, JSON.stringify(form)).toBe(400);
      expect(refused.body, JSON.stringify(form)).toContain(message);
      if (field !== undefined) {
        expect(refused.body).toMatch(new RegExp(`id="field-${field}"[^>]*aria-invalid="true"`));
        // What was typed stays in the form.
        if (form.from !== undefined && form.from !== '')
          expect(refused.body).toContain(`value="${form.from}"`);
      }
    }
    expect(await deliveriesOf(target.id)).toEqual([]);
    expect(await auditRows('webhook.replayed', target.id)).toEqual([]);
  });

  it('refuses a range of more than 10,000 events, to be replayed in parts', async () => {
    const target = await createEndpoint(world, '/huge');
    const at = new Date('2020-04-01T00:00:00Z');
    await insertAppEvents(h, world.app.appKey, { idPrefix: `evt_${target.id}_`, at, count: 10001 });
    const refused = await op.post(`${WEBHOOKS}/${target.id}/replay`, {
      from: '2020-04-01T00:00:00',
      to: '2020-04-01T00:00:01',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain(
      'More than 10,000 events in this range: replay a shorter range, in parts.',
    );
    const zh = await op.post(
      `${WEBHOOKS}/${target.id}/replay`,
      { from: '2020-04-01T00:00:00', to: '2020-04-01T00:00:01' },
      { headers: { 'accept-language': 'zh-CN' } },
    );
    expect(zh.body).toContain('此范围内的事件超过 10,000 个');
    expect(await deliveriesOf(target.id)).toEqual([]);
    expect(await auditRows('webhook.replayed', target.id)).toEqual([]);
  });

  it('answers unknown and malformed endpoint ids with the not-found page', async () => {
    const range = { from: '2026-01-01T00:00', to: '2026-01-02T00:00' };
    for (const id of ['ep_0123456789abcdef01234567', 'a'.repeat(65), 'ep_%3Cx%3E']) {
      const response = await op.post(`${WEBHOOKS}/${id}/replay`, range);
      expect(response.statusCode, id).toBe(404);
      expect(response.body).toContain('Not found');
    }
  });
});

describe('a disabled endpoint', () => {
  it('shows why it was disabled and that its app enables it again; the app can', async () => {
    const failing = await createEndpoint(world, '/gone');
    const reason = '10 failed attempts in a row since 2026-01-01T00:00:00.000Z';
    // As the delivery worker leaves it after three days of failures (delivery.test.ts drives that).
    await h.database.db
      .updateTable('webhook_endpoints')
      .set({ status: 'disabled', disabled_reason: reason, consecutive_failures: 10 })
      .where('id', '=', failing.id)
      .execute();
    const listed = await page(`${WEBHOOKS}?app=${world.app.appKey}`);
    const row = rowOf(listed.body, 'data-endpoint', failing.id);
    expect(row).toContain('data-status="disabled"');
    expect(row).toContain(reason);
    const zh = rowOf(
      (await page(`${WEBHOOKS}?app=${world.app.appKey}`, { 'accept-language': 'zh-CN' })).body,
      'data-endpoint',
      failing.id,
    );
    expect(zh).toContain('>自 2026-01-01T00:00:00.000Z 起连续失败 10 次</span>');
    const shown = await page(`${WEBHOOKS}/${failing.id}`);
    expect(shown.body).toContain('This endpoint is disabled');
    expect(shown.body).toContain(`PATCH /v1/webhooks/endpoints/${failing.id}`);

    const enabled = await h.app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/endpoints/${failing.id}?g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${world.token}` },
      payload: { enabled: true },
    });
    expect(okData<{ status: string }>(enabled).status).toBe('enabled');
    const after = await page(`${WEBHOOKS}/${failing.id}`);
    expect(after.body).not.toContain('This endpoint is disabled');
    expect(after.body).toContain('data-status="enabled"');
  });
});

describe('an enterprise administrator', () => {
  it('reaches none of it: every page and action answers 404 and changes nothing', async () => {
    const admin = await enterpriseClient(h, world.admin.account, world.admin.password);
    for (const url of [WEBHOOKS, `${WEBHOOKS}?app=${world.app.appKey}`, `${WEBHOOKS}/${endpoint.id}`]) {
      const response = await admin.get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.body).toContain('Not found');
      expect(response.body).not.toContain(receiver.url);
      expect(response.body).not.toContain('<table');
    }
    const before = await deliveriesOf(endpoint.id);
    const retry = await admin.post(`${WEBHOOKS}/deliveries/${deliveryId}/retry`, { endpoint: endpoint.id });
    expect(retry.statusCode).toBe(404);
    const replay = await admin.post(`${WEBHOOKS}/${endpoint.id}/replay`, {
      from: '2020-01-01T00:00',
      to: '2030-01-01T00:00',
    });
    expect(replay.statusCode).toBe(404);
    expect(await deliveriesOf(endpoint.id)).toEqual(before);
    expect(await auditRows('webhook.replayed', endpoint.id)).toEqual([]);
    expect(await auditRows('webhook.delivery_retried', String(deliveryId))).toHaveLength(1);
  });
});
