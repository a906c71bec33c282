import type { OperatorRole } from '../../db/schema.js';

export type { OperatorRole };

export const OPERATOR_ROLES = [
  'owner',
  'admin',
  'support',
  'auditor',
] as const satisfies readonly OperatorRole[];

/**
 * What an operator's call may do, as a route declares it (http/access). A route names one; a role
 * is the set it holds. Kept coarse on purpose: a permission per kind of act, not per route, so a
 * route added later takes one of these and the role matrix does not grow with every route.
 */
export const PERMISSIONS = [
  /** Whether the server answers, its version and database: every role, so `keyward status` works. */
  'status',
  /** An operator's own personal tokens: every role (the admin key names no operator, so has none). */
  'self',
  /** Read the platform's data: apps, enterprises, leases, keys' public halves, webhooks. */
  'read',
  /** Change it: apps and their settings, enterprises' limits, members' passwords, activations. */
  'write',
  /** Send a failed webhook delivery again. */
  'retry',
  /** The audit log. */
  'audit',
  /** Seat usage over time: peaks, denials, utilization (read-only, as the audit log). */
  'usage',
  /** The runtime's signing keys: what every offline lease's trust rests on. */
  'keys',
  /** Backups: a copy of everything, the signing keys included. */
  'backup',
  /** Operators and their tokens. */
  'operators',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

/**
 * owner: everything. admin: everything but operators, signing keys and backups. support: reads,
 * and retrying webhook deliveries (and usage). auditor: the audit log and usage only.
 */
const GRANTS: Readonly<Record<OperatorRole, ReadonlySet<Permission>>> = {
  owner: new Set(PERMISSIONS),
  admin: new Set<Permission>(['status', 'self', 'read', 'write', 'retry', 'audit', 'usage']),
  support: new Set<Permission>(['status', 'self', 'read', 'retry', 'usage']),
  auditor: new Set<Permission>(['status', 'self', 'audit', 'usage']),
};

export function isOperatorRole(value: unknown): value is OperatorRole {
  return typeof value === 'string' && (OPERATOR_ROLES as readonly string[]).includes(value);
}

/**
 * Whether a caller holding every one of `roles` may act: a personal token is limited by its own
 * role and by its operator's role now (an operator demoted since keeps no more through old tokens).
 */
export function mayAct(roles: readonly OperatorRole[], permission: Permission): boolean {
  return roles.length > 0 && roles.every((role) => GRANTS[role].has(permission));
}

/** The permissions a role holds, in PERMISSIONS' order: for `keyward operator list` and the docs. */
export function permissionsOf(role: OperatorRole): Permission[] {
  return PERMISSIONS.filter((p) => GRANTS[role].has(p));
}
