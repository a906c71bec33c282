import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { RuntimeActivationsTable } from '../../db/schema.js';

export type ActivationVia = RuntimeActivationsTable['via'];

/** Whose a lock is: its customer's enterprise and channel. */
export interface LockOwner {
  enterpriseId: number | null;
  channelCode: string | null;
}

export interface ActivationRecord {
  appId: string;
  appKey: string;
  nonce: string;
  leaseId: string;
  enterpriseId: number | null;
  assetNum: string;
  fingerprintHash: string;
  createdAt: Date;
  returnedAt: Date | null;
  offlineEarlyReturn: boolean;
}

/** An offline machine as the console lists it: a seat held by an offline lease. */
export interface OfflineMachine {
  leaseId: string;
  appKey: string;
  assetNum: string;
  crmProductId: string | null;
  productName: string | null;
  enterpriseName: string | null;
  fingerprint: string;
  createdAt: Date;
  /** When its seat is free: its expiry. */
  expiresAt: Date;
  /** How it was activated, or null for an offline lease checked out online. */
  via: ActivationVia | null;
  returnedAt: Date | null;
}

export class ActivationRepository {
  constructor(private readonly db: Db) {}

  async lockOwner(assetNum: string): Promise<LockOwner | undefined> {
    return this.db
      .selectFrom('assets as a')
      .innerJoin('customers as c', 'c.id', 'a.customer_id')
      .select(['c.enterprise_id as enterpriseId', 'c.channel_code as channelCode'])
      .where('a.asset_num', '=', assetNum)
      .executeTakeFirst();
  }

  async findByNonce(appId: string, nonce: string): Promise<{ leaseId: string; createdAt: Date } | undefined> {
    return this.db
      .selectFrom('runtime_activations')
      .select(['lease_id as leaseId', 'created_at as createdAt'])
      .where('app_id', '=', appId)
      .where('nonce', '=', nonce)
      .executeTakeFirst();
  }

  /** Records an answered request; false when the same request was answered meanwhile. */
  async insert(row: Omit<RuntimeActivationsTable, 'id' | 'created_at' | 'returned_at'>): Promise<boolean> {
    const inserted = await this.db
      .insertInto('runtime_activations')
      .values(row)
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  /** The request `nonce` answered with `leaseId` (a return code names both). */
  async findByLease(leaseId: string, nonce: string): Promise<ActivationRecord | undefined> {
    const query = this.db
      .selectFrom('runtime_activations as r')
      .innerJoin('apps as p', 'p.id', 'r.app_id')
      .select([
        'r.app_id as appId',
        'p.app_key as appKey',
        'r.nonce',
        'r.lease_id as leaseId',
        'r.enterprise_id as enterpriseId',
        'r.asset_num as assetNum',
        'r.fingerprint_hash as fingerprintHash',
        'r.created_at as createdAt',
        'r.returned_at as returnedAt',
        'p.offline_early_return as offlineEarlyReturn',
      ])
      .where('r.lease_id', '=', leaseId)
      .where('r.nonce', '=', nonce);
    return query.executeTakeFirst();
  }

  async markReturned(leaseId: string, nonce: string): Promise<void> {
    await this.db
      .updateTable('runtime_activations')
      .set({ returned_at: sql<Date>`now()` })
      .where('lease_id', '=', leaseId)
      .where('nonce', '=', nonce)
      .execute();
  }

  /**
   * The machines holding a seat by an offline lease now (live, or checked in and holding its seat
   * until its expiry), soonest free last; those of one enterprise when `enterpriseId` is given.
   */
  async offlineMachines(filter: { enterpriseId?: number; limit: number }): Promise<OfflineMachine[]> {
    let query = this.db
      .selectFrom('runtime_leases as l')
      .innerJoin('apps as p', 'p.id', 'l.app_id')
      .innerJoin('assets as a', 'a.id', 'l.asset_id')
      .innerJoin('product_instances as pi', 'pi.id', 'l.product_id')
      .leftJoin('enterprises as e', 'e.id', 'l.enterprise_id')
      // A machine that asks again for the same lock and product resumes the lease it holds, so one
      // lease may have several activations: the latest says how the machine holds it now, and the
      // list stays one row per lease.
      .leftJoinLateral(
        (eb) =>
          eb
            .selectFrom('runtime_activations as ra')
            .select(['ra.via', 'ra.returned_at'])
            .whereRef('ra.lease_id', '=', 'l.id')
            .orderBy('ra.created_at', 'desc')
            .orderBy('ra.id', 'desc')
            .limit(1)
            .as('r'),
        (join) => join.onTrue(),
      )
      .select([
        'l.id as leaseId',
        'p.app_key as appKey',
        'a.asset_num as assetNum',
        'pi.crm_product_id as crmProductId',
        'pi.product_name as productName',
        'e.name as enterpriseName',
        'l.fingerprint',
        'l.created_at as createdAt',
        sql<Date>`coalesce(l.seat_held_until, l.expires_at)`.as('expiresAt'),
        'r.via',
        'r.returned_at as returnedAt',
      ])
      .where('l.offline', '=', true)
      .where((eb) =>
        eb.or([
          eb.and([eb('l.ended_at', 'is', null), eb('l.expires_at', '>', sql<Date>`now()`)]),
          eb('l.seat_held_until', '>', sql<Date>`now()`),
        ]),
      )
      .orderBy('expiresAt', 'desc')
      .orderBy('l.id')
      .limit(filter.limit);
    if (filter.enterpriseId !== undefined) query = query.where('l.enterprise_id', '=', filter.enterpriseId);
    return query.execute();
  }
}
