import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { IntLike } from '../schema-types.js';
import { adminMay } from '../access/access.js';

const Query = Type.Object({
  app: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'an appKey' })),
  assetNum: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  product: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'crmProductId or productUri' }),
  ),
  all: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('0')])),
  limit: Type.Optional(IntLike({ minimum: 1, maximum: 1000 })),
});

/** `keyward leases`: runtime leases, newest first; live ones unless `all=1`. */
export function listLeasesRoute(app: App): void {
  app.get(
    '/runtime/leases',
    { config: { access: adminMay('read') }, schema: { querystring: Query } },
    async (request) => {
      const q = request.query;
      const leases = await app.services.runtime.list({
        ...(q.app === undefined ? {} : { appKey: q.app }),
        ...(q.assetNum === undefined ? {} : { assetNum: q.assetNum }),
        ...(q.product === undefined ? {} : { product: q.product }),
        live: q.all !== '1',
        limit: q.limit ?? 100,
      });
      return leases.map((l) => ({
        ...l,
        createdAt: l.createdAt.getTime(),
        heartbeatAt: l.heartbeatAt.getTime(),
        expiresAt: l.expiresAt.getTime(),
        endedAt: l.endedAt?.getTime() ?? null,
        usedSeconds: Math.floor(l.usedMs / 1000),
      }));
    },
  );
}
