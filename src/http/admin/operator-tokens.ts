import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  OperatorInputError,
  TOKEN_DAYS_MAX,
  type TokenMaker,
} from '../../domain/operators/operators.service.js';
import { OPERATOR_ROLES } from '../../domain/operators/roles.js';
import type { App } from '../app-type.js';
import { adminMay } from '../access/access.js';
import { operatorRequestOf } from '../audit-actor.js';
import { operatorOf } from '../guards/principal.js';
import { IntLike, StringEnum } from '../schema-types.js';

const Params = Type.Object({
  operator: Type.String({ minLength: 1, maxLength: 254, description: 'id or email' }),
});
const TokenParams = Type.Object({ tokenId: Type.String({ minLength: 1, maxLength: 100 }) });
const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  role: Type.Optional(StringEnum(OPERATOR_ROLES)),
  days: Type.Optional(IntLike({ minimum: 1, maximum: TOKEN_DAYS_MAX })),
});

/** The operator the call speaks for: the admin key names none, so has no tokens of its own. */
function self(request: FastifyRequest): string {
  const { operatorId } = operatorOf(request);
  if (operatorId === null) {
    throw new OperatorInputError(
      'the admin key names no operator: name one (keyward operator token create --operator EMAIL)',
    );
  }
  return operatorId;
}

/** The calling credential, which bounds the token it makes (OperatorsService.createToken). */
function maker(request: FastifyRequest): TokenMaker {
  const { roles, tokenId } = operatorOf(request);
  return { roles, tokenId };
}

/**
 * Personal API tokens. An operator creates, lists and revokes his own (`/operators/me/tokens`,
 * every role); an owner does so for any operator, automation accounts included.
 */
export function operatorTokenRoutes(app: App): void {
  const own = { config: { access: adminMay('self') } };
  const manage = { config: { access: adminMay('operators') } };
  app.get('/operators/me', own, async (request) => {
    const principal = operatorOf(request);
    return { operatorId: principal.operatorId, name: principal.name, roles: principal.roles };
  });
  // Every console session of the calling operator ends; the token asking stays.
  app.post('/operators/me/sign-out-everywhere', own, async (request) =>
    app.services.operators.signOutEverywhere(self(request), operatorRequestOf(request)),
  );
  app.get('/operators/me/tokens', own, async (request) => app.services.operators.tokens(self(request)));
  app.post('/operators/me/tokens', { ...own, schema: { body: CreateBody } }, async (request) =>
    app.services.operators.createToken(
      self(request),
      request.body,
      maker(request),
      operatorRequestOf(request),
    ),
  );
  app.post(
    '/operators/me/tokens/:tokenId/revoke',
    { ...own, schema: { params: TokenParams } },
    async (request) =>
      app.services.operators.revokeToken(request.params.tokenId, self(request), operatorRequestOf(request)),
  );
  app.get('/operators/:operator/tokens', { ...manage, schema: { params: Params } }, async (request) =>
    app.services.operators.tokens(request.params.operator),
  );
  app.post(
    '/operators/:operator/tokens',
    { ...manage, schema: { params: Params, body: CreateBody } },
    async (request) =>
      app.services.operators.createToken(
        request.params.operator,
        request.body,
        maker(request),
        operatorRequestOf(request),
      ),
  );
  app.post(
    '/operator-tokens/:tokenId/revoke',
    { ...manage, schema: { params: TokenParams } },
    async (request) =>
      app.services.operators.revokeToken(request.params.tokenId, null, operatorRequestOf(request)),
  );
}
