import { sql, type Kysely } from 'kysely';

// The issue log kept one row per number, so order op 9 with size 1,000 wrote 1,000 rows (and as
// many BRIN updates) to say that one app got one run of numbers at one time. A row per issue, the
// numbers as an array, records the same facts in one write. The log is never read on a request
// path; an operator looking for a number scans it with `where $1 = any(asset_nums)`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table issued_asset_number_runs (
      id bigserial primary key,
      app_id text not null,
      asset_nums text[] not null,
      created_at timestamptz not null default now()
    );
    insert into issued_asset_number_runs (app_id, asset_nums, created_at)
    select app_id, array_agg(asset_num order by asset_num), created_at
      from issued_asset_numbers
     group by app_id, created_at
     order by created_at;
    drop table issued_asset_numbers;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table issued_asset_numbers (
      asset_num text not null,
      app_id text not null,
      created_at timestamptz not null default now()
    );
    create index issued_asset_numbers_num_brin on issued_asset_numbers using brin (asset_num);
    insert into issued_asset_numbers (asset_num, app_id, created_at)
    select unnest(asset_nums), app_id, created_at from issued_asset_number_runs;
    drop table issued_asset_number_runs;
  `.execute(db);
}
