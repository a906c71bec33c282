import { sql, type Kysely } from 'kysely';

// `request_id` held the caller's x-request-id when it sent one, so two calls could share an id and
// a caller could name its call after another's. It now always holds the server's own id; the
// caller's (bounded, sane characters) is kept beside it, for the caller's own correlation.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table audit_log add column client_request_id text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table audit_log drop column client_request_id`.execute(db);
}
