import type { OperatorRole } from './db/schema.js';
import { isLoopbackHost } from './config.js';

/** The path the provider sends the browser back to: the route that finishes the sign-in. */
export const SSO_CALLBACK_PATH = '/console/operator/sso/callback';

/** Single sign-on for operators with OpenID Connect (docs/operators.md, "Single sign-on"). */
export interface SsoConfig {
  /** OIDC_ISSUER: the provider's issuer URL, whose discovery document names its endpoints. */
  issuer: string;
  /** OIDC_CLIENT_ID and OIDC_CLIENT_SECRET: Keyward's registration at the provider. Never logged. */
  clientId: string;
  clientSecret: string;
  /**
   * OIDC_REDIRECT_URL: where the provider sends the browser back, exactly as registered there.
   * Required rather than derived from the request: the Host header is the caller's word, and
   * behind a proxy the address Keyward sees is not the one the browser used.
   */
  redirectUrl: string;
  /** OIDC_ROLE_CLAIM: the claim (ID token or userinfo) listing the user's groups. */
  roleClaim: string;
  /** OIDC_ROLE_MAP: group → role; a user in several mapped groups gets the widest role. */
  roleMap: ReadonlyMap<string, OperatorRole>;
  /** OIDC_SCOPES: what the authorization request asks for (always with `openid`). */
  scopes: string;
  /** http is allowed only for a provider on this machine (a test or development provider). */
  allowHttp: boolean;
}

const OIDC_VARIABLES = [
  'OIDC_ISSUER',
  'OIDC_CLIENT_ID',
  'OIDC_CLIENT_SECRET',
  'OIDC_REDIRECT_URL',
  'OIDC_ROLE_CLAIM',
  'OIDC_ROLE_MAP',
  'OIDC_SCOPES',
] as const;

const ROLES: readonly OperatorRole[] = ['owner', 'admin', 'support', 'auditor'];

const given = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const raw = env[name]?.trim();
  return raw === undefined || raw === '' ? undefined : raw;
};

function urlFrom(name: string, raw: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute URL, got "${raw}"`);
  }
}

/** `group=role,group=role`: every role one of Keyward's, no group twice. */
function roleMapFrom(raw: string): Map<string, OperatorRole> {
  const map = new Map<string, OperatorRole>();
  for (const pair of raw.split(',')) {
    const at = pair.lastIndexOf('=');
    const group = pair.slice(0, at).trim();
    const role = pair.slice(at + 1).trim();
    if (at < 1 || group === '' || !(ROLES as readonly string[]).includes(role)) {
      throw new Error(
        `OIDC_ROLE_MAP must be group=role pairs separated by commas, each role one of ${ROLES.join(', ')}; got "${pair.trim()}"`,
      );
    }
    if (map.has(group)) throw new Error(`OIDC_ROLE_MAP names the group "${group}" twice`);
    map.set(group, role as OperatorRole);
  }
  return map;
}

/**
 * Unset when no OIDC_* variable is set. Setting some of them but not the rest, or a value that
 * cannot work, stops the server before it listens, naming the variable.
 */
export function ssoConfigFrom(env: NodeJS.ProcessEnv): SsoConfig | undefined {
  if (OIDC_VARIABLES.every((name) => given(env, name) === undefined)) return undefined;
  const required = (name: (typeof OIDC_VARIABLES)[number]): string => {
    const value = given(env, name);
    if (value === undefined) {
      throw new Error(
        `${name} must be set for single sign-on (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URL and OIDC_ROLE_MAP go together)`,
      );
    }
    return value;
  };
  const issuer = urlFrom('OIDC_ISSUER', required('OIDC_ISSUER'));
  const allowHttp = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname);
  if (issuer.protocol !== 'https:' && !allowHttp) {
    throw new Error('OIDC_ISSUER must be an https URL (http only for a provider on this machine)');
  }
  const clientId = required('OIDC_CLIENT_ID');
  const clientSecret = required('OIDC_CLIENT_SECRET');
  const redirect = urlFrom('OIDC_REDIRECT_URL', required('OIDC_REDIRECT_URL'));
  if (
    (redirect.protocol !== 'https:' && redirect.protocol !== 'http:') ||
    redirect.pathname !== SSO_CALLBACK_PATH ||
    redirect.search !== '' ||
    redirect.hash !== ''
  ) {
    throw new Error(
      `OIDC_REDIRECT_URL must be this server's address as the browser sees it, ending in ${SSO_CALLBACK_PATH} (no query)`,
    );
  }
  const roleClaim = given(env, 'OIDC_ROLE_CLAIM') ?? 'groups';
  const scopes = (given(env, 'OIDC_SCOPES') ?? 'openid email profile').split(/\s+/);
  if (!scopes.includes('openid')) throw new Error('OIDC_SCOPES must include openid');
  return {
    // Kept as given (a trailing slash included): the ID token's `iss` must equal it exactly.
    issuer: required('OIDC_ISSUER'),
    clientId,
    clientSecret,
    redirectUrl: redirect.href,
    roleClaim,
    roleMap: roleMapFrom(required('OIDC_ROLE_MAP')),
    scopes: scopes.join(' '),
    allowHttp,
  };
}
