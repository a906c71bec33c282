import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { PREPARED } from '../../db/prepared-statements.js';
import type { NewLease } from './runtime.repository.js';

/** A product instance's pool: where a check-out takes a seat. */
export interface SeatPool {
  productId: number;
  pool: 'own' | 'lent';
  /** Seats the pool may hand out now: slots numbered from it up are not taken. */
  limit: number;
}

/** The lease taking a slot, and how long the slot is surely held (its expiry). */
export interface SlotHolder {
  leaseId: string;
  holderKey: string;
  fingerprint: string;
  heldUntil: Date;
}

/** What a lease says of its seat. */
interface LeaseHold {
  ended_at: Date | null;
  expires_at: Date;
  seat_held_until: Date | null;
}

/** Until when a lease holds its seat: its expiry while live, its seat hold once ended. */
function heldUntilOf(lease: LeaseHold | undefined): Date {
  if (lease === undefined) return new Date(-8.64e15);
  return lease.ended_at === null ? lease.expires_at : (lease.seat_held_until ?? new Date(-8.64e15));
}

/**
 * Slots one claim looks at before the pool is judged full: each one passed over had a live lease
 * (its hint moves on, so no claim looks at it again until that lease's expiry) or a lease another
 * call holds right now.
 */
const LOOKS = 64;

/** Slots made at once from which the table's statistics are refreshed (see makeSlots). */
const ANALYZE_AFTER_SLOTS = 1000;

/** A slot this transaction holds locked, with its row's tid (stable while the lock is held). */
interface LockedSlot {
  slot: number;
  tid: string;
}

/**
 * The two CTEs both claims start with: `own`, the machine's own slot, and else `passed`, the first
 * slot whose hint has passed, oldest first; each locked with SKIP LOCKED, at most one row in all.
 * Its text never varies, so the statements it is part of stay prepared.
 */
function ownOrPassedSlot(pool: SeatPool, holderKey: string, fingerprint: string, now: Date) {
  return sql`own as (
        select slot, ctid, lease_id from runtime_seat_slots
         where product_id = ${pool.productId} and pool = ${pool.pool} and slot < ${pool.limit}
           and holder_key = ${holderKey} and fingerprint = ${fingerprint}
         limit 1
           for update skip locked
      ), passed as (
        select slot, ctid, lease_id from runtime_seat_slots
         where product_id = ${pool.productId} and pool = ${pool.pool} and slot < ${pool.limit}
           and held_until <= ${now} and not exists (select 1 from own)
         order by held_until
         limit 1
           for update skip locked
      )`;
}

/**
 * Seat slots (migration 0181): one row per seat of a product instance's pool. A check-out claims a
 * row with FOR UPDATE SKIP LOCKED, so check-outs of one license never queue on one lock, and no
 * statement here reads more than a handful of rows, whatever number of seats are held.
 */
export class SeatSlotsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Takes a seat of `pool` for `holder`: the machine's own slot when it still has one (a seat its
   * offline lease holds is the one it takes again), else a free one, making slots up to the limit
   * when there are too few. Answers the slot, or undefined when every seat is held.
   */
  async claim(pool: SeatPool, holder: SlotHolder, now: Date): Promise<number | undefined> {
    if (pool.limit <= 0) return undefined;
    const first = await this.ownOrPassed(pool, holder, now);
    if (first?.taken === true) return first.slot;
    const found = await this.freeSlot(pool, now, first);
    if (found !== undefined) return this.take(pool, found, holder);
    if (await this.makeSlots(pool)) {
      const made = await this.freeSlot(pool, now);
      if (made !== undefined) return this.take(pool, made, holder);
    }
    return undefined;
  }

  /**
   * A new machine's whole check-out in one statement, outside any transaction: its live lease
   * inserted and a seat slot taken for it, both or neither. Only a slot that is surely free is
   * taken here: the machine's own, or the first whose hint has passed and whose lease is none, or
   * ended and no longer holding its seat (an ended lease never lives again, so it is read without
   * its lock). Answers the slot, or undefined when this statement decided nothing (the machine
   * already has a live lease, the slot found needs its lease judged under lock, or none is free):
   * the caller then runs the check-out's transaction, which decides every case.
   *
   * A row that FOR UPDATE locked in a version newer than the statement's snapshot cannot be
   * updated by the same statement; `visible` keeps such a row out, so a lease is never inserted
   * without its slot. Both writes commit together, as one statement does.
   */
  async placeWithSeat(pool: SeatPool, lease: NewLease): Promise<number | undefined> {
    if (pool.limit <= 0) return undefined;
    const result = await sql<{ slot: number | null }>`${sql.raw(PREPARED)}
      with ${ownOrPassedSlot(pool, lease.holderKey, lease.fingerprint, lease.now)}, free as (
        select ctid from own
        union all
        select p.ctid from passed p
         where p.lease_id is null
            or not exists (
                 select 1 from runtime_leases l
                  where l.id = p.lease_id
                    and (l.ended_at is null or coalesce(l.seat_held_until, '-infinity') > ${lease.now}))
      ), visible as (
        select s.ctid from runtime_seat_slots s where s.ctid = (select ctid from free)
      ), placed as (
        insert into runtime_leases (id, app_id, product_id, asset_id, holder_kind, holder_key, member_id,
                                    lock_asset_id, enterprise_id, pool, fingerprint, offline,
                                    created_at, heartbeat_at, expires_at)
        select ${lease.id}::text, ${lease.appId}::text, ${lease.productId}::bigint, ${lease.assetId}::text,
               ${lease.holderKind}::text, ${lease.holderKey}::text, ${lease.memberId}::bigint,
               ${lease.lockAssetId}::text, ${lease.enterpriseId}::bigint, ${lease.pool}::text,
               ${lease.fingerprint}::text, ${lease.offline}::boolean, ${lease.now}::timestamptz,
               ${lease.now}::timestamptz, ${lease.expiresAt}::timestamptz
         where exists (select 1 from visible)
        on conflict (product_id, holder_key, fingerprint) where ended_at is null do nothing
        returning id
      ), taken as (
        update runtime_seat_slots
           set lease_id = ${lease.id}, holder_key = ${lease.holderKey},
               fingerprint = ${lease.fingerprint}, held_until = ${lease.expiresAt}
         where ctid = (select ctid from visible) and exists (select 1 from placed)
        returning slot
      )
      select (select slot from taken) as slot
    `.execute(this.db);
    const slot = result.rows[0]?.slot;
    return slot === null || slot === undefined ? undefined : slot;
  }

  /**
   * Frees now the slots a relay's grant holds (`grant:<id>`, never a lease): the grant was
   * returned before its end. A slot whose hint has passed is free to the next check-out.
   */
  async releaseGrant(grantSlotLeaseId: string, now: Date): Promise<number> {
    const result = await this.db
      .updateTable('runtime_seat_slots')
      .set({ held_until: now })
      .where('lease_id', '=', grantSlotLeaseId)
      .where('held_until', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * The machine's own slot, locked, or else the first slot whose hint has passed, locked too (the
   * first look of freeSlot), in one round trip: most check-outs are of machines with no slot. A
   * slot that is surely this holder's to take (its own, or one no lease ever held) is taken in the
   * same statement (`taken`), by its row's tid as take does: the common check-out's seat costs
   * one statement.
   */
  private async ownOrPassed(
    pool: SeatPool,
    holder: SlotHolder,
    now: Date,
  ): Promise<(LockedSlot & { lease_id: string | null; taken: boolean }) | undefined> {
    const result = await sql<LockedSlot & { lease_id: string | null; taken: boolean }>`${sql.raw(PREPARED)}
      with ${ownOrPassedSlot(pool, holder.holderKey, holder.fingerprint, now)}, picked as (
        select slot, ctid, lease_id, true as own from own
        union all
        select slot, ctid, lease_id, false as own from passed
      ), taken as (
        update runtime_seat_slots
           set lease_id = ${holder.leaseId}, holder_key = ${holder.holderKey},
               fingerprint = ${holder.fingerprint}, held_until = ${holder.heldUntil}
         where ctid = (select ctid from picked where own or lease_id is null)
        returning slot
      )
      select p.slot, p.ctid::text as tid, p.lease_id, exists (select 1 from taken) as taken
        from picked p
    `.execute(this.db);
    return result.rows[0];
  }

  /**
   * A free slot's number, locked for this transaction, or undefined when none is. The slots whose
   * hint has passed are locked one at a time, oldest hint first, with SKIP LOCKED (the queue's
   * pattern: concurrent check-outs each lock a different one in one round trip, and none is kept
   * off a slot another holds only to look at it). A slot is free when its lease, looked at under
   * the lease's row lock (SKIP LOCKED too: a lease being heartbeated, resumed or checked in right
   * now is left alone, and no call here waits on one, so none deadlocks), is no longer live; a
   * slot whose lease is live has its hint moved to that lease's expiry and the next is tried.
   */
  private async freeSlot(
    pool: SeatPool,
    now: Date,
    firstLook?: LockedSlot & { lease_id: string | null },
  ): Promise<LockedSlot | undefined> {
    const passed: number[] = [];
    for (let look = 0; look < LOOKS; look += 1) {
      let row = look === 0 ? firstLook : undefined;
      if (row === undefined) {
        let next = this.slotsOf(pool)
          .select(['slot', sql<string>`ctid::text`.as('tid'), 'lease_id'])
          .where('held_until', '<=', now);
        if (passed.length > 0) next = next.where('slot', 'not in', passed);
        row = await next.orderBy('held_until').limit(1).forUpdate().skipLocked().executeTakeFirst();
      }
      if (row === undefined) return undefined;
      if (row.lease_id === null) return row;
      const lease = await this.db
        .selectFrom('runtime_leases')
        .select(['ended_at', 'expires_at', 'seat_held_until'])
        .where('id', '=', row.lease_id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      passed.push(row.slot);
      if (lease === undefined) {
        // Gone: pruned long after its seat was free. Locked by another call: left alone.
        if ((await this.leasesOf([row.lease_id])).size === 0) return row;
        continue;
      }
      const heldUntil = heldUntilOf(lease);
      if (heldUntil <= now) return row;
      await this.moveHints(pool, [{ slot: row.slot, heldUntil }], now);
    }
    return undefined;
  }

  private slotsOf(pool: SeatPool) {
    return this.db
      .selectFrom('runtime_seat_slots')
      .where('product_id', '=', pool.productId)
      .where('pool', '=', pool.pool)
      .where('slot', '<', pool.limit);
  }

  /** The seat-holding state of these leases, read without a lock. */
  private async leasesOf(ids: string[]): Promise<Map<string, LeaseHold>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('runtime_leases')
      .select(['id', 'ended_at', 'expires_at', 'seat_held_until'])
      .where('id', 'in', ids)
      .execute();
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Moves the hints of slots whose leases are still live to those leases' expiries. Only rows not
   * held by another call, and whose hint has still passed, are moved: never waits.
   */
  private async moveHints(
    pool: SeatPool,
    moved: Array<{ slot: number; heldUntil: Date }>,
    now: Date,
  ): Promise<void> {
    await sql`
      update runtime_seat_slots s set held_until = m.held_until
        from unnest(${moved.map((m) => m.slot)}::int[], ${moved.map((m) => m.heldUntil.toISOString())}::timestamptz[])
             as m (slot, held_until)
       where s.product_id = ${pool.productId} and s.pool = ${pool.pool} and s.slot = m.slot
         and (s.product_id, s.pool, s.slot) in (
               select product_id, pool, slot from runtime_seat_slots
                where product_id = ${pool.productId} and pool = ${pool.pool}
                  and slot = any(${moved.map((m) => m.slot)}::int[]) and held_until <= ${now}
                  for update skip locked)
    `.execute(this.db);
  }

  /**
   * Gives the slot, locked by this transaction, to the holder. The row is addressed by its tid,
   * which cannot change while the lock is held: a tid scan is one page whatever the planner's
   * statistics say (on stale ones, a lookup by the key was planned as a scan of all the pool's
   * slots through another index).
   */
  private async take(pool: SeatPool, locked: LockedSlot, holder: SlotHolder): Promise<number> {
    const result = await sql`${sql.raw(PREPARED)}
      update runtime_seat_slots
         set lease_id = ${holder.leaseId}, holder_key = ${holder.holderKey},
             fingerprint = ${holder.fingerprint}, held_until = ${holder.heldUntil}
       where ctid = ${locked.tid}::tid
         and product_id = ${pool.productId} and pool = ${pool.pool} and slot = ${locked.slot}
    `.execute(this.db);
    if (result.numAffectedRows !== 1n) throw new Error(`seat slot ${locked.slot} moved while locked`);
    return locked.slot;
  }

  /**
   * Makes the pool's missing slots, up to its limit: whether any were made. The last slot is found
   * through the primary key, so this costs the same whatever number exist.
   */
  private async makeSlots(pool: SeatPool): Promise<boolean> {
    const row = await this.db
      .selectFrom('runtime_seat_slots')
      .select((eb) => eb.fn.max<number>('slot').as('last'))
      .where('product_id', '=', pool.productId)
      .where('pool', '=', pool.pool)
      .executeTakeFirst();
    const made = row?.last === null || row?.last === undefined ? 0 : Number(row.last) + 1;
    if (made >= pool.limit) return false;
    await sql`
      insert into runtime_seat_slots (product_id, pool, slot)
      select ${pool.productId}, ${pool.pool}, g from generate_series(${made}::int, ${pool.limit - 1}::int) g
      on conflict do nothing
    `.execute(this.db);
    // Statistics that do not know these slots yet (a new database's, until autovacuum comes by)
    // get this pool's lookups planned as scans of all its slots: a large pool is counted at once,
    // in this transaction (ANALYZE counts its own inserts), once per license and size.
    if (pool.limit - made >= ANALYZE_AFTER_SLOTS) await sql`analyze runtime_seat_slots`.execute(this.db);
    return true;
  }
}
