import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../domain/webhooks/webhook-admin.repository.js';
import { utcInstantOf } from './utc-time.js';
import { queryText } from '../form-fields.js';

export const WEBHOOKS = '/console/operator/webhooks';
/** As `GET /admin/webhooks/endpoints` takes an app key. */
export const APP_KEY_MAX = 100;

/** What the admin API takes as an endpoint id (ep_…) or a delivery id: anything else names none. */
export const isEndpointId = (value: string): boolean => /^[A-Za-z0-9_-]{1,64}$/.test(value);
export const isDeliveryId = (value: string): boolean => /^[1-9][0-9]{0,14}$/.test(value);

export const endpointHref = (id: string) => `${WEBHOOKS}/${encodeURIComponent(id)}`;

/** The endpoints page's query: an app key, or none for every app's endpoints. */
export function parseEndpointsQuery(query: { app?: unknown }): { app: string; tooLong: boolean } {
  const raw = typeof query.app === 'string' ? query.app.trim() : '';
  return { app: raw.slice(0, APP_KEY_MAX), tooLong: raw.length > APP_KEY_MAX };
}

export interface DeliveriesQuery {
  status?: string;
  before?: string;
  done?: string;
  delivery?: string;
  queued?: string;
}

/** An endpoint's deliveries page: the status filter ('' for any, 'bad' when not one) and the page. */
export function parseDeliveriesQuery(query: DeliveriesQuery): {
  status: DeliveryStatus | '' | 'bad';
  statusText: string;
  before: number | undefined;
} {
  const statusText = queryText(query.status, 20);
  const status =
    statusText === ''
      ? ''
      : (DELIVERY_STATUSES as readonly string[]).includes(statusText)
        ? (statusText as DeliveryStatus)
        : 'bad';
  const before = queryText(query.before, 20);
  return { status, statusText, before: isDeliveryId(before) ? Number(before) : undefined };
}

/** The replay form's two times, as typed, and which of them is not a date and time. */
export interface ReplayForm {
  from: string;
  to: string;
}

export function parseReplayForm(form: ReplayForm): {
  range?: { from: Date; to: Date };
  bad?: 'from' | 'to';
} {
  const from = utcInstantOf(form.from.trim());
  const to = utcInstantOf(form.to.trim());
  // An empty field is as bad as a wrong one: a replay needs both ends.
  if (from === undefined || from === 'bad') return { bad: 'from' };
  if (to === undefined || to === 'bad') return { bad: 'to' };
  return { range: { from, to } };
}
