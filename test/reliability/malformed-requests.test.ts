import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX, ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp } from '../support/fixtures.js';
import { nonce, startHarness, type Harness } from '../support/harness.js';

// The cases the generated calls (fuzz-*.test.ts) found, kept as plain regression tests.
let h: Harness;
let token: string;

beforeAll(async () => {
  h = await startHarness();
  token = await appToken(h, await createTestApp(h, { scopes: ['auth_order'] }));
});
afterAll(async () => h.close());

const order = (method: 'GET' | 'POST', path: string, payload?: object) =>
  h.app.inject({
    method,
    url: `${ORDER_PREFIX}${path}${path.includes('?') ? '&' : '?'}g_nonce=${nonce()}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload }),
  });

function expectEnvelope(
  response: { statusCode: number; headers: Record<string, unknown>; json: () => unknown },
  code: string,
  message?: string,
): void {
  expect(response.statusCode).toBe(299);
  expect(response.headers['x-request-id']).toBeTruthy();
  const body = response.json() as { code: string; message: string; cause: string };
  expect(body.code).toBe(code);
  expect(typeof body.cause).toBe('string');
  if (message !== undefined) expect(body.message).toBe(message);
}

describe('malformed paths', () => {
  it('validates a long path parameter by its schema, naming it', async () => {
    expectEnvelope(
      await order('GET', `/licenseOrder/${'a'.repeat(129)}`),
      '13004',
      'licenseOrderId: must NOT have more than 128 characters',
    );
  });

  it('answers a path parameter of any length with the envelope, never a bare 414', async () => {
    expectEnvelope(await order('GET', `/licenseOrder/${'a'.repeat(5000)}`), '13004');
    const member = await h.app.inject({
      method: 'GET',
      url: `${ME_PREFIX}/enterprise/${'e'.repeat(5000)}/members?g_nonce=${nonce()}`,
    });
    expectEnvelope(member, '40000');
  });

  it('answers a broken percent-encoding with the envelope of its surface', async () => {
    expectEnvelope(await order('GET', '/licenseOrder/%E0%A4%A'), '13004', 'path: is not a valid URL');
    const member = await h.app.inject({
      method: 'GET',
      url: `${ME_PREFIX}/enterprise/%ZZ/members?g_nonce=${nonce()}`,
    });
    expectEnvelope(member, '40000', 'path: is not a valid URL');
  });
});
