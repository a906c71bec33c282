import { Type } from 'typebox';
import { operatorActor } from '../../domain/audit/audit-actions.js';
import { GRANT_MAX_MACHINES } from '../../domain/relay/relay-grant.service.js';
import { RELAY_MAX_SEATS, RELAY_REQUEST_MAX_CHARS } from '../../domain/relay/relay-request.js';
import { Fingerprint } from '../runtime/runtime-schemas.js';
import type { App } from '../app-type.js';
import { adminMay } from '../access/access.js';
import { operatorRequestOf } from '../audit-actor.js';

const GrantBody = Type.Object({
  request: Type.String({
    minLength: 1,
    maxLength: RELAY_REQUEST_MAX_CHARS,
    description:
      'the relay request file’s text as `keyward relay init` wrote it, or its typed code (docs/relay.md)',
  }),
  machines: Type.Optional(
    Type.Union([Type.Null(), Type.Array(Fingerprint, { minItems: 1, maxItems: GRANT_MAX_MACHINES })], {
      description: 'the machines that may check out from the relay; left out or null: any machine',
    }),
  ),
  overage: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: RELAY_MAX_SEATS,
      description: 'check-outs each granted product may take past its seats, reported; 0: refuse them',
    }),
  ),
});

/**
 * `keyward relay grant REQUEST`: a relay's request answered with a pool grant, its seats held at
 * the vendor until the grant's end (docs/relay.md). The same request again answers the same grant.
 */
export function grantRelayRoute(app: App): void {
  app.post(
    '/relays/grants',
    { config: { access: adminMay('write') }, schema: { body: GrantBody } },
    async (request) => {
      const { request: text, machines, overage } = request.body;
      return app.services.relayGrants.grant(
        text,
        operatorActor(operatorRequestOf(request)),
        {},
        { ...(machines === undefined ? {} : { machines }), ...(overage === undefined ? {} : { overage }) },
      );
    },
  );
}
