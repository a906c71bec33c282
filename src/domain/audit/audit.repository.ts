import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import { jsonbText } from '../../db/json.js';
import { PREPARED } from '../../db/prepared-statements.js';
import { eventOf } from '../webhooks/audit-events.js';
import { outboxCtes } from '../webhooks/outbox-sql.js';
import type { AuditAction, AuditActor, AuditChange } from './audit-actions.js';

export interface AuditEntry {
  action: string;
  appId: string | null;
  operator: string | null;
  /** The named operator's id when one acted; `operator` holds the name (migration 0170). */
  operatorId: string | null;
  subject: string | null;
  detail: Record<string, unknown>;
  /** The server's own id of the request. */
  requestId: string | null;
  /** The id the caller sent, when sane; the caller's word only. */
  clientRequestId: string | null;
  /** The global id of the enterprise the change belongs to (migration 0110). */
  enterpriseId: string | null;
}

export interface AuditRecord extends AuditEntry {
  id: number;
  createdAt: number;
}

/** `GET /admin/audit`'s filters, all optional but the page size; newest first. */
export interface AuditFilter {
  subject?: string;
  /** An enterprise's global id. */
  enterprise?: string;
  /** An app's id, or its key. */
  app?: string;
  action?: AuditAction;
  /** Rows written at or after this instant. */
  since?: Date;
  /** Rows written before this instant. */
  until?: Date;
  /** Rows with a smaller id: the last id of the previous page. */
  before?: number;
  limit: number;
}

/** A row of something that happened before now (a simulation's), as its change would have written it. */
export interface PastAuditRow {
  at: Date;
  action: AuditAction;
  subject: string;
  enterpriseId: number | null;
  detail: Record<string, unknown>;
}

export class AuditRepository {
  constructor(private readonly db: Db) {}

  /**
   * Writes a change's rows in the caller's transaction, so a change that rolls back leaves no row
   * behind; a bulk change writes all its rows in this one statement. The same statement puts the
   * webhook events the rows make into the outbox (src/domain/webhooks/event-types.ts), so an event
   * exists exactly when its change committed.
   */
  /**
   * `alongside`: another repository's data-modifying statement (an insert of fixed text) written
   * in this same statement, so both commit together in one round trip without a transaction.
   */
  async record(
    actor: AuditActor,
    changes: readonly AuditChange[],
    alongside?: RawBuilder<unknown>,
  ): Promise<void> {
    if (changes.length === 0) return;
    const enterprise = changes.map((c) =>
      c.enterprise !== null && 'id' in c.enterprise ? c.enterprise.id : null,
    );
    const customer = changes.map((c) =>
      c.enterprise !== null && 'customerOf' in c.enterprise ? c.enterprise.customerOf : null,
    );
    const events = changes.map((c) => eventOf(actor, c));
    // One statement of fixed text (the rows go in as arrays), prepared once per connection.
    await sql`${sql.raw(PREPARED)}
      with source as (
        select u.action, u.subject, u.detail, u.event_type, u.event_app, u.event_data::jsonb as event_data,
               u.customer_id,
               coalesce(u.enterprise_id, (select c.enterprise_id from customers c where c.id = u.customer_id))
                 as enterprise_id
          from unnest(${changes.map((c) => c.action)}::text[], ${changes.map((c) => c.subject)}::text[],
                      ${enterprise}::bigint[], ${customer}::text[],
                      ${changes.map((c) => jsonbText(c.detail))}::text[],
                      ${events.map((e) => e?.type ?? null)}::text[], ${events.map((e) => e?.app ?? null)}::text[],
                      ${events.map((e) => (e === undefined ? null : jsonbText(e.data)))}::text[])
               as u(action, subject, enterprise_id, customer_id, detail, event_type, event_app, event_data)
      ),
      audited as (
        insert into audit_log (action, app_id, operator, operator_id, subject, enterprise_id, detail, request_id,
                               client_request_id)
        select s.action, ${actor.appId}::text, ${actor.operator}::text, ${actor.operatorId ?? null}::text, s.subject,
               s.enterprise_id, s.detail::jsonb, ${actor.requestId}::text, ${actor.clientRequestId}::text
          from source s
      ),
      ${alongside === undefined ? sql`` : sql`alongside as (${alongside}),`}
      ${outboxCtes('source', actor.requestId)}
      select 1
    `.execute(this.db);
  }

  /**
   * Rows dated when they happened, for an app, with no webhook event: `record` queues each row's
   * event as of now, and a simulated past (the demo's refused check-outs) must not reach an app's
   * endpoints as if it were happening.
   */
  async recordPast(appId: string, rows: readonly PastAuditRow[]): Promise<void> {
    if (rows.length === 0) return;
    await sql`
      insert into audit_log (action, app_id, subject, enterprise_id, detail, created_at)
      select r.action, ${appId}, r.subject, r.enterprise_id, r.detail::jsonb, r.at
        from unnest(${rows.map((r) => r.at.toISOString())}::timestamptz[], ${rows.map((r) => r.action)}::text[],
                    ${rows.map((r) => r.subject)}::text[], ${rows.map((r) => r.enterpriseId)}::bigint[],
                    ${rows.map((r) => jsonbText(r.detail))}::text[])
             as r(at, action, subject, enterprise_id, detail)
       order by r.at
    `.execute(this.db);
  }

  async list(filter: AuditFilter): Promise<AuditRecord[]> {
    let query = this.db
      .selectFrom('audit_log as l')
      .leftJoin('enterprises as e', 'e.id', 'l.enterprise_id')
      .selectAll('l')
      .select('e.global_id as enterprise_global_id')
      .orderBy('l.id', 'desc')
      .limit(filter.limit);
    if (filter.subject !== undefined) query = query.where('l.subject', '=', filter.subject);
    if (filter.enterprise !== undefined) {
      const wanted = filter.enterprise;
      // Its global id, its code or its name, whatever the case: every enterprise of that name.
      query = query.where('l.enterprise_id', 'in', (eb) =>
        eb
          .selectFrom('enterprises')
          .select('id')
          .where((w) =>
            w.or([
              w('global_id', '=', wanted),
              w('code', '=', wanted),
              w(sql<string>`lower(name)`, '=', wanted.toLowerCase()),
            ]),
          ),
      );
    }
    if (filter.app !== undefined) {
      // An app's key names it too: the key is what the operator sees in `keyward app list`.
      const byKey = sql<string>`(select id from apps where app_key = ${filter.app})`;
      query = query.where('l.app_id', '=', sql<string>`coalesce(${byKey}, ${filter.app})`);
    }
    if (filter.action !== undefined) query = query.where('l.action', '=', filter.action);
    if (filter.since !== undefined) query = query.where('l.created_at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('l.created_at', '<', filter.until);
    if (filter.before !== undefined) query = query.where('l.id', '<', filter.before);
    const rows = await query.execute();
    return rows.map((r) => ({
      id: r.id,
      action: r.action,
      appId: r.app_id,
      operator: r.operator,
      operatorId: r.operator_id,
      subject: r.subject,
      detail: r.detail,
      requestId: r.request_id,
      clientRequestId: r.client_request_id,
      enterpriseId: r.enterprise_global_id,
      createdAt: r.created_at.getTime(),
    }));
  }
}
