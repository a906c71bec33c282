import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeRepository } from '../../src/domain/runtime/runtime.repository.js';
import { RollupService } from '../../src/domain/usage/rollup.service.js';
import { startHarness, type Harness } from '../support/harness.js';
import { rollAll } from '../support/rollups.js';
import {
  dailyOf,
  daysOf,
  freshProduct,
  insertLease,
  recount,
  rolled,
  usageWorld,
  type UsageWorld,
} from './usage-world.js';

// Random lease histories (overlapping leases, check-ins, revocations, expiries found by the sweep,
// offline leases that keep their seat after check-in, heartbeats) with the rollup job run at random
// moments in between: once every lease has ended, the rollups equal a recount from the raw rows.

const MINUTE = 60_000;

type Op =
  | { kind: 'checkOut'; offline: boolean; minutes: number }
  | { kind: 'heartbeat'; pick: number }
  | { kind: 'checkIn'; pick: number }
  | { kind: 'revoke'; pick: number }
  | { kind: 'sweep' }
  | { kind: 'roll' }
  | { kind: 'advance'; minutes: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('checkOut' as const),
      offline: fc.boolean(),
      minutes: fc.integer({ min: 1, max: 600 }),
    }),
  },
  fc.record({ kind: fc.constant('heartbeat' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('checkIn' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('revoke' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('sweep' as const) }),
  fc.record({ kind: fc.constant('roll' as const) }),
  fc.record({ kind: fc.constant('advance' as const), minutes: fc.integer({ min: 0, max: 200 }) }),
);

let h: Harness;
let world: UsageWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await usageWorld(h);
});
afterAll(async () => h.close());

describe('usage rollups', () => {
  it('equal a recount of the raw leases after any history', async () => {
    const db = h.database.db;
    let counted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 59 }),
        async (ops, startMinute) => {
          let t = Date.UTC(2031, 0, 1, 22) + startMinute * MINUTE;
          const rollups = new RollupService(
            db,
            { leaseRetentionDays: 90, hourlyRetentionDays: 7300, rollupRetentionDays: 7300 },
            { now: () => t, batch: 7 },
          );
          const repository = new RuntimeRepository(db);
          const productId = await freshProduct(db, world, 3);
          const leases: Array<{ id: string; offline: boolean; minutes: number; expiresAt: number }> = [];
          const pick = (n: number) => (leases.length === 0 ? undefined : leases[n % leases.length]);
          for (const step of ops) {
            switch (step.kind) {
              case 'checkOut': {
                const expiresAt = t + step.minutes * MINUTE;
                const id = await insertLease(db, world, productId, t, expiresAt, step.offline);
                leases.push({ id, offline: step.offline, minutes: step.minutes, expiresAt });
                break;
              }
              case 'heartbeat': {
                const lease = pick(step.pick);
                if (lease === undefined || lease.offline || lease.expiresAt <= t) break;
                lease.expiresAt = t + lease.minutes * MINUTE;
                await repository.touch(lease.id, new Date(t), new Date(lease.expiresAt), false);
                break;
              }
              case 'checkIn': {
                const lease = pick(step.pick);
                if (lease === undefined) break;
                const held = lease.offline && lease.expiresAt > t ? new Date(lease.expiresAt) : null;
                await repository.endLease(lease.id, new Date(t), 'checked_in', held);
                break;
              }
              case 'revoke': {
                const lease = pick(step.pick);
                if (lease !== undefined) await repository.endLease(lease.id, new Date(t), 'revoked');
                break;
              }
              case 'sweep':
                await repository.endExpired(new Date(t), productId);
                break;
              case 'roll':
                await rollups.run();
                break;
              case 'advance':
                t += step.minutes * MINUTE;
                break;
            }
          }
          // Every lease ends: the online ones expire, the offline ones are checked in or expire.
          t += 11 * 60 * MINUTE;
          await repository.endExpired(new Date(t), productId);
          // Waits out another server's run on the shared database: a busy run would leave ours.
          await rollAll(rollups);
          const expected = await recount(db, productId, t);
          expect(await rolled(db, productId)).toEqual(expected);
          if ([...expected.values()].some((c) => c.peak > 1)) counted += 1;
          expect(await dailyOf(db, productId)).toEqual(daysOf(expected));
        },
      ),
      { numRuns: 60 },
    );
    // Not a vacuous pass: most histories had overlapping seats to count.
    expect(counted).toBeGreaterThan(10);
  });
});
