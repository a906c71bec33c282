import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import {
  checkOut,
  fingerprint,
  heartbeat,
  leaseOf,
  lockWith,
  runtimeWorld,
  type RuntimeWorld,
} from './runtime-helpers.js';

// RUNTIME_MACHINE_RATE_LIMIT_PER_MINUTE: a copy caught in a loop is slowed, not its vendor's fleet.
// The clock is injected and starts on a minute's first second, so the window is known.

let h: Harness;
let world: RuntimeWorld;
let clock = Math.ceil(Date.now() / 60_000) * 60_000 + 60_000;

beforeAll(async () => {
  h = await startHarness({ RUNTIME_MACHINE_RATE_LIMIT_PER_MINUTE: '4' }, { now: () => clock });
  world = await runtimeWorld(h);
});
afterAll(async () => h.close());

describe('the per-machine limit', () => {
  it('answers 429 with Retry-After past the limit to that machine alone, and lets it in the next minute', async () => {
    const target = await lockWith(world, { limitConcurrent: 5 });
    const looping = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: looping }));
    for (let call = 2; call <= 4; call += 1) leaseOf(await heartbeat(world, lease, looping));
    clock += 15_000;
    const slowed = await heartbeat(world, lease, looping);
    expect(slowed.statusCode, slowed.body).toBe(429);
    expect(slowed.json()).toMatchObject({ code: '429' });
    expect(slowed.json<{ message: string }>().message).toMatch(/at most 4 a minute/);
    expect(slowed.headers['retry-after']).toBe('45');
    // Its check-outs are slowed too: the machine is counted, whatever it calls.
    expect((await checkOut(world, { ...target, fingerprint: looping })).statusCode).toBe(429);

    // The rest of the fleet, same app, same license, is not.
    const other = fingerprint();
    const next = leaseOf(await checkOut(world, { ...target, fingerprint: other }));
    leaseOf(await heartbeat(world, next, other));

    clock += 45_000;
    leaseOf(await heartbeat(world, lease, looping));
  });
});
