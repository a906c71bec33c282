import { Type } from 'typebox';

/**
 * The token endpoint's largest body. Its fields are a few short strings; a larger body is refused
 * before it is read in full, let alone parsed or its client authenticated.
 */
export const TOKEN_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The token endpoint's body, form-encoded or JSON. Only grant_type is required here: which other
 * fields a grant needs, and the RFC 6749 error for a missing one, is the handler's decision.
 */
export const TokenRequest = Type.Object({
  grant_type: Type.String({ description: '`client_credentials` (app token) or `password` (member token)' }),
  client_id: Type.Optional(Type.String({ description: 'appKey, when not sent with HTTP Basic' })),
  client_secret: Type.Optional(Type.String({ description: 'appSecret, when not sent with HTTP Basic' })),
  scope: Type.Optional(
    Type.String({ description: 'client_credentials: space-separated subset of the app scopes' }),
  ),
  username: Type.Optional(
    Type.String({ description: 'password grant: the member account, user@enterpriseCode' }),
  ),
  password: Type.Optional(Type.String({ description: "password grant: the member's password" })),
});

export const TokenAnswer = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('bearer'),
    expires_in: Type.Integer({ description: 'seconds' }),
    scope: Type.String({ description: 'space-separated scopes the token carries' }),
  },
  { description: 'The token; answered with Cache-Control: no-store' },
);

/** RFC 6749 §5.2. */
const OAuthErrorAnswer = (description: string) =>
  Type.Object(
    {
      error: Type.String({
        description:
          'invalid_request, invalid_client, invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope, temporarily_unavailable (rate limited) or server_error',
      }),
      error_description: Type.String(),
    },
    { description },
  );

export const tokenSchema = {
  operationId: 'requestToken',
  summary: 'Obtain an app token (client_credentials) or a member token (password)',
  description:
    'RFC 6749. The client authenticates with HTTP Basic `appKey:appSecret` or with client_id and client_secret in the body; the body is form-encoded or JSON. The password grant needs an application with scope auth_me and answers a token bound to that application.',
  consumes: ['application/x-www-form-urlencoded', 'application/json'],
  body: TokenRequest,
  response: {
    200: TokenAnswer,
    400: OAuthErrorAnswer('RFC 6749 §5.2 error'),
    401: OAuthErrorAnswer('Client authentication failed (invalid_client)'),
    413: OAuthErrorAnswer(`A body over ${TOKEN_BODY_LIMIT_BYTES} bytes (invalid_request)`),
    429: OAuthErrorAnswer(
      'Too many token requests this minute for the client_id or from the address (temporarily_unavailable); Retry-After says when to try again',
    ),
    500: OAuthErrorAnswer('A fault of the server (server_error)'),
  },
};
