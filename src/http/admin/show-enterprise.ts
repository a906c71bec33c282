import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { Nullable } from '../schema-types.js';
import { AdminNotFoundError } from './index.js';
import { adminMay } from '../access/access.js';

const Params = Type.Object({ enterpriseGlobalId: Type.String({ minLength: 1, maxLength: 100 }) });

const EnterpriseView = Type.Object({
  enterpriseGlobalId: Type.String(),
  enterpriseName: Type.String(),
  enterpriseCode: Type.String(),
  adminAccount: Nullable(Type.String()),
});

/** `keyward enterprise show ID`: how an operator learns the administrator's account. */
export function showEnterpriseRoute(app: App): void {
  app.get(
    '/enterprises/:enterpriseGlobalId',
    { config: { access: adminMay('read') }, schema: { params: Params, response: { 200: EnterpriseView } } },
    async (request) => {
      const view = await app.services.enterprises.show(request.params.enterpriseGlobalId);
      if (!view) throw new AdminNotFoundError(`no enterprise ${request.params.enterpriseGlobalId}`);
      return view;
    },
  );
}
