import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

const status = (key?: string) =>
  h.app.inject({
    method: 'GET',
    url: '/admin/status',
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
  });

describe('GET /admin/status', () => {
  it('answers the version, the database and the migrations', async () => {
    const response = await status(ADMIN_KEY);
    expect(response.statusCode).toBe(200);
    const body = response.json<{ version: string; migrations: { applied: number } }>();
    expect(body).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      database: onPostgres() ? 'postgres' : 'embedded',
      migrations: { applied: expect.any(Number), pending: [] },
      signIn: { owners: expect.any(Number), adminKeyEnabled: true },
    });
    expect(body.migrations.applied).toBeGreaterThan(0);
  });

  it('answers nothing without the admin key', async () => {
    for (const key of [undefined, 'wrong']) {
      const response = await status(key);
      expect(response.statusCode).toBe(401);
      expect(response.body).not.toContain('version');
    }
  });
});

describe('GET /', () => {
  it('redirects to the console, which links the API reference', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/console');
    expect(response.headers['x-frame-options']).toBe('DENY');
  });
});
