import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ACCESS } from '../access/access.js';
import { runtimeActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { runtimeMember } from '../guards/runtime-guard.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { Activation, ActivationBody } from './activation-schemas.js';

/**
 * Runtime: a connected machine activates an offline one of its enterprise (docs/activation.md),
 * through the request's own app, for a member of the lock's enterprise (his userToken).
 */
export function activateRoute(app: App): void {
  app.post(
    '/activations',
    {
      config: { access: ACCESS.runtime, multilineFields: ['request'] },
      schema: {
        operationId: 'activateOfflineMachine',
        summary: "Turn an offline machine's activation request into a signed lease",
        querystring: Type.Object(NonceQuery),
        body: ActivationBody,
        response: { 200: Envelope(Activation) },
      },
    },
    async (request) =>
      ok(
        await app.services.activation.activate(request.body.request, {
          via: 'runtime',
          app: appOf(request),
          member: runtimeMember(request),
          actor: runtimeActor(request),
        }),
      ),
  );
}
