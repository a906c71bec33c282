import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

/** A user of the test provider: its login is `id` (any password), its claims these. */
export interface ProviderUser {
  id: string;
  name: string;
  email?: string;
  emailVerified: boolean;
  groups: string[];
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/**
 * A real OpenID Connect provider (oidc-provider) on a random local port: one confidential client
 * that must use PKCE and the code flow, the given users, and its development login pages (any
 * password), which the tests fill in as a browser would.
 */
export async function startTestProvider(users: ProviderUser[], redirectUri: string): Promise<TestProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'keyward-test';
  const clientSecret = 'keyward-test-client-secret-0123456789abcdef';
  const byId = new Map(users.map((user) => [user.id, user]));
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    // The claims of the granted scopes in the ID token itself, as many providers send groups.
    conformIdTokenClaims: false,
    cookies: { keys: ['test-provider-cookie-key-0123456789'] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx, id) => {
      const user = byId.get(id);
      if (user === undefined) return undefined;
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          name: user.name,
          ...(user.email === undefined ? {} : { email: user.email, email_verified: user.emailVerified }),
          groups: user.groups,
        }),
      };
    },
  };
  const provider = new Provider(issuer, configuration);
  server.on('request', provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
