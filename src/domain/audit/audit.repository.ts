import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface AuditEntry {
  action: string;
  appId: string | null;
  operator: string | null;
  subject: string | null;
  detail: Record<string, unknown>;
  requestId: string | null;
}

export interface AuditRecord extends AuditEntry {
  id: number;
  createdAt: number;
}

export class AuditRepository {
  constructor(private readonly db: Db) {}

  /** One statement however many entries: they travel as one JSON document, unpacked by the database. */
  async insertMany(entries: AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const document = JSON.stringify(
      entries.map((e) => ({
        action: e.action,
        app_id: e.appId,
        operator: e.operator,
        subject: e.subject,
        detail: e.detail,
        request_id: e.requestId,
      })),
    );
    await sql`
      insert into audit_log (action, app_id, operator, subject, detail, request_id)
      select e.action, e.app_id, e.operator, e.subject, e.detail, e.request_id
        from jsonb_to_recordset(${document}::jsonb)
             as e(action text, app_id text, operator text, subject text, detail jsonb, request_id text)
    `.execute(this.db);
  }

  async list(filter: { subject?: string; limit: number }): Promise<AuditRecord[]> {
    let query = this.db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(filter.limit);
    if (filter.subject !== undefined) query = query.where('subject', '=', filter.subject);
    const rows = await query.execute();
    return rows.map((r) => ({
      id: r.id,
      action: r.action,
      appId: r.app_id,
      operator: r.operator,
      subject: r.subject,
      detail: r.detail,
      requestId: r.request_id,
      createdAt: r.created_at.getTime(),
    }));
  }
}
