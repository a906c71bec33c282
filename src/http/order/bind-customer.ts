import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { appActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { requireChannel } from '../guards/order-guard.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { Bounds, EnterpriseCustomer, OptionalText } from './enterprise-schemas.js';
import { ACCESS } from '../access/access.js';

const Body = Type.Object({
  channelCode: Type.String(Bounds.channelCode),
  channelCustomerId: Type.String(Bounds.channelCustomerId),
  customerName: OptionalText(Bounds.name),
  branchName: OptionalText(Bounds.branchName),
  enterpriseName: Type.String({ minLength: 1, ...Bounds.name }),
  passwordMobile: OptionalText(Bounds.passwordMobile),
});

/** Order op 1: bind a channel customer to an enterprise master account. */
export function bindCustomerRoute(app: App): void {
  app.post(
    '/enterprise/user/bind',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'bindEnterpriseUser',
        summary:
          "Give a channel's customer an enterprise of its own (bind customer to enterprise master account, order op 1)",
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: Envelope(EnterpriseCustomer) },
      },
    },
    async (request) => {
      requireChannel(appOf(request), request.body.channelCode);
      return ok(await app.services.enterprises.bind(request.body, appActor(request)));
    },
  );
}
