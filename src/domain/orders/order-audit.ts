import type { AuditChange } from '../audit/audit-actions.js';
import type { FinishedOrder } from './order-batches.repository.js';
import type { AcceptedOrder, Batch } from './order-model.js';

/**
 * One `order.accepted` row per license order, not per asset: an order may name up to 1,000 asset
 * numbers (and a call 200 orders), and the log must stay cheap beside the order it records. The
 * row counts what the order names; the order's id leads to its assets. Nothing of the body beyond
 * ids and counts: products carry license passwords.
 */
export function orderAccepted(batch: Batch, accepted: readonly AcceptedOrder[]): AuditChange[] {
  return accepted.map(({ order, licenseOrderId, customerId }) => ({
    action: 'order.accepted',
    subject: licenseOrderId,
    enterprise: { customerOf: customerId },
    detail: {
      channelCode: batch.channelCode,
      channelOrderId: batch.channelOrderId,
      sequence: order.sequence,
      syncMode: batch.syncMode,
      status: batch.syncMode === 'sync' ? 'completed' : 'pending',
      orderType: order.orderType,
      licenseType: order.licenseType,
      customerId,
      srcLicenseOrderId: order.srcLicenseOrderId,
      assets: order.assets.length,
      assetNumbers: order.assets.reduce((n, a) => n + a.assetNos.length, 0),
    },
  }));
}

/** The async worker's outcome of each order of a batch: all completed, or all failed. */
export function orderFinished(orders: readonly FinishedOrder[]): AuditChange[] {
  return orders.map((o) => ({
    action: o.status === 'completed' ? 'order.completed' : 'order.failed',
    subject: o.licenseOrderId,
    enterprise: o.customerId === null ? null : { customerOf: o.customerId },
    detail: {
      channelOrderId: o.channelOrderId,
      sequence: o.sequence,
      ...(o.status === 'failed' ? { reason: o.reason } : {}),
    },
  }));
}
