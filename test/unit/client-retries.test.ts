import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createKeywardClient, KeywardApiError } from '../../packages/client/src/index.js';
import { retryAfterMs, waitBefore, DEFAULT_RETRY_POLICY } from '../../packages/client/src/retry.js';

// The client's retry policy against a local stand-in for Keyward: what is sent again (no answer,
// 429, 503), what is not (a refusal), Retry-After, and a consume's Idempotency-Key, one per call and
// the same on each of its attempts.

type Scripted = { status: number; body?: unknown; headers?: Record<string, string> } | 'drop';

interface Seen {
  path: string;
  nonce: string | null;
  key: string | undefined;
}

const servers: http.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function stub(script: Scripted[]) {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://stub');
      if (url.pathname === '/oauth2/token') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ access_token: 'tok-1', token_type: 'Bearer', expires_in: 3600 }));
        return;
      }
      const key = request.headers['idempotency-key'];
      seen.push({
        path: url.pathname,
        nonce: url.searchParams.get('g_nonce'),
        key: Array.isArray(key) ? key[0] : key,
      });
      const next = script.shift() ?? {
        status: 200,
        body: { code: 0, message: 'success', data: { consumed: 2 } },
      };
      if (next === 'drop') {
        request.socket.destroy();
        return;
      }
      response.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      response.end(JSON.stringify(next.body ?? { code: String(next.status), message: 'busy', cause: '' }));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { baseUrl, seen };
}

const fast = { initialBackoffMs: 1, maxBackoffMs: 2 };

function consume(client: ReturnType<typeof createKeywardClient>, key?: string) {
  return client.POST('/runtime/v1/leases/{leaseId}/consume', {
    params: {
      path: { leaseId: 'L-1' },
      ...(key === undefined ? {} : { header: { 'idempotency-key': key } }),
    },
    body: { fingerprint: 'fp-this-machine', amount: 2 },
  });
}

describe('the client retries runtime calls', () => {
  it('sends a 503 again with a fresh nonce, then succeeds', async () => {
    const { baseUrl, seen } = await stub([{ status: 503 }, { status: 503 }]);
    const client = createKeywardClient({ baseUrl, appKey: 'k', appSecret: 's', retry: fast });
    await expect(consume(client)).resolves.toEqual({ consumed: 2 });
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.nonce)).size).toBe(3);
  });

  it('honours Retry-After, capped', async () => {
    const { baseUrl, seen } = await stub([{ status: 429, headers: { 'retry-after': '1' } }]);
    const client = createKeywardClient({ baseUrl, appKey: 'k', appSecret: 's', retry: fast });
    const started = Date.now();
    await consume(client);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(seen).toHaveLength(2);
    expect(waitBefore(DEFAULT_RETRY_POLICY, 1, 120_000)).toBe(30_000);
    expect(retryAfterMs('Thu, 01 Jan 1970 00:01:40 GMT', 90_000)).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('sends a lost answer again', async () => {
    const { baseUrl, seen } = await stub(['drop']);
    const client = createKeywardClient({ baseUrl, appKey: 'k', appSecret: 's', retry: fast });
    await expect(consume(client)).resolves.toEqual({ consumed: 2 });
    expect(seen).toHaveLength(2);
  });

  it('does not send a 299 refusal again, nor a 400', async () => {
    const { baseUrl, seen } = await stub([
      { status: 299, body: { code: '90007', message: 'the amount is consumed', cause: '' } },
      { status: 400, body: { code: '90000', message: 'bad input', cause: 'amount' } },
    ]);
    const client = createKeywardClient({ baseUrl, appKey: 'k', appSecret: 's', retry: fast });
    await expect(consume(client)).rejects.toMatchObject({ code: '90007' });
    await expect(consume(client)).rejects.toBeInstanceOf(KeywardApiError);
    expect(seen).toHaveLength(2);
  });

  it('gives up after maxAttempts with the last answer, or at once with retry: false', async () => {
    const { baseUrl, seen } = await stub([
      { status: 503 },
      { status: 503 },
      { status: 503 },
      { status: 503 },
    ]);
    const client = createKeywardClient({
      baseUrl,
      appKey: 'k',
      appSecret: 's',
      retry: { ...fast, maxAttempts: 3 },
    });
    await expect(consume(client)).rejects.toMatchObject({ code: '503' });
    expect(seen).toHaveLength(3);
    const once = createKeywardClient({ baseUrl, appKey: 'k', appSecret: 's', retry: false });
    await expect(consume(once)).rejects.toMatchObject({ code: '503' });
    expect(seen).toHaveLength(4);
  });

  it('keeps one Idempotency-Key across the attempts of a consume, a new one per consume, or the caller’s', async () => {
    const { baseUrl, seen } = await stub(['drop', { status: 503 }]);
    const client = createKeywardClient({ baseUrl, appKey: 'k', appSecret: 's', retry: fast });
    await consume(client);
    await consume(client);
    await consume(client, 'job-42/step-3');
    const keys = seen.map((s) => s.key);
    expect(keys).toHaveLength(5);
    expect(keys[0]).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(keys.slice(0, 3)).toEqual([keys[0], keys[0], keys[0]]);
    expect(keys[3]).not.toBe(keys[0]);
    expect(keys[4]).toBe('job-42/step-3');
    await client.POST('/runtime/v1/leases/{leaseId}/heartbeat', {
      params: { path: { leaseId: 'L-1' } },
      body: { fingerprint: 'fp-this-machine' },
    });
    expect(seen[5]?.key).toBeUndefined();
  });
});
