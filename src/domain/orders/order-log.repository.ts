import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { LicenseOrdersTable } from '../../db/schema.js';

/**
 * A batch as the operator reads it: `accepted` is queued and not yet tried, `pending` is queued
 * again after a fault (the worker retries it), `completed` and `failed` are settled (a sync
 * batch is settled when it is answered).
 */
export const BATCH_STATUSES = ['accepted', 'pending', 'completed', 'failed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export interface LoggedOrder {
  licenseOrderId: string;
  sequence: number;
  orderType: string;
  status: LicenseOrdersTable['status'];
  reason: string | null;
}

export interface LoggedBatch {
  id: string;
  appId: string;
  appKey: string | null;
  appName: string | null;
  channelCode: string;
  channelOrderId: string;
  syncMode: 'sync' | 'async';
  status: BatchStatus;
  attempts: number;
  receivedAt: number;
  /** This batch as the start of the next (older) page. */
  cursor: BatchCursor;
  /** The batch as accepted (async batches only: a sync batch is applied at once, not kept). */
  payload: unknown;
  /** The body as the app sent it (async batches since migration 0178), else null. */
  received: unknown;
  /** The answer the caller got: each order's id and customer. */
  result: unknown;
  /** The first orders of the batch with their outcome. */
  orders: LoggedOrder[];
  /** How many orders the batch has in all. */
  orderCount: number;
}

/**
 * Where a page of the log starts: after this batch, in (received, id) order, newest first. The
 * time is the database's own text to the microsecond, as a Date would round it to the millisecond.
 */
export interface BatchCursor {
  receivedAt: string;
  id: string;
}

/** How many orders of a batch the log shows; the count says how many more there are. */
const ORDERS_SHOWN = 10;

/** The order batches log of the operator's console: newest first by order_batches_created_idx. */
export class OrderLogRepository {
  constructor(private readonly db: Db) {}

  async list(filter: {
    status?: BatchStatus;
    after?: BatchCursor;
    /** One batch only: its page. */
    id?: string;
    limit: number;
  }): Promise<LoggedBatch[]> {
    const failedOrder = sql<boolean>`exists (select 1 from license_orders o
      where o.batch_id = b.id and o.status = 'failed')`;
    let query = this.db
      .selectFrom('order_batches as b')
      .leftJoin('apps as a', 'a.id', 'b.app_id')
      .select([
        'b.id',
        'b.app_id',
        'a.app_key',
        'a.name as app_name',
        'b.channel_code',
        'b.channel_order_id',
        'b.sync_mode',
        'b.payload',
        'b.received',
        'b.result',
        'b.pending',
        'b.attempts',
        'b.created_at',
        sql<string>`to_char(b.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as(
          'received_text',
        ),
        failedOrder.as('has_failed'),
      ])
      .orderBy('b.created_at', 'desc')
      .orderBy('b.id', 'desc')
      .limit(filter.limit);
    switch (filter.status) {
      case 'accepted':
        query = query.where('b.pending', '=', true).where('b.attempts', '=', 0);
        break;
      case 'pending':
        query = query.where('b.pending', '=', true).where('b.attempts', '>', 0);
        break;
      case 'completed':
        query = query.where('b.pending', '=', false).where(sql<boolean>`not ${failedOrder}`);
        break;
      case 'failed':
        query = query.where('b.pending', '=', false).where(failedOrder);
        break;
      case undefined:
        break;
    }
    if (filter.id !== undefined) query = query.where('b.id', '=', filter.id);
    if (filter.after !== undefined) {
      const { receivedAt, id } = filter.after;
      query = query.where(sql<boolean>`(b.created_at, b.id) < (${receivedAt}::timestamptz, ${id})`);
    }
    const rows = await query.execute();
    const orders = await this.ordersOf(rows.map((r) => r.id));
    return rows.map((r) => {
      const own = orders.get(r.id) ?? [];
      const status: BatchStatus = r.pending
        ? r.attempts > 0
          ? 'pending'
          : 'accepted'
        : r.has_failed
          ? 'failed'
          : 'completed';
      return {
        id: r.id,
        appId: r.app_id,
        appKey: r.app_key,
        appName: r.app_name,
        channelCode: r.channel_code,
        channelOrderId: r.channel_order_id,
        syncMode: r.sync_mode,
        status,
        attempts: r.attempts,
        receivedAt: r.created_at.getTime(),
        cursor: { receivedAt: r.received_text, id: r.id },
        payload: r.payload,
        received: r.received,
        result: r.result,
        orders: own.slice(0, ORDERS_SHOWN),
        orderCount: own.length,
      };
    });
  }

  /** The orders of these batches by license_orders_batch_idx, in sequence order. */
  private async ordersOf(batchIds: string[]): Promise<Map<string, LoggedOrder[]>> {
    const found = new Map<string, LoggedOrder[]>();
    if (batchIds.length === 0) return found;
    const rows = await this.db
      .selectFrom('license_orders')
      .select(['id', 'batch_id', 'sequence', 'order_type', 'status', 'reason'])
      .where('batch_id', 'in', batchIds)
      .orderBy('batch_id')
      .orderBy('sequence')
      .execute();
    for (const r of rows) {
      const list = found.get(r.batch_id) ?? [];
      list.push({
        licenseOrderId: r.id,
        sequence: r.sequence,
        orderType: r.order_type,
        status: r.status,
        reason: r.reason,
      });
      found.set(r.batch_id, list);
    }
    return found;
  }
}
