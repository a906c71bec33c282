import { sql, type Expression, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import { likeSubstring } from '../../db/like.js';
import { preparedQuery, type Slots } from '../../db/prepared-statements.js';
import type { MembersTable } from '../../db/schema.js';

export interface MemberRecord {
  id: number;
  globalId: string;
  enterpriseId: number;
  userName: string;
  account: string;
  name: string | null;
  departmentId: number | null;
  departmentName: string | null;
  remark: string | null;
  passwordMobile: string | null;
  identity: 'admin' | 'member';
  deleted: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface EnterpriseSeats {
  id: number;
  globalId: string;
  code: string;
  memberLimit: number | null;
  memberCount: number;
}

export interface NewMember {
  globalId: string;
  enterpriseId: number;
  userName: string;
  account: string;
  passwordHash: string;
  name: string;
  departmentId: number;
  remark: string | null;
  passwordMobile: string | null;
}

export interface ProfileChanges {
  name?: string;
  departmentId?: number;
  remark?: string | null;
  passwordMobile?: string | null;
}

export interface MemberFilter {
  departmentId?: number;
  /** Already lower-cased; matched as a substring of name or account. */
  keyword?: string;
}

const MEMBER_COLUMNS = [
  'm.id',
  'm.global_id',
  'm.enterprise_id',
  'm.user_name',
  'm.account',
  'm.name',
  'm.department_id',
  'm.department_name',
  'm.remark',
  'm.password_mobile',
  'm.identity',
  'm.deleted',
  'm.created_at',
  'm.updated_at',
] as const;

type MemberRow = Omit<Selectable<MembersTable>, 'password_hash'>;

/** A row of op 5's statement: a page member (or nulls on an empty page) with the total. */
type ListedRow = { [K in keyof MemberRow]: MemberRow[K] | null } & {
  total: number | null;
  page_version: string;
  asset_nums: string[] | null;
  borrow_num: string | null;
};

/** Op 5's page as read, with the enterprise's page version in the same snapshot. */
export interface ListedPage {
  total: number;
  members: ListedMember[];
  version: string;
}

/** A member of op 5's page with what it holds. */
export interface ListedMember extends MemberRecord {
  assetNums: string[];
  borrowNum: string | null;
}

function toRecord(row: MemberRow): MemberRecord {
  return {
    id: row.id,
    globalId: row.global_id,
    enterpriseId: row.enterprise_id,
    userName: row.user_name,
    account: row.account,
    name: row.name,
    departmentId: row.department_id,
    departmentName: row.department_name,
    remark: row.remark,
    passwordMobile: row.password_mobile,
    identity: row.identity,
    deleted: row.deleted,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
  };
}

/** A value, or a placeholder for it in a prepared statement. */
type Operand<T> = T | Expression<T>;

/** MemberFilter as a query takes it: the keyword already turned into its ilike pattern. */
interface FilterOperands {
  departmentId?: Operand<number>;
  pattern?: Operand<string>;
}

function operands(filter: MemberFilter): FilterOperands {
  return {
    ...(filter.departmentId === undefined ? {} : { departmentId: filter.departmentId }),
    ...(filter.keyword === undefined ? {} : { pattern: likeSubstring(filter.keyword) }),
  };
}

/** Members of one enterprise. Every query names the enterprise; another one's members are absent. */
export class MembersRepository {
  constructor(private readonly db: Db) {}

  async findSeats(
    enterpriseId: number,
    options: { lock?: boolean } = {},
  ): Promise<EnterpriseSeats | undefined> {
    let query = this.db
      .selectFrom('enterprises')
      .select(['id', 'global_id', 'code', 'member_limit', 'member_count'])
      .where('id', '=', enterpriseId);
    // Serializes additions per enterprise, so two batches cannot both take the last seat.
    if (options.lock === true) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return (
      row && {
        id: row.id,
        globalId: row.global_id,
        code: row.code,
        memberLimit: row.member_limit,
        memberCount: row.member_count,
      }
    );
  }

  /** The keys (lower-cased accounts) among `keys` that a live member of the enterprise holds. */
  async takenAccounts(enterpriseId: number, keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('members')
      .select(sql<string>`lower(account)`.as('key'))
      .where('enterprise_id', '=', enterpriseId)
      .where('deleted', '=', false)
      .where(sql<string>`lower(account)`, 'in', keys)
      .execute();
    return new Set(rows.map((r) => r.key));
  }

  /** One multi-row insert; an account taken meanwhile is skipped and missing from the answer. */
  async insertMany(members: NewMember[]): Promise<MemberRecord[]> {
    if (members.length === 0) return [];
    const rows = await this.db
      .insertInto('members')
      .values(
        members.map((m) => ({
          global_id: m.globalId,
          enterprise_id: m.enterpriseId,
          user_name: m.userName,
          account: m.account,
          password_hash: m.passwordHash,
          name: m.name,
          department_id: m.departmentId,
          remark: m.remark,
          password_mobile: m.passwordMobile,
          identity: 'member' as const,
          deleted: false,
        })),
      )
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .execute();
    return rows.map(toRecord);
  }

  async find(
    enterpriseId: number,
    globalId: string,
    options: { lock?: boolean } = {},
  ): Promise<MemberRecord | undefined> {
    let query = this.db
      .selectFrom('members as m')
      .select(MEMBER_COLUMNS)
      .where('m.enterprise_id', '=', enterpriseId)
      .where('m.global_id', '=', globalId)
      .where('m.deleted', '=', false);
    if (options.lock === true) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return row && toRecord(row);
  }

  /** The live members among these global ids; another enterprise's are absent. */
  async findMany(enterpriseId: number, globalIds: string[]): Promise<MemberRecord[]> {
    if (globalIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('members as m')
      .select(MEMBER_COLUMNS)
      .where('m.enterprise_id', '=', enterpriseId)
      .where('m.global_id', 'in', globalIds)
      .where('m.deleted', '=', false)
      .execute();
    return rows.map(toRecord);
  }

  async updateProfile(enterpriseId: number, memberId: number, changes: ProfileChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('members')
      .set({
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.departmentId === undefined ? {} : { department_id: changes.departmentId }),
        ...(changes.remark === undefined ? {} : { remark: changes.remark }),
        ...(changes.passwordMobile === undefined ? {} : { password_mobile: changes.passwordMobile }),
        updated_at: new Date(),
      })
      .where('enterprise_id', '=', enterpriseId)
      .where('id', '=', memberId)
      .where('deleted', '=', false)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async updatePassword(enterpriseId: number, memberId: number, passwordHash: string): Promise<boolean> {
    const result = await this.db
      .updateTable('members')
      .set({ password_hash: passwordHash, updated_at: new Date() })
      .where('enterprise_id', '=', enterpriseId)
      .where('id', '=', memberId)
      .where('deleted', '=', false)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async softDelete(enterpriseId: number, memberId: number): Promise<void> {
    await this.db
      .updateTable('members')
      .set({ deleted: true, updated_at: new Date() })
      .where('enterprise_id', '=', enterpriseId)
      .where('id', '=', memberId)
      .execute();
  }

  /** Gives the member's assets back to the enterprise's pool; answers which they were. */
  async releaseAssignments(
    enterpriseId: number,
    memberId: number,
  ): Promise<Array<{ id: string; assetNum: string }>> {
    const result = await sql<{ id: string; asset_num: string }>`
      delete from asset_assignments aa using assets a
       where a.id = aa.asset_id and aa.member_id = ${memberId}
         and aa.member_id in (select id from members where enterprise_id = ${enterpriseId})
      returning a.id, a.asset_num
    `.execute(this.db);
    return result.rows.map((r) => ({ id: r.id, assetNum: r.asset_num }));
  }

  private filtered(enterpriseId: Operand<number>, filter: FilterOperands) {
    let query = this.db
      .selectFrom('members as f')
      .where('f.enterprise_id', '=', enterpriseId)
      // Literal, not a parameter: a prepared statement's generic plan can use the partial indexes
      // (WHERE NOT deleted) only when the predicate is visible at planning time.
      .where(sql<boolean>`not f.deleted`);
    const { departmentId, pattern } = filter;
    if (departmentId !== undefined) query = query.where('f.department_id', '=', departmentId);
    if (pattern !== undefined) {
      query = query.where((eb) => eb.or([eb('f.name', 'ilike', pattern), eb('f.account', 'ilike', pattern)]));
    }
    return query;
  }

  async count(enterpriseId: number, filter: MemberFilter): Promise<number> {
    const row = await this.filtered(enterpriseId, operands(filter))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * One page in creation order. The ids are paged first on the partial index
   * (enterprise_id, [department_id,] id), which an index-only scan walks without reading the
   * skipped rows; only the page's own rows are then fetched.
   */
  pageQuery(enterpriseId: number, filter: MemberFilter, offset: number, limit: number) {
    return this.pageOf(enterpriseId, operands(filter), offset, limit);
  }

  private pageOf(
    enterpriseId: Operand<number>,
    filter: FilterOperands,
    offset: Operand<number>,
    limit: Operand<number>,
  ) {
    const ids = this.filtered(enterpriseId, filter)
      .select('f.id')
      .orderBy('f.id')
      .offset(offset)
      .limit(limit);
    return this.db
      .selectFrom('members as m')
      .select(MEMBER_COLUMNS)
      .where('m.enterprise_id', '=', enterpriseId)
      .where('m.id', 'in', ids)
      .orderBy('m.id');
  }

  async page(
    enterpriseId: number,
    filter: MemberFilter,
    offset: number,
    limit: number,
  ): Promise<MemberRecord[]> {
    const rows = await this.pageQuery(enterpriseId, filter, offset, limit).execute();
    return rows.map(toRecord);
  }

  /**
   * Op 5 in one prepared statement: the total (the live-member counter, or a count when filtered),
   * one page of members, and each member's active asset numbers and lent lock. The text depends
   * only on which filters are set, so each variant is built, compiled and planned once.
   */
  async listPage(
    enterpriseId: number,
    filter: MemberFilter,
    offset: number,
    limit: number,
  ): Promise<ListedPage> {
    const statement =
      listPageStatements[`${filter.departmentId !== undefined}:${filter.keyword !== undefined}`];
    const rows = await statement(this.db, {
      enterpriseId,
      offset,
      limit,
      departmentId: filter.departmentId,
      pattern: filter.keyword === undefined ? undefined : likeSubstring(filter.keyword),
    });
    const members = rows.flatMap((row) =>
      row.id === null
        ? []
        : [{ ...toRecord(row as MemberRow), assetNums: row.asset_nums ?? [], borrowNum: row.borrow_num }],
    );
    return { total: Number(rows[0]?.total ?? 0), members, version: rows[0]?.page_version ?? '0' };
  }

  /**
   * The page versions (migration 0153) of these enterprises, in the order given; '0' for one whose
   * members' page never changed. One prepared statement for any number of enterprises.
   */
  async pageVersions(enterpriseIds: readonly number[]): Promise<string[]> {
    if (enterpriseIds.length === 0) return [];
    const rows = await pageVersionsStatement(this.db, { enterpriseIds });
    return rows.map((r) => r.version);
  }

  /** listPage's statement for one combination of filters, in terms of its slots. */
  static listPageStatement(db: Db, v: Slots<ListSlot>, byDepartment: boolean, byKeyword: boolean) {
    const repo = new MembersRepository(db);
    const filter: FilterOperands = {
      ...(byDepartment ? { departmentId: v.departmentId } : {}),
      ...(byKeyword ? { pattern: v.pattern } : {}),
    };
    const total =
      byDepartment || byKeyword
        ? repo.filtered(v.enterpriseId, filter).select(sql<number>`count(*)::int`.as('total'))
        : sql`select member_count as total from enterprises where id = ${v.enterpriseId}`;
    return sql<ListedRow>`
      with page as (${repo.pageOf(v.enterpriseId, filter, v.offset, v.limit)})
      select t.total, p.*,
             -- Read in the page's own snapshot, so a page is never kept under a newer version.
             coalesce((select pv.version from member_page_versions pv
                        where pv.enterprise_id = ${v.enterpriseId}), 0)::text as page_version,
             -- From the member's assignments, the enterprise checked per asset in a subquery
             -- the planner cannot turn into a join: as a join it may instead walk every asset of
             -- the enterprise's customers once per listed member, which it does whenever the
             -- statistics expect few assets per customer (a store of many small customers).
             array(select a.asset_num
                     from asset_assignments aa
                     join assets a on a.id = aa.asset_id
                    where aa.member_id = p.id and not a.revoked
                      and (select c.enterprise_id from customers c where c.id = a.customer_id) = ${v.enterpriseId}
                    order by a.asset_num) as asset_nums,
             (select a.asset_num
                from lent_locks l join assets a on a.id = l.lock_asset_id
               where l.member_id = p.id and l.enterprise_id = ${v.enterpriseId}) as borrow_num
        from (${total}) as t
        left join page p on true
       order by p.id
    `;
  }
}

/**
 * Page versions by enterprise, in the order asked. The array is read through a subquery, as in
 * order op 3's shared statement, so the generic plan does not depend on the first batches' length.
 */
const pageVersionsStatement = preparedQuery<{ version: string }, 'enterpriseIds'>(
  ['enterpriseIds'],
  (_db, v) => sql<{ version: string }>`
    select coalesce(pv.version, 0)::text as version
      from (select * from unnest((select ${v.enterpriseIds}::bigint[])) with ordinality) as q(enterprise_id, n)
      left join member_page_versions pv on pv.enterprise_id = q.enterprise_id
     order by q.n
  `,
);

type ListSlot = 'enterpriseId' | 'offset' | 'limit' | 'departmentId' | 'pattern';

const listPageStatement = (byDepartment: boolean, byKeyword: boolean) =>
  preparedQuery<ListedRow, ListSlot>(
    ['enterpriseId', 'offset', 'limit', 'departmentId', 'pattern'],
    (db, v) => MembersRepository.listPageStatement(db, v, byDepartment, byKeyword),
  );

/** By `${byDepartment}:${byKeyword}`. */
const listPageStatements = {
  'false:false': listPageStatement(false, false),
  'true:false': listPageStatement(true, false),
  'false:true': listPageStatement(false, true),
  'true:true': listPageStatement(true, true),
};
