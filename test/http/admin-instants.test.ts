import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOKS_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp } from '../support/fixtures.js';
import { ADMIN_KEY, nonce, startHarness, type Harness } from '../support/harness.js';
import { signedIn } from '../support/operator-console.js';

// A time the date-time format lets through but the database cannot hold (the ISO year 0000, or
// the year 1 moved back into it by its offset) is the caller's mistake: 400 naming the field,
// never "internal error". Found by the admin fuzzer (test/reliability/fuzz-admin.test.ts).

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

const asKey = (method: 'GET' | 'POST', url: string, payload?: object) =>
  h.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    ...(payload === undefined ? {} : { payload }),
  });

const BEFORE_THE_YEAR_1 = ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00'];

describe('times before the year 1', () => {
  it.each(BEFORE_THE_YEAR_1)('GET /admin/audit refuses since or until %s, naming it', async (time) => {
    for (const field of ['since', 'until']) {
      const response = await asKey('GET', `/admin/audit?${field}=${encodeURIComponent(time)}`);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({ error: `${field}: must be a time from 0001-01-01 to 9999-12-31` });
    }
    expect((await asKey('GET', '/admin/audit?since=0001-01-01T00:00:00Z')).statusCode).toBe(200);
  });

  it.each(BEFORE_THE_YEAR_1)(
    'POST /admin/webhooks/…/replay refuses from or to %s, naming it',
    async (time) => {
      const app = await createTestApp(h, { scopes: ['auth_webhooks'] });
      const created = await h.app.inject({
        method: 'POST',
        url: `${WEBHOOKS_PREFIX}/endpoints?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${await appToken(h, app)}` },
        payload: { url: 'https://hooks.example.com/instants' },
      });
      const endpoint = (created.json() as { data: { id: string } }).data.id;
      const url = `/admin/webhooks/endpoints/${endpoint}/replay`;
      const from = await asKey('POST', url, { from: time, to: '2026-01-01T00:00:00Z' });
      expect(from.statusCode, from.body).toBe(400);
      expect(from.json()).toEqual({ error: 'from: must be a time from 0001-01-01 to 9999-12-31' });
      const to = await asKey('POST', url, { from: '2026-01-01T00:00:00Z', to: time });
      expect(to.statusCode, to.body).toBe(400);
      expect(to.json()).toEqual({ error: 'to: must be a time from 0001-01-01 to 9999-12-31' });
    },
  );

  it("shows the console's audit filter the time as not a date and time", async () => {
    const { browser } = await signedIn(h, 'auditor');
    const page = await browser.get('/console/operator/audit?since=0000-01-01T00%3A00');
    expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
    expect(page.body).toContain('This is not a date and time.');
  });
});
