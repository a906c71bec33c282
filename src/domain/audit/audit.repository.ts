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

  async insertMany(entries: AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const col = <K extends keyof AuditEntry>(k: K) => entries.map((e) => e[k]);
    await sql`
      insert into audit_log (action, app_id, operator, subject, detail, request_id)
      select * from unnest(${col('action')}::text[], ${col('appId')}::text[], ${col('operator')}::text[],
                           ${col('subject')}::text[], ${entries.map((e) => JSON.stringify(e.detail))}::jsonb[],
                           ${col('requestId')}::text[])
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
