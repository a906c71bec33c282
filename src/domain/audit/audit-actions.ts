/**
 * Every action the audit log records, the one closed list: rows are written only with these names
 * and `GET /admin/audit?action=` accepts only these. `asset.lock` and `asset.unlock` keep the names
 * rows have always had, so older rows still answer a filter.
 */
export const AUDIT_ACTIONS = [
  // The operator's admin API.
  'app.created',
  'app.approved',
  'app.disabled',
  'app.secret_rotated',
  'app.offline_lease_days_set',
  'app.offline_early_return_set',
  'app.channel_restriction_set',
  'app.rate_limit_set',
  'enterprise.member_limit_set',
  'member.password_set',
  'runtime_key.rotated',
  // Operators and their personal API tokens (never a password or a token itself).
  'operator.added',
  'operator.role_set',
  'operator.disabled',
  'operator.enabled',
  'operator.password_reset',
  'operator.password_changed',
  'operator.signed_in',
  'operator.sign_in_failed',
  // Single sign-on: an operator made at first sign-in, or an existing one tied to the provider's user.
  'operator.sso_provisioned',
  'operator.sso_linked',
  'operator.two_factor_enabled',
  'operator.two_factor_disabled',
  'operator.two_factor_reset',
  'operator.recovery_code_used',
  // Too many wrong second-factor codes on one account: its second-factor step is locked a while.
  'operator.second_factor_locked',
  // Every console session of the operator ended at once (their own choice, or an owner's).
  'operator.signed_out_everywhere',
  'platform.two_factor_required',
  'operator_token.created',
  'operator_token.revoked',
  // Order service ops 1, 2 and 4.
  'customer.bound',
  'customer.created',
  'customer.updated',
  // Order op 5, and the async worker's outcome of each accepted order.
  'order.accepted',
  'order.completed',
  'order.failed',
  // Order ops 6–7.
  'asset.lock',
  'asset.unlock',
  // Member ops 1–4 (and the members order op 2 provisions).
  'member.added',
  'member.edited',
  'member.password_reset',
  'member.deleted',
  // Member op 9, and assets given back by a deleted member.
  'asset.assigned',
  'asset.unassigned',
  // Member op 10, its return, and lent locks released by other changes.
  'lending.lent',
  'lending.returned',
  'lending.ended',
  // The web console's sign-ins and sign-outs (operator and enterprise administrators).
  'console.signed_in',
  'console.signed_out',
  // The license runtime: check-outs refused, and leases a heartbeat found withdrawn.
  'lease.denied',
  'lease.revoked',
  // Offline activation: a request turned into a lease, and a machine's early return of one.
  'lease.activated',
  'lease.returned',
  // Relays: a pool grant answered to a relay's request (docs/relay.md).
  'relay.granted',
  'relay.reported',
  'relay.returned',
  // Renewals: a license near its end (at each of LICENSE_EXPIRING_NOTICE_DAYS), and one whose end passed.
  'license.expiring',
  'license.expired',
  // Webhooks: an endpoint that kept failing, disabled by the delivery worker.
  'endpoint.disabled',
  // Webhooks: the operator's repairs through the admin API.
  'webhook.delivery_retried',
  'webhook.replayed',
  // Webhooks: an app's changes to its own endpoints through /v1/webhooks (never a secret).
  'webhook.endpoint_created',
  'webhook.endpoint_updated',
  'webhook.endpoint_deleted',
  'webhook.endpoint_secret_rotated',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who made a change and through which request: what every audit row of one change shares. */
export interface AuditActor {
  /** The calling app; null for the operator. */
  appId: string | null;
  /** The operator, the lock call's `operatorIdentity`, or the member-center caller's account. */
  operator: string | null;
  /** The named operator's id when one acted (a personal token); `operator` then holds the name. */
  operatorId?: string | null;
  /** The server's own id of the request; null for the async worker. */
  requestId: string | null;
  /** The id the caller sent, when sane; the caller's word only. */
  clientRequestId: string | null;
}

/** The `operator` of changes made through the admin API (its one key names no person). */
export const ADMIN_OPERATOR = 'admin-api';

export type RequestIds = Pick<AuditActor, 'requestId' | 'clientRequestId'>;

/** What a change made outside any request (a script, a test) records as its request. */
export const NO_REQUEST: RequestIds = { requestId: null, clientRequestId: null };

/**
 * An operator's request; `operator` names the surface it came through (the console names itself)
 * or, with `operatorId`, the named operator who made it.
 */
export type OperatorRequest = RequestIds & { operator?: string; operatorId?: string | null };

/** The operator, through the admin API unless the request names another surface: no app acts. */
export function operatorActor(ids: OperatorRequest): AuditActor {
  return {
    appId: null,
    operator: ids.operator ?? ADMIN_OPERATOR,
    operatorId: ids.operatorId ?? null,
    requestId: ids.requestId,
    clientRequestId: ids.clientRequestId,
  };
}

/**
 * A worker acts for an app outside any request: the async order worker for the app that sent the
 * batch, naming the request that placed it (its completion is that request's doing).
 */
export function workerActor(appId: string, requestId: string | null = null): AuditActor {
  return { appId, operator: null, requestId, clientRequestId: null };
}

/**
 * What changed, kept small and flat. Ids, names, counts and flags only: never a secret, password,
 * hash or token, and no free text a caller could make large.
 */
export type AuditDetail = Record<string, string | number | boolean | null | string[]>;

/** The enterprise a change belongs to: known, or the one of a customer (looked up as it is written). */
export type AuditEnterprise = { id: number } | { customerOf: string } | null;

/** One row to write, beside the actor's columns. */
export interface AuditChange {
  action: AuditAction;
  /** The main id: asset number, member account, license order id, app key… */
  subject: string;
  enterprise: AuditEnterprise;
  detail: AuditDetail;
}
