import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { requestIdsOf } from '../audit-actor.js';
import { ACCESS } from '../access/access.js';

const Params = Type.Object({ appKey: Type.String({ minLength: 1, maxLength: 100 }) });
const RotateBody = Type.Object({ revokeTokens: Type.Optional(Type.Boolean()) });

/** `keyward app approve | disable KEY`, `keyward app rotate-secret KEY [--revoke-tokens]`. */
export function appActionRoutes(app: App): void {
  app.post(
    '/apps/:appKey/approve',
    { config: { access: ACCESS.adminKey }, schema: { params: Params } },
    async (request) => app.services.apps.approve(request.params.appKey, requestIdsOf(request)),
  );
  app.post(
    '/apps/:appKey/disable',
    { config: { access: ACCESS.adminKey }, schema: { params: Params } },
    async (request) => app.services.apps.disable(request.params.appKey, requestIdsOf(request)),
  );
  app.post(
    '/apps/:appKey/rotate-secret',
    {
      config: { access: ACCESS.adminKey },
      schema: { params: Params, body: RotateBody },
      // No body at all (older CLIs, plain curl) keeps the tokens, as before the option existed.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) =>
      app.services.apps.rotateSecret(
        request.params.appKey,
        { revokeTokens: request.body.revokeTokens === true },
        requestIdsOf(request),
      ),
  );
}
