import type { Db } from '../../db/client.js';
import type { AssetNumbersService } from '../asset-numbers/asset-numbers.service.js';
import { workerActor, type AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { newGlobalId } from '../shared/ids.js';
import { applyOrders } from './apply-orders.js';
import { channelOfCustomers } from './batch-channel.js';
import { resolveCustomers, type OrderScope } from './customer-resolution.js';
import { batchHash } from './idempotency.js';
import {
  OrderBatchesRepository,
  type ClaimedBatch,
  type LicenseOrderStatus,
} from './order-batches.repository.js';
import { orderAccepted, orderFinished } from './order-audit.js';
import {
  OrderLogRepository,
  type BatchCursor,
  type BatchStatus,
  type LoggedBatch,
} from './order-log.repository.js';
import { invalid, OrderFailure } from './order-errors.js';
import type { AcceptedOrder, Batch, BatchInput, OrderResultItem } from './order-model.js';
import { normalizeBatch } from './order-normalize.js';
import { checkBatch } from './order-validation.js';

/** Thrown inside the accepting transaction when a concurrent call holds the idempotency key. */
class KeyTaken extends Error {}

export interface OrderApp {
  appId: string;
  channels: string[];
}

/** Faults tolerated on one async batch before it is failed rather than retried again. */
const MAX_FAULT_ATTEMPTS = 8;

/** Order op 5 and the license-order lookup; the async worker calls processNextBatch. */
export class OrdersService {
  constructor(
    private readonly db: Db,
    private readonly assetNumbers: AssetNumbersService,
    private readonly limits: { instanceRowsPerCall: number },
  ) {}

  /** The operator's log of batches, newest first, across every app. */
  async recentBatches(filter: {
    status?: BatchStatus;
    after?: BatchCursor;
    limit: number;
  }): Promise<LoggedBatch[]> {
    return new OrderLogRepository(this.db).list(filter);
  }

  /** One batch of the log by its id (the console's order page); undefined when none has it. */
  async batch(id: string): Promise<LoggedBatch | undefined> {
    return (await new OrderLogRepository(this.db).list({ id, limit: 1 }))[0];
  }

  /**
   * Validates, then either answers a retry from the idempotency record or accepts the batch in one
   * transaction: sync batches are applied in it, async ones stored for the worker. Any refusal
   * rolls everything back, the idempotency record included, so a corrected retry may follow.
   * Accepted orders are audited in that transaction; a replay is not a change and is not.
   */
  /**
   * `received` is the body as the app sent it, before validation filled in defaults: an async
   * batch keeps it for the operator's Orders page.
   */
  async submit(
    app: OrderApp,
    input: BatchInput,
    actor: AuditActor,
    received?: unknown,
  ): Promise<OrderResultItem[]> {
    const draft = normalizeBatch(input);
    checkBatch(draft, this.limits.instanceRowsPerCall);
    // A channel left out is taken from the customers before the hash, and the hash covers it: the
    // body without channelCode and the same body naming that channel ask for the same orders under
    // the same key (app, channel, channelOrderId), so a retry in either form gets the stored
    // answer rather than 13004. Nor can the two drift apart between retries: a customer's channel
    // never changes. Hashing the body as sent would instead refuse a retry that adds channelCode.
    const batch: Batch = {
      ...draft,
      channelCode: draft.channelCode ?? (await channelOfCustomers(this.db, app.channels, draft.orders)),
    };
    const bodyHash = batchHash(batch);
    const earlier = await this.replay(app.appId, batch, bodyHash);
    if (earlier) return earlier;
    try {
      return await this.db
        .transaction()
        .execute((trx) => this.accept(trx, app, batch, bodyHash, actor, received));
    } catch (error) {
      if (error instanceof OrderFailure) throw error.failure;
      if (!(error instanceof KeyTaken)) throw error;
      const winner = await this.replay(app.appId, batch, bodyHash);
      if (!winner) throw new Error('idempotency record vanished after a conflicting claim');
      return winner;
    }
  }

  /** GET licenseOrder/{id}: only the calling app's orders exist for it. */
  async status(appId: string, licenseOrderId: string): Promise<LicenseOrderStatus> {
    const found = await new OrderBatchesRepository(this.db).findOrder(licenseOrderId, appId);
    if (!found) throw invalid('licenseOrderId', 'no such license order');
    return found;
  }

  /**
   * The worker's step: applies the oldest waiting async batch and marks it, in one transaction
   * that holds the batch row, so each batch is applied exactly once whatever the instances.
   * A refused order fails the whole batch (nothing applied); a fault leaves it waiting. Applying
   * holds the database no longer than a request may (the services' db is time-limited; running
   * out of time is a fault).
   * Returns false when nothing is waiting.
   */
  async processNextBatch(): Promise<boolean> {
    let claimedId: string | undefined;
    try {
      return await this.applyNextBatch((id) => (claimedId = id));
    } catch (error) {
      if (claimedId !== undefined) await this.deferAfterFault(claimedId);
      throw error;
    }
  }

  /**
   * A fault while applying (the transaction rolled back): try the batch again later, backing off
   * exponentially, and fail it once MAX_FAULT_ATTEMPTS is reached so it cannot block the queue.
   */
  private async deferAfterFault(batchId: string): Promise<void> {
    const { attempts, requestId } = await new OrderBatchesRepository(this.db).recordFault(batchId);
    if (attempts < MAX_FAULT_ATTEMPTS) return;
    await this.db.transaction().execute(async (trx) => {
      const failed = await new OrderBatchesRepository(trx).failAll(
        batchId,
        `not applied: an internal error persisted over ${attempts} attempts`,
      );
      const appId = failed[0]?.appId;
      if (appId !== undefined)
        await new AuditRepository(trx).record(workerActor(appId, requestId), orderFinished(failed));
    });
  }

  private async applyNextBatch(onClaim: (batchId: string) => void): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const batches = new OrderBatchesRepository(trx);
      const claimed = await batches.claimNextPending();
      if (!claimed) return false;
      onClaim(claimed.id);
      const audit = new AuditRepository(trx);
      const actor = workerActor(claimed.appId, claimed.requestId);
      await batches.savepoint();
      try {
        const changes = await applyOrders(trx, this.assetNumbers, toApply(claimed));
        await audit.record(actor, [...orderFinished(await batches.complete(claimed.id)), ...changes]);
      } catch (error) {
        if (!(error instanceof OrderFailure)) throw error;
        await batches.rollbackToSavepoint();
        const failed = claimed.orders.find((o) => o.id === error.licenseOrderId);
        const finished = await batches.fail(
          claimed.id,
          { licenseOrderId: error.licenseOrderId, reason: error.failure.message },
          `not applied: the order with sequence ${failed?.sequence ?? '?'} of this batch failed`,
        );
        await audit.record(actor, orderFinished(finished));
      }
      return true;
    });
  }

  private async replay(
    appId: string,
    batch: Batch,
    bodyHash: string,
  ): Promise<OrderResultItem[] | undefined> {
    const stored = await new OrderBatchesRepository(this.db).find(
      appId,
      batch.channelCode,
      batch.channelOrderId,
    );
    if (!stored) return undefined;
    if (stored.bodyHash !== bodyHash) {
      throw invalid('channelOrderId', `${batch.channelOrderId} was already used with a different body`);
    }
    return stored.result;
  }

  private async accept(
    trx: Db,
    app: OrderApp,
    batch: Batch,
    bodyHash: string,
    actor: AuditActor,
    received: unknown,
  ): Promise<OrderResultItem[]> {
    const batches = new OrderBatchesRepository(trx);
    const batchId = newGlobalId();
    const claimed = await batches.claim({
      id: batchId,
      appId: app.appId,
      channelCode: batch.channelCode,
      channelOrderId: batch.channelOrderId,
      bodyHash,
      syncMode: batch.syncMode,
      payload: batch.syncMode === 'async' ? batch : null,
      received,
      requestId: actor.requestId,
    });
    if (!claimed) throw new KeyTaken();

    // Customers are settled at acceptance in both modes, so an async answer names them too.
    const scope: OrderScope = { channels: app.channels, channelCode: batch.channelCode };
    const customerIds = await resolveCustomers(trx, scope, batch.orders);
    const accepted: AcceptedOrder[] = batch.orders.map((order, i) => ({
      order,
      licenseOrderId: newGlobalId(),
      customerId: customerIds[i] as string,
    }));
    await batches.insertOrders(
      accepted.map(({ order, licenseOrderId, customerId }) => ({
        id: licenseOrderId,
        batchId,
        appId: app.appId,
        channelCode: batch.channelCode,
        channelOrderId: batch.channelOrderId,
        sequence: order.sequence,
        customerId,
        orderType: order.orderType,
        licenseType: order.licenseType,
        srcLicenseOrderId: order.srcLicenseOrderId,
        status: batch.syncMode === 'sync' ? 'completed' : 'pending',
      })),
    );
    const result = accepted.map((a) => ({
      sequence: a.order.sequence,
      licenseOrderId: a.licenseOrderId,
      customerId: a.customerId,
    }));
    const acceptedAt = await batches.setResult(batchId, result);
    const changes =
      batch.syncMode === 'sync'
        ? await applyOrders(trx, this.assetNumbers, {
            appId: app.appId,
            channelCode: batch.channelCode,
            channelOrderId: batch.channelOrderId,
            acceptedAt: acceptedAt.getTime(),
            orders: accepted,
          })
        : [];
    await new AuditRepository(trx).record(actor, [...orderAccepted(batch, accepted), ...changes]);
    return result;
  }
}

function toApply(claimed: ClaimedBatch) {
  const bySequence = new Map(claimed.orders.map((o) => [o.sequence, o]));
  const orders: AcceptedOrder[] = [];
  for (const order of claimed.batch.orders) {
    const stored = bySequence.get(order.sequence);
    if (stored) orders.push({ order, licenseOrderId: stored.id, customerId: stored.customerId });
  }
  return {
    appId: claimed.appId,
    channelCode: claimed.batch.channelCode,
    channelOrderId: claimed.batch.channelOrderId,
    acceptedAt: claimed.acceptedAt,
    orders,
  };
}
