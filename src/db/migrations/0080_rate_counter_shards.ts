import { sql, type Kysely } from 'kysely';

// One counter row per app and minute made every call of an app wait for the previous call's
// commit (the row lock is held until then): about 500 calls a second at most, whatever the
// hardware. Each call now counts on one of several shard rows and reads the others' sum.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table rate_counters add column shard smallint not null default 0;
    alter table rate_counters drop constraint rate_counters_pkey;
    alter table rate_counters add primary key (app_id, window_start, shard);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    delete from rate_counters where shard <> 0;
    alter table rate_counters drop constraint rate_counters_pkey;
    alter table rate_counters add primary key (app_id, window_start);
    alter table rate_counters drop column shard;
  `.execute(db);
}
