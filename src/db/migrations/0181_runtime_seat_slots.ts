import { sql, type Kysely } from 'kysely';

// Seats as slots (docs/adr/0019). A check-out of a busy license used to hold the product
// instance's row lock across its whole transaction and count the license's live leases under it,
// so check-outs of one license took turns, each costing more the more machines held a seat.
//
// Now a product instance's pool has one row per seat it may hand out (made up to its
// limitConcurrent as check-outs need them). A check-out claims one free row with
// FOR UPDATE SKIP LOCKED, so concurrent check-outs of one license take different rows at once and
// none waits on another for longer than one short statement; a check-out that finds no free row
// is refused. A row names the lease holding it (lease_id), the machine (holder_key, fingerprint:
// the same machine takes its own row back), and held_until, a hint of when it may be free: the
// holding lease's expiry when claimed, an offline lease's seat hold, or -infinity when released. A
// row whose hint has passed is free only if its lease, looked at then under its row lock, is no
// longer live (ended without a seat hold, or its heartbeats stopped); a lease heartbeated since
// moves the hint on instead. So heartbeats write nothing here, and a machine whose heartbeats stop
// frees its seat when its lease expires, as before.
//
// The live and seat-holding leases of today are given rows here, so an upgrade keeps seats exact.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table runtime_seat_slots (
      product_id bigint not null references product_instances (id),
      pool text not null check (pool in ('own', 'lent')),
      slot integer not null,
      held_until timestamptz not null default '-infinity',
      lease_id text,
      holder_key text,
      fingerprint text,
      primary key (product_id, pool, slot)
    );
    create index runtime_seat_slots_free_idx on runtime_seat_slots (product_id, pool, held_until);
    create index runtime_seat_slots_machine_idx on runtime_seat_slots (product_id, pool, holder_key, fingerprint);
    create index runtime_seat_slots_lease_idx on runtime_seat_slots (lease_id) where lease_id is not null;

    insert into runtime_seat_slots (product_id, pool, slot, held_until, lease_id, holder_key, fingerprint)
    select product_id, pool,
           (row_number() over (partition by product_id, pool order by holder_key, fingerprint) - 1)::int,
           held_until, id, holder_key, fingerprint
      from (
        select distinct on (product_id, pool, holder_key, fingerprint)
               product_id, pool, holder_key, fingerprint, id,
               case when ended_at is null then expires_at else seat_held_until end as held_until
          from runtime_leases
         where (ended_at is null and expires_at > now()) or seat_held_until > now()
         order by product_id, pool, holder_key, fingerprint, (ended_at is null) desc,
                  coalesce(seat_held_until, expires_at) desc
      ) held;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table runtime_seat_slots`.execute(db);
}
