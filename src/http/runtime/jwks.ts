import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { StringEnum } from '../schema-types.js';
import { ACCESS } from '../access/access.js';

export const JWKS_PATH = '/.well-known/jwks.json';

const PublicKey = Type.Object({
  kty: StringEnum(['OKP'] as const),
  crv: StringEnum(['Ed25519'] as const),
  x: Type.String({ description: 'the public key, base64url' }),
  kid: Type.String({ description: "the key's RFC 7638 thumbprint; a lease's header names it" }),
  alg: StringEnum(['EdDSA'] as const),
  use: StringEnum(['sig'] as const),
});

const KeySet = Type.Object(
  { keys: Type.Array(PublicKey) },
  {
    description:
      'Every key that has signed offline leases, retired ones included: a lease signed before a rotation verifies until it expires',
  },
);

/**
 * The public keys that verify offline leases (RFC 7517). Public and cacheable: software fetches it
 * once and again only for a kid it does not know; a browser may fetch it from any origin.
 */
export function jwksRoute(app: App): void {
  app.get(
    JWKS_PATH,
    {
      config: { access: ACCESS.public },
      schema: {
        operationId: 'getLeaseKeys',
        summary: 'The public keys that verify offline leases (JWKS)',
        response: { 200: KeySet },
      },
    },
    async (_request, reply) => {
      const keys = await app.services.runtimeKeys.jwks();
      reply.header('cache-control', 'public, max-age=300');
      reply.header('access-control-allow-origin', '*');
      return keys;
    },
  );
}
