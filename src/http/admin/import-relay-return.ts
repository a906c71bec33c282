import { Type } from 'typebox';
import { operatorActor } from '../../domain/audit/audit-actions.js';
import type { App } from '../app-type.js';
import { adminMay } from '../access/access.js';
import { operatorRequestOf } from '../audit-actor.js';

const ReturnBody = Type.Object({
  return: Type.String({
    minLength: 1,
    maxLength: 4096,
    description:
      'the return file’s text as `keyward relay return` wrote it, or its typed code (docs/relay.md)',
  }),
});

/**
 * `keyward relay import-return FILE`: a relay's signed return of its grant; the seats the grant
 * held are free to online check-outs at once.
 */
export function importRelayReturnRoute(app: App): void {
  app.post(
    '/relays/returns',
    { config: { access: adminMay('write') }, schema: { body: ReturnBody } },
    async (request) =>
      app.services.relayGrants.acceptReturn(request.body.return, operatorActor(operatorRequestOf(request))),
  );
}
