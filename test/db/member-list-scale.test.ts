import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MembersRepository } from '../../src/domain/members/members.repository.js';
import { seedEnterprise, type TestEnterprise } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';

// Member op 5 on an enterprise of 10,000 members: any page is one index walk, never a scan of
// the members table or a sort of the whole enterprise.
const SIZE = 10_000;
let h: Harness;
let enterprise: TestEnterprise;

beforeAll(async () => {
  h = await startHarness();
  enterprise = await seedEnterprise(h, 'Large Co');
  await sql`
    insert into members (global_id, enterprise_id, user_name, account, name, department_id, identity)
    select 'scale-' || ${enterprise.code} || '-' || n, ${enterprise.id}::bigint, 'm' || n,
           'm' || n || '@' || ${enterprise.code}, 'Member ' || n, n % 10, 'member'
      from generate_series(1, ${SIZE - 1}::int) as n`.execute(h.database.db);
  // Other tenants' rows, so the enterprise is a part of the table as it would be in production.
  for (let i = 0; i < 3; i += 1) {
    const other = await seedEnterprise(h, `Neighbour ${i}`);
    await sql`
      insert into members (global_id, enterprise_id, user_name, account, name, identity)
      select 'scale-' || ${other.code} || '-' || n, ${other.id}::bigint, 'n' || n,
             'n' || n || '@' || ${other.code}, 'N ' || n, 'member'
        from generate_series(1, 5000) as n`.execute(h.database.db);
  }
  await sql`vacuum analyze members`.execute(h.database.db);
});
afterAll(async () => h.close());

describe('listing an enterprise of 10,000 members', () => {
  it('keeps the live-member count without counting rows', async () => {
    const row = await h.database.db
      .selectFrom('enterprises')
      .select('member_count')
      .where('id', '=', enterprise.id)
      .executeTakeFirstOrThrow();
    expect(row.member_count).toBe(SIZE);
  });

  it('answers the last page with the right members and wrapper', async () => {
    const page = await h.app.services.members.list(enterprise.id, { pageNum: 1000, pageSize: 10 });
    expect(page).toMatchObject({ total: SIZE, pages: 1000, size: 10, startRow: 9991, endRow: 10000 });
    expect(page.navigatepageNums).toEqual([993, 994, 995, 996, 997, 998, 999, 1000]);
    expect(page.list.map((m) => m.name)).toEqual(
      Array.from({ length: 10 }, (_, i) => `Member ${SIZE - 10 + i}`),
    );
  });

  it.each([
    ['unfiltered', {}],
    ['by department', { departmentId: 3 }],
  ])('pages %s through an index, without a sequential scan of members', async (_what, filter) => {
    const query = new MembersRepository(h.database.db).pageQuery(enterprise.id, filter, SIZE - 10, 10);
    const plan = (await query.explain()).map((r) => String(Object.values(r)[0])).join('\n');
    expect(plan).not.toMatch(/Seq Scan on members/);
    expect(plan).toMatch(/members_(enterprise|department)_idx/);
  });
});
