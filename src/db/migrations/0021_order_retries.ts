import { sql, type Kysely } from 'kysely';

// A batch whose application hits a fault (not a refused order) is retried with backoff, and
// failed after a bounded number of attempts, so one poisoned batch cannot hold up the queue.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table order_batches add column attempts integer not null default 0;
    alter table order_batches add column next_attempt_at timestamptz;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table order_batches drop column next_attempt_at;
    alter table order_batches drop column attempts;
  `.execute(db);
}
