import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';

// A body Fastify cannot read (not JSON, too large, an unknown type) on an admin route is the
// caller's mistake: 400 in the admin API's shape naming the body, never "internal error". Found by
// the admin fuzzer (test/reliability/fuzz-admin.test.ts).

const LIMIT = 4096;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ BODY_LIMIT_BYTES: String(LIMIT) });
});
afterAll(async () => h.close());

const post = (url: string, payload: string, contentType: string) =>
  h.app.inject({
    method: 'POST',
    url,
    payload,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': contentType },
  });

describe('an unreadable body on the admin API', () => {
  const cases: Array<[string, string, string, string, string]> = [
    [
      'broken JSON, no body declared',
      '/admin/apps/kw_none/approve',
      '{',
      'application/json',
      'body: is not valid JSON',
    ],
    ['broken JSON', '/admin/operators', '{"name":', 'application/json', 'body: is not valid JSON'],
    [
      'a body past the limit',
      '/admin/operators/x/disable',
      'x'.repeat(LIMIT + 1),
      'application/json',
      `body: larger than the limit of ${LIMIT} bytes`,
    ],
    [
      'an unknown type',
      '/admin/apps',
      '{}',
      'application/xml',
      'body: Content-Type must be application/json',
    ],
  ];
  it.each(cases)('%s answers 400 naming the body', async (_name, url, payload, type, message) => {
    const response = await post(url, payload, type);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ error: message });
  });
});
