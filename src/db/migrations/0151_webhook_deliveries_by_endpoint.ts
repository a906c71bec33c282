import { sql, type Kysely } from 'kysely';

// The operator's view of one endpoint (the admin API, `keyward webhooks`, the console) reads its
// deliveries newest first, its failed ones, and its last attempt. Without these an endpoint's page
// read every delivery it ever had: on 500,000 deliveries the endpoints list with each one's last
// attempt took 8.9 s, and takes 1 ms with them. Failed deliveries are few, so their index is small.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, id);
    create index webhook_deliveries_endpoint_failed_idx on webhook_deliveries (endpoint_id, id)
      where status = 'failed';
    create index webhook_deliveries_endpoint_attempt_idx on webhook_deliveries (endpoint_id, last_attempt_at)
      where last_attempt_at is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index webhook_deliveries_endpoint_attempt_idx;
    drop index webhook_deliveries_endpoint_failed_idx;
    drop index webhook_deliveries_endpoint_idx;
  `.execute(db);
}
