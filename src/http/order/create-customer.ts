import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { appActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery, StringEnum } from '../schema-types.js';
import { Bounds, OptionalText } from './enterprise-schemas.js';
import { ACCESS } from '../access/access.js';

const Body = Type.Object({
  crmCustomerId: Type.String(Bounds.crmCustomerId),
  customerName: Type.String({ minLength: 1, ...Bounds.name }),
  branchName: OptionalText(Bounds.branchName),
  address: OptionalText(Bounds.address),
});

const Creation = Type.Object({
  enterpriseGlobalId: Type.String(),
  defaultType: Type.Boolean(),
  members: Type.Array(
    Type.Object({
      memberGlobalId: Type.String(),
      memberIdentity: StringEnum(['admin', 'member'] as const),
    }),
  ),
});

/** Order op 2: create an enterprise for a CRM (gongxin) customer, with its administrator and members. */
export function createCustomerRoute(app: App): void {
  app.post(
    '/enterprise/user/create',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'createEnterpriseUser',
        summary:
          'Create a customer and its enterprise (create industry-and-information customer, order op 2)',
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: Envelope(Creation) },
      },
    },
    async (request) =>
      ok(await app.services.enterprises.create(request.body, appOf(request).channels, appActor(request))),
  );
}
