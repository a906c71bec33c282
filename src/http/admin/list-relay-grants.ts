import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { IntLike } from '../schema-types.js';
import { adminMay } from '../access/access.js';

const Query = Type.Object({ limit: Type.Optional(IntLike({ minimum: 1, maximum: 500 })) });

/** `keyward relay list`: the newest grants, their seats, ends and their relays' last reports. */
export function listRelayGrantsRoute(app: App): void {
  app.get(
    '/relays/grants',
    { config: { access: adminMay('read') }, schema: { querystring: Query } },
    async (request) => ({
      grants: await app.services.relayGrants.list({ limit: request.query.limit ?? 100 }),
    }),
  );
}
