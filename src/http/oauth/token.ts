import type { FastifyReply } from 'fastify';
import type { AppRecord } from '../../domain/apps/apps.repository.js';
import type { IssuedToken } from '../../domain/tokens/tokens.service.js';
import type { App } from '../app-type.js';
import { TOKEN_BODY_LIMIT_BYTES, tokenSchema } from './token-schema.js';
import { ACCESS } from '../access/access.js';

type OAuthError =
  | 'temporarily_unavailable'
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope';

function oauthError(reply: FastifyReply, error: OAuthError, description: string, status = 400) {
  if (error === 'invalid_client') reply.header('www-authenticate', 'Basic realm="keyward"');
  return reply.code(status).send({ error, error_description: description });
}

function field(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** RFC 6749 §2.3.1: client_id and client_secret are form-encoded inside the Basic credentials. */
function basicCredentials(header: string | undefined): [string, string] | undefined | 'malformed' {
  if (header === undefined) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match?.[1]) return 'malformed';
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    return [
      decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    ];
  } catch {
    return 'malformed';
  }
}

/** `POST /oauth2/token`: client_credentials for app tokens, password for a member's user token. */
export function tokenRoute(app: App): void {
  app.post(
    '/oauth2/token',
    { config: { access: ACCESS.public }, schema: tokenSchema, bodyLimit: TOKEN_BODY_LIMIT_BYTES },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const body =
        request.body !== null && typeof request.body === 'object'
          ? (request.body as Record<string, unknown>)
          : {};
      const basic = basicCredentials(request.headers.authorization);
      const bodyId = field(body, 'client_id');
      // Judged before anything is checked: every request counts against its address, and a client
      // that failed too often from there is answered unread.
      const limits = app.services.tokenLimits;
      const admission = await limits.admit(request.ip, Array.isArray(basic) ? basic[0] : bodyId);
      if (admission.limited) {
        reply.header('retry-after', String(admission.retryAfterSeconds));
        const what =
          admission.subject === 'client-address'
            ? 'failed token requests for this client from this address'
            : 'token requests from this address';
        const description = `too many ${what}; retry in ${admission.retryAfterSeconds} seconds`;
        return oauthError(reply, 'temporarily_unavailable', description, 429);
      }
      if (basic === 'malformed')
        return oauthError(reply, 'invalid_client', 'malformed Basic credentials', 401);
      const bodySecret = field(body, 'client_secret');
      if (basic !== undefined && (bodyId !== undefined || bodySecret !== undefined)) {
        return oauthError(reply, 'invalid_request', 'use one client authentication method, not two');
      }
      const [clientId, clientSecret] = basic ?? [bodyId, bodySecret];
      const grantType = field(body, 'grant_type');
      if (grantType === undefined) return oauthError(reply, 'invalid_request', 'grant_type is required');
      if (grantType !== 'client_credentials' && grantType !== 'password') {
        return oauthError(reply, 'unsupported_grant_type', `grant_type ${grantType} is not supported`);
      }
      if (clientId === undefined || clientSecret === undefined) {
        return oauthError(reply, 'invalid_client', 'client authentication required', 401);
      }
      const client = await app.services.apps.authenticate(clientId, clientSecret);
      if (!client) {
        await limits.failed(request.ip, clientId);
        return oauthError(reply, 'invalid_client', 'client authentication failed', 401);
      }

      if (grantType === 'client_credentials') {
        const scopes = requestedScopes(field(body, 'scope'), client);
        if (scopes === undefined) return oauthError(reply, 'invalid_scope', 'scope exceeds the application');
        return issued(reply, await app.services.tokens.issue({ app: client, scopes, memberId: null }));
      }

      if (!client.scopes.includes('auth_me')) {
        return oauthError(reply, 'unauthorized_client', 'the password grant needs scope auth_me');
      }
      const username = field(body, 'username');
      const password = field(body, 'password');
      if (username === undefined || password === undefined) {
        return oauthError(reply, 'invalid_request', 'username and password are required');
      }
      // An app restricted to its channels is answered as for a wrong password for any other
      // enterprise's member, as for an enterprise that does not exist, and counted as one.
      const outcome = (await app.services.apps.servesAccount(client, username))
        ? await app.services.login.verify(username, password, { ip: request.ip, appId: client.id })
        : ({ status: 'refused' } as const);
      if (outcome.status === 'locked') {
        return oauthError(reply, 'invalid_grant', 'too many failed attempts; try again later');
      }
      if (outcome.status === 'refused') {
        await limits.failed(request.ip, clientId);
        return oauthError(reply, 'invalid_grant', 'wrong account or password');
      }
      return issued(
        reply,
        await app.services.tokens.issue({ app: client, scopes: ['auth_me'], memberId: outcome.memberId }),
      );
    },
  );
}

function requestedScopes(scope: string | undefined, client: AppRecord): string[] | undefined {
  if (scope === undefined) return client.scopes;
  const wanted = scope.split(' ').filter((s) => s !== '');
  return wanted.every((s) => client.scopes.includes(s)) ? wanted : undefined;
}

/** No token when the client's secret was rotated, or its app disabled, while it was being answered. */
function issued(reply: FastifyReply, token: IssuedToken | undefined) {
  return token ?? oauthError(reply, 'invalid_client', 'client authentication failed', 401);
}
