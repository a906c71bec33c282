import createClient from 'openapi-fetch';
import { KeywardAuthError } from './errors.js';
import type { paths } from './schema.js';

/** The token endpoint's answer: access_token, token_type, expires_in, scope. */
export type TokenResponse = paths['/oauth2/token']['post']['responses'][200]['content']['application/json'];

export interface TokenRequestOptions {
  /** Where the server answers, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  appKey: string;
  appSecret: string;
  fetch?: (request: Request) => Promise<Response>;
}

function basic(appKey: string, appSecret: string): string {
  // RFC 6749 §2.3.1: each part is form-encoded before the Basic encoding.
  const pair = `${encodeURIComponent(appKey)}:${encodeURIComponent(appSecret)}`;
  return `Basic ${btoa(pair)}`;
}

/**
 * One request to `POST /oauth2/token` with the app's Basic credentials and a form body; a refusal
 * is thrown as `KeywardAuthError` with the RFC 6749 error and description.
 */
export async function requestToken(
  options: TokenRequestOptions,
  body: Record<string, string>,
): Promise<TokenResponse> {
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: fetchImpl });
  const { data, error, response } = await api.POST('/oauth2/token', {
    headers: {
      authorization: basic(options.appKey, options.appSecret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: body as { grant_type: string },
    bodySerializer: (fields) => new URLSearchParams(fields as Record<string, string>).toString(),
  });
  if (data !== undefined) return data;
  const answer = error as { error?: string; error_description?: string } | undefined;
  throw new KeywardAuthError(
    answer?.error ?? 'server_error',
    answer?.error_description ?? `HTTP ${response.status}`,
    response.status,
  );
}

/** An app token (client_credentials), with all the app's scopes or only `scope` (space-separated). */
export function requestAppToken(options: TokenRequestOptions & { scope?: string }): Promise<TokenResponse> {
  return requestToken(options, {
    grant_type: 'client_credentials',
    ...(options.scope === undefined ? {} : { scope: options.scope }),
  });
}
