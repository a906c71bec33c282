import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countLiveLeases } from '../../src/db/migrations/0187_runtime_live_use.js';
import { RuntimeRepository } from '../../src/domain/runtime/runtime.repository.js';
import { onPostgres } from '../support/database.js';
import { startHarness, type Harness } from '../support/harness.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  heartbeat,
  leaseOf,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
  lockWith,
  type Lease,
} from './runtime-helpers.js';

// The runtime's clock is injected: leases expire, validity windows end and usage accumulates
// without waiting. Leases live 60 s past their last heartbeat here.

let h: Harness;
let world: RuntimeWorld;
let clock = Date.now();

const advance = (seconds: number) => {
  clock += seconds * 1000;
};

beforeAll(async () => {
  h = await startHarness({ RUNTIME_LEASE_SECONDS: '60' }, { now: () => clock });
  world = await runtimeWorld(h);
});
afterAll(async () => h.close());

describe('leases whose heartbeats stop', () => {
  it('expire after the lease time and free their seat', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    expect(lease.expiresAt).toBe(clock + 60_000);
    expect(lease.heartbeatIntervalSeconds).toBe(12);
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
    advance(61);
    refusalOf(await heartbeat(world, lease, fp), '90010');
    const next = leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() }));
    expect(next.status).toBe('granted');
  });

  it('a heartbeat in time extends the lease', async () => {
    const target = await lockWith(world, {});
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    for (let beat = 0; beat < 5; beat += 1) {
      advance(50);
      const answer = leaseOf(await heartbeat(world, lease, fp)) as unknown as { expiresAt: number };
      expect(answer.expiresAt).toBe(clock + 60_000);
    }
  });

  it('writes the lease row only when fewer than two and a half beats of lease remain, and frees the seat within the lease time of the last beat', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const fp = fingerprint();
    const start = clock;
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    const row = () =>
      h.database.db
        .selectFrom('runtime_leases')
        .select(['heartbeat_at', 'expires_at', 'used_ms'])
        .where('id', '=', lease.leaseId)
        .executeTakeFirstOrThrow();
    const written = await row();
    type Beaten = { expiresAt: number; usedSeconds: number };
    // Beats every 12 s (the interval it is told): the stored expiry, 60 s out, stays at least 30 s
    // (two and a half beats) ahead of the first two, which change nothing stored yet count the
    // time used.
    for (const beat of [1, 2]) {
      advance(12);
      const answer = leaseOf(await heartbeat(world, lease, fp)) as unknown as Beaten;
      expect(answer).toMatchObject({ expiresAt: start + 60_000, usedSeconds: 12 * beat });
      expect(await row()).toEqual(written);
    }
    advance(12);
    const third = leaseOf(await heartbeat(world, lease, fp)) as unknown as Beaten;
    expect(third).toMatchObject({ expiresAt: clock + 60_000, usedSeconds: 36 });
    expect(await row()).toEqual({
      heartbeat_at: new Date(clock),
      expires_at: new Date(clock + 60_000),
      used_ms: 36_000,
    });
    // Two more beats unwritten, then the copy stops: the seat stays held, never handed out twice,
    // and is free no later than the lease time after the last beat.
    advance(12);
    leaseOf(await heartbeat(world, lease, fp));
    advance(12);
    leaseOf(await heartbeat(world, lease, fp));
    const lastBeat = clock;
    advance(35);
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
    clock = lastBeat + 60_000;
    expect(leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() })).status).toBe('granted');
  });

  it('housekeeping ends expired leases and charges their use up to expiry', async () => {
    const target = await lockWith(world, { limitTimeDuration: 1000 });
    const fp = fingerprint();
    leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    advance(3600);
    if (onPostgres()) {
      // The whole-database sweep with this file's clock an hour ahead would end the live leases
      // of every other file sharing the database: the product's own sweep (the next check-out
      // runs it) ends this one the same way.
      leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() }));
    } else {
      expect(await h.app.services.runtime.endExpired()).toBeGreaterThanOrEqual(1);
    }
    const row = await h.database.db
      .selectFrom('runtime_leases')
      .innerJoin('assets', 'assets.id', 'runtime_leases.asset_id')
      .select(['runtime_leases.end_reason', 'runtime_leases.used_ms'])
      .where('assets.asset_num', '=', target.assetNum)
      .where('runtime_leases.fingerprint', '=', fp)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ end_reason: 'expired', used_ms: 60_000 });
  });
});

describe('validity windows and accumulated time', () => {
  it('a licence that ends while running is revoked at the next heartbeat, and refused after', async () => {
    const target = await lockWith(world, { limitStartDate: clock - 1000, limitEndDate: clock + 100_000 });
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    advance(50);
    leaseOf(await heartbeat(world, lease, fp));
    advance(55);
    expect(refusalOf(await heartbeat(world, lease, fp), '90009')).toBe(
      'the lease was revoked: the license ended',
    );
    refusalOf(await checkOut(world, { ...target, fingerprint: fp }), '90004');
  });

  it('a licence that starts later is refused until it starts', async () => {
    const target = await lockWith(world, {
      limitStartDate: clock + 3_600_000,
      limitEndDate: clock + 7_200_000,
    });
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90003');
    advance(3601);
    leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() }));
  });

  it("keeps a time-limited license's use without summing its live leases, equal to their sum at every step", async () => {
    const target = await lockWith(world, { limitTimeDuration: 100_000, limitConcurrent: 10 });
    const product = await h.database.db
      .selectFrom('product_instances as p')
      .innerJoin('assets as a', 'a.id', 'p.asset_id')
      .select('p.id')
      .where('a.asset_num', '=', target.assetNum)
      .executeTakeFirstOrThrow();
    const productId = Number(product.id);
    // The use as the leases' rows say it: what ended leases left, and each live one up to now or its expiry.
    const summed = async () => {
      const at = new Date(clock);
      const row = await sql<{ used: string }>`
        select (coalesce((select used_ms from runtime_usage where product_id = ${productId}), 0)
                + coalesce((select sum(used_ms + greatest(0, floor(extract(epoch from (least(${at}::timestamptz, expires_at) - heartbeat_at)) * 1000)))
                              from runtime_leases where product_id = ${productId} and ended_at is null), 0))::text as used
      `.execute(h.database.db);
      return Number(row.rows[0]?.used);
    };
    const kept = async () =>
      (await new RuntimeRepository(h.database.db).usage(productId, new Date(clock))).usedMs;
    const machines = Array.from({ length: 4 }, () => fingerprint());
    const leases = [];
    for (const fp of machines) {
      leases.push(leaseOf(await checkOut(world, { ...target, fingerprint: fp })));
      advance(7);
    }
    expect(await kept()).toBe(await summed());
    advance(25);
    for (const [i, fp] of machines.entries())
      if (i < 3) leaseOf(await heartbeat(world, leases[i] as Lease, fp));
    expect(await kept()).toBe(await summed());
    leaseOf(await checkIn(world, leases[1] as Lease, machines[1] as string));
    advance(50);
    // The fourth stopped beating 75 s ago: its lease ran out at its expiry, unended yet.
    expect(await kept()).toBe(await summed());
    expect(await kept()).toBeGreaterThan(0);
    // A check-out of the license ends it (charged up to its expiry), and counts itself in.
    leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() }));
    expect(await kept()).toBe(await summed());
    advance(30);
    expect(await kept()).toBe(await summed());
    // Migration 0187 counts the live leases there were before it the same way.
    await h.database.db
      .updateTable('runtime_usage')
      .set({ live_leases: 0, live_base_ms: 0 })
      .where('product_id', '=', productId)
      .execute();
    await countLiveLeases(h.database.db as unknown as Kysely<unknown>);
    expect(await kept()).toBe(await summed());
  });

  it('usage accumulates across leases and machines against limitTimeDuration', async () => {
    const target = await lockWith(world, { limitTimeDuration: 120, limitConcurrent: 5 });
    const fpA = fingerprint();
    const a = leaseOf(await checkOut(world, { ...target, fingerprint: fpA }));
    advance(40);
    leaseOf(await heartbeat(world, a, fpA));
    advance(30);
    expect((leaseOf(await checkIn(world, a, fpA)) as unknown as { usedSeconds: number }).usedSeconds).toBe(
      70,
    );

    const fpB = fingerprint();
    const b = leaseOf(await checkOut(world, { ...target, fingerprint: fpB }));
    advance(45);
    leaseOf(await heartbeat(world, b, fpB));
    advance(10);
    expect(refusalOf(await heartbeat(world, b, fpB), '90009')).toBe(
      'the lease was revoked: the usage time is used up',
    );
    expect(refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90006')).toBe(
      'the product has used its 120 s of usage time (125 s used)',
    );
  });
});
