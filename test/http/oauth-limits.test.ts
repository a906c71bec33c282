import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_BODY_LIMIT_BYTES } from '../../src/http/oauth/token-schema.js';
import { createTestApp, passwordLogin, seedEnterprise, type TestApp } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';

// The token endpoint's own limits: a small body, requests per minute per remote address, and
// failed requests per minute per client_id at one address (TOKEN_RATE_PER_IP,
// TOKEN_FAILS_PER_CLIENT_IP), judged before authentication.
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ TOKEN_FAILS_PER_CLIENT_IP: '3', TOKEN_RATE_PER_IP: '6' });
});
afterAll(async () => h.close());

const basic = (app: TestApp, secret = app.appSecret) =>
  `Basic ${Buffer.from(`${app.appKey}:${secret}`).toString('base64')}`;

/** An address of its own per test: on PostgreSQL every test file counts in one database. */
const address = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

const ask = (app: TestApp, from: string, secret?: string) =>
  h.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    remoteAddress: from,
    headers: { authorization: basic(app, secret), 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'grant_type=client_credentials',
  });

/**
 * The limits count per minute. A test that makes a handful of requests starts in a minute with
 * time to spare, so they all count in the same one.
 */
async function freshMinute(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

function expectLimited(response: Awaited<ReturnType<typeof ask>>, subject: RegExp): void {
  expect(response.statusCode).toBe(429);
  expect(response.headers['cache-control']).toBe('no-store');
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  const body = response.json() as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(body.error).toBe('temporarily_unavailable');
  expect(body.error_description).toMatch(subject);
}

describe('POST /oauth2/token limits', () => {
  it('answers 429 to one address past its failures per minute for one client, and to no one else', async () => {
    const app = await createTestApp(h);
    const from = address();
    await freshMinute();
    for (let i = 0; i < 3; i += 1) expect((await ask(app, from, 'wrong')).statusCode).toBe(401);
    // Judged before the secret is looked at: the right one is refused too.
    expectLimited(await ask(app, from), /failed token requests for this client from this address/);
    // The client elsewhere, and another client from this address, are not held back.
    expect((await ask(app, address())).statusCode).toBe(200);
    expect((await ask(await createTestApp(h), from)).statusCode).toBe(200);
  });

  it('counts wrong passwords of the password grant as failures of its client', async () => {
    const app = await createTestApp(h, { scopes: ['auth_me'] });
    const enterprise = await seedEnterprise(h);
    const from = address();
    await freshMinute();
    for (let i = 0; i < 3; i += 1) {
      const wrong = await passwordLogin(h, app, `nobody${i}@${enterprise.code}`, 'wrong', {
        remoteAddress: from,
      });
      expect(wrong.json()).toMatchObject({ error: 'invalid_grant' });
    }
    expectLimited(
      await passwordLogin(h, app, enterprise.adminAccount, enterprise.adminPassword, { remoteAddress: from }),
      /for this client from this address/,
    );
    const elsewhere = await passwordLogin(h, app, enterprise.adminAccount, enterprise.adminPassword, {
      remoteAddress: address(),
    });
    expect(elsewhere.statusCode).toBe(200);
  });

  it('does not count right requests against the client, however many and from wherever', async () => {
    const app = await createTestApp(h);
    const from = address();
    await freshMinute();
    for (let i = 0; i < 5; i += 1) expect((await ask(app, from)).statusCode).toBe(200);
    for (let i = 0; i < 10; i += 1) expect((await ask(app, address())).statusCode).toBe(200);
  });

  it('counts the failures of one IPv6 /64 network as one address', async () => {
    const app = await createTestApp(h);
    const network = `2001:db8:${randomInt(65536).toString(16)}:${randomInt(65536).toString(16)}`;
    await freshMinute();
    for (let i = 1; i <= 3; i += 1) {
      expect((await ask(app, `${network}::${i.toString(16)}`, 'wrong')).statusCode).toBe(401);
    }
    expectLimited(await ask(app, `${network}:ffff::9`), /for this client from this address/);
    expect((await ask(app, `2001:db8:ffff:${randomInt(65536).toString(16)}::1`)).statusCode).toBe(200);
  });

  it('answers 429 past the requests per minute from one address, whatever the client', async () => {
    const from = address();
    await freshMinute();
    for (let i = 0; i < 6; i += 1) {
      expect((await ask(await createTestApp(h), from)).statusCode).toBe(200);
    }
    expectLimited(await ask(await createTestApp(h), from), /token requests from this address/);
    expect((await ask(await createTestApp(h), address())).statusCode).toBe(200);
  });

  it('refuses a body over 16 KiB with 413 before authenticating its client', async () => {
    const app = await createTestApp(h);
    const response = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      remoteAddress: address(),
      headers: { authorization: basic(app), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&scope=${'a'.repeat(17 * 1024)}`,
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({
      error: 'invalid_request',
      error_description: `body: larger than the limit of ${TOKEN_BODY_LIMIT_BYTES} bytes`,
    });
    expect(TOKEN_BODY_LIMIT_BYTES).toBe(16 * 1024);
  });
});
