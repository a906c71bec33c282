import type { WebhookConfig } from '../../config.js';
import type { Db } from '../../db/client.js';
import { fillMessage, KeywardError } from '../../errors/keyward-error.js';
import { WebhookCode, webhookMessages } from '../../errors/webhook-codes.js';
import type { AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import {
  endpointCreated,
  endpointDeleted,
  endpointSecretRotated,
  endpointUpdated,
} from './endpoint-audit.js';
import { endpointHostProblem, endpointUrlProblem } from './endpoint-url.js';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES } from './event-types.js';
import { systemResolver, type Resolver } from './outbound.js';
import { newEndpointId, newEndpointSecret } from './secrets.js';
import { WebhookEndpointsRepository, type EndpointRecord } from './webhooks.repository.js';

export const MAX_ENDPOINTS_PER_APP = 20;
/** How long the previous secret still signs after a rotation, unless the call says otherwise. */
export const DEFAULT_OVERLAP_SECONDS = 24 * 3600;
export const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;

/** What the app sees of an endpoint. */
export interface EndpointView {
  id: string;
  url: string;
  /** null: every event type. */
  eventTypes: string[] | null;
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  consecutiveFailures: number;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function endpointView(e: EndpointRecord, now: number): EndpointView {
  const overlap = e.previousSecretUntil !== null && e.previousSecretUntil.getTime() > now;
  return {
    id: e.id,
    url: e.url,
    eventTypes: e.eventTypes,
    status: e.status,
    disabledReason: e.disabledReason,
    consecutiveFailures: e.consecutiveFailures,
    previousSecretExpiresAt: overlap ? (e.previousSecretUntil as Date).toISOString() : null,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}

function invalid(message: string): KeywardError {
  return new KeywardError(WebhookCode.validation, message);
}

function notFound(): KeywardError {
  return new KeywardError(WebhookCode.endpointNotFound, webhookMessages[WebhookCode.endpointNotFound]);
}

/**
 * An app's webhook endpoints: each call sees only the calling app's endpoints. Every change is
 * audited, with `actor` (the app and its request), in the change's own transaction; a refused
 * call writes nothing.
 */
export class WebhookEndpointsService {
  constructor(
    private readonly db: Db,
    private readonly config: WebhookConfig,
    private readonly now: () => number = Date.now,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  /** The URL's form and its host, resolved now; before any transaction, as the lookup may take a while. */
  private async checkUrl(url: string): Promise<string> {
    const problem =
      endpointUrlProblem(url, this.config) ?? (await endpointHostProblem(url, this.config, this.resolve));
    if (problem !== undefined) throw invalid(`url: ${problem}`);
    return url;
  }

  /** Unique, known types; null (every type) when absent. */
  private checkTypes(types: readonly string[] | null | undefined): string[] | null {
    if (types === undefined || types === null) return null;
    if (types.length === 0)
      throw invalid('eventTypes: must name at least one event type, or be left out for all');
    const unknown = types.find((t) => !isWebhookEventType(t));
    if (unknown !== undefined) {
      throw invalid(`eventTypes: ${JSON.stringify(unknown)} is not one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    }
    return [...new Set(types)];
  }

  /** The one call besides `rotateSecret` that answers the secret. */
  async create(
    appId: string,
    input: { url: string; eventTypes?: string[] | null },
    actor: AuditActor,
  ): Promise<EndpointView & { secret: string }> {
    const url = await this.checkUrl(input.url);
    const eventTypes = this.checkTypes(input.eventTypes);
    return this.db.transaction().execute(async (trx) => {
      const repo = new WebhookEndpointsRepository(trx);
      // Serializes one app's creates, so the bound holds when two race.
      await trx.selectFrom('apps').select('id').where('id', '=', appId).forUpdate().executeTakeFirst();
      if ((await repo.count(appId)) >= MAX_ENDPOINTS_PER_APP) {
        throw new KeywardError(
          WebhookCode.tooManyEndpoints,
          fillMessage(webhookMessages[WebhookCode.tooManyEndpoints], MAX_ENDPOINTS_PER_APP),
        );
      }
      const secret = newEndpointSecret();
      const created = await repo.insert({ id: newEndpointId(), appId, url, eventTypes, secret });
      await new AuditRepository(trx).record(actor, [endpointCreated(created)]);
      return { ...endpointView(created, this.now()), secret };
    });
  }

  async list(appId: string): Promise<EndpointView[]> {
    const now = this.now();
    return (await new WebhookEndpointsRepository(this.db).list(appId)).map((e) => endpointView(e, now));
  }

  async get(appId: string, id: string): Promise<EndpointView> {
    const found = await new WebhookEndpointsRepository(this.db).find(appId, id);
    if (found === undefined) throw notFound();
    return endpointView(found, this.now());
  }

  /** A new url or filter; `enabled: true` re-enables an endpoint the worker disabled. */
  async update(
    appId: string,
    id: string,
    input: { url?: string; eventTypes?: string[] | null; enabled?: boolean },
    actor: AuditActor,
  ): Promise<EndpointView> {
    const change = {
      ...(input.url === undefined ? {} : { url: await this.checkUrl(input.url) }),
      ...(input.eventTypes === undefined ? {} : { eventTypes: this.checkTypes(input.eventTypes) }),
      ...(input.enabled === true ? { enable: true } : {}),
    };
    const fields = [
      ...(change.url === undefined ? [] : (['url'] as const)),
      ...(change.eventTypes === undefined ? [] : (['eventTypes'] as const)),
      ...(change.enable === true ? (['enabled'] as const) : []),
    ];
    return this.db.transaction().execute(async (trx) => {
      const repo = new WebhookEndpointsRepository(trx);
      const before = await repo.lock(appId, id);
      if (before === undefined) throw notFound();
      const updated = await repo.update(appId, id, change);
      if (updated === undefined) throw notFound();
      await new AuditRepository(trx).record(actor, [endpointUpdated(before, updated, fields)]);
      return endpointView(updated, this.now());
    });
  }

  async delete(appId: string, id: string, actor: AuditActor): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const deleted = await new WebhookEndpointsRepository(trx).delete(appId, id);
      if (deleted === undefined) throw notFound();
      await new AuditRepository(trx).record(actor, [endpointDeleted(deleted)]);
    });
  }

  /** A new secret, answered once; the previous one also signs for `overlapSeconds`. */
  async rotateSecret(
    appId: string,
    id: string,
    overlapSeconds: number | undefined,
    actor: AuditActor,
  ): Promise<EndpointView & { secret: string }> {
    const overlap = overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP_SECONDS) {
      throw invalid(`overlapSeconds: must be a whole number from 0 to ${MAX_OVERLAP_SECONDS}`);
    }
    const secret = newEndpointSecret();
    const until = new Date(this.now() + overlap * 1000);
    return this.db.transaction().execute(async (trx) => {
      const rotated = await new WebhookEndpointsRepository(trx).rotate(appId, id, secret, until);
      if (rotated === undefined) throw notFound();
      await new AuditRepository(trx).record(actor, [endpointSecretRotated(rotated, overlap)]);
      return { ...endpointView(rotated, this.now()), secret };
    });
  }
}
