import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { endpointReceives } from './outbox-sql.js';

/** An endpoint as the operator sees it: which app, where, how it fares; never its secret. */
export interface AdminEndpointRow {
  id: string;
  appKey: string;
  url: string;
  eventTypes: string[] | null;
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  consecutiveFailures: number;
  failingSince: Date | null;
  createdAt: Date;
  /** The endpoint's latest recorded attempt, of any of its deliveries: null before the first. */
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

/** Which endpoints to list: one app's, or one endpoint; every app's when neither is given. */
export interface EndpointFilter {
  appId?: string;
  id?: string;
}

/** A delivery's states, as the table's check constraint has them (migration 0150). */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface AdminDeliveryRow {
  id: number;
  endpointId: string;
  appKey: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  lastStatusCode: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
}

/** Which deliveries to list, newest first: `before` a delivery id for the next page. */
export interface DeliveryFilter {
  endpointId?: string;
  status?: DeliveryStatus;
  before?: number;
  limit: number;
}

/** An endpoint with what a replay needs to know of it. */
export interface ReplayTarget {
  id: string;
  appKey: string;
  status: 'enabled' | 'disabled';
}

/** The operator's reads and repairs of the outbox, across every app. */
export class WebhookAdminRepository {
  constructor(private readonly db: Db) {}

  /**
   * Oldest first, each with its latest attempt: found through the endpoint's most recently
   * attempted delivery (an index on endpoint and attempt time), never by reading all of them.
   */
  async listEndpoints(filter: EndpointFilter, limit: number): Promise<AdminEndpointRow[]> {
    const byApp = filter.appId === undefined ? sql`` : sql`and ep.app_id = ${filter.appId}`;
    const byId = filter.id === undefined ? sql`` : sql`and ep.id = ${filter.id}`;
    const result = await sql<{
      id: string;
      app_key: string;
      url: string;
      event_types: string[] | null;
      status: 'enabled' | 'disabled';
      disabled_reason: string | null;
      consecutive_failures: number;
      failing_since: Date | null;
      created_at: Date;
      attempted_at: Date | null;
      status_code: number | null;
      error: string | null;
    }>`
      select ep.id, a.app_key, ep.url, ep.event_types, ep.status, ep.disabled_reason,
             ep.consecutive_failures, ep.failing_since, ep.created_at,
             last.attempted_at, last.status_code, last.error
        from webhook_endpoints ep
        join apps a on a.id = ep.app_id
        left join lateral (
          select la.attempted_at, la.status_code, la.error
            from webhook_deliveries d
            join lateral (
              select t.attempted_at, t.status_code, t.error from webhook_attempts t
               where t.delivery_id = d.id order by t.id desc limit 1
            ) la on true
           where d.endpoint_id = ep.id and d.last_attempt_at is not null
           order by d.last_attempt_at desc
           limit 1
        ) last on true
       where true ${byApp} ${byId}
       order by ep.created_at, ep.id
       limit ${limit}
    `.execute(this.db);
    return result.rows.map((r) => ({
      id: r.id,
      appKey: r.app_key,
      url: r.url,
      eventTypes: r.event_types,
      status: r.status,
      disabledReason: r.disabled_reason,
      consecutiveFailures: r.consecutive_failures,
      failingSince: r.failing_since,
      createdAt: r.created_at,
      lastAttemptAt: r.attempted_at,
      lastStatusCode: r.status_code,
      lastError: r.error,
    }));
  }

  async findEndpoint(id: string): Promise<ReplayTarget | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints as ep')
      .innerJoin('apps as a', 'a.id', 'ep.app_id')
      .select(['ep.id', 'a.app_key', 'ep.status'])
      .where('ep.id', '=', id)
      .executeTakeFirst();
    return row && { id: row.id, appKey: row.app_key, status: row.status };
  }

  /**
   * Newest first, each with its attempts counted from the attempt rows (a replay starts a delivery's
   * count afresh, its earlier attempts stay) and its last attempt's outcome.
   */
  async listDeliveries(filter: DeliveryFilter): Promise<AdminDeliveryRow[]> {
    const byEndpoint =
      filter.endpointId === undefined ? sql`` : sql`and d.endpoint_id = ${filter.endpointId}`;
    const byStatus = filter.status === undefined ? sql`` : sql`and d.status = ${filter.status}`;
    const older = filter.before === undefined ? sql`` : sql`and d.id < ${filter.before}`;
    const result = await sql<{
      id: string;
      endpoint_id: string;
      app_key: string;
      event_id: string;
      type: string;
      status: DeliveryStatus;
      attempts: string;
      next_attempt_at: Date;
      last_attempt_at: Date | null;
      delivered_at: Date | null;
      created_at: Date;
      status_code: number | null;
      latency_ms: number | null;
      error: string | null;
    }>`
      select d.id, d.endpoint_id, a.app_key, d.event_id, e.type, d.status,
             (select count(*) from webhook_attempts t where t.delivery_id = d.id) as attempts,
             d.next_attempt_at, d.last_attempt_at, d.delivered_at, d.created_at,
             last.status_code, last.latency_ms, last.error
        from webhook_deliveries d
        join webhook_endpoints ep on ep.id = d.endpoint_id
        join apps a on a.id = ep.app_id
        join webhook_events e on e.id = d.event_id
        left join lateral (
          select t.status_code, t.latency_ms, t.error from webhook_attempts t
           where t.delivery_id = d.id order by t.id desc limit 1
        ) last on true
       where true ${byEndpoint} ${byStatus} ${older}
       order by d.id desc
       limit ${filter.limit}
    `.execute(this.db);
    return result.rows.map((r) => ({
      id: Number(r.id),
      endpointId: r.endpoint_id,
      appKey: r.app_key,
      eventId: r.event_id,
      eventType: r.type,
      status: r.status,
      attempts: Number(r.attempts),
      nextAttemptAt: r.next_attempt_at,
      lastAttemptAt: r.last_attempt_at,
      deliveredAt: r.delivered_at,
      createdAt: r.created_at,
      lastStatusCode: r.status_code,
      lastLatencyMs: r.latency_ms,
      lastError: r.error,
    }));
  }

  /**
   * The delivery, locked to the transaction, with its endpoint's status. Its endpoint is locked
   * first: the order a recording worker and an endpoint's deletion lock them in, so none of them
   * waits on another in a cycle.
   */
  async lockDelivery(
    id: number,
  ): Promise<
    | { id: number; endpointId: string; eventId: string; status: DeliveryStatus; endpointStatus: string }
    | undefined
  > {
    const owner = await this.db
      .selectFrom('webhook_deliveries')
      .select('endpoint_id')
      .where('id', '=', id)
      .executeTakeFirst();
    if (owner === undefined) return undefined;
    await this.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('id', '=', owner.endpoint_id)
      .forNoKeyUpdate()
      .execute();
    const row = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as ep', 'ep.id', 'd.endpoint_id')
      .select(['d.id', 'd.endpoint_id', 'd.event_id', 'd.status', 'ep.status as endpoint_status'])
      .where('d.id', '=', id)
      .forUpdate('d')
      .executeTakeFirst();
    return (
      row && {
        id: Number(row.id),
        endpointId: row.endpoint_id,
        eventId: row.event_id,
        status: row.status as DeliveryStatus,
        endpointStatus: row.endpoint_status,
      }
    );
  }

  /**
   * Due at `now` again; a delivery that had failed is pending once more. Its endpoint's pause after
   * a timeout ends too, or "now" would mean when the pause ends; it still gets one attempt at a
   * time until it answers.
   */
  async makeDue(id: number, endpointId: string, now: Date): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: now })
      .where('id', '=', id)
      .execute();
    await this.db
      .updateTable('webhook_endpoints')
      .set({ paused_until: null })
      .where('id', '=', endpointId)
      .where('paused_until', '>', now)
      .execute();
  }

  /** How many events of [from, to) the endpoint would receive, counted up to `cap` + 1. */
  async countReplayable(endpointId: string, from: Date, to: Date, cap: number): Promise<number> {
    const result = await sql<{ n: string }>`
      select count(*) as n from (
        select 1
          from webhook_events e
          join webhook_endpoints ep on ep.id = ${endpointId}
          join apps ap on ap.id = ep.app_id
         where e.occurred_at >= ${from} and e.occurred_at < ${to} and ${endpointReceives()}
         limit ${cap + 1}
      ) capped
    `.execute(this.db);
    return Number(result.rows[0]?.n ?? 0);
  }

  /**
   * Queues every event of [from, to) the endpoint receives as a delivery due at `now`. An event the
   * endpoint already has a delivery of (one endpoint, one delivery per event) has that delivery
   * started afresh: pending, its retry window from now; its earlier attempts stay.
   */
  async replay(endpointId: string, from: Date, to: Date, now: Date, cap: number): Promise<number> {
    const result = await sql`
      insert into webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
      select e.id, ep.id, ${now}, ${now}
        from webhook_events e
        join webhook_endpoints ep on ep.id = ${endpointId}
        join apps ap on ap.id = ep.app_id
       where e.occurred_at >= ${from} and e.occurred_at < ${to} and ${endpointReceives()}
       order by e.occurred_at, e.id
       -- Events written after the count are within the range too: the bound holds all the same.
       limit ${cap}
      on conflict (endpoint_id, event_id) do update
         set status = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at,
             created_at = excluded.created_at, delivered_at = null
    `.execute(this.db);
    return Number(result.numAffectedRows ?? 0n);
  }
}
