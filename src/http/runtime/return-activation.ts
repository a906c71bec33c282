import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ACCESS } from '../access/access.js';
import { runtimeActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { runtimeMember } from '../guards/runtime-guard.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { Returned, ReturnBody } from './activation-schemas.js';

/** Runtime: hand back an offline machine's activated lease early, by its return code. */
export function returnActivationRoute(app: App): void {
  app.post(
    '/activations/return',
    {
      config: { access: ACCESS.runtime },
      schema: {
        operationId: 'returnActivatedLease',
        summary: 'Free the seat of an activated lease the machine deleted (where its app allows)',
        querystring: Type.Object(NonceQuery),
        body: ReturnBody,
        response: { 200: Envelope(Returned) },
      },
    },
    async (request) =>
      ok(
        await app.services.activation.returnEarly(request.body.code, {
          via: 'runtime',
          app: appOf(request),
          member: runtimeMember(request),
          actor: runtimeActor(request),
        }),
      ),
  );
}
