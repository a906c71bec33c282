import { sql, type Kysely } from 'kysely';

// The audit log now records every change an operator may ask about, not only ops 6–7, and a
// console reads it by enterprise, app, action or time, newest first, a page at a time (by id).
// Each filter gets an index in id order, so a page is a short backward walk of one index; the
// time filter a BRIN index, as rows are appended in time order (0082). No foreign key to
// enterprises: the log must never hold up, nor be held up by, what it records.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table audit_log add column enterprise_id bigint;
    create index audit_log_enterprise_idx on audit_log (enterprise_id, id) where enterprise_id is not null;
    create index audit_log_app_idx on audit_log (app_id, id) where app_id is not null;
    create index audit_log_action_idx on audit_log (action, id);
    create index audit_log_created_brin on audit_log using brin (created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index audit_log_created_brin;
    drop index audit_log_action_idx;
    drop index audit_log_app_idx;
    drop index audit_log_enterprise_idx;
    alter table audit_log drop column enterprise_id;
  `.execute(db);
}
