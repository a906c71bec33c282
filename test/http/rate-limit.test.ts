import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp } from '../support/fixtures.js';
import { ADMIN_KEY, awayFromMinuteEnd, nonce, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ RATE_LIMIT_PER_MINUTE: '3' });
});
afterAll(async () => h.close());

describe('per-app rate limit', () => {
  it('answers HTTP 429 with code "429" past the limit, per app', async () => {
    await awayFromMinuteEnd();
    const token = await appToken(h, await createTestApp(h, { scopes: ['auth_order'] }));
    const call = (bearer: string) =>
      h.app.inject({
        method: 'POST',
        url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${bearer}` },
        payload: { size: 1 },
      });
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await call(token)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await call(token);
    expect(limited.json()).toMatchObject({ code: '429' });
    // Retry-After: the seconds to the next minute's window, when the count starts again.
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const other = await appToken(h, await createTestApp(h, { scopes: ['auth_order'] }));
    expect((await call(other)).statusCode).toBe(200);
  });
});

describe('an app’s own rate limit (keyward app set --rate-limit)', () => {
  it('replaces the server’s for that app alone, from its next call, and null restores the default', async () => {
    await awayFromMinuteEnd();
    const app = await createTestApp(h, { scopes: ['auth_order'] });
    const token = await appToken(h, app);
    const set = (rateLimitPerMinute: number | null) =>
      h.app.inject({
        method: 'POST',
        url: `/admin/apps/${app.appKey}/settings`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: { rateLimitPerMinute },
      });
    const call = () =>
      h.app.inject({
        method: 'POST',
        url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${token}` },
        payload: { size: 1 },
      });
    const answer = await set(6);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ rateLimitPerMinute: 6, changed: ['rateLimitPerMinute'] });
    const statuses = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await call()).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
    // Back to the server's 3: the 7 calls of this minute are past it.
    expect((await set(null)).json()).toMatchObject({ rateLimitPerMinute: null });
    expect((await call()).statusCode).toBe(429);
  });

  it('refuses a limit that is not a whole number from 1, naming the field, and changes nothing', async () => {
    const app = await createTestApp(h, { scopes: ['auth_order'] });
    for (const rateLimitPerMinute of [0, -5, 1.5, '100', 2_000_000_000]) {
      const answer = await h.app.inject({
        method: 'POST',
        url: `/admin/apps/${app.appKey}/settings`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: { rateLimitPerMinute },
      });
      expect(answer.statusCode, String(rateLimitPerMinute)).toBe(400);
      expect(answer.body).toMatch(/rateLimitPerMinute/);
    }
    const listed = (
      await h.app.inject({
        method: 'GET',
        url: '/admin/apps',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json() as Array<{ appKey: string; rateLimitPerMinute: number | null }>;
    expect(listed.find((a) => a.appKey === app.appKey)?.rateLimitPerMinute).toBeNull();
  });
});
