import { sql, type Kysely } from 'kysely';

// Order op 5 now refuses a number in Keyward's format unless op 9 issued it to the calling app,
// so the issue log is read on the order path: "which of these (up to 1,000) numbers were issued
// to this app?". Searching each run's array is linear in its length (a million comparisons for
// 1,000 numbers against a run of 1,000). Each run also keeps its numbers as a multirange: one
// range when the draw was not interleaved with another, a few when it was. A GiST index finds the
// runs whose bounds hold a number and containment in the multirange is a binary search, so the
// check costs an index probe per number, and op 9 still writes one row and one index entry.
// (Multiranges need PostgreSQL 14 or later.)
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table issued_asset_number_runs add column num_ranges int8multirange;
    update issued_asset_number_runs r
       set num_ranges = (select range_agg(int8range(n::bigint, n::bigint, '[]'))
                           from unnest(r.asset_nums) as n
                          where n ~ '^[0-9]{1,18}$');
    create index issued_asset_number_runs_ranges_idx on issued_asset_number_runs using gist (num_ranges);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index issued_asset_number_runs_ranges_idx;
    alter table issued_asset_number_runs drop column num_ranges;
  `.execute(db);
}
