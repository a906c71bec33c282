import type { AuditActor, AuditChange } from '../audit/audit-actions.js';
import { EVENT_OF_ACTION, type WebhookEventType } from './event-types.js';

export interface OutboxEvent {
  type: WebhookEventType;
  /** The app the event belongs to beside its channels' apps. */
  app: string | null;
  data: Record<string, unknown>;
}

/** The webhook event an audit row makes, if any: its subject named, its detail as the data. */
export function eventOf(actor: AuditActor, change: AuditChange): OutboxEvent | undefined {
  const source = EVENT_OF_ACTION[change.action];
  if (source === undefined) return undefined;
  const { appId, ...detail } = change.detail;
  const app =
    source.app === 'actor'
      ? actor.appId
      : source.app === 'detail.appId' && typeof appId === 'string'
        ? appId
        : null;
  // The app's internal id stays inside: receivers know apps by key.
  const data = source.app === 'detail.appId' ? detail : change.detail;
  // A named operator who caused the event is named in it, as in the audit log (id and name).
  const operator =
    actor.operatorId === undefined || actor.operatorId === null
      ? {}
      : { operator: { id: actor.operatorId, name: actor.operator } };
  return { type: source.type, app, data: { [source.subjectField]: change.subject, ...data, ...operator } };
}
