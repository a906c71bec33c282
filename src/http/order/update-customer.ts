import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { appActor } from '../audit-actor.js';
import { okNoData } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { EnvelopeNoData, NonceQuery } from '../schema-types.js';
import { Bounds, OptionalText } from './enterprise-schemas.js';
import { ACCESS } from '../access/access.js';

const Body = Type.Object({
  crmCustomerId: Type.String(Bounds.crmCustomerId),
  customerName: OptionalText(Bounds.name),
  branchName: OptionalText(Bounds.branchName),
  address: OptionalText(Bounds.address),
});

/** Order op 4: update the name, branch and address of the customer of a CRM id. */
export function updateCustomerRoute(app: App): void {
  app.post(
    '/enterprise/user/update',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'updateEnterpriseUser',
        summary: "Change a customer's name and details (update enterprise customer information, order op 4)",
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: EnvelopeNoData },
      },
    },
    async (request) => {
      await app.services.customers.updateByCrm(request.body, appOf(request).channels, appActor(request));
      return okNoData();
    },
  );
}
