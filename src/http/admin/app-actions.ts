import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { operatorRequestOf } from '../audit-actor.js';
import { adminMay } from '../access/access.js';

const Params = Type.Object({ appKey: Type.String({ minLength: 1, maxLength: 100 }) });
/** The console's own client (keyward-console) is changed only with `force` (AppsService). */
const Force = Type.Optional(Type.Boolean({ description: 'needed to change keyward-console' }));
const DisableBody = Type.Object({ force: Force });
const RotateBody = Type.Object({ revokeTokens: Type.Optional(Type.Boolean()), force: Force });

/** No body at all (older CLIs, plain curl) is no option given, as before the options existed. */
const noBodyIsNoOption = async (request: { body: unknown }) => {
  request.body ??= {};
};

/**
 * `keyward app approve | disable KEY [--force]`, `keyward app rotate-secret KEY [--revoke-tokens]
 * [--force]`.
 */
export function appActionRoutes(app: App): void {
  app.post(
    '/apps/:appKey/approve',
    { config: { access: adminMay('write') }, schema: { params: Params } },
    async (request) => app.services.apps.approve(request.params.appKey, operatorRequestOf(request)),
  );
  app.post(
    '/apps/:appKey/disable',
    {
      config: { access: adminMay('write') },
      schema: { params: Params, body: DisableBody },
      preValidation: noBodyIsNoOption,
    },
    async (request) =>
      app.services.apps.disable(request.params.appKey, operatorRequestOf(request), {
        force: request.body.force === true,
      }),
  );
  app.post(
    '/apps/:appKey/rotate-secret',
    {
      config: { access: adminMay('write') },
      schema: { params: Params, body: RotateBody },
      // No body keeps the tokens, as before the option existed.
      preValidation: noBodyIsNoOption,
    },
    async (request) =>
      app.services.apps.rotateSecret(
        request.params.appKey,
        { revokeTokens: request.body.revokeTokens === true, force: request.body.force === true },
        operatorRequestOf(request),
      ),
  );
}
