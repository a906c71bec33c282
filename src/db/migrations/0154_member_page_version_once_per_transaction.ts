import { sql, type Kysely } from 'kysely';

// The page version (migration 0153) moves once per committing transaction, not once per changed
// row: its triggers are row-level, so a transaction that changed 1,000 members upserted the same
// version row 1,000 times at commit. Kept pages compare versions for equality, and every change
// of the transaction becomes visible at the same commit, so one move says all a reader needs.
// The row remembers the transaction that last moved it (xid8: no wraparound to mistake an old
// transaction for this one); a rolled-back savepoint takes that mark back with its move.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table member_page_versions add column moved_by xid8;

    create or replace function bump_member_page_version(enterprise bigint) returns void
      language sql as $$
        insert into member_page_versions as v (enterprise_id, version, moved_by)
        values (enterprise, 1, pg_current_xact_id())
        on conflict (enterprise_id) do update set version = v.version + 1, moved_by = excluded.moved_by
         where v.moved_by is distinct from excluded.moved_by
      $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function bump_member_page_version(enterprise bigint) returns void
      language sql as $$
        insert into member_page_versions as v (enterprise_id, version) values (enterprise, 1)
        on conflict (enterprise_id) do update set version = v.version + 1
      $$;

    alter table member_page_versions drop column moved_by;
  `.execute(db);
}
