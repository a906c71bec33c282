import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';

/** An asset of the enterprise as lending sees it, row-locked. */
export interface LendingAsset {
  id: string;
  assetNum: string;
  borrowedUsbKey: boolean;
  locked: boolean;
}

export interface LockHolder {
  memberId: number;
  memberGlobalId: string;
}

/** A lent lock given back whole: everything lent to it went back, and it is lent to nobody now. */
export interface ReleasedLock {
  lockAssetId: string;
  lockNum: string;
  memberGlobalId: string;
  enterpriseId: number;
}

interface ReleasedRow {
  lock_asset_id: string;
  asset_num: string;
  global_id: string;
  enterprise_id: number;
}

/** Ends the lent locks `l` that `where` names; the cascades take what hangs below them. */
async function releaseLocks(db: Db, where: RawBuilder<boolean>): Promise<ReleasedLock[]> {
  const result = await sql<ReleasedRow>`
    delete from lent_locks l using assets a, members m
     where a.id = l.lock_asset_id and m.id = l.member_id and ${where}
    returning l.lock_asset_id, a.asset_num, m.global_id, l.enterprise_id
  `.execute(db);
  return result.rows.map((r) => ({
    lockAssetId: r.lock_asset_id,
    lockNum: r.asset_num,
    memberGlobalId: r.global_id,
    enterpriseId: r.enterprise_id,
  }));
}

/** A product among those a lending would move that has no node left to give. */
export interface ProductWithoutNode {
  assetId: string;
  productId: number;
  limitConcurrent: number;
}

/**
 * Lent locks, lent assets and the product nodes they moved (migration 0040). Queries of the
 * member center name the enterprise; the order service's calls act on assets it has already
 * found and locked as the customer's.
 */
export class LendingRepository {
  constructor(private readonly db: Db) {}

  /** The live member of the enterprise, row-locked so deleting it waits for us (and we for it). */
  async lockMember(enterpriseId: number, globalId: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('members')
      .select('id')
      .where('enterprise_id', '=', enterpriseId)
      .where('global_id', '=', globalId)
      .where('deleted', '=', false)
      .forUpdate()
      .executeTakeFirst();
    return row?.id;
  }

  /**
   * The enterprise's live assets among a lock number and asset ids, row-locked in number order
   * (the order the order service locks in, so the two cannot deadlock).
   */
  async lockAssets(enterpriseId: number, lockNum: string, assetIds: string[]): Promise<LendingAsset[]> {
    const result = await sql<{ id: string; asset_num: string; borrowed_usb_key: boolean; locked: boolean }>`
      select a.id, a.asset_num, a.borrowed_usb_key, a.locked
        from assets a join customers c on c.id = a.customer_id
       where c.enterprise_id = ${enterpriseId} and not a.revoked
         and (a.asset_num = ${lockNum} or a.id = any(${assetIds}::text[]))
       order by a.asset_num
         for update of a
    `.execute(this.db);
    return result.rows.map((r) => ({
      id: r.id,
      assetNum: r.asset_num,
      borrowedUsbKey: r.borrowed_usb_key,
      locked: r.locked,
    }));
  }

  async holderOf(lockId: string): Promise<LockHolder | undefined> {
    const row = await this.db
      .selectFrom('lent_locks as l')
      .innerJoin('members as m', 'm.id', 'l.member_id')
      .select(['m.id', 'm.global_id'])
      .where('l.lock_asset_id', '=', lockId)
      .executeTakeFirst();
    return row && { memberId: row.id, memberGlobalId: row.global_id };
  }

  /** The lent lock the member holds, if any. */
  async lockHeldBy(memberId: number): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('lent_locks')
      .select('lock_asset_id')
      .where('member_id', '=', memberId)
      .executeTakeFirst();
    return row?.lock_asset_id;
  }

  /** Which of the assets are assigned to the member. */
  async assignedTo(memberId: number, assetIds: string[]): Promise<Set<string>> {
    if (assetIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('asset_assignments')
      .select('asset_id')
      .where('member_id', '=', memberId)
      .where('asset_id', '=', sql<string>`any(${assetIds}::text[])`)
      .execute();
    return new Set(rows.map((r) => r.asset_id));
  }

  /** Which of the assets are lent already. */
  async lent(assetIds: string[]): Promise<Set<string>> {
    if (assetIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('asset_lendings')
      .select('asset_id')
      .where('asset_id', '=', sql<string>`any(${assetIds}::text[])`)
      .execute();
    return new Set(rows.map((r) => r.asset_id));
  }

  /** Which of the assets hold at least one live product instance. */
  async holdingProducts(assetIds: string[]): Promise<Set<string>> {
    if (assetIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('product_instances')
      .select('asset_id')
      .distinct()
      .where('asset_id', '=', sql<string>`any(${assetIds}::text[])`)
      .where('revoked', '=', false)
      .execute();
    return new Set(rows.map((r) => r.asset_id));
  }

  /**
   * Live products on these assets whose nodes are all taken: lent copies count against
   * `limitConcurrent`; a product without a stated node count is not limited.
   */
  async productsWithoutNode(assetIds: string[]): Promise<ProductWithoutNode[]> {
    if (assetIds.length === 0) return [];
    const result = await sql<{ asset_id: string; id: number; limit_concurrent: number }>`
      select p.asset_id, p.id, p.limit_concurrent
        from product_instances p
       where p.asset_id = any(${assetIds}::text[]) and not p.revoked and p.limit_concurrent is not null
         and p.limit_concurrent <= (select count(*) from lent_products lp where lp.product_id = p.id)
       order by p.id
    `.execute(this.db);
    return result.rows.map((r) => ({
      assetId: r.asset_id,
      productId: r.id,
      limitConcurrent: r.limit_concurrent,
    }));
  }

  /**
   * Makes the member the lock's holder unless someone is; answers whether the member holds it
   * now. The key on the lock settles a race that got past the row lock.
   */
  async holdLock(input: { enterpriseId: number; memberId: number; lockId: string }): Promise<boolean> {
    await sql`
      insert into lent_locks (lock_asset_id, member_id, enterprise_id)
      values (${input.lockId}, ${input.memberId}, ${input.enterpriseId})
      on conflict (lock_asset_id) do nothing
    `.execute(this.db);
    return (await this.holderOf(input.lockId))?.memberId === input.memberId;
  }

  /** Lends each asset to the lock with one node of each of its live products: two statements. */
  async lend(lockId: string, assetIds: string[]): Promise<void> {
    await sql`
      insert into asset_lendings (asset_id, lock_asset_id)
      select unnest(${assetIds}::text[]), ${lockId}
    `.execute(this.db);
    await sql`
      insert into lent_products (product_id, asset_id)
      select p.id, p.asset_id from product_instances p
       where p.asset_id = any(${assetIds}::text[]) and not p.revoked
    `.execute(this.db);
  }

  /** Gives back everything lent to these locks; the locks are lent to nobody after. */
  async endForLocks(lockIds: string[]): Promise<ReleasedLock[]> {
    if (lockIds.length === 0) return [];
    return releaseLocks(this.db, sql<boolean>`l.lock_asset_id = any(${lockIds}::text[])`);
  }

  /**
   * The lent assets among these come back from their locks; a lock left carrying nothing is
   * released (and answered). Locks among them keep what was lent to them.
   */
  async returnAssets(assetIds: string[]): Promise<ReleasedLock[]> {
    if (assetIds.length === 0) return [];
    const ended = await sql<{ lock_asset_id: string }>`
      delete from asset_lendings where asset_id = any(${assetIds}::text[]) returning lock_asset_id
    `.execute(this.db);
    return this.releaseEmpty(ended.rows.map((r) => r.lock_asset_id));
  }

  /** Revoked assets leave lending on both sides: as lent assets and as lent locks. */
  async endForAssets(assetIds: string[]): Promise<ReleasedLock[]> {
    const emptied = await this.returnAssets(assetIds);
    return [...emptied, ...(await this.endForLocks(assetIds))];
  }

  /**
   * Revoked product instances leave the locks they were lent to; a lending left with no product
   * ends, and a lock left carrying nothing is released (and answered).
   */
  async dropProducts(productIds: number[]): Promise<ReleasedLock[]> {
    if (productIds.length === 0) return [];
    const dropped = await sql<{ asset_id: string }>`
      delete from lent_products where product_id = any(${productIds}::bigint[]) returning asset_id
    `.execute(this.db);
    if (dropped.rows.length === 0) return [];
    const emptied = await sql<{ lock_asset_id: string }>`
      delete from asset_lendings l
       where l.asset_id = any(${[...new Set(dropped.rows.map((r) => r.asset_id))]}::text[])
         and not exists (select 1 from lent_products p where p.asset_id = l.asset_id)
      returning l.lock_asset_id
    `.execute(this.db);
    return this.releaseEmpty(emptied.rows.map((r) => r.lock_asset_id));
  }

  /** Member op 4: the member's lent lock gives back everything lent to it. */
  async endForMember(enterpriseId: number, memberId: number): Promise<ReleasedLock[]> {
    return releaseLocks(
      this.db,
      sql<boolean>`l.enterprise_id = ${enterpriseId} and l.member_id = ${memberId}`,
    );
  }

  private async releaseEmpty(lockIds: string[]): Promise<ReleasedLock[]> {
    if (lockIds.length === 0) return [];
    return releaseLocks(
      this.db,
      sql<boolean>`l.lock_asset_id = any(${[...new Set(lockIds)]}::text[])
         and not exists (select 1 from asset_lendings x where x.lock_asset_id = l.lock_asset_id)`,
    );
  }
}
