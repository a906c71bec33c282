import { sql, type Kysely } from 'kysely';

// Usage reports imported from relays (docs/relay.md): one row per report, its id unique so a
// report is imported once; its hours go to the usage rollups under the app id `relay:<relay id>`,
// so they count in every usage page and chart. A grant now records the enterprise whose licenses
// it gives seats of (the enterprise administrator's Relays page lists them) and when a signed
// return ended it early.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table relay_grants
      add column enterprise_id bigint,
      add column returned_at timestamptz;
    update relay_grants g set enterprise_id = (
      select c.enterprise_id from assets a join customers c on c.id = a.customer_id
       where a.asset_num = g.licenses->0->>'assetNum' limit 1);
    create index relay_grants_enterprise_idx on relay_grants (enterprise_id, created_at desc);
    create table relay_reports (
      id text primary key,
      relay_id text not null,
      grant_id text not null references relay_grants (id),
      issued_at timestamptz not null,
      first_hour timestamptz,
      last_hour timestamptz,
      hours integer not null,
      peak_seats integer not null,
      seat_ms bigint not null,
      refused integer not null,
      audit_entries bigint not null,
      audit_digest text not null,
      imported_at timestamptz not null
    );
    create index relay_reports_relay_idx on relay_reports (relay_id, issued_at desc);
  `.execute(db);
}
