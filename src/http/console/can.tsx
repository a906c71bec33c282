import type { ComponentChildren } from 'preact';
import { mayAct, type Permission } from '../../domain/operators/roles.js';
import type { ConsoleContext } from './context.js';

/**
 * Whether the signed-in operator's role holds `permission`: a page shows only the controls whose
 * routes would let the operator act (the routes check it again; this only keeps a support
 * operator from being offered a button that answers 404). Enterprise pages have one role.
 */
export function may(context: ConsoleContext, permission: Permission): boolean {
  const { session } = context;
  return session?.kind !== 'operator' || mayAct([session.operator.role], permission);
}

/**
 * Whether the signed-in operator is offered the acts on `operatorId`'s account that would lock
 * them out or narrow what they may do (disable, a new role): not on their own account, which
 * another owner changes (the service refuses disabling oneself however it is asked). The admin
 * key's session names no operator, so is offered them everywhere.
 */
export function mayChangeOperator(context: ConsoleContext, operatorId: string): boolean {
  const { session } = context;
  return session?.kind !== 'operator' || session.operator.id !== operatorId;
}

/** Its children only where the operator may act so. */
export function Can(props: { context: ConsoleContext; permission: Permission; children: ComponentChildren }) {
  return may(props.context, props.permission) ? <>{props.children}</> : null;
}
