import { sql, type Kysely } from 'kysely';

// Renewals in sight (docs/operations.md, docs/webhooks.md). A license is a product on an asset; it
// ends at the earlier of the two's limit_end_time. The console lists those ending soon and the
// housekeeping sends `license.expiring` at set days before the end and `license.expired` once it
// passed, so both read licenses by their end: an index on each end time (partial: only live rows
// that have an end) keeps those reads to the licenses near now, however many there are.
//
// license_notices remembers each notice sent, one row per license, end and threshold (0: ended).
// Its key is what makes a notice once only when several instances share the database: each
// inserts with ON CONFLICT DO NOTHING in the statement that writes the audit row and the event,
// and only the instance whose row went in writes them. The end is part of the key, so a renewal
// that moves the end makes the license due for notices again.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index product_instances_end_idx on product_instances (limit_end_time)
      where not revoked and limit_end_time is not null;
    create index assets_end_idx on assets (limit_end_time)
      where not revoked and limit_end_time is not null;

    create table license_notices (
      product_id bigint not null references product_instances (id) on delete cascade,
      ends_at bigint not null,
      days integer not null check (days >= 0),
      created_at timestamptz not null default now(),
      primary key (product_id, ends_at, days)
    );
    create index license_notices_ends_idx on license_notices (ends_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table license_notices;
    drop index product_instances_end_idx, assets_end_idx;
  `.execute(db);
}
