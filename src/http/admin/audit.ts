import { Type } from 'typebox';
import { AUDIT_ACTIONS } from '../../domain/audit/audit-actions.js';
import { isStorableInstant, STORABLE_INSTANTS } from '../../domain/shared/instants.js';
import type { App } from '../app-type.js';
import { IntLike, StringEnum } from '../schema-types.js';
import { adminMay } from '../access/access.js';
import { AdminInputError } from './index.js';

const Id = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, description }));
const Instant = (description: string) => Type.Optional(Type.String({ format: 'date-time', description }));

const Query = Type.Object({
  subject: Type.Optional(Type.String({ maxLength: 200 })),
  enterprise: Id("an enterprise's global id, code or name (any case)"),
  app: Id("an app's id or key"),
  action: Type.Optional(StringEnum(AUDIT_ACTIONS)),
  since: Instant('ISO 8601 date-time: rows written at or after it'),
  until: Instant('ISO 8601 date-time: rows written before it'),
  before: Type.Optional(IntLike({ minimum: 1 })),
  limit: Type.Optional(IntLike({ minimum: 1, maximum: 1000 })),
});

/** A time of the filter, refused naming its field when the database could not compare it. */
function instantOf(text: string | undefined, field: 'since' | 'until'): Date | undefined {
  if (text === undefined) return undefined;
  const date = new Date(text);
  if (!isStorableInstant(date)) throw new AdminInputError(`${field}: must be ${STORABLE_INSTANTS}`);
  return date;
}

/**
 * `keyward audit`: the newest audit entries first, filtered by any of subject (an asset number,
 * an account…), enterprise, app, action and a time window. `before` pages: give the last id of a
 * page for the rows after it.
 */
export function auditRoute(app: App): void {
  app.get(
    '/audit',
    { config: { access: adminMay('audit') }, schema: { querystring: Query } },
    async (request) => {
      const { since, until, limit, ...filters } = request.query;
      return app.services.audit.list({
        ...filters,
        since: instantOf(since, 'since'),
        until: instantOf(until, 'until'),
        limit: limit ?? 100,
      });
    },
  );
}
