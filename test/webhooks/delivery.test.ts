import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_REQUEST } from '../../src/domain/audit/audit-actions.js';
import { WebhookDeliveryService, type RetryPolicy } from '../../src/domain/webhooks/delivery.service.js';
import { RESPONSE_EXCERPT_BYTES } from '../../src/domain/webhooks/outbound.js';
import { startHarness, type Harness } from '../support/harness.js';
import { assetWorld, buyAsset, setLocked, type AssetWorld } from '../support/order-fixtures.js';
import { startReceiver, type Receiver } from './receiver.js';

let h: Harness;
let receiver: Receiver;
let world: AssetWorld;
let appId: string;
// The wall clock, moved ahead when a test waits for a retry.
let offset = 0;
const now = () => Date.now() + offset;

beforeAll(async () => {
  h = await startHarness({
    WEBHOOK_ALLOW_HTTP: '1',
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_TIMEOUT_MS: '600',
    WEBHOOK_CONNECT_TIMEOUT_MS: '300',
  });
  receiver = await startReceiver();
  world = await assetWorld(h);
  const row = await h.database.db
    .selectFrom('apps')
    .select('id')
    .where('app_key', '=', world.app.appKey)
    .executeTakeFirstOrThrow();
  appId = row.id;
});
afterAll(async () => {
  await receiver.close();
  await h.close();
});

function worker(retry: Partial<RetryPolicy> = {}): WebhookDeliveryService {
  return new WebhookDeliveryService(h.database.db, h.config.webhooks, {
    now,
    random: () => 0.5,
    retry: { baseDelayMs: 10_000, ...retry },
  });
}

/** An endpoint of the world's app at a receiver path, for asset.locked events only. */
async function endpointAt(path: string) {
  return h.app.services.webhookEndpoints.create(
    appId,
    { url: `${receiver.url}${path}`, eventTypes: ['asset.locked'] },
    { appId, operator: null, ...NO_REQUEST },
  );
}

async function lockOne(): Promise<string> {
  const num = await buyAsset(world);
  await setLocked(world, [num], true);
  await setLocked(world, [num], false);
  return num;
}

async function deliveryOf(endpointId: string) {
  const delivery = await h.database.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirstOrThrow();
  const attempts = await h.database.db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', delivery.id)
    .orderBy('id')
    .execute();
  return { delivery, attempts };
}

const hitsOn = (path: string) => receiver.received.filter((r) => r.path === path);

describe('delivery', () => {
  it('sends the event signed by the Standard Webhooks scheme, once, and keeps the attempt', async () => {
    const endpoint = await endpointAt('/ok');
    const num = await lockOne();
    expect(await worker().deliverDue(10, [endpoint.id])).toBe(1);
    expect(await worker().deliverDue(10, [endpoint.id])).toBe(0);
    const [hit] = hitsOn('/ok');
    const verified = new Webhook(endpoint.secret).verify(hit?.body ?? '', {
      'webhook-id': String(hit?.headers['webhook-id']),
      'webhook-timestamp': String(hit?.headers['webhook-timestamp']),
      'webhook-signature': String(hit?.headers['webhook-signature']),
    }) as Record<string, unknown>;
    expect(verified).toMatchObject({
      id: hit?.headers['webhook-id'],
      type: 'asset.locked',
      scope: { channels: [world.channel], enterpriseId: world.enterpriseGlobalId, appKey: null },
      data: { assetNum: num, locked: true },
      requestId: expect.any(String),
    });
    const { delivery, attempts } = await deliveryOf(endpoint.id);
    expect(delivery.status).toBe('delivered');
    expect(attempts).toMatchObject([{ status_code: 204, error: null }]);
  });

  it('retries a receiver that fails with backoff until it answers, keeping every attempt', async () => {
    const endpoint = await endpointAt('/flaky');
    let calls = 0;
    receiver.on('/flaky', (_req, res) => {
      calls += 1;
      res.writeHead(calls < 3 ? 500 : 200).end(calls < 3 ? 'boom' : 'ok');
    });
    await lockOne();
    await worker().deliverDue(10, [endpoint.id]);
    let { delivery } = await deliveryOf(endpoint.id);
    // 10 s base with the jitter at its middle: due again ten seconds later, then twenty.
    expect(delivery.next_attempt_at.getTime() - now()).toBeGreaterThan(9000);
    expect(delivery.next_attempt_at.getTime() - now()).toBeLessThanOrEqual(10_000);
    expect(await worker().deliverDue(10, [endpoint.id])).toBe(0);
    offset += 10_000;
    await worker().deliverDue(10, [endpoint.id]);
    ({ delivery } = await deliveryOf(endpoint.id));
    expect(delivery.next_attempt_at.getTime() - now()).toBeGreaterThan(19_000);
    expect(delivery.next_attempt_at.getTime() - now()).toBeLessThanOrEqual(20_000);
    offset += 20_000;
    await worker().deliverDue(10, [endpoint.id]);
    const after = await deliveryOf(endpoint.id);
    expect(after.delivery.status).toBe('delivered');
    expect(after.attempts.map((a) => [a.status_code, a.response_excerpt, a.error])).toEqual([
      [500, 'boom', 'status 500'],
      [500, 'boom', 'status 500'],
      [200, 'ok', null],
    ]);
    // Every attempt carried the same event id and body.
    const hits = hitsOn('/flaky');
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(1);
    expect(new Set(hits.map((h) => h.body)).size).toBe(1);
    const endpointRow = await h.app.services.webhookEndpoints.get(appId, endpoint.id);
    expect(endpointRow.consecutiveFailures).toBe(0);
  });

  it('fails an attempt that times out, and takes one that answers slowly within the limit', async () => {
    const slow = await endpointAt('/slow');
    const hung = await endpointAt('/hung');
    receiver.on('/slow', (_req, res) => void setTimeout(() => res.writeHead(200).end(), 200));
    receiver.on('/hung', () => undefined);
    await lockOne();
    await worker().deliverDue(10, [slow.id, hung.id]);
    expect((await deliveryOf(slow.id)).delivery.status).toBe('delivered');
    const { delivery, attempts } = await deliveryOf(hung.id);
    expect(delivery.status).toBe('pending');
    expect(attempts).toMatchObject([{ status_code: null, error: 'timed out after 600 ms' }]);
    expect(attempts[0]?.latency_ms).toBeGreaterThanOrEqual(590);
  });

  it('records the rest of a batch when an endpoint is deleted while its delivery is sent', async () => {
    const gone = await endpointAt('/deleted-meanwhile');
    const kept = await endpointAt('/kept');
    receiver.on('/deleted-meanwhile', (_req, res) => {
      void h.app.services.webhookEndpoints
        .delete(appId, gone.id, { appId, operator: null, ...NO_REQUEST })
        .then(() => res.writeHead(204).end());
    });
    await lockOne();
    expect(await worker().deliverDue(10, [gone.id, kept.id])).toBe(2);
    const { delivery, attempts } = await deliveryOf(kept.id);
    expect(delivery.status).toBe('delivered');
    expect(attempts).toMatchObject([{ status_code: 204, error: null }]);
    const left = await h.database.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', gone.id)
      .execute();
    expect(left).toEqual([]);
    expect(hitsOn('/deleted-meanwhile')).toHaveLength(1);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const endpoint = await endpointAt('/moved');
    receiver.on('/moved', (_req, res) => res.writeHead(302, { location: `${receiver.url}/elsewhere` }).end());
    await lockOne();
    await worker().deliverDue(10, [endpoint.id]);
    const { attempts } = await deliveryOf(endpoint.id);
    expect(attempts).toMatchObject([{ status_code: 302, error: 'redirect not followed' }]);
    expect(hitsOn('/elsewhere')).toEqual([]);
  });

  it('reads at most 4 KiB of an answer', async () => {
    const endpoint = await endpointAt('/big');
    receiver.on('/big', (_req, res) => res.writeHead(500).end('x'.repeat(1024 * 1024)));
    await lockOne();
    await worker().deliverDue(10, [endpoint.id]);
    const { attempts } = await deliveryOf(endpoint.id);
    expect(attempts[0]?.response_excerpt).toHaveLength(RESPONSE_EXCERPT_BYTES);
  });

  it('keeps an answer with a NUL byte, as text the database can hold', async () => {
    const endpoint = await endpointAt('/nul');
    receiver.on('/nul', (_req, res) => res.writeHead(500).end('a\u0000b'));
    await lockOne();
    await worker().deliverDue(10, [endpoint.id]);
    const { attempts } = await deliveryOf(endpoint.id);
    expect(attempts).toMatchObject([{ status_code: 500, response_excerpt: 'a\uFFFDb' }]);
  });

  it('gives a delivery up after the retry window, and disables an endpoint that keeps failing', async () => {
    offset = 0; // the window counts from the event, made on the wall clock
    const endpoint = await endpointAt('/down');
    receiver.on('/down', (_req, res) => res.writeHead(503).end());
    await lockOne();
    const strict = worker({
      baseDelayMs: 1000,
      retryWindowMs: 5000,
      disableAfterFailures: 3,
      disableAfterMs: 2000,
    });
    for (let i = 0; i < 6; i += 1) {
      await strict.deliverDue(10, [endpoint.id]);
      offset += 1500;
    }
    const { delivery, attempts } = await deliveryOf(endpoint.id);
    // Attempts at 0, 1.5 and 4.5 s; the next would come past the 5 s window, so the third gave the
    // delivery up, and being 3 failures over more than 2 s, disabled the endpoint.
    expect(attempts).toHaveLength(3);
    expect(delivery.status).toBe('failed');
    const after = await h.app.services.webhookEndpoints.get(appId, endpoint.id);
    expect(after.status).toBe('disabled');
    expect(after.disabledReason).toMatch(/^3 failed attempts in a row/);
    const audit = await h.app.services.audit.list({
      subject: endpoint.id,
      action: 'endpoint.disabled',
      limit: 10,
    });
    expect(audit).toMatchObject([
      { action: 'endpoint.disabled', appId, detail: { failures: 3, lastError: 'status 503' } },
    ]);
    // A disabled endpoint is sent nothing, and given no delivery of what happens meanwhile…
    receiver.on('/down', (_req, res) => res.writeHead(200).end());
    offset = 0;
    await lockOne();
    expect(await strict.deliverDue(10, [endpoint.id])).toBe(0);
    const rows = () =>
      h.database.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('endpoint_id', '=', endpoint.id)
        .execute();
    expect(await rows()).toHaveLength(1);
    // …until its app enables it again.
    await h.app.services.webhookEndpoints.update(
      appId,
      endpoint.id,
      { enabled: true },
      { appId, operator: null, ...NO_REQUEST },
    );
    await lockOne();
    expect(await strict.deliverDue(10, [endpoint.id])).toBe(1);
    expect((await h.app.services.webhookEndpoints.get(appId, endpoint.id)).status).toBe('enabled');
  });
});
