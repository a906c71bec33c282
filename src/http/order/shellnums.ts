import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, IntLike, NonceQuery } from '../schema-types.js';
import { ACCESS } from '../access/access.js';

const Body = Type.Object({ size: IntLike({ minimum: 1, maximum: 1000 }) });

/** Order op 9: obtain asset numbers. */
export function shellnumsRoute(app: App): void {
  app.post(
    '/shellnums',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'obtainAssetNumbers',
        summary:
          'Reserve new asset numbers for assets to be ordered (obtain asset numbers: shellnums, order op 9)',
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: Envelope(Type.Array(Type.String({ pattern: '^[0-9]{10}$' }))) },
      },
    },
    async (request) => ok(await app.services.assetNumbers.issue(request.body.size, appOf(request).appId)),
  );
}
