import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nonce, startHarness, type Harness } from '../support/harness.js';
import {
  checkOut,
  fingerprint,
  leaseOf,
  lockWith,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
} from './runtime-helpers.js';

// What a replay of each runtime call can do (DOMAIN.md §12): a heartbeat, a check-out and a
// check-in record no nonce, since replaying them does nothing the token's holder could not do;
// a consume records its nonce, and a retried consume is applied once by its Idempotency-Key.

let h: Harness;
let world: RuntimeWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
});
afterAll(async () => h.close());

function call(path: string, body: object, query: string, headers: Record<string, string> = {}) {
  return h.app.inject({
    method: 'POST',
    url: `/runtime/v1${path}${query}`,
    headers: { authorization: `Bearer ${world.runtimeToken}`, ...headers },
    payload: body,
  });
}

const recorded = async (value: string) =>
  Number(
    (
      await h.database.db
        .selectFrom('nonces')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('nonce', '=', value)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('replays of heartbeats, check-outs and check-ins', () => {
  it('answer as the first call did, record no nonce, and take no second seat', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const fp = fingerprint();
    const once = `?g_nonce=${nonce()}`;
    const first = leaseOf(await call('/leases', { ...target, fingerprint: fp }, once));
    const again = leaseOf(await call('/leases', { ...target, fingerprint: fp }, once));
    expect(again).toMatchObject({ leaseId: first.leaseId, status: 'resumed' });
    const beat = `/leases/${first.leaseId}/heartbeat`;
    leaseOf(await call(beat, { fingerprint: fp }, once));
    leaseOf(await call(beat, { fingerprint: fp }, once));
    // Without any nonce too: nothing to record.
    leaseOf(await call(beat, { fingerprint: fp }, ''));
    expect(await recorded(once.slice('?g_nonce='.length))).toBe(0);
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
    const out = `/leases/${first.leaseId}/check-in`;
    leaseOf(await call(out, { fingerprint: fp }, once));
    leaseOf(await call(out, { fingerprint: fp }, once));
    // The seat is free once, for one other machine.
    leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() }));
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
  });
});

describe('consume', () => {
  async function consumer(limitAmount: number) {
    const target = await lockWith(world, { limitAmount, limitConcurrent: 5 });
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    return (amount: number, key?: string, query = `?g_nonce=${nonce()}`) =>
      call(
        `/leases/${lease.leaseId}/consume`,
        { fingerprint: fp, amount },
        query,
        key === undefined ? {} : { 'idempotency-key': key },
      );
  }

  it('still refuses a replayed nonce (70001): a replay would count twice', async () => {
    const consume = await consumer(100);
    const query = `?g_nonce=${nonce()}`;
    expect(leaseOf(await consume(3, undefined, query))).toMatchObject({ consumed: 3 });
    refusalOf(await consume(3, undefined, query), '70001');
    refusalOf(await consume(3, undefined, ''), '70001');
    expect(leaseOf(await consume(1))).toMatchObject({ consumed: 4 });
  });

  it('answers a retry with the same Idempotency-Key with the first result and draws once', async () => {
    const consume = await consumer(10);
    const key = `order-${nonce()}`;
    const first = leaseOf(await consume(4, key));
    expect(first).toEqual({ consumed: 4, limit: 10, remaining: 6 });
    expect(leaseOf(await consume(4, key))).toEqual(first);
    expect(leaseOf(await consume(2, `other-${nonce()}`))).toEqual({ consumed: 6, limit: 10, remaining: 4 });
    // The same key for another amount is another call: refused, naming the header.
    expect(refusalOf(await consume(1, key), '90000')).toMatch(/Idempotency-Key/);
    expect(leaseOf(await consume(4, key))).toEqual(first);
  });

  it('applies concurrent duplicates once', async () => {
    const consume = await consumer(1000);
    const key = `burst-${nonce()}`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => consume(5, key)));
    for (const answer of answers)
      expect(leaseOf(answer)).toEqual({ consumed: 5, limit: 1000, remaining: 995 });
    expect(leaseOf(await consume(1))).toMatchObject({ consumed: 6 });
  });

  it('keeps no key for a refused consume: the retry is judged again', async () => {
    const consume = await consumer(5);
    const key = `big-${nonce()}`;
    refusalOf(await consume(6, key), '90007');
    refusalOf(await consume(6, key), '90007');
    expect(leaseOf(await consume(5, key))).toMatchObject({ consumed: 5, remaining: 0 });
  });

  it('refuses a malformed Idempotency-Key naming the header, and draws nothing', async () => {
    const consume = await consumer(10);
    for (const bad of ['has space', 'x'.repeat(256), 'ünïcode'])
      expect(refusalOf(await consume(1, bad), '90000')).toMatch(/idempotency-key/i);
    expect(leaseOf(await consume(1))).toMatchObject({ consumed: 1 });
  });
});
