import type { AuditChange, AuditDetail } from '../audit/audit-actions.js';
import type { EndpointRecord } from './webhooks.repository.js';

// The audit rows of an app's changes to its own endpoints. None makes a webhook event (they are
// not in event-types.ts): the app made the change through its own call and has the answer.

/**
 * Where an endpoint sends, as the audit log keeps it: the host only. A receiver's path or query
 * often is its credential (a token in the URL), and the log keeps no secret.
 */
function hostOf(url: string): string {
  return new URL(url).host;
}

function change(action: AuditChange['action'], endpointId: string, detail: AuditDetail): AuditChange {
  return { action, subject: endpointId, enterprise: null, detail };
}

export function endpointCreated(e: EndpointRecord): AuditChange {
  return change('webhook.endpoint_created', e.id, { host: hostOf(e.url), eventTypes: e.eventTypes });
}

/** `fields`: those the call set, each with its new value (and the host it had, or the status). */
export function endpointUpdated(
  before: EndpointRecord,
  after: EndpointRecord,
  fields: ReadonlyArray<'url' | 'eventTypes' | 'enabled'>,
): AuditChange {
  return change('webhook.endpoint_updated', after.id, {
    fields: [...fields],
    ...(fields.includes('url') ? { host: hostOf(after.url), previousHost: hostOf(before.url) } : {}),
    ...(fields.includes('eventTypes') ? { eventTypes: after.eventTypes } : {}),
    ...(fields.includes('enabled') ? { previousStatus: before.status } : {}),
  });
}

export function endpointDeleted(e: EndpointRecord): AuditChange {
  return change('webhook.endpoint_deleted', e.id, { host: hostOf(e.url), eventTypes: e.eventTypes });
}

export function endpointSecretRotated(e: EndpointRecord, overlapSeconds: number): AuditChange {
  return change('webhook.endpoint_secret_rotated', e.id, { overlapSeconds });
}
