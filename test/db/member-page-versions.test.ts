import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MembersRepository } from '../../src/domain/members/members.repository.js';
import { seedEnterprise, type TestEnterprise } from '../support/fixtures.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';

// Member op 5 answers a kept page while the enterprise's page version stands (migration 0153,
// ADR 0014). Every change here is written with plain SQL on the database, as another instance, a
// migration or an operator would: the only thing the service can learn it from is the version.
let h: Harness;
let e: TestEnterprise;
let other: TestEnterprise;
let customerId: string;

const db = () => h.database.db;
const list = (enterpriseId = e.id, query = {}) => h.app.services.members.list(enterpriseId, query);
async function version(enterpriseId = e.id): Promise<string> {
  const [found] = await new MembersRepository(db()).pageVersions([enterpriseId]);
  if (found === undefined) throw new Error('no version answered');
  return found;
}

async function addAsset(assetNum: string, customer = customerId): Promise<string> {
  const id = `${customer}-${assetNum}`;
  await sql`
    insert into assets (id, asset_num, license_type, customer_id, grantable, locked, freezing,
                        borrowed_usb_key, transfered_asset_num, revoked)
    values (${id}, ${assetNum}, 'cloud_account', ${customer}, true, false, false, false, false, false)`.execute(
    db(),
  );
  return id;
}

const adminId = async () =>
  (
    await db()
      .selectFrom('members')
      .select('id')
      .where('global_id', '=', e.adminGlobalId)
      .executeTakeFirstOrThrow()
  ).id;

beforeAll(async () => {
  h = await startHarness();
  e = await seedEnterprise(h, 'Kept Pages Co');
  other = await seedEnterprise(h, 'Neighbour Co');
  customerId = uniqueCode('kept');
  await sql`insert into customers (id, enterprise_id, is_default, gongxin)
            values (${customerId}, ${e.id}::bigint, false, false)`.execute(db());
});
afterAll(async () => h.close());

describe('a kept page of member op 5', () => {
  it('is answered again while nothing it shows has changed', async () => {
    const first = await list();
    const again = await list();
    // The same object: the second call did not rebuild the page.
    expect(again).toBe(first);
    expect(again.list.map((m) => m.name)).toEqual(['Administrator']);
  });

  it('is read again after a member is renamed', async () => {
    await list();
    await sql`update members set name = 'Renamed Admin' where global_id = ${e.adminGlobalId}`.execute(db());
    expect((await list()).list.map((m) => m.name)).toEqual(['Renamed Admin']);
  });

  it('is read again after a member is added, with the new total', async () => {
    const before = await list();
    await sql`
      insert into members (global_id, enterprise_id, user_name, account, name, identity)
      values (${uniqueCode('g')}, ${e.id}::bigint, 'added', ${`added@${e.code}`}, 'Added', 'member')`.execute(
      db(),
    );
    const after = await list();
    expect(after.total).toBe(before.total + 1);
    expect(after.list.map((m) => m.name)).toContain('Added');
  });

  it('is read again after an asset is assigned, renumbered, revoked and unassigned', async () => {
    const member = await adminId();
    const assetId = await addAsset('KEPT-1');
    await list();
    await sql`insert into asset_assignments (asset_id, member_id) values (${assetId}, ${member})`.execute(
      db(),
    );
    expect((await list()).list[0]?.assetNums).toEqual(['KEPT-1']);
    await sql`update assets set asset_num = 'KEPT-1B' where id = ${assetId}`.execute(db());
    expect((await list()).list[0]?.assetNums).toEqual(['KEPT-1B']);
    await sql`update assets set revoked = true where id = ${assetId}`.execute(db());
    expect((await list()).list[0]?.assetNums).toEqual([]);
    await sql`update assets set revoked = false where id = ${assetId}`.execute(db());
    expect((await list()).list[0]?.assetNums).toEqual(['KEPT-1B']);
    await sql`delete from asset_assignments where asset_id = ${assetId}`.execute(db());
    expect((await list()).list[0]?.assetNums).toEqual([]);
  });

  it("is read again when an assigned asset's customer leaves the enterprise", async () => {
    const member = await adminId();
    const movingCustomer = uniqueCode('move');
    await sql`insert into customers (id, enterprise_id, is_default, gongxin)
              values (${movingCustomer}, ${e.id}::bigint, false, false)`.execute(db());
    const assetId = await addAsset('KEPT-2', movingCustomer);
    await sql`insert into asset_assignments (asset_id, member_id) values (${assetId}, ${member})`.execute(
      db(),
    );
    expect((await list()).list[0]?.assetNums).toContain('KEPT-2');
    const [mine, theirs] = [await version(), await version(other.id)];
    await sql`update customers set enterprise_id = ${other.id}::bigint where id = ${movingCustomer}`.execute(
      db(),
    );
    expect((await list()).list[0]?.assetNums).not.toContain('KEPT-2');
    // Both enterprises' pages may show its assets: each version moved once.
    expect([BigInt(await version()), BigInt(await version(other.id))]).toEqual([
      BigInt(mine) + 1n,
      BigInt(theirs) + 1n,
    ]);
  });

  it('is read again after a lock is lent to the member and returned', async () => {
    const member = await adminId();
    const lockId = await addAsset('KEPT-LOCK');
    await list();
    await sql`insert into lent_locks (lock_asset_id, member_id, enterprise_id)
              values (${lockId}, ${member}, ${e.id}::bigint)`.execute(db());
    expect((await list()).list[0]?.borrowNum).toBe('KEPT-LOCK');
    await sql`delete from lent_locks where lock_asset_id = ${lockId}`.execute(db());
    expect((await list()).list[0]?.borrowNum).toBeNull();
  });

  it('keeps each filter and page apart, and each enterprise apart', async () => {
    const mine = await list(e.id, { pageNum: 1, pageSize: 10 });
    const theirs = await list(other.id, { pageNum: 1, pageSize: 10 });
    expect(theirs).not.toBe(mine);
    expect(theirs.list.map((m) => m.enterpriseId)).toEqual([String(other.id)]);
    expect((await list(e.id, { keyword: 'nobody-has-this' })).total).toBe(0);
    expect((await list(e.id, { pageNum: 2, pageSize: 1 })).pageNum).toBe(2);
  });
});

describe('the page version', () => {
  it('does not move for changes the page does not show', async () => {
    const assetId = await addAsset('KEPT-3');
    const before = await version();
    await sql`update assets set locked = true, updated_at = now() where id = ${assetId}`.execute(db());
    await sql`update customers set name = 'Renamed customer' where id = ${customerId}`.execute(db());
    await addAsset('KEPT-4');
    expect(await version()).toBe(before);
  });

  it("does not move for another enterprise's changes", async () => {
    const before = await version();
    await sql`update members set name = 'Neighbour Admin' where global_id = ${other.adminGlobalId}`.execute(
      db(),
    );
    expect(await version()).toBe(before);
    expect(await version(other.id)).not.toBe('0');
  });

  it('does not move for a change rolled back', async () => {
    const before = await version();
    await expect(
      db()
        .transaction()
        .execute(async (trx) => {
          await sql`update members set name = 'Never' where global_id = ${e.adminGlobalId}`.execute(trx);
          throw new Error('roll back');
        }),
    ).rejects.toThrow('roll back');
    expect(await version()).toBe(before);
    expect((await list()).list.map((m) => m.name)).not.toContain('Never');
  });

  it('moves only when its transaction commits, not while it runs', async () => {
    const before = await version();
    await db()
      .transaction()
      .execute(async (trx) => {
        await sql`update members set remark = 'one' where global_id = ${e.adminGlobalId}`.execute(trx);
        // Deferred to the commit: the counter's row is not yet locked or moved in here.
        const inside = await sql<{ version: string }>`
          select version::text from member_page_versions where enterprise_id = ${e.id}::bigint`.execute(trx);
        expect(inside.rows[0]?.version).toBe(before);
      });
    expect(BigInt(await version())).toBeGreaterThan(BigInt(before));
  });

  it('moves once per transaction, however many of its rows changed', async () => {
    const before = await version();
    await db()
      .transaction()
      .execute(async (trx) => {
        await sql`
          insert into members (global_id, enterprise_id, user_name, account, name, identity)
          select ${uniqueCode('g')} || '-' || i, ${e.id}::bigint, 'many', ${uniqueCode('many')} || '-' || i,
                 'Many ' || i, 'member'
            from generate_series(1, 20) as i`.execute(trx);
        await sql`update members set remark = 'all at once' where enterprise_id = ${e.id}::bigint`.execute(
          trx,
        );
        await sql`update enterprises set member_count = member_count + 20 where id = ${e.id}::bigint`.execute(
          trx,
        );
      });
    expect(BigInt(await version())).toBe(BigInt(before) + 1n);
    // And the next transaction moves it again.
    await sql`update members set remark = 'again' where global_id = ${e.adminGlobalId}`.execute(db());
    expect(BigInt(await version())).toBe(BigInt(before) + 2n);
  });

  it('answers many enterprises in the order asked, 0 for one never changed', async () => {
    const fresh = await h.database.db
      .insertInto('enterprises')
      .values({ global_id: uniqueCode('g'), name: 'Untouched', code: uniqueCode('u').slice(0, 8) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const versions = await new MembersRepository(db()).pageVersions([other.id, fresh.id, e.id]);
    expect(versions).toEqual([await version(other.id), '0', await version(e.id)]);
  });
});
