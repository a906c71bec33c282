import { Type } from 'typebox';
import { OPERATOR_ROLES } from '../../domain/operators/roles.js';
import type { App } from '../app-type.js';
import { adminMay } from '../access/access.js';
import { operatorRequestOf } from '../audit-actor.js';
import { StringEnum } from '../schema-types.js';

const Role = StringEnum(OPERATOR_ROLES);
const Name = Type.String({ minLength: 1, maxLength: 100 });
const Params = Type.Object({
  operator: Type.String({ minLength: 1, maxLength: 254, description: 'id or email' }),
});
const AddBody = Type.Object({ name: Name, email: Type.String({ minLength: 3, maxLength: 254 }), role: Role });
const RoleBody = Type.Object({ role: Role });
const RuleBody = Type.Object({ required: Type.Boolean() });

/**
 * `keyward operator add | list | role | disable | enable | reset | two-factor`: the operators of the platform.
 * Only an owner (or the admin key) manages them; every change is audited naming who made it.
 */
export function operatorRoutes(app: App): void {
  const manage = { config: { access: adminMay('operators') } };
  app.get('/operators', manage, async () => app.services.operators.list());
  app.post('/operators', { ...manage, schema: { body: AddBody } }, async (request) =>
    app.services.operators.add(request.body, operatorRequestOf(request)),
  );
  app.post(
    '/operators/:operator/role',
    { ...manage, schema: { params: Params, body: RoleBody } },
    async (request) =>
      app.services.operators.setRole(request.params.operator, request.body.role, operatorRequestOf(request)),
  );
  app.post('/operators/:operator/disable', { ...manage, schema: { params: Params } }, async (request) =>
    app.services.operators.setStatus(request.params.operator, 'disabled', operatorRequestOf(request)),
  );
  app.post('/operators/:operator/enable', { ...manage, schema: { params: Params } }, async (request) =>
    app.services.operators.setStatus(request.params.operator, 'active', operatorRequestOf(request)),
  );
  app.post('/operators/:operator/reset', { ...manage, schema: { params: Params } }, async (request) =>
    app.services.operators.resetPassword(request.params.operator, operatorRequestOf(request)),
  );
  // Every console session of the operator ends at once; their tokens stay.
  app.post(
    '/operators/:operator/sign-out-everywhere',
    { ...manage, schema: { params: Params } },
    async (request) =>
      app.services.operators.signOutEverywhere(request.params.operator, operatorRequestOf(request)),
  );
  // A lost authenticator: the operator's second factor and recovery codes are removed.
  app.post(
    '/operators/:operator/two-factor/reset',
    { ...manage, schema: { params: Params } },
    async (request) => {
      await app.services.twoFactor.reset(request.params.operator, operatorRequestOf(request));
      return { operator: request.params.operator, twoFactor: 'reset' };
    },
  );
  app.get('/operators/two-factor-rule', manage, async () => ({
    required: await app.services.twoFactor.required(),
  }));
  app.post(
    '/operators/two-factor-rule',
    { config: { ...manage.config, effect: 'whole-platform' }, schema: { body: RuleBody } },
    async (request) => {
      await app.services.twoFactor.setRequired(request.body.required, operatorRequestOf(request));
      return { required: request.body.required };
    },
  );
}
