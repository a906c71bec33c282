import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp } from '../support/fixtures.js';
import { awayFromMinuteEnd, nonce, startHarness, type Harness } from '../support/harness.js';

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
    const other = await appToken(h, await createTestApp(h, { scopes: ['auth_order'] }));
    expect((await call(other)).statusCode).toBe(200);
  });
});
