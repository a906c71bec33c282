import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { KeywardApiError, type FailureEnvelope } from './errors.js';
import { freshNonce } from './nonce.js';
import type { DataCall, HttpMethod, KeywardPaths } from './paths.js';
import { DEFAULT_RETRY_POLICY, newIdempotencyKey, retryingFetch, type RetryPolicy } from './retry.js';
import { requestAppToken, requestToken } from './token.js';
import { TokenSource, type Lease } from './token-source.js';

export interface KeywardClientOptions {
  /** Where the server answers, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  appKey: string;
  appSecret: string;
  /** A member's login, needed for the member center (`/me/…`). */
  member?: { account: string; password: string };
  /** Scopes to ask for (space-separated); all of the application's when absent. */
  scope?: string;
  fetch?: (request: Request) => Promise<Response>;
  /**
   * When runtime calls are sent again (no answer, 429, 503; never a refusal): the fields given
   * replace DEFAULT_RETRY_POLICY's (four attempts within a minute); `false` sends each call once.
   */
  retry?: Partial<RetryPolicy> | false;
}

export interface KeywardClient {
  GET: DataCall<'get'>;
  POST: DataCall<'post'>;
  PUT: DataCall<'put'>;
  DELETE: DataCall<'delete'>;
  /** The underlying openapi-fetch client (tokens, nonces and failures handled the same way). */
  api: Client<KeywardPaths>;
  /** A live app token (client_credentials), renewed before it expires. */
  appToken(): Promise<string>;
  /** A live member token (password grant) for `options.member`. */
  memberToken(): Promise<string>;
}

const TOKEN_REFUSED = new Set(['60000', '60005']);
const CONSUME = '/runtime/v1/leases/{leaseId}/consume';

/** An envelope failure, or undefined for a success or an answer that is no envelope. */
async function failureOf(response: Response): Promise<FailureEnvelope | undefined> {
  if (response.status === 200) return undefined;
  if (!(response.headers.get('content-type') ?? '').includes('application/json')) return undefined;
  const body: unknown = await response.clone().json();
  if (body === null || typeof body !== 'object') return undefined;
  const { code, message, cause, data } = body as Record<string, unknown>;
  if (typeof code !== 'string') return undefined;
  return { code, message: String(message ?? ''), cause: String(cause ?? ''), data };
}

/** A request as first built, replayable with other tokens and a new nonce. */
interface Draft {
  url: string;
  method: string;
  headers: Headers;
  body: string | undefined;
  member: boolean;
}

/**
 * The Keyward client: obtains and renews the app token (and the member token for the member
 * center), adds a fresh `g_nonce` to every call, and turns failure envelopes into
 * `KeywardApiError`. A call refused for a stale token (60000, 60005) is retried once with a new one.
 * Runtime calls are sent again as `options.retry` says, and a consume carries an `Idempotency-Key`
 * (the caller's `params.header`, or a new random one), the same on each attempt.
 */
export function createKeywardClient(options: KeywardClientOptions): KeywardClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const tokenRequests = { ...options, baseUrl, fetch: fetchImpl };
  const appTokens = new TokenSource(() => requestAppToken(tokenRequests));
  const memberTokens = new TokenSource(() => {
    const member = options.member;
    if (member === undefined) {
      return Promise.reject(new Error('member center calls need the `member` option (account and password)'));
    }
    return requestToken(tokenRequests, {
      grant_type: 'password',
      username: member.account,
      password: member.password,
    });
  });

  /** Calls in flight, by openapi-fetch's request id: their draft and the tokens they carry. */
  const inFlight = new Map<string, { draft: Draft; leases: Lease[] }>();

  /** Stamps a draft with live tokens and a fresh nonce; says whether any token was new. */
  async function stamp(draft: Draft): Promise<{ request: Request; leases: Lease[] }> {
    const leases = [await appTokens.lease()];
    const headers = new Headers(draft.headers);
    headers.set('authorization', `Bearer ${leases[0]?.token}`);
    if (draft.member) {
      const lease = await memberTokens.lease();
      leases.push(lease);
      headers.set('userToken', lease.token);
    }
    const url = new URL(draft.url);
    url.searchParams.set('g_nonce', freshNonce());
    return { request: new Request(url, { method: draft.method, headers, body: draft.body }), leases };
  }

  const middleware: Middleware = {
    async onRequest({ request, schemaPath, id }) {
      const draft: Draft = {
        url: request.url,
        method: request.method,
        headers: new Headers(request.headers),
        body: request.body === null ? undefined : await request.text(),
        member: schemaPath.startsWith('/me/'),
      };
      // One key per logical consume: its retries (and a retry with a new token) send it again.
      if (schemaPath === CONSUME && !draft.headers.has('idempotency-key')) {
        draft.headers.set('idempotency-key', newIdempotencyKey());
      }
      const stamped = await stamp(draft);
      inFlight.set(id, { draft, leases: stamped.leases });
      return stamped.request;
    },
    async onResponse({ response, id, options: merged }) {
      const call = inFlight.get(id);
      inFlight.delete(id);
      let answer = response;
      let failure = await failureOf(answer);
      if (failure !== undefined && call !== undefined && TOKEN_REFUSED.has(failure.code)) {
        const stale = call.leases.filter((lease) => !lease.fresh);
        if (stale.length > 0) {
          for (const lease of stale) {
            appTokens.discard(lease.token);
            memberTokens.discard(lease.token);
          }
          answer = await merged.fetch((await stamp(call.draft)).request);
          failure = await failureOf(answer);
        }
      }
      if (failure !== undefined) {
        throw new KeywardApiError(failure, answer.status, answer.headers.get('x-request-id') ?? undefined);
      }
      return answer;
    },
    onError({ id }) {
      inFlight.delete(id);
    },
  };

  const policy: RetryPolicy =
    options.retry === false
      ? { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 }
      : { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const api = createClient<KeywardPaths>({ baseUrl, fetch: retryingFetch(fetchImpl, policy, freshNonce) });
  api.use(middleware);

  type Untyped = (
    method: string,
    url: string,
    init?: object,
  ) => Promise<{ data?: { data?: unknown }; response: Response }>;
  const request = api.request as unknown as Untyped;

  function call<M extends HttpMethod>(method: M): DataCall<M> {
    const send = async (url: string, init?: object) => {
      const { data, response } = await request(method, url, init);
      if (data === undefined || response.status !== 200) {
        throw new KeywardApiError(
          { code: String(response.status), message: 'unexpected answer', cause: response.statusText },
          response.status,
          response.headers.get('x-request-id') ?? undefined,
        );
      }
      return data.data;
    };
    return send as unknown as DataCall<M>;
  }

  return {
    GET: call('get'),
    POST: call('post'),
    PUT: call('put'),
    DELETE: call('delete'),
    api,
    appToken: async () => (await appTokens.lease()).token,
    memberToken: async () => (await memberTokens.lease()).token,
  };
}
