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

/** How claims share the workers between endpoints (docs/adr/0015). */
export interface ClaimLimits {
  /** Deliveries one endpoint may have in flight at once, over every worker. */
  perEndpoint: number;
  /**
   * An endpoint with a delivery in flight for longer than this, or that timed out last time, gets
   * no second one until it answers: one attempt at a time is enough to learn it is back.
   */
  slowMs: number;
}

/** A locked endpoint and its place in the claim's order (lower goes first). */
export interface EndpointTurn {
  id: string;
  turn: number;
}

/** Deliveries claimed and not yet recorded, per endpoint, with the oldest claim's time. */
function inFlight(now: Date, endpointIds?: readonly string[]) {
  const only = endpointIds === undefined ? sql`` : sql`and d.endpoint_id = any(${endpointIds}::text[])`;
  return sql`
    select d.endpoint_id, count(*)::int as n, min(d.last_attempt_at) as since
      from webhook_deliveries d
     where d.lease_until > ${now} and d.status = 'pending' ${only}
     group by d.endpoint_id
  `;
}

/** How many more deliveries endpoint `ep` may take, with `f` its row of `inFlight` (or nulls). */
function roomOf(now: Date, limits: ClaimLimits) {
  const slowSince = new Date(now.getTime() - limits.slowMs);
  return sql`(case when ep.consecutive_timeouts > 0 or f.since < ${slowSince}::timestamptz then 1
                   else ${limits.perEndpoint}::int end - coalesce(f.n, 0))`;
}

/** Whether endpoint `ep` is sent to now: enabled and not held back after timing out. */
function sendable(now: Date) {
  return sql`ep.status = 'enabled' and (ep.paused_until is null or ep.paused_until <= ${now}::timestamptz)`;
}

export class WebhookDeliveriesRepository {
  constructor(private readonly db: Db) {}

  /**
   * The first step of a claim: locks, and answers in turn, up to `limit` endpoints that have a
   * delivery due and room for one more in flight. Apps take turns first: an app's endpoints queue
   * behind its deliveries already in flight, so an app with many endpoints stuck in flight comes
   * after one with none. Within an app, the endpoint served least recently goes first.
   *
   * The endpoints are locked FOR NO KEY UPDATE SKIP LOCKED until the transaction ends: another
   * instance's claim skips them, so the counts the next step makes under this lock hold (it runs as
   * a statement of its own, and so sees every claim committed before the lock was taken). The lock
   * does not conflict with the outbox's fan-out, whose foreign key takes only KEY SHARE.
   * `endpointIds` narrows the claim (a test's own endpoints, on a database other tests share).
   */
  async lockEndpointsInTurn(
    now: Date,
    limit: number,
    limits: ClaimLimits,
    endpointIds?: readonly string[],
  ): Promise<EndpointTurn[]> {
    const onlyThese = endpointIds === undefined ? sql`` : sql`and ep.id = any(${endpointIds}::text[])`;
    const result = await sql<{ id: string; turn: string }>`
      with f as (${inFlight(now)}),
      app_load as (
        select ep.app_id, sum(f.n)::int as n
          from f join webhook_endpoints ep on ep.id = f.endpoint_id
         group by ep.app_id
      ),
      ready as (
        select ep.id, ep.app_id, ep.last_claimed_at, coalesce(app_load.n, 0) as app_load
          from webhook_endpoints ep
          left join f on f.endpoint_id = ep.id
          left join app_load on app_load.app_id = ep.app_id
         where ${sendable(now)} ${onlyThese}
           and ${roomOf(now, limits)} > 0
           and exists (select 1 from webhook_deliveries d
                        where d.endpoint_id = ep.id and d.status = 'pending' and d.next_attempt_at <= ${now})
      ),
      turns as (
        select id, last_claimed_at,
               app_load + row_number() over (partition by app_id order by last_claimed_at nulls first, id) as turn
          from ready
      )
      select ep.id, t.turn
        from webhook_endpoints ep
        join turns t on t.id = ep.id
       order by t.turn, t.last_claimed_at nulls first, ep.id
       limit ${limit}
         for no key update of ep skip locked
    `.execute(this.db);
    return result.rows.map((r) => ({ id: r.id, turn: Number(r.turn) }));
  }

  /**
   * The second step of a claim, on endpoints `lockEndpointsInTurn` locked in this transaction: up
   * to `limit` due deliveries, each endpoint's oldest first, as many as its room (counted again
   * now, under the lock), taken round-robin: every endpoint's first before any endpoint's second,
   * in turn order. Each is pushed `leaseMs` into the future (`next_attempt_at`, and `lease_until`,
   * which marks it in flight until recorded), so once this commits no other worker sees it as due
   * while this one sends. A worker that dies mid-send leaves it to come due again when the lease
   * ends: at least once. Deliveries another transaction has locked (a retention run) are skipped.
   */
  async claimOn(
    endpoints: readonly EndpointTurn[],
    now: Date,
    limit: number,
    leaseMs: number,
    limits: ClaimLimits,
  ): Promise<ClaimedDelivery[]> {
    if (endpoints.length === 0) return [];
    const ids = endpoints.map((e) => e.id);
    const leaseEnd = new Date(now.getTime() + leaseMs);
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
      with eps as (
        select * from unnest(${ids}::text[], ${endpoints.map((e) => e.turn)}::int[]) as e(id, turn)
      ),
      f as (${inFlight(now, ids)}),
      room as (
        select eps.id, eps.turn, ${roomOf(now, limits)} as room
          from eps
          join webhook_endpoints ep on ep.id = eps.id
          left join f on f.endpoint_id = ep.id
         where ${sendable(now)}
      ),
      picked as (
        select p.id, r.turn,
               row_number() over (partition by r.id order by p.next_attempt_at, p.id) as rn
          from room r
          cross join lateral (
            select d.id, d.next_attempt_at
              from webhook_deliveries d
             where d.endpoint_id = r.id and d.status = 'pending' and d.next_attempt_at <= ${now}
             order by d.next_attempt_at, d.id
             limit greatest(r.room, 0)
               for update of d skip locked
          ) p
      ),
      chosen as (
        select id from picked order by rn, turn limit ${limit}
      ),
      claimed as (
        update webhook_deliveries d
           set next_attempt_at = ${leaseEnd}, lease_until = ${leaseEnd},
               attempts = d.attempts + 1, last_attempt_at = ${now}
          from chosen
         where d.id = chosen.id
        returning d.id, d.event_id, d.endpoint_id, d.attempts, d.created_at
      ),
      served as (
        update webhook_endpoints ep set last_claimed_at = ${now}
         where ep.id in (select endpoint_id from claimed)
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
   * worker sending them, or for their endpoint's pause after timing out to end). Deliveries of a
   * disabled endpoint are not sent and not counted.
   */
  async backlog(now: Date): Promise<{ due: number; waiting: number }> {
    const row = await sql<{ due: string; waiting: string }>`
      select count(*) filter (where d.next_attempt_at <= ${now} and not held) as due,
             count(*) filter (where d.next_attempt_at > ${now} or held) as waiting
        from webhook_deliveries d
        join (select id, coalesce(paused_until > ${now}, false) as held
                from webhook_endpoints where status = 'enabled') ep on ep.id = d.endpoint_id
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
   * (when still pending) and no longer in flight, and its endpoint's failure streak and any pause
   * ended. Its endpoints and deliveries are
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
        update webhook_deliveries d set status = 'delivered', delivered_at = u.delivered_at, lease_until = null
          from u
         where d.id = u.delivery_id and d.status = 'pending'
      )
      update webhook_endpoints
         set consecutive_failures = 0, failing_since = null, consecutive_timeouts = 0, paused_until = null
       where id = any(${[...new Set(attempts.map((a) => a.endpointId))]}::text[])
         and (consecutive_failures > 0 or consecutive_timeouts > 0 or paused_until is not null)
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

  /** A failed attempt's delivery: due again at its retry, or failed; no longer in flight either way. */
  async markFailed(deliveryId: number, after: AfterFailure): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set(
        'retryAt' in after
          ? { next_attempt_at: after.retryAt, lease_until: null }
          : { status: 'failed', lease_until: null },
      )
      .where('id', '=', deliveryId)
      .where('status', '=', 'pending')
      .execute();
  }

  /**
   * One more failure in the endpoint's streak; answers the streak (row locked to the transaction).
   * How it failed moves the endpoint's pause: a timeout counts one more in its run of timeouts and
   * pauses it for `pause.baseMs`, doubled for each timeout before in the run, up to `pause.maxMs`;
   * an answer of any status ends the run and the pause; a connection refused or a name that does
   * not resolve (failing fast) leaves both as they are.
   */
  async endpointFailed(
    endpointId: string,
    at: Date,
    how:
      { timedOut: true; pause: { baseMs: number; maxMs: number } } | { timedOut: false; answered: boolean },
  ): Promise<{ failures: number; failingSince: Date; status: string } | undefined> {
    const row = await this.db
      .updateTable('webhook_endpoints')
      .set({
        consecutive_failures: sql<number>`consecutive_failures + 1`,
        failing_since: sql<Date>`coalesce(failing_since, ${at}::timestamptz)`,
        ...(how.timedOut
          ? {
              consecutive_timeouts: sql<number>`consecutive_timeouts + 1`,
              // The right-hand side reads the run as it was before this timeout.
              paused_until: sql<Date>`${at}::timestamptz + least(
                ${how.pause.baseMs}::float8 * power(2, least(consecutive_timeouts, 30)),
                ${how.pause.maxMs}::float8) * interval '1 millisecond'`,
            }
          : how.answered
            ? { consecutive_timeouts: 0, paused_until: null }
            : {}),
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
