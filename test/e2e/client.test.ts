import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  createKeywardClient,
  KeywardApiError,
  KeywardAuthError,
  type KeywardClientOptions,
} from '../../packages/client/src/index.js';
import { sha256 } from '../../src/domain/shared/secrets.js';
import { createTestApp, seedEnterprise, type TestApp, type TestEnterprise } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';

const NONCE = /^[A-Za-z0-9_-]{8,64}$/;
const SHELLNUMS = '/order/api/order/v1/shellnums';

let h: Harness;
let baseUrl: string;
let app: TestApp;
let enterprise: TestEnterprise;

/** What the client put on the wire, from a fetch that records and then really sends. */
interface Sent {
  path: string;
  nonce: string | null;
  authorization: string | null;
  userToken: string | null;
}

function recordingClient(overrides: Partial<KeywardClientOptions> = {}) {
  const sent: Sent[] = [];
  const client = createKeywardClient({
    baseUrl,
    appKey: app.appKey,
    appSecret: app.appSecret,
    fetch: (request) => {
      const url = new URL(request.url);
      sent.push({
        path: url.pathname,
        nonce: url.searchParams.get('g_nonce'),
        authorization: request.headers.get('authorization'),
        userToken: request.headers.get('usertoken'),
      });
      return fetch(request);
    },
    ...overrides,
  });
  return { client, sent };
}

async function expireToken(token: string): Promise<void> {
  await h.database.db
    .updateTable('tokens')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('token_hash', '=', sha256(token))
    .execute();
}

beforeAll(async () => {
  h = await startHarness();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  app = await createTestApp(h);
  enterprise = await seedEnterprise(h);
});
afterAll(async () => h.close());

describe('the typed client against a real server', () => {
  it('obtains an app token once and calls shellnums with a fresh nonce each time', async () => {
    const { client, sent } = recordingClient();
    const first = await client.POST(SHELLNUMS, { body: { size: 3 } });
    const second = await client.POST(SHELLNUMS, { body: { size: '2' } });
    expectTypeOf(first).toEqualTypeOf<string[]>();
    expect(first).toHaveLength(3);
    expect(second).toHaveLength(2);
    for (const number of [...first, ...second]) expect(number).toMatch(/^8[0-9]{9}$/);

    expect(sent.map((s) => s.path)).toEqual(['/oauth2/token', SHELLNUMS, SHELLNUMS]);
    const calls = sent.slice(1);
    for (const call of calls) {
      expect(call.nonce).toMatch(NONCE);
      expect(call.authorization).toBe(`Bearer ${await client.appToken()}`);
    }
    expect(calls[0]?.nonce).not.toBe(calls[1]?.nonce);
  });

  it('turns a failure envelope into a KeywardApiError with code, message and cause', async () => {
    const { client } = recordingClient();
    const failure = await client.POST(SHELLNUMS, { body: { size: 0 } }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(KeywardApiError);
    const error = failure as KeywardApiError;
    expect(error).toMatchObject({ code: '13004', message: 'size: must be >= 1', status: 299 });
    expect(error.cause).toBe('size: must be >= 1');
    expect(error.requestId).toEqual(expect.any(String));
  });

  it('renews a token the server no longer accepts and repeats the call once', async () => {
    const { client, sent } = recordingClient();
    const stale = await client.appToken();
    await expireToken(stale);
    expect(await client.POST(SHELLNUMS, { body: { size: 1 } })).toHaveLength(1);
    const renewed = await client.appToken();
    expect(renewed).not.toBe(stale);
    expect(sent.map((s) => [s.path, s.authorization])).toEqual([
      ['/oauth2/token', expect.stringMatching(/^Basic /)],
      [SHELLNUMS, `Bearer ${stale}`],
      ['/oauth2/token', expect.stringMatching(/^Basic /)],
      [SHELLNUMS, `Bearer ${renewed}`],
    ]);
    expect(sent[1]?.nonce).not.toBe(sent[3]?.nonce);
  });

  it('does not repeat a call refused with a token it has just obtained', async () => {
    const orderOnly = await createTestApp(h, { scopes: ['auth_me'] });
    const { client, sent } = recordingClient({ appKey: orderOnly.appKey, appSecret: orderOnly.appSecret });
    await expect(client.POST(SHELLNUMS, { body: { size: 1 } })).rejects.toMatchObject({ code: '60000' });
    expect(sent.map((s) => s.path)).toEqual(['/oauth2/token', SHELLNUMS]);
  });

  it('answers a wrong secret with the RFC 6749 error', async () => {
    const { client } = recordingClient({ appSecret: 'not-the-secret' });
    const failure = await client.appToken().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(KeywardAuthError);
    expect(failure).toMatchObject({ error: 'invalid_client', status: 401 });
  });

  it('logs a member in and sends its userToken with the app token to the member center', async () => {
    const { client, sent } = recordingClient({
      member: { account: enterprise.adminAccount, password: enterprise.adminPassword },
    });
    const page = await client.GET('/me/api/v1/enterprise/{enterpriseGlobalId}/members', {
      params: { path: { enterpriseGlobalId: enterprise.globalId }, query: { pageSize: 5 } },
    });
    expect(page.total).toBe(1);
    expect(page.list[0]?.userName).toBe(enterprise.adminAccount);
    const call = sent.find((s) => s.path.startsWith('/me/'));
    expect(call?.userToken).toBe(await client.memberToken());
    expect(call?.authorization).toBe(`Bearer ${await client.appToken()}`);
    expect(call?.nonce).toMatch(NONCE);
  });

  it('refuses a member-center call without a member login before sending it', async () => {
    const { client, sent } = recordingClient();
    await expect(
      client.GET('/me/api/v1/enterprise/{enterpriseGlobalId}/members', {
        params: { path: { enterpriseGlobalId: enterprise.globalId } },
      }),
    ).rejects.toThrow(/member/);
    expect(sent.some((s) => s.path.startsWith('/me/'))).toBe(false);
  });
});
