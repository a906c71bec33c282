import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  endpointId: string;
  appId: string;
  url: string;
  secrets: string[];
  /** This attempt's number, from 1. */
  attempt: number;
  createdAt: Date;
  event: {
    id: string;
    type: string;
    occurredAt: Date;
    channels: string[];
    enterpriseId: string | null;
    appKey: string | null;
    data: Record<string, unknown>;
    requestId: string | null;
  };
}

export interface AttemptRow {
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  error: string | null;
}

/** Where a delivery goes after a failed attempt: again at a time, or nowhere (it failed). */
export type AfterFailure = { retryAt: Date } | { gaveUp: true };

export class WebhookDeliveriesRepository {
  constructor(private readonly db: Db) {}

  /**
   * Claims up to `limit` due deliveries of enabled endpoints: locked with SKIP LOCKED, so workers on
   * other instances take other rows, and pushed `leaseMs` into the future in the same statement, so
   * once it commits no other worker sees them as due while this one sends. A worker that dies
   * mid-send leaves its rows to come due again when the lease ends: at least once. `endpointIds`
   * narrows the claim (a test's own endpoints, on a database other tests share).
   */
  async claimDue(
    now: Date,
    limit: number,
    leaseMs: number,
    endpointIds?: readonly string[],
  ): Promise<ClaimedDelivery[]> {
    const onlyThese =
      endpointIds === undefined ? sql`` : sql`and d.endpoint_id = any(${endpointIds}::text[])`;
    const result = await sql<{
      id: string;
      endpoint_id: string;
      app_id: string;
      url: string;
      secret: string;
      previous_secret: string | null;
      previous_secret_until: Date | null;
      attempts: number;
      created_at: Date;
      event_id: string;
      type: string;
      occurred_at: Date;
      channels: string[];
      enterprise_global_id: string | null;
      app_key: string | null;
      data: Record<string, unknown>;
      request_id: string | null;
    }>`
      with due as (
        select d.id
          from webhook_deliveries d
          join webhook_endpoints ep on ep.id = d.endpoint_id and ep.status = 'enabled'
         where d.status = 'pending' and d.next_attempt_at <= ${now} ${onlyThese}
         order by d.next_attempt_at
         limit ${limit}
           for update of d skip locked
      ),
      claimed as (
        update webhook_deliveries d
           set next_attempt_at = ${now}::timestamptz + ${leaseMs} * interval '1 millisecond',
               attempts = d.attempts + 1, last_attempt_at = ${now}
          from due
         where d.id = due.id
        returning d.id, d.event_id, d.endpoint_id, d.attempts, d.created_at
      )
      select c.id, c.endpoint_id, ep.app_id, ep.url, ep.secret, ep.previous_secret, ep.previous_secret_until,
             c.attempts, c.created_at, e.id as event_id, e.type, e.occurred_at, e.channels,
             en.global_id as enterprise_global_id, a.app_key, e.data, e.request_id
        from claimed c
        join webhook_endpoints ep on ep.id = c.endpoint_id
        join webhook_events e on e.id = c.event_id
        left join enterprises en on en.id = e.enterprise_id
        left join apps a on a.id = e.app_id
       order by c.id
    `.execute(this.db);
    return result.rows.map((r) => ({
      id: Number(r.id),
      endpointId: r.endpoint_id,
      appId: r.app_id,
      url: r.url,
      secrets:
        r.previous_secret !== null && r.previous_secret_until !== null && r.previous_secret_until > now
          ? [r.secret, r.previous_secret]
          : [r.secret],
      attempt: r.attempts,
      createdAt: r.created_at,
      event: {
        id: r.event_id,
        type: r.type,
        occurredAt: r.occurred_at,
        channels: r.channels,
        enterpriseId: r.enterprise_global_id,
        appKey: r.app_key,
        data: r.data,
        requestId: r.request_id,
      },
    }));
  }

  /**
   * Pending deliveries of enabled endpoints: due now, or waiting for a retry (or for the claim of a
   * worker sending them). Deliveries of a disabled endpoint are not sent and not counted.
   */
  async backlog(now: Date): Promise<{ due: number; waiting: number }> {
    const row = await sql<{ due: string; waiting: string }>`
      select count(*) filter (where d.next_attempt_at <= ${now}) as due,
             count(*) filter (where d.next_attempt_at > ${now}) as waiting
        from webhook_deliveries d
        join webhook_endpoints ep on ep.id = d.endpoint_id and ep.status = 'enabled'
       where d.status = 'pending'
    `.execute(this.db);
    const counts = row.rows[0];
    return { due: Number(counts?.due ?? 0), waiting: Number(counts?.waiting ?? 0) };
  }

  /**
   * Locks what recording a batch's outcomes writes: first its endpoints, then its deliveries, each
   * in id order. Deleting an endpoint locks in that order too (the endpoint, then its deliveries by
   * cascade), and so does every recorder, so none of them waits on another in a cycle. Answers the
   * deliveries that still exist: an endpoint deleted while its delivery was being sent took the
   * delivery with it, and nothing is recorded for it; one deleted later waits for this transaction.
   */
  async lockForRecording(
    endpointIds: readonly string[],
    deliveryIds: readonly number[],
  ): Promise<Set<number>> {
    if (deliveryIds.length === 0) return new Set();
    await this.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('id', 'in', [...new Set(endpointIds)])
      .orderBy('id')
      .forNoKeyUpdate()
      .execute();
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('id', 'in', [...deliveryIds])
      .orderBy('id')
      .forUpdate()
      .execute();
    return new Set(rows.map((r) => Number(r.id)));
  }

  /**
   * Successful attempts, all in one statement: each attempt kept, its delivery marked delivered
   * (when still pending) and its endpoint's failure streak ended. Its endpoints and deliveries are
   * locked (lockForRecording) in this transaction.
   */
  async recordDelivered(
    attempts: ReadonlyArray<{
      deliveryId: number;
      endpointId: string;
      at: Date;
      done: Date;
      row: AttemptRow;
    }>,
  ): Promise<void> {
    if (attempts.length === 0) return;
    await sql`
      with u as (
        select * from unnest(${attempts.map((a) => a.deliveryId)}::bigint[],
                             ${attempts.map((a) => a.at)}::timestamptz[],
                             ${attempts.map((a) => a.done)}::timestamptz[],
                             ${attempts.map((a) => a.row.statusCode)}::int[],
                             ${attempts.map((a) => a.row.latencyMs)}::int[],
                             ${attempts.map((a) => a.row.responseExcerpt)}::text[])
               as u(delivery_id, attempted_at, delivered_at, status_code, latency_ms, response_excerpt)
      ),
      kept as (
        insert into webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, response_excerpt, error)
        select delivery_id, attempted_at, status_code, latency_ms, response_excerpt, null from u
      ),
      marked as (
        update webhook_deliveries d set status = 'delivered', delivered_at = u.delivered_at
          from u
         where d.id = u.delivery_id and d.status = 'pending'
      )
      update webhook_endpoints set consecutive_failures = 0, failing_since = null
       where id = any(${[...new Set(attempts.map((a) => a.endpointId))]}::text[]) and consecutive_failures > 0
    `.execute(this.db);
  }

  async insertAttempt(deliveryId: number, at: Date, attempt: AttemptRow): Promise<void> {
    await this.db
      .insertInto('webhook_attempts')
      .values({
        delivery_id: deliveryId,
        attempted_at: at,
        status_code: attempt.statusCode,
        latency_ms: attempt.latencyMs,
        response_excerpt: attempt.responseExcerpt,
        error: attempt.error,
      })
      .execute();
  }

  async markFailed(deliveryId: number, after: AfterFailure): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set('retryAt' in after ? { next_attempt_at: after.retryAt } : { status: 'failed' })
      .where('id', '=', deliveryId)
      .where('status', '=', 'pending')
      .execute();
  }

  /** One more failure in the endpoint's streak; answers the streak (row locked to the transaction). */
  async endpointFailed(
    endpointId: string,
    at: Date,
  ): Promise<{ failures: number; failingSince: Date; status: string } | undefined> {
    const row = await this.db
      .updateTable('webhook_endpoints')
      .set({
        consecutive_failures: sql<number>`consecutive_failures + 1`,
        failing_since: sql<Date>`coalesce(failing_since, ${at}::timestamptz)`,
      })
      .where('id', '=', endpointId)
      .returning(['consecutive_failures', 'failing_since', 'status'])
      .executeTakeFirst();
    return (
      row && {
        failures: row.consecutive_failures,
        failingSince: row.failing_since as Date,
        status: row.status,
      }
    );
  }

  async disableEndpoint(endpointId: string, reason: string): Promise<void> {
    await this.db
      .updateTable('webhook_endpoints')
      .set({ status: 'disabled', disabled_reason: reason, updated_at: sql<Date>`now()` })
      .where('id', '=', endpointId)
      .execute();
  }
}
