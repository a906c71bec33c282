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

/** Its children only where the operator may act so. */
export function Can(props: { context: ConsoleContext; permission: Permission; children: ComponentChildren }) {
  return may(props.context, props.permission) ? <>{props.children}</> : null;
}
