import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/client.js';
import { START_GRACE_MS } from '../../src/http/overload.js';
import { ME_PREFIX, ORDER_PREFIX, RUNTIME_PREFIX } from '../../src/http/surface.js';
import { testDatabaseUrl } from '../support/database.js';
import { appToken, createTestApp } from '../support/fixtures.js';
import { ADMIN_KEY, nonce, startHarness, type Harness } from '../support/harness.js';

// An overloaded server answers 503 with Retry-After in each surface's own shape, never "500", and
// its probes stay answered: when the event loop runs past EVENT_LOOP_DELAY_LIMIT_MS (both
// databases), and when no pooled connection comes free within DATABASE_POOL_WAIT_MS (PostgreSQL).

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

const envelopeCalls = [
  {
    surface: 'order',
    method: 'POST',
    url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
    payload: { size: 1 },
  },
  { surface: 'member', method: 'GET', url: `${ME_PREFIX}/enterprise/e1/members?g_nonce=${nonce()}` },
  { surface: 'runtime', method: 'POST', url: `${RUNTIME_PREFIX}/leases?g_nonce=${nonce()}`, payload: {} },
] as const;

function expectEnvelope503(reply: Reply): void {
  expect(reply.statusCode, reply.body).toBe(503);
  expect(reply.headers['retry-after']).toBe('2');
  expect(reply.json()).toEqual({
    code: '503',
    message: 'service busy, retry later',
    cause: reply.headers['x-request-id'],
  });
}

function expectAdmin503(reply: Reply): void {
  expect(reply.statusCode, reply.body).toBe(503);
  expect(reply.headers['retry-after']).toBe('2');
  expect((reply.json() as { error: string }).error).toMatch(/^server busy: .*; retry in 2 seconds$/);
}

const probesAnswer = async (h: Harness) => {
  expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  expect((await h.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
};

describe('an event loop past its budget', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ EVENT_LOOP_DELAY_LIMIT_MS: '1' });
    // A server just started is not shed: its start-up's own delay is not load.
    await new Promise((resolve) => setTimeout(resolve, START_GRACE_MS));
  });
  afterAll(async () => h.close());

  /**
   * Holds the event loop until under-pressure's next sample (once a second) has seen it late, so
   * the call made right after is judged under pressure, however fast or loaded the machine.
   */
  async function runLate(): Promise<void> {
    for (let i = 0; i < 5 && !h.app.isUnderPressure(); i += 1) {
      const until = Date.now() + 1200;
      while (Date.now() < until) {
        // the event loop is held: nothing else runs
      }
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    expect(h.app.isUnderPressure()).toBe(true);
  }

  it('answers each surface 503 with Retry-After in its own shape', async () => {
    for (const call of envelopeCalls) {
      await runLate();
      expectEnvelope503(await h.app.inject({ ...call }));
    }
    await runLate();
    expectAdmin503(
      await h.app.inject({
        method: 'GET',
        url: '/admin/apps',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      }),
    );
    await runLate();
    const token = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: { grant_type: 'client_credentials', client_id: 'x', client_secret: 'y' },
    });
    expect(token.statusCode).toBe(503);
    expect(token.headers['retry-after']).toBe('2');
    expect(token.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'server busy; retry in 2 seconds',
    });
    await runLate();
    const page = await h.app.inject({ method: 'GET', url: '/console' });
    expect([page.statusCode, page.headers['retry-after'], page.body]).toEqual([
      503,
      '2',
      'Busy: retry in 2 seconds.',
    ]);
  });

  it('keeps answering /healthz and /readyz', async () => {
    await runLate();
    await probesAnswer(h);
  });
});

const url = testDatabaseUrl();

describe.runIf(url !== undefined)('a pool with no connection free', () => {
  let h: Harness;
  let token: string;
  beforeAll(async () => {
    // The token is made through a server of the usual pool: a pool of one, waiting 300 ms, is for
    // the test's moment of overload, not for its setup.
    const setup = await startHarness();
    token = await appToken(
      setup,
      await createTestApp(setup, { scopes: ['auth_order', 'auth_me', 'auth_runtime'] }),
    );
    await setup.close();
    const database = await openPostgres(url as string, { poolSize: 1, poolWaitMs: 300, silenceMs: 5000 });
    h = await startHarness({}, { database });
  });
  afterAll(async () => h.close());

  it('answers 503 with Retry-After, never "500", while /readyz answers ready', async () => {
    let release: (() => void) | undefined;
    const held = h.database.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      await new Promise<void>((resolve) => (release = resolve));
    });
    await expect.poll(() => release !== undefined).toBe(true);
    try {
      // Each call's token is looked up in the database first, and waits there for the pool.
      for (const call of envelopeCalls) {
        expectEnvelope503(await h.app.inject({ ...call, headers: { authorization: `Bearer ${token}` } }));
      }
      expectAdmin503(
        await h.app.inject({
          method: 'GET',
          url: '/admin/apps',
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        }),
      );
      await probesAnswer(h);
    } finally {
      release?.();
      await held;
    }
    expect(
      (
        await h.app.inject({
          method: 'GET',
          url: '/admin/apps',
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).statusCode,
    ).toBe(200);
  });
});
