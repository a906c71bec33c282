import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { NO_REQUEST } from '../../src/domain/audit/audit-actions.js';
import { WebhookRetentionService } from '../../src/domain/webhooks/retention.service.js';
import { appIdOf } from '../http/audit-helpers.js';
import { createTestApp } from '../support/fixtures.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const DAY = 24 * 3600 * 1000;
// The test's events live in 2001, before anything any other test writes, and pruning is run "in"
// early 2001: the shared PostgreSQL test database's other events are all younger than the cutoff.
const OLD = new Date('2001-01-01T00:00:00Z');
const NOW = OLD.getTime() + 30 * DAY + 3600 * 1000;

type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** An event at `at` for the endpoint, delivered with `status`, with one attempt kept. */
async function eventAt(endpointId: string, at: Date, status: DeliveryStatus | null): Promise<string> {
  const id = `evt_${uniqueCode('ret')}`;
  await sql`insert into webhook_events (id, type, occurred_at, data) values (${id}, 'asset.locked', ${at}, '{}')`.execute(
    h.database.db,
  );
  if (status !== null) {
    await sql`
      with d as (
        insert into webhook_deliveries (event_id, endpoint_id, status, attempts)
        values (${id}, ${endpointId}, ${status}, 1) returning id)
      insert into webhook_attempts (delivery_id, latency_ms, status_code) select id, 12, 500 from d
    `.execute(h.database.db);
  }
  return id;
}

async function remaining(ids: string[]) {
  const events = await h.database.db
    .selectFrom('webhook_events')
    .select('id')
    .where('id', 'in', ids)
    .execute();
  const deliveries = await h.database.db
    .selectFrom('webhook_deliveries')
    .select(['id', 'event_id'])
    .where('event_id', 'in', ids)
    .execute();
  const attempts = await h.database.db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .select('a.id')
    .where('d.event_id', 'in', ids)
    .execute();
  return { events: events.map((e) => e.id).sort(), deliveries: deliveries.length, attempts: attempts.length };
}

describe('webhook retention', () => {
  let endpointId: string;

  beforeAll(async () => {
    const app = await createTestApp(h, { scopes: ['auth_webhooks'] });
    const appId = await appIdOf(h, app.appKey);
    endpointId = (
      await h.app.services.webhookEndpoints.create(
        appId,
        { url: 'https://receiver.example/r' },
        { appId: appId, operator: null, ...NO_REQUEST },
      )
    ).id;
  });

  it('prunes old events with their deliveries and attempts, and keeps what still waits to be sent', async () => {
    const delivered = await eventAt(endpointId, OLD, 'delivered');
    const failed = await eventAt(endpointId, OLD, 'failed');
    const unsubscribed = await eventAt(endpointId, OLD, null);
    const waiting = await eventAt(endpointId, OLD, 'pending');
    const young = await eventAt(endpointId, new Date(NOW - 29 * DAY), 'delivered');
    const all = [delivered, failed, unsubscribed, waiting, young];
    expect(await remaining(all)).toMatchObject({ events: [...all].sort(), deliveries: 4, attempts: 4 });

    const pruned = await new WebhookRetentionService(h.database.db, 30, () => NOW).prune();
    expect(pruned).toBe(3);
    expect(await remaining(all)).toEqual({ events: [waiting, young].sort(), deliveries: 2, attempts: 2 });

    // Once the waiting delivery ends, its event goes on the next run.
    await h.database.db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed' })
      .where('event_id', '=', waiting)
      .execute();
    expect(await new WebhookRetentionService(h.database.db, 30, () => NOW).prune()).toBe(1);
    expect(await remaining(all)).toEqual({ events: [young], deliveries: 1, attempts: 1 });
  });

  it('works through a backlog in bounded statements, at most its rounds per run', async () => {
    const ids = [];
    for (let i = 0; i < 7; i += 1) ids.push(await eventAt(endpointId, OLD, 'delivered'));
    const service = new WebhookRetentionService(h.database.db, 30, () => NOW, { batch: 2, batchesPerRun: 3 });
    expect(await service.prune()).toBe(6);
    expect((await remaining(ids)).events).toHaveLength(1);
    expect(await service.prune()).toBe(1);
    expect((await remaining(ids)).events).toEqual([]);
  });

  it('keeps events at least longer than the 3 days a delivery is retried', () => {
    expect(loadConfig({}).webhooks.retentionDays).toBe(30);
    expect(loadConfig({ WEBHOOK_RETENTION_DAYS: '4' }).webhooks.retentionDays).toBe(4);
    expect(() => loadConfig({ WEBHOOK_RETENTION_DAYS: '3' })).toThrow(
      'WEBHOOK_RETENTION_DAYS must be a whole number of at least 4, got "3"',
    );
  });
});
