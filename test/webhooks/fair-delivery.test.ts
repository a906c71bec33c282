import type { FastifyBaseLogger } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_REQUEST } from '../../src/domain/audit/audit-actions.js';
import { SLOW_ATTEMPT_MS } from '../../src/domain/webhooks/delivery.service.js';
import { startWebhookWorker, type WebhookWorker } from '../../src/jobs/webhook-worker.js';
import { appIdOf } from '../http/audit-helpers.js';
import { createTestApp } from '../support/fixtures.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { queueAppEvents } from './outbox-fixtures.js';
import { startReceiver, type Receiver } from './receiver.js';

// One app's endpoints that never answer must not hold back another app's events (docs/adr/0015).
// Tenant S: 20 endpoints that accept the connection and never answer, 100 events each queued
// (2,000 deliveries, each attempt held to the full 15 s WEBHOOK_TIMEOUT_MS). Tenant F: one endpoint
// that answers at once, and an event every quarter second. The worker is the real one, with its
// defaults (8 slots, a one-second idle poll), sending over loopback.
//
// What the structure guarantees, and what is asserted: every F event arrives while S's backlog is
// still all but untouched, each well within a bound (10 s) that a worker waiting on S's slowest
// attempts (15 s each) could not meet. The lag itself is measured by `npm run bench` ("webhook lag
// with a stalled tenant"); it is printed here too.

const STALLED_ENDPOINTS = 20;
const STALLED_EVENTS = 100;
const F_EVENTS = 20;
const LAG_BOUND_MS = 10_000;

let h: Harness;
let receiver: Receiver;
let worker: WebhookWorker | undefined;
const arrivals = new Map<string, number>();

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1' });
  receiver = await startReceiver();
  receiver.on('/fair', (req, res) => {
    const id = String(req.headers['webhook-id']);
    if (!arrivals.has(id)) arrivals.set(id, Date.now());
    res.writeHead(204).end();
  });
  for (let i = 0; i < STALLED_ENDPOINTS; i += 1) receiver.on(`/stalled/${i}`, () => undefined);
});
afterAll(async () => {
  // Stopping waits for the attempts in hand; closing the receiver ends S's at once.
  const stopping = worker?.stop();
  await receiver.close();
  await stopping;
  await h.close();
});

async function appWith(paths: string[]) {
  const app = await createTestApp(h, { scopes: ['auth_webhooks'] });
  const appId = await appIdOf(h, app.appKey);
  const endpoints: string[] = [];
  for (const path of paths) {
    const created = await h.app.services.webhookEndpoints.create(
      appId,
      { url: `${receiver.url}${path}` },
      { appId, operator: null, ...NO_REQUEST },
    );
    endpoints.push(created.id);
  }
  return { appKey: app.appKey, endpoints };
}

async function metric(line: string): Promise<number> {
  const body = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  const found = body.split('\n').find((l) => l.startsWith(`${line} `));
  return Number(found?.slice(line.length + 1) ?? NaN);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

describe('fair delivery', () => {
  it('delivers a tenant’s events while another tenant’s 2,000 deliveries hang', async () => {
    const stalled = await appWith(Array.from({ length: STALLED_ENDPOINTS }, (_, i) => `/stalled/${i}`));
    const fair = await appWith(['/fair']);
    await queueAppEvents(h, stalled.appKey, stalled.endpoints, {
      idPrefix: `${uniqueCode('evt_s')}_`,
      count: STALLED_EVENTS,
      due: new Date(),
    });
    const deliveredBefore = await metric('keyward_webhook_deliveries_total{outcome="delivered"}');

    const log = { error: (o: unknown) => console.error(o) } as unknown as FastifyBaseLogger;
    worker = startWebhookWorker(h.app.services.webhookDeliveries, log, {
      pollMs: h.config.webhooks.pollMs,
      slots: h.config.webhooks.concurrency,
      slowMs: SLOW_ATTEMPT_MS,
      endpointIds: [...stalled.endpoints, ...fair.endpoints],
    });
    // S's attempts take the worker's slots first.
    await until(() => receiver.received.some((r) => r.path.startsWith('/stalled/')), 10_000);

    const made = new Map<string, number>();
    for (let i = 0; i < F_EVENTS; i += 1) {
      const idPrefix = `${uniqueCode('evt_f')}_`;
      const at = new Date();
      await queueAppEvents(h, fair.appKey, fair.endpoints, { idPrefix, count: 1, due: at, at });
      made.set(`${idPrefix}1`, at.getTime());
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const allArrived = await until(() => [...made.keys()].every((id) => arrivals.has(id)), 30_000);
    const lags = [...made].map(([id, at]) => (arrivals.get(id) ?? Infinity) - at).sort((a, b) => a - b);
    console.info(
      `fair delivery, ${STALLED_ENDPOINTS * STALLED_EVENTS} deliveries to never-answering endpoints queued: ` +
        `${F_EVENTS} events of another app, lag p50 ${percentile(lags, 50)} ms, ` +
        `p99 ${percentile(lags, 99)} ms, max ${lags.at(-1)} ms`,
    );
    expect(allArrived).toBe(true);
    expect(lags.at(-1)).toBeLessThanOrEqual(LAG_BOUND_MS);

    // S is still stuck: nothing of it delivered, all but a few dozen of its deliveries never tried.
    const stalledRows = await h.database.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempts'])
      .where('endpoint_id', 'in', stalled.endpoints)
      .execute();
    expect(stalledRows.filter((r) => r.status !== 'pending')).toEqual([]);
    expect(stalledRows.filter((r) => r.attempts === 0).length).toBeGreaterThan(
      STALLED_ENDPOINTS * STALLED_EVENTS - 100,
    );
    // The worker held each stalled endpoint to one attempt at a time once it was slow.
    const hits = receiver.received.filter((r) => r.path.startsWith('/stalled/'));
    expect(hits.length).toBeLessThanOrEqual(STALLED_ENDPOINTS * 2);
    // Counted as every recorded attempt is.
    expect(await metric('keyward_webhook_deliveries_total{outcome="delivered"}')).toBeGreaterThanOrEqual(
      deliveredBefore + F_EVENTS,
    );
  }, 90_000);
});
