import type { Db } from '../../db/client.js';

export interface AuditEntry {
  action: string;
  appId: string | null;
  operator: string | null;
  subject: string | null;
  detail: Record<string, unknown>;
  /** The server's own id of the request. */
  requestId: string | null;
  /** The id the caller sent, when sane; the caller's word only. */
  clientRequestId: string | null;
}

export interface AuditRecord extends AuditEntry {
  id: number;
  createdAt: number;
}

export class AuditRepository {
  constructor(private readonly db: Db) {}

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
      clientRequestId: r.client_request_id,
      createdAt: r.created_at.getTime(),
    }));
  }
}
