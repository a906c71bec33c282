import { sql, type Kysely } from 'kysely';

// A counter per enterprise that moves whenever anything member op 5's page shows may have changed,
// so a page kept by any instance can be checked with one key lookup instead of being rebuilt
// (ADR 0014). Triggers move it, not the services: a write path added later cannot forget to.
//
// What the page reads, and so what moves the counter:
// - members (any change, of either enterprise when one moves);
// - enterprises.member_count (the unfiltered total);
// - asset_assignments (the member's asset numbers);
// - assets.asset_num, revoked and customer_id (which numbers show); not locked, status, ...;
// - customers.enterprise_id (an asset shows only while its customer is the member's enterprise's);
// - lent_locks (the lent lock), whose number is assets.asset_num again.
//
// The triggers are deferred constraint triggers: they run at commit, after every statement of the
// transaction, so the counter's row lock is held only while committing. Taken mid-transaction it
// would be held across later statements, and two writers of one enterprise that lock members in
// different orders could deadlock on it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table member_page_versions (
      enterprise_id bigint primary key,
      version bigint not null
    );

    create function bump_member_page_version(enterprise bigint) returns void
      language sql as $$
        insert into member_page_versions as v (enterprise_id, version) values (enterprise, 1)
        on conflict (enterprise_id) do update set version = v.version + 1
      $$;

    -- Two enterprises' versions moved by one row are moved in id order, so two such commits
    -- cannot wait for each other.
    create function bump_member_page_versions(enterprises bigint[]) returns void
      language plpgsql as $$
      begin
        perform bump_member_page_version(e)
           from (select distinct e from unnest(enterprises) as e where e is not null order by e) as s;
      end $$;

    -- For tables whose rows name their enterprise: members, lent locks, customers.
    create function member_page_changed_by_row() returns trigger
      language plpgsql as $$
      begin
        case tg_op
          when 'INSERT' then perform bump_member_page_version(new.enterprise_id);
          when 'DELETE' then perform bump_member_page_version(old.enterprise_id);
          else perform bump_member_page_versions(array[old.enterprise_id, new.enterprise_id]);
        end case;
        return null;
      end $$;

    create function member_page_changed_by_enterprise() returns trigger
      language plpgsql as $$
      begin
        perform bump_member_page_version(new.id);
        return null;
      end $$;

    create function member_page_changed_by_assignment() returns trigger
      language plpgsql as $$
      begin
        perform bump_member_page_versions(array(
          select m.enterprise_id from members m
           where m.id in (case when tg_op <> 'INSERT' then old.member_id end,
                          case when tg_op <> 'DELETE' then new.member_id end)));
        return null;
      end $$;

    create function member_page_changed_by_asset() returns trigger
      language plpgsql as $$
      begin
        perform bump_member_page_versions(array(
          select c.enterprise_id from customers c where c.id in (old.customer_id, new.customer_id)));
        return null;
      end $$;

    create constraint trigger member_page_members
      after insert or update or delete on members
      deferrable initially deferred for each row
      execute function member_page_changed_by_row();

    create constraint trigger member_page_enterprises
      after update of member_count on enterprises
      deferrable initially deferred for each row
      when (old.member_count is distinct from new.member_count)
      execute function member_page_changed_by_enterprise();

    create constraint trigger member_page_assignments
      after insert or update or delete on asset_assignments
      deferrable initially deferred for each row
      execute function member_page_changed_by_assignment();

    create constraint trigger member_page_assets
      after update of asset_num, revoked, customer_id on assets
      deferrable initially deferred for each row
      when (old.asset_num is distinct from new.asset_num
            or old.revoked is distinct from new.revoked
            or old.customer_id is distinct from new.customer_id)
      execute function member_page_changed_by_asset();

    create constraint trigger member_page_customers
      after update of enterprise_id on customers
      deferrable initially deferred for each row
      when (old.enterprise_id is distinct from new.enterprise_id)
      execute function member_page_changed_by_row();

    create constraint trigger member_page_lent_locks
      after insert or update or delete on lent_locks
      deferrable initially deferred for each row
      execute function member_page_changed_by_row();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger member_page_members on members;
    drop trigger member_page_enterprises on enterprises;
    drop trigger member_page_assignments on asset_assignments;
    drop trigger member_page_assets on assets;
    drop trigger member_page_customers on customers;
    drop trigger member_page_lent_locks on lent_locks;
    drop function member_page_changed_by_row(), member_page_changed_by_enterprise(),
      member_page_changed_by_assignment(), member_page_changed_by_asset(),
      bump_member_page_versions(bigint[]), bump_member_page_version(bigint);
    drop table member_page_versions;
  `.execute(db);
}
