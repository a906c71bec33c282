import { sql, type Kysely } from 'kysely';

// The license runtime (/runtime/v1): a lease is one running copy of a licensed product on one
// machine. A live lease (ended_at null, expires_at in the future) holds one seat of its product
// instance's limitConcurrent, counted per product instance and pool: 'own' for the seats the
// asset's holder uses, 'lent' for the one node a lending moved onto a lent lock. Check-out locks
// the product instance's row before counting, so concurrent check-outs on any number of instances
// cannot take more seats than there are.
//
// holder_key names who holds the lease ('m:<member id>' or 'l:<lock asset id>'); the same holder,
// fingerprint and product instance has one live lease at a time (the partial unique index), which
// is how a repeated check-out gets its lease back instead of a second seat.
//
// A heartbeat rewrites heartbeat_at, expires_at and used_ms of its own row and nothing else. None of
// them is indexed and the table leaves room on each page (fillfactor), so the update is HOT: no
// index is touched on the hot path. The expiry sweep reads the live leases through the partial
// seats index instead of an index of its own.
//
// runtime_usage keeps what limitTimeDuration and limitAmount are counted against: the milliseconds
// of use that ended leases leave behind (live leases carry their own in used_ms) and the amount
// consumed, per product instance.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table runtime_leases (
      id text primary key,
      app_id text not null references apps (id),
      product_id bigint not null references product_instances (id),
      asset_id text not null references assets (id),
      holder_kind text not null check (holder_kind in ('member', 'lock')),
      holder_key text not null,
      member_id bigint references members (id),
      lock_asset_id text references assets (id),
      enterprise_id bigint references enterprises (id),
      pool text not null check (pool in ('own', 'lent')),
      fingerprint text not null,
      offline boolean not null default false,
      created_at timestamptz not null,
      heartbeat_at timestamptz not null,
      expires_at timestamptz not null,
      ended_at timestamptz,
      end_reason text,
      used_ms bigint not null default 0,
      check ((holder_kind = 'member') = (member_id is not null)),
      check ((holder_kind = 'lock') = (lock_asset_id is not null))
    ) with (fillfactor = 80);
    create unique index runtime_leases_live_uq on runtime_leases (product_id, holder_key, fingerprint)
      where ended_at is null;
    create index runtime_leases_seats_idx on runtime_leases (product_id, pool) where ended_at is null;
    create index runtime_leases_app_idx on runtime_leases (app_id, created_at desc);

    create table runtime_usage (
      product_id bigint primary key references product_instances (id),
      used_ms bigint not null default 0,
      consumed bigint not null default 0
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table runtime_usage, runtime_leases`.execute(db);
}
