import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp } from '../support/fixtures.js';
import { nonce, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await startHarness();
  token = await appToken(h, await createTestApp(h, { scopes: ['auth_order'] }));
});
afterAll(async () => h.close());

describe('envelope and errors', () => {
  it('answers an unknown path with a 404 envelope', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/order/api/order/v1/nothing' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: '404' });
  });

  it('answers a known path with the wrong method with a 405 envelope', async () => {
    const response = await h.app.inject({ method: 'GET', url: `${ORDER_PREFIX}/shellnums` });
    expect(response.statusCode).toBe(405);
    expect(response.json()).toMatchObject({ code: '405' });
  });

  it("echoes a sane x-request-id of the caller's and answers the server's own otherwise", async () => {
    const given = await h.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'abc-123' },
    });
    expect(given.headers['x-request-id']).toBe('abc-123');
    for (const odd of ['bad id\n', 'x'.repeat(129), 'a/b', '']) {
      const made = await h.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': odd } });
      expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('answers malformed JSON with the surface validation code', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: '{"size":',
    });
    expect(response.statusCode).toBe(299);
    expect(response.json()).toMatchObject({ code: '13004', message: 'body: is not valid JSON' });
  });

  it('answers a body that is not an object with the validation code', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: '[1,2]',
    });
    expect(response.json()).toMatchObject({ code: '13004' });
  });

  it('answers an internal fault with code 500 and the request id, never the detail', async () => {
    const broken = await startHarness();
    const brokenToken = await appToken(broken, await createTestApp(broken, { scopes: ['auth_order'] }));
    // The database goes away under the running server.
    await broken.database.close();
    const response = await broken.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${brokenToken}`, 'x-request-id': 'req-500' },
      payload: { size: 1 },
    });
    await broken.app.close();
    expect(response.statusCode).toBe(299);
    // The caller's id comes back in the header; the cause is the server's own id, the one its
    // logs carry, which no caller can reuse.
    expect(response.headers['x-request-id']).toBe('req-500');
    const { cause } = response.json<{ cause: string }>();
    expect(cause).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.json()).toEqual({ code: '500', message: 'network error, retry', cause });
  });

  it('answers every call with nosniff, no framing, and nothing naming the software', async () => {
    const answers = [
      await h.app.inject({ method: 'GET', url: '/healthz' }),
      await h.app.inject({ method: 'GET', url: '/order/api/order/v1/nothing' }),
      await h.app.inject({
        method: 'POST',
        url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
        payload: {},
      }),
      await h.app.inject({ method: 'GET', url: '/admin/apps' }),
      await h.app.inject({ method: 'POST', url: '/oauth2/token', payload: {} }),
      await h.app.inject({ method: 'GET', url: '/openapi.json' }),
      await h.app.inject({ method: 'GET', url: `${ORDER_PREFIX}/licenseOrder/%E0%A4%A` }),
    ];
    for (const [i, answer] of answers.entries()) {
      expect(answer.headers['x-content-type-options'], `answer ${i}`).toBe('nosniff');
      expect(answer.headers['x-frame-options']).toBe('DENY');
      expect(String(answer.headers['content-security-policy'])).toContain("default-src 'none'");
      expect(answer.headers.server).toBeUndefined();
      expect(answer.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('reports health, readiness and metrics', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('keyward_http_requests_total');
  });
});
