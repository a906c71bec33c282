import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { setLocked } from '../support/order-fixtures.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  heartbeat,
  leaseOf,
  lockWith,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
} from './runtime-helpers.js';

// Heartbeats that arrive together share one statement (heartbeat-batcher.ts). Each must still get
// its own lease's answer: repeats of one lease, another machine's fingerprint, an ended lease and a
// revoked one mixed into the same burst.

let h: Harness;
let world: RuntimeWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
});
afterAll(async () => h.close());

interface Data {
  leaseId: string;
  expiresAt: number;
}

describe('heartbeats arriving together', () => {
  it('each answers for its own lease, repeats of one lease included', async () => {
    const { assetNum, crmProductId } = await lockWith(world, { limitConcurrent: 12 });
    const running = [];
    for (let i = 0; i < 12; i += 1) {
      const fp = fingerprint();
      running.push({
        fp,
        lease: leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fp })),
      });
    }
    const before = await h.database.db
      .selectFrom('runtime_leases')
      .select(['id', 'heartbeat_at'])
      .where(
        'id',
        'in',
        running.map((r) => r.lease.leaseId),
      )
      .execute();
    // Each lease three times in one burst: 36 heartbeats.
    const burst = [...running, ...running, ...running];
    const replies = await Promise.all(burst.map((r) => heartbeat(world, r.lease, r.fp)));
    replies.forEach((reply, i) => {
      const body = reply.json() as { code: number | string; data: Data };
      expect(body.code).toBe(0);
      expect(body.data.leaseId).toBe(burst[i]?.lease.leaseId);
    });
    const after = await h.database.db
      .selectFrom('runtime_leases')
      .select(['id', 'heartbeat_at', 'ended_at'])
      .where(
        'id',
        'in',
        running.map((r) => r.lease.leaseId),
      )
      .execute();
    expect(after).toHaveLength(12);
    for (const row of after) {
      expect(row.ended_at).toBeNull();
      const old = before.find((b) => b.id === row.id);
      expect(new Date(row.heartbeat_at).getTime()).toBeGreaterThanOrEqual(
        new Date(old?.heartbeat_at ?? 0).getTime(),
      );
    }
  });

  it('a wrong machine, an ended lease and a revoked lease in the burst get their own refusals', async () => {
    const good = await lockWith(world, { limitConcurrent: 5 });
    const doomed = await lockWith(world, {});
    const fps = [fingerprint(), fingerprint(), fingerprint()];
    const live = leaseOf(await checkOut(world, { ...good, fingerprint: fps[0] }));
    const ended = leaseOf(await checkOut(world, { ...good, fingerprint: fps[1] }));
    const revoked = leaseOf(await checkOut(world, { ...doomed, fingerprint: fps[2] }));
    expect((await checkIn(world, ended, fps[1] as string)).json()).toMatchObject({ code: 0 });
    await setLocked(world, [doomed.assetNum], true);

    const [ok, otherMachine, afterCheckIn, withdrawn, okAgain] = await Promise.all([
      heartbeat(world, live, fps[0] as string),
      heartbeat(world, live, fingerprint()),
      heartbeat(world, ended, fps[1] as string),
      heartbeat(world, revoked, fps[2] as string),
      heartbeat(world, live, fps[0] as string),
    ]);
    expect(ok?.json()).toMatchObject({ code: 0, data: { leaseId: live.leaseId } });
    expect(okAgain?.json()).toMatchObject({ code: 0, data: { leaseId: live.leaseId } });
    refusalOf(otherMachine as NonNullable<typeof otherMachine>, '90008');
    refusalOf(afterCheckIn as NonNullable<typeof afterCheckIn>, '90008');
    expect(refusalOf(withdrawn as NonNullable<typeof withdrawn>, '90009')).toBe(
      'the lease was revoked: the asset was disabled',
    );
  });
});
