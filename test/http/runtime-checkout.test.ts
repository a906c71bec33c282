import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, appToken, userToken } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { addMember, assign, setLocked } from '../support/order-fixtures.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  heartbeat,
  leaseOf,
  refusalOf,
  runtimeCaller,
  runtimeWorld,
  type RuntimeWorld,
  lockWith,
} from './runtime-helpers.js';

let h: Harness;
let world: RuntimeWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
});
afterAll(async () => h.close());

describe('check-out by a lock holder', () => {
  it('grants a lease with its limits, gives the same machine its lease back, and frees the seat on check-in', async () => {
    const { assetNum, crmProductId } = await lockWith(world, { limitConcurrent: 2 });
    const fp = fingerprint();
    const first = leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fp }));
    expect(first.status).toBe('granted');
    expect(first.assetNum).toBe(assetNum);
    expect(first.limits.concurrent).toBe(2);
    expect(first.offlineLease).toBeNull();
    expect(first.expiresAt).toBeGreaterThan(Date.now());

    const again = leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fp }));
    expect(again).toMatchObject({ leaseId: first.leaseId, status: 'resumed' });

    const secondFp = fingerprint();
    const second = leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: secondFp }));
    const message = refusalOf(
      await checkOut(world, { assetNum, crmProductId, fingerprint: fingerprint() }),
      '90005',
    );
    expect(message).toBe('all 2 seats of the product are in use (2 in use)');

    expect(refusalOf(await checkIn(world, second, fingerprint()), '90008')).toBe('no such lease');
    leaseOf(await checkIn(world, second, secondFp));
    leaseOf(await checkIn(world, second, secondFp));
    leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fingerprint() }));
  });

  it('matches the product by productUri as well', async () => {
    const { assetNum } = await lockWith(world, { productUri: 'uri-only-product' });
    const lease = leaseOf(
      await checkOut(world, { assetNum, productUri: 'uri-only-product', fingerprint: fingerprint() }),
    );
    expect(lease.status).toBe('granted');
  });

  it("refuses a product the lock does not carry, and another channel's lock as if it did not exist", async () => {
    const { assetNum, crmProductId } = await lockWith(world);
    refusalOf(
      await checkOut(world, { assetNum, crmProductId: 'no-such-product', fingerprint: fingerprint() }),
      '90001',
    );
    const stranger = await createTestApp(h, { scopes: ['auth_runtime'] });
    const strangerCall = runtimeCaller(h, await appToken(h, stranger));
    refusalOf(await strangerCall('/leases', { assetNum, crmProductId, fingerprint: fingerprint() }), '90001');
  });

  it('does not let another app heartbeat or check in a lease, nor another machine', async () => {
    const { assetNum, crmProductId } = await lockWith(world);
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fp }));
    const stranger = await createTestApp(h, { scopes: ['auth_runtime'], channels: world.app.channels });
    const strangerCall = runtimeCaller(h, await appToken(h, stranger));
    refusalOf(await strangerCall(`/leases/${lease.leaseId}/heartbeat`, { fingerprint: fp }), '90008');
    refusalOf(await strangerCall(`/leases/${lease.leaseId}/check-in`, { fingerprint: fp }), '90008');
    refusalOf(await heartbeat(world, lease, fingerprint()), '90008');
    leaseOf(await heartbeat(world, lease, fp));
  });

  it('refuses a disabled lock, a licence not valid yet and one that ended, each with its own code', async () => {
    const locked = await lockWith(world);
    await setLocked(world, [locked.assetNum], true);
    refusalOf(await checkOut(world, { ...locked, fingerprint: fingerprint() }), '90002');

    const later = await lockWith(world, {
      limitStartDate: Date.now() + 86_400_000,
      limitEndDate: Date.now() + 2 * 86_400_000,
    });
    expect(refusalOf(await checkOut(world, { ...later, fingerprint: fingerprint() }), '90003')).toMatch(
      /^the license is not valid yet \(from \d{4}-/,
    );

    const ended = await lockWith(world, {
      limitStartDate: 1_600_000_000_000,
      limitEndDate: 1_700_000_000_000,
    });
    expect(refusalOf(await checkOut(world, { ...ended, fingerprint: fingerprint() }), '90004')).toBe(
      `the license ended (at ${new Date(1_700_000_000_000).toISOString()})`,
    );
  });

  it('records every refusal in the audit log with its reason', async () => {
    const { assetNum, crmProductId } = await lockWith(world, { limitConcurrent: 1 });
    leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fingerprint() }));
    refusalOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fingerprint() }), '90005');
    const rows = await h.database.db
      .selectFrom('audit_log')
      .select(['action', 'detail', 'app_id'])
      .where('subject', '=', assetNum)
      .where('action', '=', 'lease.denied')
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.detail).toMatchObject({
      code: '90005',
      reason: 'all 1 seats of the product are in use (1 in use)',
      crmProductId,
    });
  });
});

describe('check-out by a member holder', () => {
  it("runs the member's assigned asset, and not an asset that is not his", async () => {
    const member = await addMember(world);
    const token = await userToken(h, world.app, member.account, member.password);
    const { assetNum, crmProductId } = await lockWith(world);
    refusalOf(await checkOut(world, { crmProductId, fingerprint: fingerprint() }, token), '90001');
    await assign(world, member.globalId, [assetNum]);
    const lease = leaseOf(await checkOut(world, { crmProductId, fingerprint: fingerprint() }, token));
    expect(lease.assetNum).toBe(assetNum);
  });

  it('refuses a user token issued to another app', async () => {
    const member = await addMember(world);
    const other = await createTestApp(h, { scopes: ['auth_me', 'auth_runtime'] });
    const token = await userToken(h, other, member.account, member.password);
    const reply = await checkOut(world, { crmProductId: 'x', fingerprint: fingerprint() }, token);
    expect(refusalOf(reply, '70001')).toBe('security check failed');
  });
});

describe('bad input and scopes', () => {
  it('names the field of bad input and changes nothing', async () => {
    const { assetNum, crmProductId } = await lockWith(world);
    expect(refusalOf(await checkOut(world, { assetNum, crmProductId }), '90000')).toMatch(/fingerprint/);
    expect(refusalOf(await checkOut(world, { assetNum, fingerprint: fingerprint() }), '90000')).toMatch(
      /crmProductId/,
    );
    expect(refusalOf(await checkOut(world, { crmProductId, fingerprint: fingerprint() }), '90000')).toMatch(
      /assetNum/,
    );
    expect(
      refusalOf(
        await checkOut(world, { assetNum, crmProductId, fingerprint: 'bad fp with spaces' }),
        '90000',
      ),
    ).toMatch(/fingerprint/);
    expect(
      refusalOf(
        await checkOut(world, { assetNum, crmProductId: 'a\u0007b', fingerprint: fingerprint() }),
        '90000',
      ),
    ).toMatch(/crmProductId/);
    expect(
      refusalOf(
        await checkOut(world, { assetNum, crmProductId, fingerprint: fingerprint(), offlineDays: 400 }),
        '90000',
      ),
    ).toMatch(/offlineDays/);
    refusalOf(await world.runtime('/leases/not-a-lease/heartbeat', { fingerprint: fingerprint() }), '90000');
    const count = await h.database.db
      .selectFrom('runtime_leases')
      .innerJoin('assets', 'assets.id', 'runtime_leases.asset_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('assets.asset_num', '=', assetNum)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it('refuses a token without auth_runtime (60000), and a malformed nonce (70001) where none is needed', async () => {
    const orderOnly = await appToken(h, world.app, 'auth_order');
    const reply = await runtimeCaller(h, orderOnly)('/leases', {
      assetNum: 'x',
      crmProductId: 'y',
      fingerprint: fingerprint(),
    });
    refusalOf(reply, '60000');
    const send = (query: string) =>
      h.app.inject({
        method: 'POST',
        url: `/runtime/v1/leases${query}`,
        headers: { authorization: `Bearer ${world.runtimeToken}` },
        payload: { assetNum: 'x', crmProductId: 'y', fingerprint: fingerprint() },
      });
    refusalOf(await send('?g_nonce=short'), '70001');
    refusalOf(await send('?g_nonce='), '70001');
    refusalOf(await send(''), '90001');
  });

  it('refuses an offline lease the app is not allowed to hand out', async () => {
    const { assetNum, crmProductId } = await lockWith(world);
    expect(
      refusalOf(
        await checkOut(world, { assetNum, crmProductId, fingerprint: fingerprint(), offlineDays: 3 }),
        '90011',
      ),
    ).toMatch(/at most 0/);
  });
});
