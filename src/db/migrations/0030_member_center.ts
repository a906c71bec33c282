import { sql, type Kysely } from 'kysely';

// The member center: accounts unique whatever their case, the indexes member op 5 pages through,
// and a live-member counter per enterprise so neither paging nor the member limit counts rows.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- "Alice@abc123" and "alice@abc123" are one login; this also serves the login lookup.
    create unique index members_account_lower_uq on members (lower(account)) where not deleted;

    -- Op 5 filtered by department, in creation order, without visiting other departments.
    create index members_department_idx on members (enterprise_id, department_id, id) where not deleted;

    alter table enterprises add column member_count integer not null default 0;
    update enterprises e
       set member_count = (select count(*) from members m where m.enterprise_id = e.id and not m.deleted);

    -- Statement-level triggers with transition tables: one update per enterprise and statement,
    -- whoever writes the members (member op 1, order op 2, an operator).
    create function members_count_changes() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        update enterprises e set member_count = e.member_count + d.n
          from (select enterprise_id, count(*)::int as n from new_rows where not deleted
                 group by enterprise_id) d
         where e.id = d.enterprise_id;
      elsif tg_op = 'UPDATE' then
        update enterprises e set member_count = e.member_count + d.n
          from (select enterprise_id, sum(n)::int as n from (
                  select enterprise_id, 1 as n from new_rows where not deleted
                  union all
                  select enterprise_id, -1 as n from old_rows where not deleted) c
                 group by enterprise_id having sum(n) <> 0) d
         where e.id = d.enterprise_id;
      else
        update enterprises e set member_count = e.member_count - d.n
          from (select enterprise_id, count(*)::int as n from old_rows where not deleted
                 group by enterprise_id) d
         where e.id = d.enterprise_id;
      end if;
      return null;
    end $$;

    create trigger members_count_insert after insert on members
      referencing new table as new_rows
      for each statement execute function members_count_changes();
    create trigger members_count_update after update on members
      referencing old table as old_rows new table as new_rows
      for each statement execute function members_count_changes();
    create trigger members_count_delete after delete on members
      referencing old table as old_rows
      for each statement execute function members_count_changes();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger members_count_delete on members;
    drop trigger members_count_update on members;
    drop trigger members_count_insert on members;
    drop function members_count_changes();
    alter table enterprises drop column member_count;
    drop index members_department_idx;
    drop index members_account_lower_uq;
  `.execute(db);
}
