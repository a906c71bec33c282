import { sql } from 'kysely';
import type { Db } from '../src/db/client.js';
import { CHANNEL, LOCKABLE_EVERY, TENANT } from './settings.js';

// The benchmark's data set, written straight into the tables with set-based SQL (one statement per
// table and chunk of tenants), so a million assets take seconds rather than a million calls.
// Tenant n owns enterprise n, customer "cust-n", members (n-1)*100+1 … and assets (n-1)*500+1 …;
// everything the scenarios address is computed from these numbers.

/** A time-ordered UUID-shaped id: `kind` tells the tables apart, `n` the row. */
const benchId = (kind: number, n: ReturnType<typeof sql>) =>
  sql`lpad(to_hex(${kind}::int), 8, '0') || '-0000-7000-8000-' || lpad(to_hex(${n}), 12, '0')`;

export const enterpriseCode = (tenant: number): string => `b${String(tenant).padStart(5, '0')}`;
export const adminAccount = (tenant: number): string => `admin@${enterpriseCode(tenant)}`;
export const channelCustomerId = (tenant: number): string => `cust-${tenant}`;
export const customerId = (tenant: number): string => idOf(2, tenant);
export const assetNum = (n: number): string => `BK${String(n).padStart(9, '0')}`;

export function idOf(kind: number, n: number): string {
  return `${kind.toString(16).padStart(8, '0')}-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** The global numbers of the lockable assets of tenants 1..tenants, in order. */
export function lockableAssets(tenants: number): { count: number; at(i: number): string } {
  return {
    count: Math.floor((tenants * TENANT.assets) / LOCKABLE_EVERY),
    at: (i) => assetNum((i + 1) * LOCKABLE_EVERY),
  };
}

/** Tenants from..to inclusive: enterprises, customers, members, assets, assignments, products. */
export async function seedTenants(db: Db, from: number, to: number): Promise<void> {
  const { members, assets, assigned, productsPerAsset } = TENANT;
  await db.transaction().execute(async (trx) => {
    await sql`
      insert into enterprises (id, global_id, name, code)
      select t, ${benchId(1, sql`t`)}, 'Bench tenant ' || t, 'b' || lpad(t::text, 5, '0')
        from generate_series(${from}::int, ${to}::int) t`.execute(trx);
    await sql`
      insert into customers (id, channel_code, channel_customer_id, name, customer_type, enterprise_id, is_default)
      select ${benchId(2, sql`t`)}, ${CHANNEL}, 'cust-' || t, 'Bench tenant ' || t, 'company', t, true
        from generate_series(${from}::int, ${to}::int) t`.execute(trx);
    // Member k = 0 is the administrator, as order ops 1–2 create it.
    await sql`
      insert into members (id, global_id, enterprise_id, user_name, account, name, department_id, identity)
      select m, ${benchId(3, sql`m`)}, t, u, u || '@b' || lpad(t::text, 5, '0'), 'Member ' || k, k % 10,
             case when k = 0 then 'admin' else 'member' end
        from generate_series(${from}::int, ${to}::int) t,
             generate_series(0, ${members - 1}::int) k,
             lateral (select (t - 1) * ${members}::int + k + 1 as m,
                             case when k = 0 then 'admin' else 'm' || k end as u) x`.execute(trx);
    await sql`
      insert into assets (id, asset_num, license_type, customer_id)
      select ${benchId(4, sql`g`)}, 'BK' || lpad(g::text, 9, '0'),
             case when g % ${LOCKABLE_EVERY}::int = 0 then 'normal_recover_usbkey'
                  when g % ${LOCKABLE_EVERY}::int in (1, 2) then 'cloud_account'
                  when g % ${LOCKABLE_EVERY}::int = 3 then 'softkey'
                  else 'cloud_customer' end,
             ${benchId(2, sql`t`)}
        from generate_series(${from}::int, ${to}::int) t,
             generate_series(1, ${assets}::int) i,
             lateral (select (t - 1) * ${assets}::int + i as g) x`.execute(trx);
    await sql`
      insert into asset_assignments (asset_id, member_id)
      select ${benchId(4, sql`(t - 1) * ${assets}::int + k`)}, (t - 1) * ${members}::int + k + 1
        from generate_series(${from}::int, ${to}::int) t, generate_series(1, ${assigned}::int) k`.execute(
      trx,
    );
    await sql`
      insert into product_instances (asset_id, license_order_id, channel_order_id, channel_code, customer_id,
        license_type, crm_product_id, product_uri, gms_pid, product_name, product_type, limit_start_time,
        limit_end_time, limit_concurrent, passwords, features)
      select a.id, 'seed-order-' || t, 'seed-' || t, ${CHANNEL}, a.customer_id, a.license_type,
             'seed-p-' || a.asset_num || '-' || p, 'gms-' || (1000 + p), 'gms-' || (1000 + p), 'Product ' || p,
             'tool', 1700000000000, 4000000000000, 3, '[]', '[]'
        from generate_series(${from}::int, ${to}::int) t
        join assets a on a.customer_id = ${benchId(2, sql`t`)},
             generate_series(1, ${productsPerAsset}::int) p`.execute(trx);
  });
}

/** After explicit ids: later inserts by the server draw above the seeded rows. */
export async function finishSeeding(db: Db): Promise<void> {
  await sql`select setval(pg_get_serial_sequence('enterprises', 'id'), (select max(id) from enterprises))`.execute(
    db,
  );
  await sql`select setval(pg_get_serial_sequence('members', 'id'), (select max(id) from members))`.execute(
    db,
  );
  await sql`vacuum analyze`.execute(db);
}
