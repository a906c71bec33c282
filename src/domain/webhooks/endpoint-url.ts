import { isIP } from 'node:net';
import { isPrivateAddress } from './address-policy.js';

export const URL_MAX_LENGTH = 2048;

/** Why a URL cannot be an endpoint, or undefined when it can (its host is checked again when sent). */
export function endpointUrlProblem(
  raw: string,
  policy: { allowHttp: boolean; allowPrivate: boolean },
): string | undefined {
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
    return policy.allowHttp ? 'must be an http or https URL' : 'must be an https URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (url.hash !== '') return 'must not have a fragment';
  if (url.hostname === '') return 'must name a host';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!policy.allowPrivate) {
    if (isIP(host) !== 0 && isPrivateAddress(host))
      return 'must not be a private, loopback or link-local address';
    if (/^localhost$|\.localhost$/i.test(host)) return 'must not be a local host name';
  }
  return undefined;
}
