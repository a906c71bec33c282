import { Type } from 'typebox';
import { SCOPES } from '../../domain/apps/apps.service.js';
import type { App } from '../app-type.js';
import { operatorRequestOf } from '../audit-actor.js';
import { adminMay } from '../access/access.js';

const Body = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: SCOPES.length }),
  channels: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
  pending: Type.Optional(Type.Boolean()),
});

/** `keyward app create`: the secret is in this answer and nowhere else, ever. */
export function createAppRoute(app: App): void {
  app.post('/apps', { config: { access: adminMay('write') }, schema: { body: Body } }, async (request) =>
    app.services.apps.create(
      {
        name: request.body.name,
        scopes: request.body.scopes,
        channels: request.body.channels ?? [],
        pending: request.body.pending ?? false,
      },
      operatorRequestOf(request),
    ),
  );
}
