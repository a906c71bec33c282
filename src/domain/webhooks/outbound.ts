import { promises as dns, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPrivateAddress } from './address-policy.js';

/** At most this much of an endpoint's answer is read, and kept with the attempt. */
export const RESPONSE_EXCERPT_BYTES = 4096;

export interface OutboundPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
  connectTimeoutMs: number;
  timeoutMs: number;
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  error: string | null;
  /** Nothing answered within a time limit: the failure that holds a worker longest (its endpoint is paused). */
  timedOut?: boolean;
}

export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (host) => dns.lookup(host, { all: true, verbatim: true });

/** What the policy refuses, in the words its messages use. */
export const REFUSED_ADDRESSES = 'private, loopback, link-local or reserved addresses';

/**
 * The addresses `host` resolves to, or none when it does not resolve within `ms`: a resolver that
 * hangs would otherwise hold the attempt (or the registration) past every other time limit.
 */
export async function resolveWithin(resolve: Resolver, host: string, ms: number): Promise<LookupAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<LookupAddress[]>((done) => {
    timer = setTimeout(() => done([]), ms);
  });
  try {
    return await Promise.race([resolve(host).catch(() => []), late]);
  } finally {
    clearTimeout(timer);
  }
}

class Refused extends Error {}

/**
 * The address to connect to: the host's own when it is one, else the first address its name
 * resolves to now that the policy allows. The connection then goes to exactly that address, so a
 * name that resolves elsewhere a moment later (DNS rebinding) changes nothing.
 */
async function targetOf(host: string, policy: OutboundPolicy, resolve: Resolver): Promise<LookupAddress> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(bare);
  const candidates: LookupAddress[] =
    literal !== 0
      ? [{ address: bare, family: literal }]
      : await resolveWithin(resolve, bare, policy.connectTimeoutMs);
  if (candidates.length === 0) throw new Refused(`host ${bare} does not resolve`);
  const allowed = policy.allowPrivate ? candidates : candidates.filter((c) => !isPrivateAddress(c.address));
  const first = allowed[0];
  if (first === undefined) throw new Refused(`host ${bare} resolves only to ${REFUSED_ADDRESSES}`);
  return first;
}

/** A lookup that answers the one address already checked, in whichever form the socket asks. */
function pinned(target: LookupAddress): LookupFunction {
  return (_host, options, callback) => {
    if (options.all === true) {
      (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [target]);
    } else {
      callback(null, target.address, target.family);
    }
  };
}

/**
 * One POST to an endpoint, never throwing: refused targets, timeouts and network errors come back
 * as a failed attempt. Redirects are not followed (a 3xx fails); at most 4 KiB of the answer is read.
 */
export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  policy: OutboundPolicy,
  resolve: Resolver = systemResolver,
): Promise<AttemptResult> {
  const started = performance.now();
  const failed = (
    error: string,
    statusCode: number | null = null,
    excerpt: string | null = null,
    timedOut = false,
  ): AttemptResult => ({
    ok: false,
    statusCode,
    latencyMs: Math.round(performance.now() - started),
    responseExcerpt: excerpt,
    error,
    timedOut,
  });
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return failed('the endpoint URL is not valid');
  }
  const secure = url.protocol === 'https:';
  if (!secure && !(url.protocol === 'http:' && policy.allowHttp)) {
    return failed('the endpoint URL must be https (WEBHOOK_ALLOW_HTTP=1 allows http)');
  }
  let target: LookupAddress;
  try {
    target = await targetOf(url.hostname, policy, resolve);
  } catch (error) {
    return failed(error instanceof Refused ? error.message : 'the endpoint host could not be resolved');
  }
  return new Promise<AttemptResult>((resolveAttempt) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      resolveAttempt(result);
    };
    const request = (secure ? https : http).request(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        lookup: pinned(target),
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          // A text column holds no NUL: the receiver's bytes must not stop the attempt being kept.
          const excerpt = Buffer.concat(chunks)
            .subarray(0, RESPONSE_EXCERPT_BYTES)
            .toString('utf8')
            .replaceAll('\u0000', '\uFFFD');
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            finish({
              ok: true,
              statusCode: status,
              latencyMs: Math.round(performance.now() - started),
              responseExcerpt: excerpt,
              error: null,
            });
          } else {
            finish(
              failed(
                status >= 300 && status < 400 ? 'redirect not followed' : `status ${status}`,
                status,
                excerpt,
              ),
            );
          }
          request.destroy();
        };
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_EXCERPT_BYTES) done();
        });
        response.on('end', done);
        response.on('error', () => done());
      },
    );
    const total = setTimeout(() => {
      finish(failed(`timed out after ${policy.timeoutMs} ms`, null, null, true));
      request.destroy();
    }, policy.timeoutMs);
    const connect = setTimeout(() => {
      finish(failed(`connection not made within ${policy.connectTimeoutMs} ms`, null, null, true));
      request.destroy();
    }, policy.connectTimeoutMs);
    request.on('socket', (socket) => {
      socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connect));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      finish(failed(error.code === undefined ? 'request failed' : `request failed: ${error.code}`));
    });
    request.end(body);
  });
}
