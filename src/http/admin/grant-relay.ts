import { Type } from 'typebox';
import { operatorActor } from '../../domain/audit/audit-actions.js';
import { RELAY_REQUEST_MAX_CHARS } from '../../domain/relay/relay-request.js';
import type { App } from '../app-type.js';
import { adminMay } from '../access/access.js';
import { operatorRequestOf } from '../audit-actor.js';

const GrantBody = Type.Object({
  request: Type.String({
    minLength: 1,
    maxLength: RELAY_REQUEST_MAX_CHARS,
    description: 'the relay request file’s text, as `keyward relay init` wrote it (docs/relay.md)',
  }),
});

/**
 * `keyward relay grant REQUEST`: a relay's request answered with a pool grant, its seats held at
 * the vendor until the grant's end (docs/relay.md). The same request again answers the same grant.
 */
export function grantRelayRoute(app: App): void {
  app.post(
    '/relays/grants',
    { config: { access: adminMay('write') }, schema: { body: GrantBody } },
    async (request) =>
      app.services.relayGrants.grant(request.body.request, operatorActor(operatorRequestOf(request))),
  );
}
