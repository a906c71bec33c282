import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { requireChannel } from '../guards/order-guard.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery, StringEnum } from '../schema-types.js';
import { Bounds, ListedEnterpriseCustomer } from './enterprise-schemas.js';
import { ACCESS } from '../access/access.js';

const Query = Type.Object({
  ...NonceQuery,
  channelCode: Type.String(Bounds.channelCode),
  channelCustomerId: Type.String(Bounds.channelCustomerId),
  defaultCustomer: Type.Optional(StringEnum(['Y', 'N'] as const)),
});

/** Order op 3: the enterprise of a channel customer, with its default or all of its customers. */
export function queryEnterprisesRoute(app: App): void {
  app.get(
    '/enterprise/user/query',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'queryEnterpriseUser',
        summary: 'Find the enterprises a customer is bound to (query enterprise master accounts, order op 3)',
        querystring: Query,
        response: { 200: Envelope(Type.Array(ListedEnterpriseCustomer)) },
      },
    },
    async (request) => {
      const principal = appOf(request);
      const { channelCode, channelCustomerId, defaultCustomer } = request.query;
      requireChannel(principal, channelCode);
      return ok(
        await app.services.enterprises.query(
          { channelCode, channelCustomerId, defaultOnly: defaultCustomer === 'Y' },
          principal.channels,
        ),
      );
    },
  );
}
