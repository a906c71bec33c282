import { sql, type Kysely } from 'kysely';

// issued_asset_numbers is a log: one row per number order op 9 (or a cloud order) hands out,
// never read on a hot path. Its numbers come from asset_number_seq, which never cycles and never
// returns a value twice, so the unique index only repeated that guarantee while doubling the work
// of every insert (1,000 index entries for op 9 with size 1,000). The numbers grow with time,
// which a BRIN index summarises in a few pages and still finds by number.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table issued_asset_numbers drop constraint issued_asset_numbers_pkey;
    create index issued_asset_numbers_num_brin on issued_asset_numbers using brin (asset_num);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index issued_asset_numbers_num_brin;
    alter table issued_asset_numbers add primary key (asset_num);
  `.execute(db);
}
