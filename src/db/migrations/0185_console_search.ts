import { sql, type Kysely } from 'kysely';

// The console's search box (docs/console.md): one statement of exact lookups, each an index read,
// so a search costs the same on a million assets as on ten. Asset numbers, lease ids, app keys,
// enterprise ids and codes, license order ids and member accounts already have their unique
// indexes; these add the two it also reads: a channel's order id (unique only after the app and
// channel) and an enterprise's name by its beginning, whatever its case (text_pattern_ops: LIKE
// 'prefix%' reads the index in any collation). An employee's page lists the machines they ran:
// their leases by member, newest first.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index order_batches_channel_order_idx on order_batches (channel_order_id);
    create index enterprises_name_prefix_idx on enterprises (lower(name) text_pattern_ops);
    create index runtime_leases_member_idx on runtime_leases (member_id, created_at desc)
      where member_id is not null;
  `.execute(db);
}
