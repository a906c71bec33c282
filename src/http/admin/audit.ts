import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { IntLike } from '../schema-types.js';

const Query = Type.Object({
  subject: Type.Optional(Type.String({ maxLength: 200 })),
  limit: Type.Optional(IntLike({ minimum: 1, maximum: 1000 })),
});

/** `keyward audit`: the newest audit entries, optionally for one subject (an asset number…). */
export function auditRoute(app: App): void {
  app.get('/audit', { schema: { querystring: Query } }, async (request) =>
    app.services.audit.list({
      ...(request.query.subject === undefined ? {} : { subject: request.query.subject }),
      limit: request.query.limit ?? 100,
    }),
  );
}
