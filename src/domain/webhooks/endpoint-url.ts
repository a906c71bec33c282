import { isIP } from 'node:net';
import { addressRefusal } from './address-policy.js';
import { REFUSED_ADDRESSES, resolveWithin, type Resolver } from './outbound.js';

export const URL_MAX_LENGTH = 2048;

/** How long registering an endpoint waits for its host to resolve; past it, the host counts as not resolving. */
export const REGISTRATION_RESOLVE_MS = 3000;

type UrlPolicy = { allowHttp: boolean; allowPrivate: boolean };

/** The settings that widen the policy (config.ts), named in refusals so a developer finds them. */
const ALLOW_HTTP = 'WEBHOOK_ALLOW_HTTP';
const PRIVATE_HINT = 'WEBHOOK_ALLOW_PRIVATE=1 on the server admits it, for a local receiver';

/** The host of a URL, an IPv6 literal without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Why a URL cannot be an endpoint, or undefined when it can, from the URL alone: its form, and its
 * host when that is an address. A name is checked by `endpointHostProblem`.
 */
export function endpointUrlProblem(raw: string, policy: UrlPolicy): string | undefined {
  if (raw.length > URL_MAX_LENGTH) return `must be at most ${URL_MAX_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\s]/.test(raw)) return 'must not contain control characters or spaces';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    // The caller may be the server's own operator trying a local receiver: name the setting.
    if (policy.allowHttp) return 'must be an http or https URL';
    return url.protocol === 'http:'
      ? `must be an https URL (${ALLOW_HTTP}=1 on the server admits http, for a local receiver)`
      : 'must be an https URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (url.hash !== '') return 'must not have a fragment';
  if (url.hostname === '') return 'must name a host';
  const host = hostOf(url);
  if (!policy.allowPrivate && isIP(host) !== 0 && addressRefusal(host) !== undefined) {
    return `must not be a private, loopback, link-local or reserved address (${PRIVATE_HINT})`;
  }
  return undefined;
}

/**
 * Why the host of a URL that passed `endpointUrlProblem` cannot be an endpoint's: a name that
 * resolves now, but only to addresses the policy refuses. A name that does not resolve (yet) is
 * taken; every attempt resolves it again and refuses it then, as it does a name that moved.
 */
export async function endpointHostProblem(
  raw: string,
  policy: UrlPolicy,
  resolve: Resolver,
): Promise<string | undefined> {
  if (policy.allowPrivate) return undefined;
  const host = hostOf(new URL(raw));
  if (isIP(host) !== 0) return undefined;
  const addresses = await resolveWithin(resolve, host, REGISTRATION_RESOLVE_MS);
  if (addresses.length > 0 && addresses.every((a) => addressRefusal(a.address) !== undefined)) {
    const shown = [...new Set(addresses.map((a) => a.address))].slice(0, 4).join(', ');
    return `must name a host with a public address (${host} resolves only to ${REFUSED_ADDRESSES}: ${shown}; ${PRIVATE_HINT})`;
  }
  // RFC 6761: such names are this machine wherever they resolve, and a resolver may only learn that later.
  if (/^localhost\.?$|\.localhost\.?$/i.test(host)) return `must not be a local host name (${PRIVATE_HINT})`;
  return undefined;
}
