import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

// Route counts and process figures are for the operator's scraper: behind a token when one is set.
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ METRICS_TOKEN: 'scrape-token-1' });
});
afterAll(async () => h.close());

const metrics = (authorization?: string) =>
  h.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: authorization === undefined ? {} : { authorization },
  });

describe('/metrics with METRICS_TOKEN', () => {
  it('refuses a call without the token, or with a wrong one, saying nothing of the figures', async () => {
    for (const answer of [await metrics(), await metrics('Bearer wrong'), await metrics('Basic c2NyYXBl')]) {
      expect(answer.statusCode).toBe(401);
      expect(answer.headers['www-authenticate']).toBe('Bearer');
      expect(answer.body).not.toContain('keyward_http_requests_total');
    }
  });

  it('answers the figures to the token', async () => {
    const answer = await metrics('Bearer scrape-token-1');
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('keyward_http_requests_total');
  });
});
