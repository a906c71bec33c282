import type { AuditAction } from '../audit/audit-actions.js';

/**
 * The closed list of webhook event types, each with the audit action(s) it is made from, the name
 * the audit row's subject takes in the event's data, and whether the event also belongs to one app
 * (the app that acted, or the app the event is about). Everything about events is defined here:
 * the outbox statement, the endpoint filter's validation and the API document read this list.
 */
export const WEBHOOK_EVENT_TYPES = [
  'order.accepted',
  'order.completed',
  'order.failed',
  'asset.locked',
  'asset.unlocked',
  'asset.assigned',
  'asset.unassigned',
  'asset.lent',
  'asset.returned',
  'member.created',
  'member.updated',
  'member.deleted',
  'enterprise.created',
  'app.disabled',
  'lease.denied',
  'lease.revoked',
  'lease.activated',
  'lease.returned',
  'license.expiring',
  'license.expired',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Which app an event of the type belongs to beside its channels: none, the actor, or the subject. */
export type EventApp = 'none' | 'actor' | 'detail.appId';

interface EventSource {
  type: WebhookEventType;
  subjectField: string;
  app: EventApp;
}

/** Audit actions that make an event; any other action makes none. */
export const EVENT_OF_ACTION: Partial<Record<AuditAction, EventSource>> = {
  'order.accepted': { type: 'order.accepted', subjectField: 'licenseOrderId', app: 'actor' },
  'order.completed': { type: 'order.completed', subjectField: 'licenseOrderId', app: 'actor' },
  'order.failed': { type: 'order.failed', subjectField: 'licenseOrderId', app: 'actor' },
  'asset.lock': { type: 'asset.locked', subjectField: 'assetNum', app: 'none' },
  'asset.unlock': { type: 'asset.unlocked', subjectField: 'assetNum', app: 'none' },
  'asset.assigned': { type: 'asset.assigned', subjectField: 'assetNum', app: 'none' },
  'asset.unassigned': { type: 'asset.unassigned', subjectField: 'assetNum', app: 'none' },
  'lending.lent': { type: 'asset.lent', subjectField: 'assetNum', app: 'none' },
  'lending.returned': { type: 'asset.returned', subjectField: 'assetNum', app: 'none' },
  // A lent lock ended by another change is back with its owner as much as a returned one is.
  'lending.ended': { type: 'asset.returned', subjectField: 'assetNum', app: 'none' },
  'member.added': { type: 'member.created', subjectField: 'account', app: 'none' },
  'member.edited': { type: 'member.updated', subjectField: 'account', app: 'none' },
  'member.deleted': { type: 'member.deleted', subjectField: 'account', app: 'none' },
  // Order ops 1 and 2 both make the enterprise a customer is bound to.
  'customer.created': { type: 'enterprise.created', subjectField: 'customerId', app: 'none' },
  'customer.bound': { type: 'enterprise.created', subjectField: 'customerId', app: 'none' },
  'app.disabled': { type: 'app.disabled', subjectField: 'appKey', app: 'detail.appId' },
  'lease.denied': { type: 'lease.denied', subjectField: 'holder', app: 'actor' },
  'lease.revoked': { type: 'lease.revoked', subjectField: 'assetNum', app: 'actor' },
  // The activated lease's app, whoever answered the request (an administrator, the operator).
  'lease.activated': { type: 'lease.activated', subjectField: 'assetNum', app: 'detail.appId' },
  'lease.returned': { type: 'lease.returned', subjectField: 'assetNum', app: 'detail.appId' },
  // The app that ordered the license, beside its customer's channel (src/domain/licenses).
  'license.expiring': { type: 'license.expiring', subjectField: 'assetNum', app: 'detail.appId' },
  'license.expired': { type: 'license.expired', subjectField: 'assetNum', app: 'detail.appId' },
};

type Schema = Record<string, unknown>;

const str = { type: 'string' };
const strOrNull = { type: ['string', 'null'] };
const int = { type: 'integer' };

function dataOf(required: string[], properties: Record<string, Schema>): Schema {
  // Open: a later version may add fields; receivers must ignore what they do not know.
  return { type: 'object', required, properties, additionalProperties: true };
}

const orderIds = { licenseOrderId: str, channelOrderId: str, sequence: int };
const assetIds = { assetNum: str, assetId: str };
const memberIds = { account: str, memberGlobalId: str };
const lending = { assetNum: str, lockAssetId: str, memberGlobalId: str };

/** A license: a product on an asset, ending at the earlier of the two's ends. */
const license = {
  assetNum: str,
  assetId: str,
  crmProductId: strOrNull,
  productUri: strOrNull,
  productName: strOrNull,
  limitConcurrent: { type: ['integer', 'null'] },
  endsAt: { type: 'string', format: 'date-time' },
  licenseOrderId: str,
  customerId: str,
  channelCode: strOrNull,
  appKey: strOrNull,
};

/** The JSON Schema of each type's `data`. */
export const EVENT_DATA_SCHEMAS: Record<WebhookEventType, Schema> = {
  'order.accepted': dataOf(['licenseOrderId'], {
    ...orderIds,
    channelCode: str,
    syncMode: { type: 'string', enum: ['sync', 'async'] },
    status: { type: 'string', enum: ['completed', 'pending'] },
    orderType: { type: ['integer', 'string'] },
    licenseType: { type: ['integer', 'string'] },
    customerId: str,
    assets: int,
    assetNumbers: int,
  }),
  'order.completed': dataOf(['licenseOrderId'], orderIds),
  'order.failed': dataOf(['licenseOrderId'], { ...orderIds, reason: str }),
  'asset.locked': dataOf(['assetNum'], { ...assetIds, locked: { const: true } }),
  'asset.unlocked': dataOf(['assetNum'], { ...assetIds, locked: { const: false } }),
  'asset.assigned': dataOf(['assetNum', 'memberGlobalId'], { ...assetIds, memberGlobalId: str }),
  'asset.unassigned': dataOf(['assetNum', 'memberGlobalId'], {
    ...assetIds,
    memberGlobalId: str,
    reason: str,
  }),
  'asset.lent': dataOf(['assetNum', 'lockAssetId'], { ...lending, assetIds: { type: 'array', items: str } }),
  'asset.returned': dataOf(['assetNum', 'lockAssetId'], { ...lending, reason: str }),
  'member.created': dataOf(['account', 'memberGlobalId'], {
    ...memberIds,
    departmentId: { type: ['integer', 'null'] },
  }),
  'member.updated': dataOf(['account', 'memberGlobalId'], {
    ...memberIds,
    fields: { type: 'array', items: str },
  }),
  'member.deleted': dataOf(['account', 'memberGlobalId'], { ...memberIds, assetsReleased: int }),
  'enterprise.created': dataOf(['customerId', 'enterpriseGlobalId'], {
    customerId: str,
    enterpriseGlobalId: str,
    enterpriseCode: str,
    channelCode: str,
    channelCustomerId: str,
    crmCustomerId: str,
  }),
  'app.disabled': dataOf(['appKey'], { appKey: str, previousStatus: str }),
  'lease.denied': dataOf(['holder', 'code'], {
    holder: str,
    code: int,
    reason: str,
    holderKind: { type: 'string', enum: ['member', 'lock'] },
    crmProductId: strOrNull,
    productUri: strOrNull,
    fingerprint: str,
  }),
  'lease.activated': dataOf(['assetNum', 'leaseId', 'expiresAt'], {
    assetNum: str,
    leaseId: str,
    crmProductId: str,
    appKey: str,
    days: int,
    expiresAt: str,
    via: { type: 'string', enum: ['console', 'operator', 'admin', 'runtime'] },
    fingerprint: str,
  }),
  'lease.returned': dataOf(['assetNum', 'leaseId'], { assetNum: str, leaseId: str, appKey: str, via: str }),
  'lease.revoked': dataOf(['assetNum', 'leaseId'], {
    assetNum: str,
    leaseId: str,
    reason: str,
    holderKind: { type: 'string', enum: ['member', 'lock'] },
    fingerprint: str,
  }),
  'license.expiring': dataOf(['assetNum', 'endsAt', 'daysBefore'], {
    ...license,
    daysBefore: { ...int, description: 'The LICENSE_EXPIRING_NOTICE_DAYS threshold this notice is for.' },
  }),
  'license.expired': dataOf(['assetNum', 'endsAt'], license),
};

/** The body every delivery carries: the same bytes on every attempt of one event. */
export function eventEnvelopeSchema(type: WebhookEventType): Schema {
  return {
    type: 'object',
    required: ['id', 'type', 'timestamp', 'scope', 'data', 'requestId'],
    properties: {
      id: { type: 'string', description: 'The event id; also the webhook-id header. Deduplicate by it.' },
      type: { const: type },
      timestamp: { type: 'string', format: 'date-time', description: 'When the change committed.' },
      scope: {
        type: 'object',
        required: ['channels', 'enterpriseId', 'appKey'],
        properties: {
          channels: { type: 'array', items: str, description: "The channels of the enterprise's customers." },
          enterpriseId: { ...strOrNull, description: "The enterprise's global id." },
          appKey: { ...strOrNull, description: 'The app the event belongs to, when it belongs to one.' },
        },
      },
      data: EVENT_DATA_SCHEMAS[type],
      requestId: {
        ...strOrNull,
        description: 'The id of the request that made the change; null for the async worker.',
      },
    },
  };
}

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}
