import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.js';
import { DbGateRepository } from '../../src/domain/gate/db-gate.repository.js';
import { EnterprisesRepository } from '../../src/domain/enterprises/enterprises.repository.js';
import { MembersRepository } from '../../src/domain/members/members.repository.js';
import { RuntimeRepository } from '../../src/domain/runtime/runtime.repository.js';
import { onPostgres, openTestDatabase } from '../support/database.js';

// The hot reads run as named prepared statements (src/db/prepared-statements.ts). That saves the
// planning only when PostgreSQL settles on a generic plan; a statement whose generic plan looks
// dearer than a custom one is planned anew on every call. On a populated database, each of them
// must go generic after the five custom plans PostgreSQL always tries first.
const TENANTS = 2000;
const MEMBERS_PER_TENANT = 20;
const tag = randomBytes(4).toString('hex');
const channel = `PLAN${tag}`.toUpperCase();

let database: DatabaseHandle;
let enterpriseId: number;

beforeAll(async () => {
  if (!onPostgres()) return;
  database = await openTestDatabase();
  const { db } = database;
  await sql`
    insert into enterprises (global_id, name, code)
    select 'plan-' || ${tag} || '-' || n, 'Plan ' || n, 'p' || ${tag} || n
      from generate_series(1, ${TENANTS}::int) as n`.execute(db);
  await sql`
    insert into customers (id, channel_code, channel_customer_id, name, enterprise_id, is_default)
    select 'plan-' || ${tag} || '-' || e.id, ${channel}, 'cust-' || e.id, e.name, e.id, true
      from enterprises e where e.global_id like ${`plan-${tag}-%`}`.execute(db);
  await sql`
    insert into members (global_id, enterprise_id, user_name, account, name, identity)
    select 'plan-' || ${tag} || '-' || e.id || '-' || n, e.id, 'm' || n, 'm' || n || '@' || e.code,
           'Member ' || n, case when n = 1 then 'admin' else 'member' end
      from enterprises e cross join generate_series(1, ${MEMBERS_PER_TENANT}::int) as n
     where e.global_id like ${`plan-${tag}-%`}`.execute(db);
  const first = await db
    .selectFrom('enterprises')
    .select('id')
    .where('global_id', '=', `plan-${tag}-1`)
    .executeTakeFirstOrThrow();
  enterpriseId = first.id;
  // One lock per customer, for the check-out's reads.
  await sql`
    insert into assets (id, asset_num, license_type, customer_id)
    select 'plan-' || ${tag} || '-' || c.id, 'PLAN-' || ${tag} || '-' || c.id, 'normal_recover_usbkey', c.id
      from customers c where c.channel_code = ${channel}`.execute(db);
  await sql`analyze enterprises, customers, members, member_page_versions, assets`.execute(db);
});
afterAll(async () => database?.close());

/** Runs `call` eight times on one pooled connection and reports that connection's plan counts. */
async function plansOf(call: (db: DatabaseHandle['db']) => Promise<unknown>, marker: string) {
  return database.db.connection().execute(async (db) => {
    for (let i = 0; i < 8; i += 1) await call(db);
    const rows = await sql<{ generic_plans: string; custom_plans: string }>`
      select generic_plans, custom_plans from pg_prepared_statements
       where statement like ${`%${marker}%`}`.execute(db);
    expect(rows.rows).toHaveLength(1);
    const row = rows.rows[0] ?? { generic_plans: '0', custom_plans: '0' };
    return { generic: Number(row.generic_plans), custom: Number(row.custom_plans) };
  });
}

describe.runIf(onPostgres())('prepared statements of the hot reads settle on a generic plan', () => {
  it('order op 3: the customers of channel customers, for a batch of calls', async () => {
    const plans = await plansOf(
      (db) =>
        new EnterprisesRepository(db).listCustomersOfChannelCustomers([
          {
            channelCode: channel,
            channelCustomerId: 'cust-' + enterpriseId,
            channels: [channel],
            defaultOnly: false,
          },
          {
            channelCode: channel,
            channelCustomerId: 'cust-' + enterpriseId,
            channels: [channel],
            defaultOnly: true,
          },
        ]),
      'channel_customer_id',
    );
    expect(plans.generic).toBeGreaterThan(0);
  });

  it('member op 5: one page of members', async () => {
    const plans = await plansOf(
      (db) => new MembersRepository(db).listPage(enterpriseId, {}, 0, 10),
      'borrow_num',
    );
    expect(plans.generic).toBeGreaterThan(0);
  });

  it('member op 5: the page versions of a batch of calls', async () => {
    const plans = await plansOf(
      (db) => new MembersRepository(db).pageVersions([enterpriseId, enterpriseId + 1, enterpriseId + 2]),
      'left join member_page_versions',
    );
    expect(plans.generic).toBeGreaterThan(0);
  });

  it('the gate: tokens, nonce and rate limit of a batch of calls', async () => {
    const plans = await plansOf(
      (db) =>
        new DbGateRepository(db).check(
          [{ appTokenHash: 'unknown', userTokenHash: null, scope: 'auth_order', nonce: `n${tag}x` }],
          { window: 1, shard: 0 },
          new Date(Date.now() + 60_000),
        ),
      'rate_counters',
    );
    expect(plans.generic).toBeGreaterThan(0);
  });

  it("a check-out's first read: the lock and the products it runs", async () => {
    const plans = await plansOf(
      (db) =>
        new RuntimeRepository(db).lockCandidates(`PLAN-${tag}-plan-${tag}-${enterpriseId}`, [channel], {
          crmProductId: 'none',
        }),
      'll.lock_asset_id = ',
    );
    expect(plans.generic).toBeGreaterThan(0);
  });
});
