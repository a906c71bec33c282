import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { operatorActor } from '../../domain/audit/audit-actions.js';
import { adminMay } from '../access/access.js';
import { operatorRequestOf } from '../audit-actor.js';
import { ActivationBody, ReturnBody } from '../runtime/activation-schemas.js';
import { IntLike } from '../schema-types.js';

/** The operator acts through the admin API: audited as the admin API, with the request's ids. */
const adminActor = (request: Parameters<typeof operatorRequestOf>[0]) =>
  operatorActor(operatorRequestOf(request));

/**
 * `keyward leases activate REQUEST`, `keyward leases return CODE` and `keyward leases offline`:
 * offline activation by the operator (docs/activation.md), the same service as the console's.
 */
export function activationAdminRoutes(app: App): void {
  app.post(
    '/runtime/activations',
    { config: { access: adminMay('write'), multilineFields: ['request'] }, schema: { body: ActivationBody } },
    async (request) =>
      app.services.activation.activate(request.body.request, { via: 'admin', actor: adminActor(request) }),
  );
  app.post(
    '/runtime/activations/return',
    { config: { access: adminMay('write') }, schema: { body: ReturnBody } },
    async (request) =>
      app.services.activation.returnEarly(request.body.code, { via: 'admin', actor: adminActor(request) }),
  );
  app.get(
    '/runtime/offline-machines',
    {
      config: { access: adminMay('read') },
      schema: { querystring: Type.Object({ limit: Type.Optional(IntLike({ minimum: 1, maximum: 1000 })) }) },
    },
    async (request) =>
      (await app.services.activation.offlineMachines({ limit: request.query.limit ?? 200 })).map((m) => ({
        ...m,
        createdAt: m.createdAt.getTime(),
        expiresAt: m.expiresAt.getTime(),
        returnedAt: m.returnedAt?.getTime() ?? null,
      })),
  );
}
