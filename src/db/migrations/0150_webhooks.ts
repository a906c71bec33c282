import { sql, type Kysely } from 'kysely';

// Signed webhooks (docs/adr/0013): a durable outbox fed by the audit log.
//
// webhook_events is the outbox. AuditRepository.record writes an event row in the statement that
// writes the audit row, inside the change's own transaction: a change that rolls back leaves no
// event, and a committed one always has its event. The same statement fans the event out into one
// webhook_deliveries row per subscribed endpoint, so the worker only ever reads deliveries.
//
// An event belongs to the channels of its enterprise's customers (and of its order's customer) and,
// for order, lease and app events, to one app; an endpoint's app receives it when one of the app's
// channels is among them or when it is the event's app.
//
// The endpoint's secret is kept as it was given out (whsec_…): signing needs the secret itself,
// not a hash. It is answered only by the calls that create or rotate it and is never logged.
// During a rotation the previous secret also signs until previous_secret_until.
//
// A delivery is due while status is 'pending' and next_attempt_at has passed; workers claim due
// rows with FOR UPDATE SKIP LOCKED through the partial index. Every attempt is kept.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      id text primary key,
      app_id text not null references apps (id),
      url text not null,
      event_types text[],
      secret text not null,
      previous_secret text,
      previous_secret_until timestamptz,
      status text not null default 'enabled' check (status in ('enabled', 'disabled')),
      disabled_reason text,
      consecutive_failures integer not null default 0,
      failing_since timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index webhook_endpoints_app_idx on webhook_endpoints (app_id, created_at);

    create table webhook_events (
      id text primary key,
      type text not null,
      occurred_at timestamptz not null default now(),
      app_id text,
      channels text[] not null default '{}',
      enterprise_id bigint,
      data jsonb not null,
      request_id text
    );
    create index webhook_events_time_idx on webhook_events (occurred_at);

    create table webhook_deliveries (
      id bigserial primary key,
      event_id text not null references webhook_events (id),
      endpoint_id text not null references webhook_endpoints (id) on delete cascade,
      status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      last_attempt_at timestamptz,
      delivered_at timestamptz,
      created_at timestamptz not null default now(),
      unique (endpoint_id, event_id)
    );
    create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';
    create index webhook_deliveries_event_idx on webhook_deliveries (event_id);

    create table webhook_attempts (
      id bigserial primary key,
      delivery_id bigint not null references webhook_deliveries (id) on delete cascade,
      attempted_at timestamptz not null default now(),
      status_code integer,
      latency_ms integer not null,
      response_excerpt text,
      error text
    );
    create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id, id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table webhook_attempts, webhook_deliveries, webhook_events, webhook_endpoints`.execute(db);
}
