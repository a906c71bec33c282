import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_REQUEST } from '../../src/domain/audit/audit-actions.js';
import type { ClaimedDelivery } from '../../src/domain/webhooks/deliveries.repository.js';
import { WebhookDeliveryService, type Attempted } from '../../src/domain/webhooks/delivery.service.js';
import type { AttemptResult } from '../../src/domain/webhooks/outbound.js';
import { appIdOf } from '../http/audit-helpers.js';
import { createTestApp } from '../support/fixtures.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { queueAppEvents } from './outbox-fixtures.js';

// The order and the bounds of a claim (docs/adr/0015), on the database itself: endpoints in turn,
// apps with less in flight first, at most two deliveries in flight per endpoint, one for an endpoint
// that is slow or timed out, none while it is paused. Nothing is sent here: attempts are made up
// and recorded as the worker would.

let h: Harness;
const PER_ENDPOINT = 2;
const MINUTE = 60_000;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** A delivery service on the suite's database whose clock is `at()`. */
function service(at: () => number = Date.now): WebhookDeliveryService {
  return new WebhookDeliveryService(
    h.database.db,
    { ...h.config.webhooks, endpointConcurrency: PER_ENDPOINT },
    { now: at },
  );
}

/** An app with `endpoints` endpoints, each queued `count` events due `dueAgoMs` ago. */
async function appWith(endpoints: number, count: number, dueAgoMs = 10 * MINUTE) {
  const app = await createTestApp(h, { scopes: ['auth_webhooks'] });
  const appId = await appIdOf(h, app.appKey);
  const ids: string[] = [];
  for (let i = 0; i < endpoints; i += 1) {
    const created = await h.app.services.webhookEndpoints.create(
      appId,
      // .invalid never resolves: taken at registration, and nothing here sends to it.
      { url: `https://hooks.invalid/${i}` },
      { appId, operator: null, ...NO_REQUEST },
    );
    ids.push(created.id);
  }
  await addEvents(app.appKey, ids, count, dueAgoMs);
  return { appKey: app.appKey, appId, endpoints: ids };
}

async function addEvents(appKey: string, endpointIds: string[], count: number, dueAgoMs: number) {
  await queueAppEvents(h, appKey, endpointIds, {
    idPrefix: `${uniqueCode('evt_')}_`,
    count,
    due: new Date(Date.now() - dueAgoMs),
  });
}

/** How many of `claimed` went to each endpoint, in `endpoints` order. */
const perEndpoint = (claimed: readonly ClaimedDelivery[], endpoints: readonly string[]) =>
  endpoints.map((id) => claimed.filter((d) => d.endpointId === id).length);

const answered: AttemptResult = { ok: true, statusCode: 204, latencyMs: 5, responseExcerpt: '', error: null };

function outcome(delivery: ClaimedDelivery, result: AttemptResult, done = new Date()): Attempted {
  return { delivery, at: new Date(done.getTime() - result.latencyMs), done, result };
}

async function endpointRow(id: string) {
  return h.database.db
    .selectFrom('webhook_endpoints')
    .select(['consecutive_timeouts', 'paused_until', 'last_claimed_at', 'consecutive_failures'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

describe('a claim', () => {
  it('takes each endpoint’s oldest due delivery in turn, every first before any second', async () => {
    const { endpoints } = await appWith(3, 5);
    const svc = service();
    const first = await svc.claim(4, endpoints);
    // Four slots, three endpoints: one each, then a second for the first endpoint in turn.
    expect(first).toHaveLength(4);
    expect(perEndpoint(first, endpoints).sort()).toEqual([1, 1, 2]);
    // Each endpoint's deliveries go oldest first: the event ids are numbered in queue order.
    for (const d of first) expect(d.attempt).toBe(1);
  });

  it('holds each endpoint to two deliveries in flight until one is recorded', async () => {
    const { endpoints } = await appWith(3, 5);
    const svc = service();
    const claimed = [...(await svc.claim(10, endpoints))];
    expect(perEndpoint(claimed, endpoints)).toEqual([2, 2, 2]);
    expect(await svc.claim(10, endpoints)).toEqual([]);
    // One recorded: its endpoint has room for one more, the others none.
    const done = claimed.find((d) => d.endpointId === endpoints[1]) as ClaimedDelivery;
    await svc.record([outcome(done, answered)]);
    const next = await svc.claim(10, endpoints);
    expect(perEndpoint(next, endpoints)).toEqual([0, 1, 0]);
  });

  it('serves an app with nothing in flight before one with many, however old its backlog', async () => {
    const stalled = await appWith(4, 10, 60 * MINUTE);
    const svc = service();
    expect(await svc.claim(8, stalled.endpoints)).toHaveLength(8);
    // Another app's endpoint with one event a second old, and the stalled app's fifth endpoint with
    // a backlog half an hour old: the app with nothing in flight goes first all the same.
    const fresh = await appWith(1, 1, 1000);
    const extra = await h.app.services.webhookEndpoints.create(
      stalled.appId,
      { url: 'https://hooks.invalid/more' },
      { appId: stalled.appId, operator: null, ...NO_REQUEST },
    );
    await addEvents(stalled.appKey, [extra.id], 3, 30 * MINUTE);
    const scope = [...stalled.endpoints, extra.id, ...fresh.endpoints];
    const [first] = await svc.claim(1, scope);
    expect(first?.endpointId).toBe(fresh.endpoints[0]);
    const [second] = await svc.claim(1, scope);
    expect(second?.endpointId).toBe(extra.id);
  });

  it('takes an app’s endpoints in turn, the one served least recently first', async () => {
    const { endpoints } = await appWith(3, 6);
    const svc = service();
    const order: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const [one] = await svc.claim(1, endpoints);
      if (one === undefined) throw new Error('nothing claimed');
      order.push(one.endpointId);
      await svc.record([outcome(one, answered)]);
    }
    // Round-robin: each endpoint once, then each again in the same order.
    expect(new Set(order.slice(0, 3)).size).toBe(3);
    expect(order.slice(3)).toEqual(order.slice(0, 3));
  });

  it('gives a slow endpoint no second delivery, nor one that timed out, nor any while it is paused', async () => {
    const { endpoints } = await appWith(2, 5);
    const [slow, quick] = endpoints as [string, string];
    const t0 = Date.now();
    let now = t0;
    const svc = service(() => now);
    expect(perEndpoint(await svc.claim(2, endpoints), endpoints)).toEqual([1, 1]);
    // Half a second on, both are under way but neither is slow: each may have a second.
    now = t0 + 500;
    expect(perEndpoint(await svc.claim(10, [quick]), endpoints)).toEqual([0, 1]);
    // Two seconds on, `slow` has had an attempt in flight for longer than a second: none more.
    now = t0 + 2000;
    expect(await svc.claim(10, [slow])).toEqual([]);

    // An attempt that timed out: paused for 5 s, then one attempt at a time until it answers.
    const timedOut = await appWith(1, 5);
    const [endpoint] = timedOut.endpoints as [string];
    now = Date.now();
    const [first] = await svc.claim(1, [endpoint]);
    if (first === undefined) throw new Error('nothing claimed');
    const timeout: AttemptResult = {
      ok: false,
      statusCode: null,
      latencyMs: 15_000,
      responseExcerpt: null,
      error: 'timed out after 15000 ms',
      timedOut: true,
    };
    await svc.record([outcome(first, timeout, new Date(now))]);
    const paused = await endpointRow(endpoint);
    expect(paused.consecutive_timeouts).toBe(1);
    expect((paused.paused_until as Date).getTime() - now).toBe(5000);
    expect(await svc.claim(10, [endpoint])).toEqual([]);
    now += 5000;
    const probe = await svc.claim(10, [endpoint]);
    expect(probe).toHaveLength(1);
    // Timing out again doubles the pause.
    await svc.record([outcome(probe[0] as ClaimedDelivery, timeout, new Date(now))]);
    const again = await endpointRow(endpoint);
    expect(again.consecutive_timeouts).toBe(2);
    expect((again.paused_until as Date).getTime() - now).toBe(10_000);
    // An answer, even a failing one, ends the run and the pause.
    now += 10_000;
    const [third] = await svc.claim(10, [endpoint]);
    const failing: AttemptResult = { ...answered, ok: false, statusCode: 500, error: 'status 500' };
    await svc.record([outcome(third as ClaimedDelivery, failing, new Date(now))]);
    expect(await endpointRow(endpoint)).toMatchObject({
      consecutive_timeouts: 0,
      paused_until: null,
      consecutive_failures: 3,
    });
    expect(await svc.claim(10, [endpoint])).toHaveLength(PER_ENDPOINT);
  });

  it('ends an endpoint’s pause when an operator retries one of its deliveries', async () => {
    const { endpoints } = await appWith(1, 2);
    const [endpoint] = endpoints as [string];
    const svc = service();
    const [first] = await svc.claim(1, endpoints);
    if (first === undefined) throw new Error('nothing claimed');
    const timeout: AttemptResult = {
      ok: false,
      statusCode: null,
      latencyMs: 15_000,
      responseExcerpt: null,
      error: 'timed out after 15000 ms',
      timedOut: true,
    };
    await svc.record([outcome(first, timeout)]);
    expect(await svc.claim(10, endpoints)).toEqual([]);
    await h.app.services.webhookAdmin.retry(first.id, { ...NO_REQUEST, operator: 'test' });
    // Due now, and its endpoint no longer paused: one attempt (it timed out last time).
    const retried = await svc.claim(10, endpoints);
    expect(retried).toHaveLength(1);
    expect(await endpointRow(endpoint)).toMatchObject({ paused_until: null, consecutive_timeouts: 1 });
  });

  it('sends again what a worker that died had claimed, once its lease ends, not counting it in flight', async () => {
    const { endpoints } = await appWith(1, 2);
    const t0 = Date.now();
    let now = t0;
    const svc = service(() => now);
    const lost = await svc.claim(10, endpoints);
    expect(lost).toHaveLength(PER_ENDPOINT);
    // Never recorded. Past the lease (2 × WEBHOOK_TIMEOUT_MS + 5 s) they are due again and the
    // endpoint has room for them.
    now = t0 + 2 * h.config.webhooks.timeoutMs + 6000;
    const again = await svc.claim(10, endpoints);
    expect(again.map((d) => d.id).sort()).toEqual(lost.map((d) => d.id).sort());
    expect(again.every((d) => d.attempt === 2)).toBe(true);
  });

  it('holds the bound when many workers claim at once', async () => {
    const { endpoints } = await appWith(3, 10);
    const claims = await Promise.all(Array.from({ length: 8 }, () => service().claim(3, endpoints)));
    const all = claims.flat();
    expect(new Set(all.map((d) => d.id)).size).toBe(all.length);
    for (const count of perEndpoint(all, endpoints)) expect(count).toBeLessThanOrEqual(PER_ENDPOINT);
    const inFlight = await h.database.db
      .selectFrom('webhook_deliveries')
      .select(({ fn }) => ['endpoint_id', fn.countAll<string>().as('n')])
      .where('endpoint_id', 'in', endpoints)
      .where('lease_until', 'is not', null)
      .groupBy('endpoint_id')
      .execute();
    for (const row of inFlight) expect(Number(row.n)).toBeLessThanOrEqual(PER_ENDPOINT);
  });
});
