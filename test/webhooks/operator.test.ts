import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_REQUEST } from '../../src/domain/audit/audit-actions.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { assetWorld, buyAsset, setLocked, type AssetWorld } from '../support/order-fixtures.js';
import { appIdOf } from '../http/audit-helpers.js';
import { insertAppEvents } from './outbox-fixtures.js';
import { startReceiver, type Receiver } from './receiver.js';

// The operator's side of webhooks: the admin API the `keyward webhooks` commands call, and the
// delivery figures at /metrics.

let h: Harness;
let receiver: Receiver;
let world: AssetWorld;
let other: AssetWorld;

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_TIMEOUT_MS: '600' });
  receiver = await startReceiver();
  world = await assetWorld(h);
  // Another app on another channel: its events are not the first app's to receive.
  other = await assetWorld(h);
});
afterAll(async () => {
  await receiver.close();
  await h.close();
});

const auth = { authorization: `Bearer ${ADMIN_KEY}` };
const get = (url: string) => h.app.inject({ method: 'GET', url: `/admin${url}`, headers: auth });
const post = (url: string, payload?: Record<string, unknown>) =>
  h.app.inject({
    method: 'POST',
    url: `/admin${url}`,
    headers: auth,
    ...(payload === undefined ? {} : { payload }),
  });

async function endpointAt(w: AssetWorld, path: string) {
  const appId = await appIdOf(h, w.app.appKey);
  return h.app.services.webhookEndpoints.create(
    appId,
    { url: `${receiver.url}${path}`, eventTypes: ['asset.locked'] },
    { appId, operator: null, ...NO_REQUEST },
  );
}

/** One asset.locked event in the world's channel (and one asset.unlocked, filtered out). */
async function lockOne(w: AssetWorld): Promise<void> {
  const num = await buyAsset(w);
  await setLocked(w, [num], true);
  await setLocked(w, [num], false);
}

const deliver = (endpointId: string) => h.app.services.webhookDeliveries.deliverDue(10, [endpointId]);

interface DeliveryRow {
  id: number;
  endpointId: string;
  appKey: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  createdAt: string;
}

async function deliveriesOf(endpointId: string): Promise<DeliveryRow[]> {
  const listed = await get(`/webhooks/deliveries?endpoint=${endpointId}`);
  expect(listed.statusCode, listed.body).toBe(200);
  return listed.json() as DeliveryRow[];
}

async function endpointRow(id: string): Promise<Record<string, unknown> | undefined> {
  const listed = (await get(`/webhooks/endpoints?app=${world.app.appKey}`)).json() as Array<
    Record<string, unknown>
  >;
  return listed.find((e) => e.id === id);
}

async function metric(line: string): Promise<number> {
  const body = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  const found = body.split('\n').find((l) => l.startsWith(`${line} `));
  expect(found, `${line} in /metrics`).toBeDefined();
  return Number(found?.slice(line.length + 1));
}

async function audited(action: string, subject: string) {
  const rows = (await get(`/audit?action=${action}&subject=${subject}`)).json() as Array<{
    detail: Record<string, unknown>;
    operator: string | null;
  }>;
  return rows;
}

describe('keyward webhooks endpoints', () => {
  it('lists endpoints of every app, or of one, with their health and never a secret', async () => {
    const a = await endpointAt(world, '/list-a');
    const b = await endpointAt(other, '/list-b');
    const all = (await get('/webhooks/endpoints?limit=1000')).json() as Array<Record<string, unknown>>;
    const ids = all.map((e) => e.id);
    // A database other tests share may hold more than 1,000; the two new ones are the newest.
    if (all.length < 1000) expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));

    const listed = await get(`/webhooks/endpoints?app=${world.app.appKey}`);
    expect(listed.statusCode).toBe(200);
    const mine = listed.json() as Array<Record<string, unknown>>;
    expect(mine.find((e) => e.id === a.id)).toEqual({
      id: a.id,
      appKey: world.app.appKey,
      url: `${receiver.url}/list-a`,
      eventTypes: ['asset.locked'],
      status: 'enabled',
      disabledReason: null,
      consecutiveFailures: 0,
      failingSince: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      lastAttemptAt: null,
      lastStatusCode: null,
      lastError: null,
    });
    expect(mine.map((e) => e.id)).not.toContain(b.id);
    expect(listed.body).not.toContain(a.secret);
    expect(listed.body).not.toContain('whsec_');
  });

  it('refuses an unknown app, a huge limit, a control character and a missing admin key', async () => {
    const unknown = await get('/webhooks/endpoints?app=kw_nope');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'no application kw_nope' });
    expect((await get('/webhooks/endpoints?limit=1001')).statusCode).toBe(400);
    expect((await get('/webhooks/endpoints?app=kw%01x')).statusCode).toBe(400);
    const anonymous = await h.app.inject({ method: 'GET', url: '/admin/webhooks/endpoints' });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('keyward webhooks deliveries and retry', () => {
  it('shows attempts and the last outcome, counts them at /metrics, and retries a failed-final delivery', async () => {
    const endpoint = await endpointAt(world, '/retry');
    let fail = true;
    receiver.on('/retry', (_req, res) => {
      res.writeHead(fail ? 503 : 200).end(fail ? 'down' : 'ok');
    });
    const before = {
      retrying: await metric('keyward_webhook_deliveries_total{outcome="failed_retrying"}'),
      final: await metric('keyward_webhook_deliveries_total{outcome="failed_final"}'),
      delivered: await metric('keyward_webhook_deliveries_total{outcome="delivered"}'),
    };
    await lockOne(world);
    const [queued] = await deliveriesOf(endpoint.id);
    expect(queued).toMatchObject({
      status: 'pending',
      attempts: 0,
      lastStatusCode: null,
      eventType: 'asset.locked',
    });
    expect(await metric('keyward_webhook_backlog{state="due"}')).toBeGreaterThanOrEqual(1);

    expect(await deliver(endpoint.id)).toBe(1);
    const [retrying] = await deliveriesOf(endpoint.id);
    expect(retrying).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: 503,
      lastError: 'status 503',
    });
    expect(retrying?.lastLatencyMs).toEqual(expect.any(Number));
    // The endpoint's own row carries its latest attempt, whichever delivery it was.
    expect(await endpointRow(endpoint.id)).toMatchObject({
      consecutiveFailures: 1,
      lastAttemptAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      lastStatusCode: 503,
      lastError: 'status 503',
    });
    expect(await metric('keyward_webhook_backlog{state="waiting"}')).toBeGreaterThanOrEqual(1);

    // Out of its retry window: the next failure is the last.
    await h.database.db
      .updateTable('webhook_deliveries')
      .set({ created_at: new Date(Date.now() - 4 * 24 * 3600 * 1000), next_attempt_at: new Date() })
      .where('id', '=', queued?.id ?? 0)
      .execute();
    expect(await deliver(endpoint.id)).toBe(1);
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: 'failed', attempts: 2 });
    const failed = (
      await get(`/webhooks/deliveries?endpoint=${endpoint.id}&status=failed`)
    ).json() as DeliveryRow[];
    expect(failed.map((d) => d.id)).toEqual([queued?.id]);
    expect(await deliver(endpoint.id)).toBe(0);

    const retried = await post(`/webhooks/deliveries/${queued?.id}/retry`);
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.json()).toEqual({
      id: queued?.id,
      endpointId: endpoint.id,
      eventId: queued?.eventId,
      previousStatus: 'failed',
      endpointStatus: 'enabled',
    });
    expect(await audited('webhook.delivery_retried', String(queued?.id))).toMatchObject([
      {
        operator: 'admin-api',
        detail: { endpointId: endpoint.id, eventId: queued?.eventId, previousStatus: 'failed' },
      },
    ]);
    fail = false;
    expect(await deliver(endpoint.id)).toBe(1);
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({
      status: 'delivered',
      attempts: 3,
      lastStatusCode: 200,
    });
    expect(await endpointRow(endpoint.id)).toMatchObject({
      consecutiveFailures: 0,
      lastStatusCode: 200,
      lastError: null,
    });

    expect(await metric('keyward_webhook_deliveries_total{outcome="failed_retrying"}')).toBe(
      before.retrying + 1,
    );
    expect(await metric('keyward_webhook_deliveries_total{outcome="failed_final"}')).toBe(before.final + 1);
    expect(await metric('keyward_webhook_deliveries_total{outcome="delivered"}')).toBe(before.delivered + 1);

    const again = await post(`/webhooks/deliveries/${queued?.id}/retry`);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({
      error: `delivery ${queued?.id} was delivered; to send its event again, replay its time range`,
    });
  });

  it('refuses an unknown delivery or endpoint, a bad id, status or limit, and control characters', async () => {
    const unknown = await post('/webhooks/deliveries/999999999999/retry');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'no delivery 999999999999' });
    for (const id of ['0', 'abc', '-1', '1e3', '12345678901234567890'])
      expect((await post(`/webhooks/deliveries/${id}/retry`)).statusCode, id).toBe(400);
    const noEndpoint = await get('/webhooks/deliveries?endpoint=ep_nope');
    expect(noEndpoint.statusCode).toBe(404);
    expect(noEndpoint.json()).toEqual({ error: 'no endpoint ep_nope' });
    expect((await get('/webhooks/deliveries?status=lost')).statusCode).toBe(400);
    expect((await get('/webhooks/deliveries?limit=100000')).statusCode).toBe(400);
    expect((await get('/webhooks/deliveries?limit=0')).statusCode).toBe(400);
    expect((await get('/webhooks/deliveries?before=0')).statusCode).toBe(400);
    expect((await get('/webhooks/deliveries?before=abc')).statusCode).toBe(400);
    expect((await get('/webhooks/deliveries?endpoint=ep_%07x')).statusCode).toBe(400);
  });
});

describe('keyward webhooks replay', () => {
  it("queues again the range's events the endpoint's app receives, never another channel's, audited", async () => {
    const endpoint = await endpointAt(world, '/replay');
    // From now: the events of the tests before are not in the range.
    const from = new Date().toISOString();
    await lockOne(world);
    await lockOne(other);
    await lockOne(world);
    const to = new Date(Date.now() + 1000).toISOString();
    expect(await deliver(endpoint.id)).toBe(2);
    const sent = await deliveriesOf(endpoint.id);
    expect(sent.map((d) => d.status)).toEqual(['delivered', 'delivered']);

    // An endpoint made after the events: the fan-out gave it nothing, a replay gives it its app's.
    const late = await endpointAt(world, '/replay-late');
    const replayed = await post(`/webhooks/endpoints/${late.id}/replay`, { from, to });
    expect(replayed.statusCode, replayed.body).toBe(200);
    expect(replayed.json()).toEqual({
      endpointId: late.id,
      appKey: world.app.appKey,
      from,
      to,
      queued: 2,
      endpointStatus: 'enabled',
    });
    const lateRows = await deliveriesOf(late.id);
    expect(new Set(lateRows.map((d) => d.eventId))).toEqual(new Set(sent.map((d) => d.eventId)));
    expect(lateRows.map((d) => d.status)).toEqual(['pending', 'pending']);
    // Newest first; `before` a delivery's id gives the ones older than it.
    const older = await get(`/webhooks/deliveries?endpoint=${late.id}&before=${lateRows[0]?.id}`);
    expect((older.json() as DeliveryRow[]).map((d) => d.id)).toEqual([lateRows[1]?.id]);

    // The other app's endpoint receives only its own channel's event from the same range.
    const theirs = await endpointAt(other, '/replay-other');
    const otherReplay = (await post(`/webhooks/endpoints/${theirs.id}/replay`, { from, to })).json() as {
      queued: number;
    };
    expect(otherReplay.queued).toBe(1);
    const [theirEvent] = await deliveriesOf(theirs.id);
    expect(sent.map((d) => d.eventId)).not.toContain(theirEvent?.eventId);

    // Delivered ones start afresh: pending, due now, their earlier attempt kept.
    const again = (await post(`/webhooks/endpoints/${endpoint.id}/replay`, { from, to })).json() as {
      queued: number;
    };
    expect(again.queued).toBe(2);
    expect((await deliveriesOf(endpoint.id)).map((d) => [d.status, d.attempts])).toEqual([
      ['pending', 1],
      ['pending', 1],
    ]);
    expect(await deliver(endpoint.id)).toBe(2);
    expect(receiver.received.filter((r) => r.path === '/replay')).toHaveLength(4);

    expect(await audited('webhook.replayed', late.id)).toMatchObject([
      { operator: 'admin-api', detail: { appKey: world.app.appKey, from, to, queued: 2 } },
    ]);
  });

  it('refuses an unknown endpoint, a bad or reversed range, an unknown field and control characters', async () => {
    const endpoint = await endpointAt(world, '/replay-refused');
    const from = '2026-01-01T00:00:00Z';
    const to = '2026-01-02T00:00:00Z';
    const unknown = await post('/webhooks/endpoints/ep_nope/replay', { from, to });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'no endpoint ep_nope' });
    const reversed = await post(`/webhooks/endpoints/${endpoint.id}/replay`, { from: to, to: from });
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json()).toEqual({ error: 'from: must be before to' });
    const empty = await post(`/webhooks/endpoints/${endpoint.id}/replay`, { from, to: from });
    expect(empty.statusCode).toBe(400);
    for (const body of [
      { from: 'yesterday', to },
      { from },
      { from, to, endpoint: 'x' },
      { from: `${from}\u0000`, to },
    ])
      expect(
        (await post(`/webhooks/endpoints/${endpoint.id}/replay`, body)).statusCode,
        JSON.stringify(body),
      ).toBe(400);
    expect((await post('/webhooks/endpoints/ep_%0a/replay', { from, to })).statusCode).toBe(400);
    expect(await audited('webhook.replayed', endpoint.id)).toEqual([]);
  });

  it('refuses a range holding more events than one replay queues', async () => {
    const endpoint = await endpointAt(world, '/replay-huge');
    const at = new Date('2020-03-01T00:00:00Z');
    await insertAppEvents(h, world.app.appKey, { idPrefix: `evt_${endpoint.id}_`, at, count: 10001 });
    const range = { from: '2020-03-01T00:00:00Z', to: '2020-03-01T00:00:01Z' };
    const refused = await post(`/webhooks/endpoints/${endpoint.id}/replay`, range);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      error:
        'more than 10000 events from 2020-03-01T00:00:00.000Z to 2020-03-01T00:00:01.000Z: replay a shorter range, in parts',
    });
    expect(await deliveriesOf(endpoint.id)).toEqual([]);
  });
});
