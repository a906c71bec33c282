import type { Db } from '../../db/client.js';
import { operatorActor, type OperatorRequest } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { AppsRepository } from '../apps/apps.repository.js';
import { isStorableInstant, STORABLE_INSTANTS } from '../shared/instants.js';
import {
  WebhookAdminRepository,
  type AdminDeliveryRow,
  type AdminEndpointRow,
  type DeliveryFilter,
  type DeliveryStatus,
} from './webhook-admin.repository.js';

/** The operator's mistake to fix (a bad range, a replay too large): 400, naming its field if one. */
export class WebhookAdminInputError extends Error {
  constructor(
    message: string,
    /** Which refusal it is, for a surface that words it in its own language (the console). */
    readonly reason: 'delivered' | 'badTime' | 'reversed' | 'tooMany',
    readonly field?: 'from' | 'to',
  ) {
    super(message);
  }
}
/** No such application, endpoint or delivery: 404. */
export class WebhookAdminNotFoundError extends Error {}

/** The most events one replay queues: a larger range is refused, to be replayed in parts. */
export const MAX_REPLAY_EVENTS = 10_000;

export interface RetriedDelivery {
  id: number;
  endpointId: string;
  eventId: string;
  previousStatus: DeliveryStatus;
  /** A disabled endpoint's deliveries wait until its app enables it again. */
  endpointStatus: string;
}

export interface Replayed {
  endpointId: string;
  appKey: string;
  from: string;
  to: string;
  queued: number;
  endpointStatus: string;
}

/** What the operator sees of, and does to, webhook endpoints and deliveries of every app. */
export class WebhookAdminService {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async listEndpoints(filter: { appKey?: string; limit: number }): Promise<AdminEndpointRow[]> {
    let appId: string | undefined;
    if (filter.appKey !== undefined) {
      appId = (await new AppsRepository(this.db).findByKey(filter.appKey))?.id;
      if (appId === undefined) throw new WebhookAdminNotFoundError(`no application ${filter.appKey}`);
    }
    return new WebhookAdminRepository(this.db).listEndpoints(
      appId === undefined ? {} : { appId },
      filter.limit,
    );
  }

  /** One endpoint as the list shows it. */
  async endpoint(id: string): Promise<AdminEndpointRow> {
    const [row] = await new WebhookAdminRepository(this.db).listEndpoints({ id }, 1);
    if (row === undefined) throw new WebhookAdminNotFoundError(`no endpoint ${id}`);
    return row;
  }

  async listDeliveries(filter: DeliveryFilter): Promise<AdminDeliveryRow[]> {
    const repo = new WebhookAdminRepository(this.db);
    if (filter.endpointId !== undefined && (await repo.findEndpoint(filter.endpointId)) === undefined) {
      throw new WebhookAdminNotFoundError(`no endpoint ${filter.endpointId}`);
    }
    return repo.listDeliveries(filter);
  }

  /**
   * Makes one delivery due now, a failed one too (it gets one more attempt; its retry window is not
   * reopened). A delivered one is refused: `replay` sends an event again.
   */
  async retry(deliveryId: number, request: OperatorRequest): Promise<RetriedDelivery> {
    return this.db.transaction().execute(async (trx) => {
      const repo = new WebhookAdminRepository(trx);
      const delivery = await repo.lockDelivery(deliveryId);
      if (delivery === undefined) throw new WebhookAdminNotFoundError(`no delivery ${deliveryId}`);
      if (delivery.status === 'delivered') {
        throw new WebhookAdminInputError(
          `delivery ${deliveryId} was delivered; to send its event again, replay its time range`,
          'delivered',
        );
      }
      await repo.makeDue(deliveryId, delivery.endpointId, new Date(this.now()));
      await new AuditRepository(trx).record(operatorActor(request), [
        {
          action: 'webhook.delivery_retried',
          subject: String(deliveryId),
          enterprise: null,
          detail: {
            endpointId: delivery.endpointId,
            eventId: delivery.eventId,
            previousStatus: delivery.status,
          },
        },
      ]);
      return {
        id: deliveryId,
        endpointId: delivery.endpointId,
        eventId: delivery.eventId,
        previousStatus: delivery.status,
        endpointStatus: delivery.endpointStatus,
      };
    });
  }

  /**
   * Queues again, to one endpoint, every event of [from, to) it receives by the outbox's own rule
   * (its filter, its app's channels, its app's own events): never an event its app is not entitled
   * to. At most MAX_REPLAY_EVENTS per call.
   */
  async replay(endpointId: string, from: Date, to: Date, request: OperatorRequest): Promise<Replayed> {
    for (const [field, time] of [
      ['from', from],
      ['to', to],
    ] as const) {
      if (!isStorableInstant(time)) {
        throw new WebhookAdminInputError(`${field}: must be ${STORABLE_INSTANTS}`, 'badTime', field);
      }
    }
    if (from.getTime() >= to.getTime()) {
      throw new WebhookAdminInputError('from: must be before to', 'reversed', 'from');
    }
    return this.db.transaction().execute(async (trx) => {
      const repo = new WebhookAdminRepository(trx);
      const endpoint = await repo.findEndpoint(endpointId);
      if (endpoint === undefined) throw new WebhookAdminNotFoundError(`no endpoint ${endpointId}`);
      const count = await repo.countReplayable(endpointId, from, to, MAX_REPLAY_EVENTS);
      if (count > MAX_REPLAY_EVENTS) {
        throw new WebhookAdminInputError(
          `more than ${MAX_REPLAY_EVENTS} events from ${from.toISOString()} to ${to.toISOString()}: ` +
            'replay a shorter range, in parts',
          'tooMany',
        );
      }
      const queued = await repo.replay(endpointId, from, to, new Date(this.now()), MAX_REPLAY_EVENTS);
      await new AuditRepository(trx).record(operatorActor(request), [
        {
          action: 'webhook.replayed',
          subject: endpointId,
          enterprise: null,
          detail: { appKey: endpoint.appKey, from: from.toISOString(), to: to.toISOString(), queued },
        },
      ]);
      return {
        endpointId,
        appKey: endpoint.appKey,
        from: from.toISOString(),
        to: to.toISOString(),
        queued,
        endpointStatus: endpoint.status,
      };
    });
  }
}
