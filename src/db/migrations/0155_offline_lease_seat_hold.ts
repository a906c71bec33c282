import { sql, type Kysely } from 'kysely';

// An offline lease is a signature its holder keeps until its `exp`, whatever it says at check-in:
// freeing its seat then would let one seat hand out any number of valid leases. A checked-in
// offline lease therefore ends (its use is charged, heartbeats refuse it) but keeps its seat until
// seat_held_until, its expiry. Rows that ended before this migration keep their seat free: they
// were checked in under the old rule, which their holders relied on.
//
// The seats index covers live leases only; held seats have a partial index of their own, so a
// check-out counts both without reading the leases that ended and hold nothing.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table runtime_leases add column seat_held_until timestamptz;
    create index runtime_leases_held_seats_idx on runtime_leases (product_id, pool, seat_held_until)
      where seat_held_until is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index runtime_leases_held_seats_idx;
    alter table runtime_leases drop column seat_held_until;
  `.execute(db);
}
