import * as oidc from 'openid-client';
import type { SsoConfig } from '../../sso-config.js';

/**
 * How a talk with the provider failed, as the operator is told: `unavailable`, it could not be
 * reached (or answered 5xx); `refused`, it sent the browser back with an error of its own
 * (`access_denied`, say); `mismatch`, its answer does not belong to this sign-in (a code used
 * already or meant for another verifier, a wrong nonce or state); `bad_answer`, anything else it
 * said that cannot be accepted (a misconfigured client, an unsigned token).
 */
export type ProviderFailure = 'unavailable' | 'refused' | 'mismatch' | 'bad_answer';

/** Carries a short code for the log; never a token, a secret or the provider's whole answer. */
export class ProviderError extends Error {
  constructor(
    readonly failure: ProviderFailure,
    readonly code: string,
  ) {
    super(`single sign-on provider: ${failure} (${code})`);
    this.name = 'ProviderError';
  }
}

/** The provider's user, as its ID token (and userinfo, when the token lacks a claim) says. */
export interface ProviderUser {
  /** The issuer and the subject: unique across providers, stable across renames. */
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  /** The role claim as sent, for role-mapping.ts to read. */
  roleClaim: unknown;
}

export interface SsoChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Discovery is kept this long: endpoints rarely move; keys rotate through the JWKS on their own. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
/** Seconds one call to the provider may take: a browser is waiting on it. */
const CALL_TIMEOUT_SECONDS = 10;

const CLAIM_CHECKS: ReadonlySet<string> = new Set([
  'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
  'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
  'OAUTH_INVALID_RESPONSE',
]);

function statusOf(value: unknown): number | undefined {
  return value instanceof Response ? value.status : undefined;
}

/** What went wrong, from openid-client's errors (their messages stay out of pages). */
export function classify(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof oidc.AuthorizationResponseError) return new ProviderError('refused', error.error);
  if (error instanceof oidc.ResponseBodyError) {
    if (error.status >= 500) return new ProviderError('unavailable', `http ${error.status}`);
    return new ProviderError(error.error === 'invalid_grant' ? 'mismatch' : 'bad_answer', error.error);
  }
  if (error instanceof oidc.ClientError) {
    const code = error.code ?? 'client_error';
    if (code === 'OAUTH_TIMEOUT' || code === 'OAUTH_ABORT') return new ProviderError('unavailable', code);
    const status = statusOf(error.cause);
    if (status !== undefined && status >= 500) return new ProviderError('unavailable', `http ${status}`);
    return new ProviderError(CLAIM_CHECKS.has(code) ? 'mismatch' : 'bad_answer', code);
  }
  // fetch's own failure: refused connection, unknown host, reset.
  if (error instanceof TypeError) return new ProviderError('unavailable', 'unreachable');
  return new ProviderError('bad_answer', 'unexpected');
}

/**
 * The OpenID Connect provider, through openid-client: discovery (kept in memory, per process:
 * nothing that must agree between instances), the authorization URL with PKCE, and the code's
 * exchange with every check openid-client makes (state, nonce, issuer, audience, signature).
 */
export class OidcProviderClient {
  private discovered: { at: number; configuration: Promise<oidc.Configuration> } | undefined;

  constructor(private readonly settings: SsoConfig) {}

  private configuration(): Promise<oidc.Configuration> {
    const now = Date.now();
    if (this.discovered === undefined || now - this.discovered.at > DISCOVERY_TTL_MS) {
      const configuration = oidc
        .discovery(
          new URL(this.settings.issuer),
          this.settings.clientId,
          undefined,
          oidc.ClientSecretBasic(this.settings.clientSecret),
          {
            timeout: CALL_TIMEOUT_SECONDS,
            ...(this.settings.allowHttp ? { execute: [oidc.allowInsecureRequests] } : {}),
          },
        )
        .then((found) => {
          found.timeout = CALL_TIMEOUT_SECONDS;
          return found;
        });
      this.discovered = { at: now, configuration };
      // A failed discovery is not kept: the next sign-in tries again.
      configuration.catch(() => {
        if (this.discovered?.configuration === configuration) this.discovered = undefined;
      });
    }
    return this.discovered.configuration.catch((error: unknown) => {
      const failure = classify(error);
      throw failure.failure === 'mismatch' ? new ProviderError('bad_answer', failure.code) : failure;
    });
  }

  async authorizationUrl(checks: SsoChecks): Promise<URL> {
    const configuration = await this.configuration();
    try {
      return oidc.buildAuthorizationUrl(configuration, {
        redirect_uri: this.settings.redirectUrl,
        scope: this.settings.scopes,
        response_type: 'code',
        state: checks.state,
        nonce: checks.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
      });
    } catch (error) {
      throw classify(error);
    }
  }

  /** The user the provider vouches for, from the query the browser came back with. */
  async userOf(callbackQuery: string, checks: SsoChecks): Promise<ProviderUser> {
    const configuration = await this.configuration();
    // The URL the provider sent the browser to, as registered: not the Host header's idea of it.
    const current = new URL(this.settings.redirectUrl);
    current.search = callbackQuery;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (idClaims === undefined) throw new ProviderError('bad_answer', 'no_id_token');
      let claims: Record<string, unknown> = idClaims;
      // Many providers put only `sub` in the ID token and the rest behind userinfo.
      const lacking = [this.settings.roleClaim, 'email'].some((claim) => idClaims[claim] === undefined);
      if (lacking && configuration.serverMetadata().userinfo_endpoint !== undefined) {
        const userinfo = await oidc.fetchUserInfo(configuration, tokens.access_token, idClaims.sub);
        claims = { ...userinfo, ...idClaims };
      }
      const text = (value: unknown) =>
        typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
      return {
        subject: `${idClaims.iss} ${idClaims.sub}`,
        email: text(claims.email),
        emailVerified: claims.email_verified === true,
        name: text(claims.name),
        roleClaim: claims[this.settings.roleClaim],
      };
    } catch (error) {
      throw classify(error);
    }
  }
}
