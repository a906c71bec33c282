import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNTIME_PREFIX } from '../../src/http/surface.js';
import { fingerprint, lockWith, runtimeWorld, type RuntimeWorld } from '../http/runtime-helpers.js';
import { testDatabaseUrl } from '../support/database.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { freshNonce } from './support/live-api.js';

// A fleet starting at once: 400 machines check out one license from a server whose pool holds 5
// connections. Every call is answered (a lease, 90005, or 503 with Retry-After), never "500", and
// /readyz, asked all along as a proxy would, stays 200: the database answers, however busy the
// pool. PostgreSQL only: the embedded database is one connection by design (ADR 1), a queue with no
// size to choose, and its readiness does not wait in it (see /readyz in docs/operations.md).
const url = testDatabaseUrl();
const MACHINES = 400;
const SEATS = 50;
const POOL = 5;
/**
 * A loopback database drains 400 check-outs faster than a pool wait, where a fleet's database did
 * not: the license's row is held this long by another transaction, as a slow database holds it,
 * so that calls queue for the pool past DATABASE_POOL_WAIT_MS (5 s). TRANSACTION_LIMIT_MS is raised
 * above it: a call that waited this long on the row lock is not the subject here.
 */
const HOLD_MS = 6_000;

interface Answer {
  status: number;
  code: number | string | undefined;
  retryAfter: string | null;
  body: string;
}

async function checkOut(base: string, token: string, body: Record<string, unknown>): Promise<Answer> {
  return runtimeCall(base, token, '/leases', body);
}

async function runtimeCall(
  base: string,
  token: string,
  route: string,
  body: Record<string, unknown>,
): Promise<Answer> {
  const response = await fetch(`${base}${RUNTIME_PREFIX}${route}?g_nonce=${freshNonce()}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    // A guard only: a call that never ends fails the test rather than hanging it.
    signal: AbortSignal.timeout(120_000),
  });
  const text = await response.text();
  const code = (JSON.parse(text) as { code?: number | string }).code;
  return { status: response.status, code, retryAfter: response.headers.get('retry-after'), body: text };
}

describe.runIf(url !== undefined)(`${MACHINES} check-outs of one license on a pool of ${POOL}`, () => {
  const appName = `keyward-overload-${randomBytes(4).toString('hex')}`;
  let h: Harness;
  let world: RuntimeWorld;
  let server: ServerProcess;

  beforeAll(async () => {
    // The license is made through an in-process server on the same database; the load goes to a
    // real process started with the small pool, its connections named by PGAPPNAME.
    h = await startHarness();
    world = await runtimeWorld(h);
    server = await startServerProcess({
      DATABASE_URL: url as string,
      DATABASE_POOL_SIZE: String(POOL),
      TRANSACTION_LIMIT_MS: '30000',
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
      DATA_DIR: `/tmp/keyward-overload-${randomBytes(4).toString('hex')}`,
      PGAPPNAME: appName,
    });
  });
  afterAll(async () => {
    await server?.stop();
    await h?.close();
  });

  /** The server's connections to the database now. */
  async function connections(): Promise<number> {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity where application_name = ${appName}
    `.execute(h.database.db);
    return rows[0]?.n ?? 0;
  }

  it('answers every call without "500", grants seats, and /readyz stays 200 throughout', async () => {
    const { assetNum, crmProductId } = await lockWith(world, { limitConcurrent: SEATS });
    const readiness: Array<{ status: number; body: string }> = [];
    const peaks: number[] = [];
    let loading = true;
    const probe = (async () => {
      while (loading) {
        // A proxy gives up on a slow probe too; this one waits as long as it takes.
        const response = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(120_000) });
        readiness.push({ status: response.status, body: await response.text() });
        peaks.push(await connections());
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    const hold = h.database.db.transaction().execute(async (trx) => {
      await sql`select p.id from product_instances p join assets a on a.id = p.asset_id
        where a.asset_num = ${assetNum} and p.crm_product_id = ${crmProductId} for update`.execute(trx);
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    });
    const answers = await Promise.all(
      Array.from({ length: MACHINES }, () =>
        checkOut(server.url, world.runtimeToken, { assetNum, crmProductId, fingerprint: fingerprint() }),
      ),
    ).finally(() => {
      loading = false;
    });
    await Promise.all([probe, hold]);

    expect(
      answers.filter((a) => a.status === 500 || a.code === '500').map((a) => a.body),
      'answered "500"',
    ).toEqual([]);
    for (const answer of answers) {
      if (answer.status === 503) {
        expect(answer.code, answer.body).toBe('503');
        expect(Number(answer.retryAfter), answer.body).toBeGreaterThan(0);
      } else if (answer.code !== 0) {
        expect([answer.status, answer.code], answer.body).toEqual([299, '90005']);
      }
    }
    const granted = answers.filter((a) => a.code === 0).length;
    expect(granted).toBeGreaterThan(0);
    expect(granted).toBeLessThanOrEqual(SEATS);
    expect(readiness.length).toBeGreaterThan(0);
    expect(readiness.filter((r) => r.status !== 200)).toEqual([]);
    // The pool's connections and the readiness probe's one.
    expect(Math.max(...peaks)).toBeLessThanOrEqual(POOL + 1);
    expect(server.child.exitCode, server.output().slice(-2000)).toBeNull();
  });

  it("keeps another license's heartbeats answering while a wave of check-outs waits on one license", async () => {
    // Check-outs run at most POOL − 3 at once (docs/operations.md, "Sizing the pool"): the two
    // here block on the held license, the rest wait their turn, and connections stay free for
    // heartbeats. Unbounded, the wave's transactions would take all five and the heartbeats
    // would queue behind every one of them until the hold ends.
    const target = await lockWith(world, { limitConcurrent: SEATS });
    const bystander = await lockWith(world, { limitConcurrent: 1 });
    const bystanderFp = fingerprint();
    const first = await checkOut(server.url, world.runtimeToken, { ...bystander, fingerprint: bystanderFp });
    const leaseId = (JSON.parse(first.body) as { data?: { leaseId?: string } }).data?.leaseId;
    expect(leaseId, first.body).toBeDefined();

    let released = false;
    const beats: Array<{ status: number; code: unknown; beforeRelease: boolean }> = [];
    let waving = true;
    const hold = h.database.db.transaction().execute(async (trx) => {
      await sql`select p.id from product_instances p join assets a on a.id = p.asset_id
        where a.asset_num = ${target.assetNum} and p.crm_product_id = ${target.crmProductId} for update`.execute(
        trx,
      );
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      released = true;
    });
    const wave = Promise.all(
      Array.from({ length: 100 }, () =>
        checkOut(server.url, world.runtimeToken, { ...target, fingerprint: fingerprint() }),
      ),
    ).finally(() => {
      waving = false;
    });
    // Beats start once the wave is in: its first check-outs hold their connections by then.
    await new Promise((resolve) => setTimeout(resolve, 500));
    while (waving && !released) {
      const beat = await runtimeCall(server.url, world.runtimeToken, `/leases/${leaseId}/heartbeat`, {
        fingerprint: bystanderFp,
      });
      beats.push({ status: beat.status, code: beat.code, beforeRelease: !released });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const answers = await wave;
    await hold;

    expect(beats.filter((b) => b.status !== 200 || b.code !== 0)).toEqual([]);
    expect(
      beats.filter((b) => b.beforeRelease).length,
      'heartbeats answered while the license was held',
    ).toBeGreaterThan(3);
    expect(answers.filter((a) => a.status === 500 || a.code === '500').map((a) => a.body)).toEqual([]);
    expect(answers.filter((a) => a.code === 0).length).toBeGreaterThan(0);
  });
});
