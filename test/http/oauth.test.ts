import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedEnterprise, type TestApp } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { sha256 } from '../../src/domain/shared/secrets.js';

let h: Harness;
let app: TestApp;
beforeAll(async () => {
  h = await startHarness();
  app = await createTestApp(h);
});
afterAll(async () => h.close());

const basic = (key: string, secret: string) => `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;

describe('POST /oauth2/token', () => {
  it('issues an app token for HTTP Basic and a form body', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: {
        authorization: basic(app.appKey, app.appSecret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'grant_type=client_credentials',
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json() as {
      access_token: string;
      token_type: string;
      expires_in: number;
      scope: string;
    };
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 7200, scope: 'auth_order auth_me' });
    expect(body.access_token.length).toBeGreaterThanOrEqual(43);
    // Stored only as a hash.
    const stored = await h.database.db
      .selectFrom('tokens')
      .select('token_hash')
      .where('token_hash', '=', body.access_token)
      .execute();
    expect(stored).toHaveLength(0);
    const hashed = await h.database.db
      .selectFrom('tokens')
      .select('token_hash')
      .where('token_hash', '=', sha256(body.access_token))
      .execute();
    expect(hashed).toHaveLength(1);
  });

  it('accepts client_id and client_secret in a JSON body, and narrows the scope on request', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: {
        grant_type: 'client_credentials',
        client_id: app.appKey,
        client_secret: app.appSecret,
        scope: 'auth_me',
      },
    });
    expect(response.json()).toMatchObject({ scope: 'auth_me' });
  });

  it.each([
    [{ grant_type: 'client_credentials', client_id: 'kw_nobody', client_secret: 'x' }, 401, 'invalid_client'],
    [{ grant_type: 'client_credentials' }, 401, 'invalid_client'],
    [{ grant_type: 'authorization_code' }, 400, 'unsupported_grant_type'],
    [{}, 400, 'invalid_request'],
  ])('answers %j with RFC 6749 errors', async (payload, status, error) => {
    const response = await h.app.inject({ method: 'POST', url: '/oauth2/token', payload });
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({ error });
  });

  it('refuses a wrong secret and a pending or disabled app', async () => {
    const wrong = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { authorization: basic(app.appKey, 'wrong') },
      payload: { grant_type: 'client_credentials' },
    });
    expect(wrong.statusCode).toBe(401);
    const pending = await createTestApp(h, { pending: true });
    const refused = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { authorization: basic(pending.appKey, pending.appSecret) },
      payload: { grant_type: 'client_credentials' },
    });
    expect(refused.json()).toMatchObject({ error: 'invalid_client' });
    await h.app.services.apps.approve(pending.appKey);
    const approved = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { authorization: basic(pending.appKey, pending.appSecret) },
      payload: { grant_type: 'client_credentials' },
    });
    expect(approved.statusCode).toBe(200);
  });

  it('issues a user token for a member password, only to apps with auth_me', async () => {
    const enterprise = await seedEnterprise(h);
    const login = (client: TestApp, password: string) =>
      h.app.inject({
        method: 'POST',
        url: '/oauth2/token',
        payload: {
          grant_type: 'password',
          client_id: client.appKey,
          client_secret: client.appSecret,
          username: enterprise.adminAccount,
          password,
        },
      });
    expect((await login(app, enterprise.adminPassword)).json()).toMatchObject({
      token_type: 'bearer',
      scope: 'auth_me',
    });
    expect((await login(app, 'wrong-password')).json()).toMatchObject({ error: 'invalid_grant' });
    const orderOnly = await createTestApp(h, { scopes: ['auth_order'] });
    expect((await login(orderOnly, enterprise.adminPassword)).json()).toMatchObject({
      error: 'unauthorized_client',
    });
  });
});
