import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { jsonbText } from '../../db/json.js';
import type { LicenseOrdersTable } from '../../db/schema.js';
import type { Batch, OrderResultItem, SyncMode } from './order-model.js';

export interface StoredBatch {
  id: string;
  bodyHash: string;
  result: OrderResultItem[];
}

export interface NewLicenseOrder {
  id: string;
  batchId: string;
  appId: string;
  channelCode: string;
  channelOrderId: string;
  sequence: number;
  customerId: string;
  orderType: string;
  licenseType: string;
  srcLicenseOrderId: string | null;
  status: LicenseOrdersTable['status'];
}

export interface LicenseOrderStatus {
  licenseOrderId: string;
  channelOrderId: string;
  sequence: number;
  status: LicenseOrdersTable['status'];
  reason: string | null;
}

/** An order the worker settled, as its audit row names it. */
export interface FinishedOrder {
  licenseOrderId: string;
  appId: string;
  channelOrderId: string;
  sequence: number;
  customerId: string | null;
  status: 'completed' | 'failed';
  reason: string | null;
}

/** An async batch a worker holds: the row stays locked until its transaction ends. */
export interface ClaimedBatch {
  id: string;
  appId: string;
  acceptedAt: number;
  /** The request that placed it, which its completion's audit rows and events name. */
  requestId: string | null;
  batch: Batch;
  orders: Array<{ id: string; sequence: number; customerId: string }>;
}

/** order_batches (the idempotency record and async queue) and license_orders. Scoped by app. */
export class OrderBatchesRepository {
  constructor(private readonly db: Db) {}

  async find(appId: string, channelCode: string, channelOrderId: string): Promise<StoredBatch | undefined> {
    const row = await this.db
      .selectFrom('order_batches')
      .select(['id', 'body_hash', 'result'])
      .where('app_id', '=', appId)
      .where('channel_code', '=', channelCode)
      .where('channel_order_id', '=', channelOrderId)
      .executeTakeFirst();
    return row && { id: row.id, bodyHash: row.body_hash, result: row.result as OrderResultItem[] };
  }

  /**
   * Claims the idempotency key. On PostgreSQL a concurrent claim of the same key waits here until
   * the first transaction ends, then finds the key taken (false) or free (it rolled back).
   */
  async claim(batch: {
    id: string;
    appId: string;
    channelCode: string;
    channelOrderId: string;
    bodyHash: string;
    syncMode: SyncMode;
    payload: Batch | null;
    /** The body as the app sent it, kept with an async batch's payload. */
    received: unknown;
    requestId: string | null;
  }): Promise<boolean> {
    const row = await this.db
      .insertInto('order_batches')
      .values({
        id: batch.id,
        app_id: batch.appId,
        channel_code: batch.channelCode,
        channel_order_id: batch.channelOrderId,
        body_hash: batch.bodyHash,
        sync_mode: batch.syncMode,
        payload: batch.payload === null ? null : jsonbText(batch.payload),
        received: batch.payload === null || batch.received === undefined ? null : jsonbText(batch.received),
        result: '[]',
        pending: batch.syncMode === 'async',
        request_id: batch.requestId,
      })
      .onConflict((oc) => oc.columns(['app_id', 'channel_code', 'channel_order_id']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async setResult(id: string, result: OrderResultItem[]): Promise<Date> {
    const row = await this.db
      .updateTable('order_batches')
      .set({ result: jsonbText(result) })
      .where('id', '=', id)
      .returning('created_at')
      .executeTakeFirstOrThrow();
    return row.created_at;
  }

  async insertOrders(orders: NewLicenseOrder[]): Promise<void> {
    if (orders.length === 0) return;
    await this.db
      .insertInto('license_orders')
      .values(
        orders.map((o) => ({
          id: o.id,
          batch_id: o.batchId,
          app_id: o.appId,
          channel_code: o.channelCode,
          channel_order_id: o.channelOrderId,
          sequence: o.sequence,
          customer_id: o.customerId,
          order_type: o.orderType,
          license_type: o.licenseType,
          src_license_order_id: o.srcLicenseOrderId,
          status: o.status,
        })),
      )
      .execute();
  }

  async findOrder(licenseOrderId: string, appId: string): Promise<LicenseOrderStatus | undefined> {
    const row = await this.db
      .selectFrom('license_orders')
      .select(['id', 'channel_order_id', 'sequence', 'status', 'reason'])
      .where('id', '=', licenseOrderId)
      .where('app_id', '=', appId)
      .executeTakeFirst();
    return (
      row && {
        licenseOrderId: row.id,
        channelOrderId: row.channel_order_id,
        sequence: row.sequence,
        status: row.status,
        reason: row.reason,
      }
    );
  }

  /** Whether the customer has this license order: revocations name the order they undo. */
  async customerHasOrder(licenseOrderId: string, customerId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('license_orders')
      .select('id')
      .where('id', '=', licenseOrderId)
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * The oldest async batch no other worker holds, locked until the transaction ends: with SKIP
   * LOCKED every instance takes a different one, and a batch is done once its transaction commits.
   */
  async claimNextPending(): Promise<ClaimedBatch | undefined> {
    const batch = await this.db
      .selectFrom('order_batches')
      .select(['id', 'app_id', 'payload', 'created_at', 'request_id'])
      .where('pending', '=', true)
      .where((eb) =>
        eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', sql<Date>`now()`)]),
      )
      .orderBy('created_at')
      .limit(1)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!batch) return undefined;
    const orders = await this.db
      .selectFrom('license_orders')
      .select(['id', 'sequence', 'customer_id'])
      .where('batch_id', '=', batch.id)
      .where('status', '=', 'pending')
      .execute();
    return {
      id: batch.id,
      appId: batch.app_id,
      acceptedAt: batch.created_at.getTime(),
      requestId: batch.request_id,
      batch: batch.payload as Batch,
      orders: orders.map((o) => {
        // Acceptance settles every order's customer before it stores the order.
        if (o.customer_id === null) throw new Error(`license order ${o.id} has no customer`);
        return { id: o.id, sequence: o.sequence, customerId: o.customer_id };
      }),
    };
  }

  async complete(batchId: string): Promise<FinishedOrder[]> {
    return this.finish(batchId, sql<string | null>`null`, 'completed');
  }

  /**
   * Counts a fault against a still-pending batch and puts it back after an exponential backoff
   * (2, 4, 8 … seconds, at most 5 minutes); returns the attempts so far (0 if no longer pending)
   * and the request that placed the batch.
   */
  async recordFault(batchId: string): Promise<{ attempts: number; requestId: string | null }> {
    const row = await this.db
      .updateTable('order_batches')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        next_attempt_at: sql<Date>`now() + make_interval(secs => least(power(2, attempts + 1), 300))`,
      }))
      .where('id', '=', batchId)
      .where('pending', '=', true)
      .returning(['attempts', 'request_id'])
      .executeTakeFirst();
    return { attempts: row?.attempts ?? 0, requestId: row?.request_id ?? null };
  }

  /** Lets a refused order undo the batch's writes while the claim on the batch row stays held. */
  async savepoint(): Promise<void> {
    await sql`savepoint apply_batch`.execute(this.db);
  }

  async rollbackToSavepoint(): Promise<void> {
    await sql`rollback to savepoint apply_batch`.execute(this.db);
  }

  /** Marks every pending order of the batch failed with one reason. */
  async failAll(batchId: string, reason: string): Promise<FinishedOrder[]> {
    return this.finish(batchId, sql<string>`${reason}`, 'failed');
  }

  /** Marks the whole batch failed: the failing order with its reason, the others saying why. */
  async fail(
    batchId: string,
    failing: { licenseOrderId: string; reason: string },
    others: string,
  ): Promise<FinishedOrder[]> {
    return this.finish(
      batchId,
      sql<string>`case when id = ${failing.licenseOrderId} then ${failing.reason} else ${others} end`,
      'failed',
    );
  }

  private async finish(
    batchId: string,
    reason: ReturnType<typeof sql<string | null>>,
    status: 'completed' | 'failed',
  ): Promise<FinishedOrder[]> {
    const rows = await this.db
      .updateTable('license_orders')
      .set({ status, reason, updated_at: new Date() })
      .where('batch_id', '=', batchId)
      .where('status', '=', 'pending')
      .returning(['id', 'app_id', 'channel_order_id', 'sequence', 'customer_id', 'reason'])
      .execute();
    await this.db.updateTable('order_batches').set({ pending: false }).where('id', '=', batchId).execute();
    return rows
      .map((r) => ({
        licenseOrderId: r.id,
        appId: r.app_id,
        channelOrderId: r.channel_order_id,
        sequence: r.sequence,
        customerId: r.customer_id,
        status,
        reason: r.reason,
      }))
      .sort((a, b) => a.sequence - b.sequence);
  }
}
