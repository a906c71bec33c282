import { sql, type Kysely } from 'kysely';

// Fair webhook delivery (docs/adr/0015): one app's endpoints that never answer must not hold back
// every other app's events.
//
// webhook_deliveries.lease_until marks a delivery claimed and not yet recorded: set by the claim
// (with next_attempt_at, as before, so a delivery whose worker died comes due again when it ends)
// and cleared by the recording. Deliveries in flight to an endpoint are the pending ones whose lease
// has not ended; the claim counts them to hold each endpoint to a few at once, on every instance.
// Few rows have a lease at any time, so their partial index stays small.
//
// webhook_endpoints.last_claimed_at lets the claim take endpoints in turn, least recently served
// first; consecutive_timeouts and paused_until hold back an endpoint that keeps timing out, so its
// deliveries wait in the table rather than in the workers.
//
// The claim looks for each endpoint's oldest due delivery: (endpoint_id, next_attempt_at) over
// pending rows answers that with one index probe per endpoint.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table webhook_deliveries add column lease_until timestamptz;
    create index webhook_deliveries_leased_idx on webhook_deliveries (endpoint_id, last_attempt_at)
      where lease_until is not null;
    create index webhook_deliveries_endpoint_due_idx on webhook_deliveries (endpoint_id, next_attempt_at)
      where status = 'pending';

    alter table webhook_endpoints
      add column last_claimed_at timestamptz,
      add column consecutive_timeouts integer not null default 0,
      add column paused_until timestamptz;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table webhook_endpoints
      drop column paused_until,
      drop column consecutive_timeouts,
      drop column last_claimed_at;
    drop index webhook_deliveries_endpoint_due_idx;
    drop index webhook_deliveries_leased_idx;
    alter table webhook_deliveries drop column lease_until;
  `.execute(db);
}
