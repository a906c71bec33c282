import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appToken, createTestApp, type TestApp } from '../support/fixtures.js';
import { nonce, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let app: TestApp;
let token: string;

beforeAll(async () => {
  h = await startHarness();
  app = await createTestApp(h, { scopes: ['auth_webhooks'] });
  token = await appToken(h, app);
});
afterAll(async () => {
  await h.close();
});

interface Reply {
  statusCode: number;
  body: { code: number | string; message: string; data?: Record<string, unknown> };
}

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object, as = token) {
  const response = await h.app.inject({
    method,
    url: `/v1/webhooks${path}?g_nonce=${nonce()}`,
    headers: { authorization: `Bearer ${as}` },
    ...(payload === undefined ? {} : { payload }),
  });
  return { statusCode: response.statusCode, body: response.json() } as Reply;
}

const URL_OK = 'https://hooks.example.com/keyward';

describe('/v1/webhooks/endpoints', () => {
  it('creates an endpoint and answers its secret once; list and get never show it', async () => {
    const created = await call('POST', '/endpoints', { url: URL_OK, eventTypes: ['order.completed'] });
    expect(created.body.code).toBe(0);
    const data = created.body.data as { id: string; secret: string };
    expect(data).toMatchObject({ url: URL_OK, eventTypes: ['order.completed'], status: 'enabled' });
    expect(data.secret).toMatch(/^whsec_/);
    const listed = await call('GET', '/endpoints');
    expect(listed.body.data).toEqual([expect.objectContaining({ id: data.id })]);
    const got = await call('GET', `/endpoints/${data.id}`);
    expect(JSON.stringify([listed.body, got.body])).not.toContain(data.secret);
    expect(JSON.stringify([listed.body, got.body])).not.toContain('secret"');
  });

  it('updates the url and filter, rotates the secret with an overlap, and deletes', async () => {
    const data = (await call('POST', '/endpoints', { url: URL_OK })).body.data as {
      id: string;
      secret: string;
    };
    const updated = await call('PATCH', `/endpoints/${data.id}`, { url: `${URL_OK}/v2`, eventTypes: null });
    expect(updated.body.data).toMatchObject({ url: `${URL_OK}/v2`, eventTypes: null });
    const rotated = await call('POST', `/endpoints/${data.id}/rotate-secret`, { overlapSeconds: 3600 });
    const fresh = rotated.body.data as { secret: string; previousSecretExpiresAt: string };
    expect(fresh.secret).toMatch(/^whsec_/);
    expect(fresh.secret).not.toBe(data.secret);
    expect(Date.parse(fresh.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(3500_000);
    expect((await call('DELETE', `/endpoints/${data.id}`)).body.code).toBe(0);
    expect((await call('GET', `/endpoints/${data.id}`)).body.code).toBe('95001');
  });

  it('answers another app’s endpoint exactly as one that does not exist', async () => {
    const other = await createTestApp(h, { scopes: ['auth_webhooks'] });
    const otherToken = await appToken(h, other);
    const theirs = (await call('POST', '/endpoints', { url: URL_OK }, otherToken)).body.data as {
      id: string;
    };
    const missing = await call('GET', '/endpoints/ep_0123456789abcdef01234567');
    for (const [method, path, payload] of [
      ['GET', `/endpoints/${theirs.id}`, undefined],
      ['PATCH', `/endpoints/${theirs.id}`, { url: URL_OK }],
      ['DELETE', `/endpoints/${theirs.id}`, undefined],
      ['POST', `/endpoints/${theirs.id}/rotate-secret`, {}],
    ] as const) {
      const reply = await call(method, path, payload);
      expect(reply.body).toEqual({ ...missing.body, cause: expect.any(String) });
      expect(reply.body.code).toBe('95001');
    }
    expect((await call('GET', '/endpoints')).body.data).not.toContainEqual(
      expect.objectContaining({ id: theirs.id }),
    );
    expect((await call('GET', `/endpoints/${theirs.id}`, undefined, otherToken)).body.code).toBe(0);
  });

  it.each([
    [{ url: 'http://hooks.example.com/x' }, 'url: must be an https URL (WEBHOOK_ALLOW_HTTP=1 on the server'],
    [{ url: 'https://hooks.example.com/a\u0001b' }, 'url'],
    [{ url: 'https://10.0.0.1/x' }, 'url: must not be a private, loopback, link-local or reserved address'],
    [
      { url: 'https://169.254.169.254/x' },
      'url: must not be a private, loopback, link-local or reserved address',
    ],
    [{ url: 'not a url' }, 'url'],
    [{ url: URL_OK, eventTypes: ['order.shipped'] }, 'eventTypes: "order.shipped" is not one of'],
    [{ url: URL_OK, eventTypes: [] }, 'eventTypes'],
    [{ url: URL_OK, extra: 1 }, ''],
  ])('refuses %j naming the field', async (payload, message) => {
    const reply = await call('POST', '/endpoints', payload);
    expect(reply.body.code).toBe('95000');
    expect(reply.body.message).toContain(message);
  });

  // Each IPv6 form that carries an IPv4 address, carrying 127.0.0.1: IPv4-mapped, IPv4-translated,
  // NAT64, 6to4 and Teredo (client 127.0.0.1, stored inverted).
  it.each([
    'https://[::ffff:127.0.0.1]/x',
    'https://[::ffff:0:7f00:1]/x',
    'https://[64:ff9b::7f00:1]/x',
    'https://[2002:7f00:1::1]/x',
    'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x',
    'https://192.0.2.10/x',
    'https://100.64.0.1/x',
  ])('refuses %s, on create and on update, changing nothing', async (url) => {
    const refused =
      'url: must not be a private, loopback, link-local or reserved address (WEBHOOK_ALLOW_PRIVATE=1 on the server admits it, for a local receiver)';
    const created = await call('POST', '/endpoints', { url });
    expect(created.body).toMatchObject({ code: '95000', message: refused });
    const kept = (await call('POST', '/endpoints', { url: URL_OK })).body.data as { id: string };
    const updated = await call('PATCH', `/endpoints/${kept.id}`, { url });
    expect(updated.body).toMatchObject({ code: '95000', message: refused });
    expect((await call('GET', `/endpoints/${kept.id}`)).body.data).toMatchObject({ url: URL_OK });
    await call('DELETE', `/endpoints/${kept.id}`);
  });

  it('refuses a host name that resolves only to loopback, resolving it at registration', async () => {
    // localhost resolves to 127.0.0.1 (and ::1) on every system: refused for what it resolves to.
    const message =
      /^url: must name a host with a public address \(localhost resolves only to .*127\.0\.0\.1/;
    const created = await call('POST', '/endpoints', { url: 'https://localhost:8443/hook' });
    expect(created.body.code).toBe('95000');
    expect(created.body.message).toMatch(message);
    const kept = (await call('POST', '/endpoints', { url: URL_OK })).body.data as { id: string };
    const updated = await call('PATCH', `/endpoints/${kept.id}`, { url: 'https://LOCALHOST/hook' });
    expect(updated.body.code).toBe('95000');
    expect(updated.body.message).toMatch(message);
    await call('DELETE', `/endpoints/${kept.id}`);
  });

  it('takes a host name that does not resolve now: each attempt resolves it again', async () => {
    const created = await call('POST', '/endpoints', { url: 'https://hooks.invalid/keyward' });
    expect(created.body).toMatchObject({ code: 0, data: { url: 'https://hooks.invalid/keyward' } });
    await call('DELETE', `/endpoints/${(created.body.data as { id: string }).id}`);
  });

  it('refuses a token without the auth_webhooks scope, and a call without a nonce', async () => {
    const orderApp = await createTestApp(h, { scopes: ['auth_order'] });
    const orderToken = await appToken(h, orderApp);
    expect((await call('GET', '/endpoints', undefined, orderToken)).body.code).toBe('60000');
    const noNonce = await h.app.inject({
      method: 'GET',
      url: '/v1/webhooks/endpoints',
      headers: { authorization: `Bearer ${token}` },
    });
    expect((noNonce.json() as { code: string }).code).toBe('70001');
  });

  it('bounds an app to 20 endpoints', async () => {
    const bounded = await createTestApp(h, { scopes: ['auth_webhooks'] });
    const boundedToken = await appToken(h, bounded);
    for (let i = 0; i < 20; i += 1) {
      expect((await call('POST', '/endpoints', { url: `${URL_OK}/${i}` }, boundedToken)).body.code).toBe(0);
    }
    const over = await call('POST', '/endpoints', { url: URL_OK }, boundedToken);
    expect(over.body).toMatchObject({ code: '95002', message: 'an application has at most 20 endpoints' });
  });
});
