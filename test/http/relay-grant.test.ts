import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolGrantClaims } from '../../src/domain/relay/pool-grant.js';
import { relayPublicJwk } from '../../src/domain/relay/relay-lease.js';
import { RELAY_REQUEST_ISSUER, signRelayRequest } from '../../src/domain/relay/relay-request.js';
import { signRelayReturn } from '../../src/domain/relay/relay-return.js';
import { grantTokenOfCode, relayRequestCode } from '../../src/domain/relay/relay-typed.js';
import { generateEd25519, type Ed25519PrivateJwk } from '../../src/domain/runtime-keys/ed25519.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { buyAsset, productSpec } from '../support/order-fixtures.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  leaseOf,
  lockWith,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
} from './runtime-helpers.js';

// POST /admin/relays/grants (`keyward relay grant`): a relay's request answered with a pool grant
// the vendor's key signed, whose seats the vendor holds until its end: online check-outs see them
// taken. A request is answered once, however often or concurrently sent; a request the vendor
// cannot answer is refused naming the field, and holds nothing.

let h: Harness;
let world: RuntimeWorld;
let clock = Date.now();
let relayKey: Ed25519PrivateJwk;

beforeAll(async () => {
  h = await startHarness({}, { now: () => clock });
  world = await runtimeWorld(h);
  relayKey = await generateEd25519();
});
afterAll(() => h.close());

type Ask = {
  assetNum: string;
  crmProductId: string | null;
  seats: number;
  timeSeconds?: number;
  amount?: number;
};

async function requestFor(licenses: Ask[], days = 30, relayId = uniqueCode('relay_')): Promise<string> {
  const iat = Math.floor(clock / 1000);
  return signRelayRequest(
    {
      iss: RELAY_REQUEST_ISSUER,
      sub: relayId,
      iat,
      relay: { key: await relayPublicJwk(relayKey), fingerprint: 'relay-machine-fp-01' },
      asks: { licenses, until: iat + days * 86_400 },
    },
    relayKey,
  );
}

function grant(request: string, terms: Record<string, unknown> = {}) {
  return h.app.inject({
    method: 'POST',
    url: '/admin/relays/grants',
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { request, ...terms },
  });
}

interface Answer {
  grantId: string;
  relayId: string;
  token: string;
  code: string | null;
  machines: string[] | null;
  overage: { policy: string; seats: number };
  endsAt: number;
  made: boolean;
}

async function granted(request: string, terms: Record<string, unknown> = {}): Promise<Answer> {
  const reply = await grant(request, terms);
  expect(reply.statusCode, reply.body).toBe(200);
  return reply.json() as Answer;
}

function consume(lease: { leaseId: string }, fp: string, amount: number) {
  return world.runtime(`/leases/${lease.leaseId}/consume`, { fingerprint: fp, amount });
}

function consumed(reply: Awaited<ReturnType<typeof consume>>): unknown {
  expect(reply.statusCode, reply.body).toBe(200);
  return (reply.json() as { data: unknown }).data;
}

async function returnOf(token: string): Promise<{ made: boolean; givenBack: unknown[] }> {
  const reply = await h.app.inject({
    method: 'POST',
    url: '/admin/relays/returns',
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { return: token },
  });
  expect(reply.statusCode, reply.body).toBe(200);
  return reply.json() as { made: boolean; givenBack: unknown[] };
}

async function grantCount(): Promise<number> {
  const row = await h.database.db
    .selectFrom('relay_grants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n);
}

async function refused(
  request: string,
  status: number,
  terms: Record<string, unknown> = {},
): Promise<string> {
  const reply = await grant(request, terms);
  expect(reply.statusCode, reply.body).toBe(status);
  return (reply.json() as { error: string }).error;
}

describe('a pool grant', () => {
  it("is signed by the vendor's key, names the relay's key, and holds its seats until it ends", async () => {
    const license = await lockWith(world, { limitConcurrent: 5 });
    const request = await requestFor([{ ...license, seats: 3 }]);
    const answer = await granted(request);
    expect(answer.made).toBe(true);

    const jwks = (
      await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    ).json() as JSONWebKeySet;
    const { payload, protectedHeader } = await jwtVerify(answer.token, createLocalJWKSet(jwks), {
      typ: 'keyward-grant+jwt',
    });
    const claims = payload as unknown as PoolGrantClaims;
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(claims.sub).toBe(answer.relayId);
    expect(claims.jti).toBe(answer.grantId);
    expect(claims.relay.key).toEqual(await relayPublicJwk(relayKey));
    expect(claims.relay.fingerprint).toBe('relay-machine-fp-01');
    expect(claims.licenses).toEqual([{ ...license, seats: 3 }]);
    expect(claims.exp * 1000).toBe(answer.endsAt);

    // Five seats, three held for the relay: two machines online, the third refused.
    const a = fingerprint();
    const leaseA = leaseOf(await checkOut(world, { ...license, fingerprint: a }));
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    refusalOf(await checkOut(world, { ...license, fingerprint: fingerprint() }), '90005');

    // The same request again: the same grant, nothing more held.
    leaseOf(await checkIn(world, leaseA, a));
    const again = await granted(request);
    expect(again).toMatchObject({ grantId: answer.grantId, token: answer.token, made: false });
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));

    // Past the grant's end its seats are free for machines online again.
    clock = answer.endsAt + 1000;
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    const audit = await h.database.db
      .selectFrom('audit_log')
      .select(['action', 'subject'])
      .where('action', '=', 'relay.granted')
      .where('subject', '=', answer.relayId)
      .execute();
    expect(audit).toHaveLength(1);
  });

  it('names each product of a lock asked for whole, with the seats asked', async () => {
    const [one, two] = [productSpec({ limitConcurrent: 4 }), productSpec({ limitConcurrent: 6 })];
    const assetNum = await buyAsset(world, [one, two]);
    const answer = await granted(await requestFor([{ assetNum, crmProductId: null, seats: 2 }]));
    const claims = decodeJwt(answer.token) as unknown as PoolGrantClaims;
    expect(claims.licenses).toEqual(
      expect.arrayContaining([
        { assetNum, crmProductId: one.crmProductId, seats: 2 },
        { assetNum, crmProductId: two.crmProductId, seats: 2 },
      ]),
    );
    expect(claims.licenses).toHaveLength(2);
  });

  it('ends no later than the license it gives seats of', async () => {
    const ends = clock + 10 * 86_400_000;
    const license = await lockWith(world, { limitConcurrent: 2, limitEndDate: ends });
    const answer = await granted(await requestFor([{ ...license, seats: 1 }], 90));
    expect(answer.endsAt).toBeLessThanOrEqual(ends);
    expect(answer.endsAt).toBeGreaterThan(ends - 86_400_000);
  });

  it('answers concurrent copies of one request with one grant holding its seats once', async () => {
    const license = await lockWith(world, { limitConcurrent: 4 });
    const request = await requestFor([{ ...license, seats: 2 }]);
    const answers = await Promise.all(Array.from({ length: 5 }, () => grant(request)));
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    const ids = new Set(answers.map((r) => (r.json() as Answer).grantId));
    expect(ids.size).toBe(1);
    expect(answers.filter((r) => (r.json() as Answer).made)).toHaveLength(1);
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    refusalOf(await checkOut(world, { ...license, fingerprint: fingerprint() }), '90005');
  });

  it('never gives more seats than the license has, between a grant and machines checking out at once', async () => {
    for (let round = 0; round < 3; round += 1) {
      const license = await lockWith(world, { limitConcurrent: 10 });
      const request = await requestFor([{ ...license, seats: 4 }]);
      const [grantReply, ...checkOuts] = await Promise.all([
        grant(request),
        ...Array.from({ length: 12 }, () => checkOut(world, { ...license, fingerprint: fingerprint() })),
      ]);
      const held = grantReply?.statusCode === 200 ? 4 : 0;
      if (held === 0) expect(grantReply?.statusCode, grantReply?.body).toBe(409);
      let seated = checkOuts.filter((r) => r.statusCode === 200).length;
      const refusedSeats = checkOuts.filter((r) => (r.json() as { code: unknown }).code === '90005').length;
      expect(seated + refusedSeats).toBe(12);
      expect(seated + held).toBeLessThanOrEqual(10);
      // A grant refused for want of seats gives back those it had taken (machines checking out
      // meanwhile may have found them taken): whoever checks out next gets them, and no more.
      for (let more = 0; more < 12; more += 1) {
        const next = await checkOut(world, { ...license, fingerprint: fingerprint() });
        if (next.statusCode !== 200) break;
        seated += 1;
      }
      expect(seated + held, `grant ${grantReply?.statusCode} ${grantReply?.body.slice(0, 200)}`).toBe(10);
    }
  });

  it('is refused, naming the field and holding nothing, when the vendor cannot give what is asked', async () => {
    const grantsBefore = await grantCount();
    const license = await lockWith(world, { limitConcurrent: 3 });
    const other = await lockWith(world, { limitConcurrent: 3 });
    // More than the license has.
    expect(await refused(await requestFor([{ ...license, seats: 4 }]), 409)).toMatch(
      /^asks\.licenses\[0\]\.seats: .* has 3 seats in all; 4 asked/,
    );
    // More than are free now: two machines hold seats, three asked; the other license's ask is
    // rolled back with it.
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    expect(
      await refused(
        await requestFor([
          { ...other, seats: 3 },
          { ...license, seats: 3 },
        ]),
        409,
      ),
    ).toMatch(/^asks\.licenses\[1\]\.seats: .* has 1 of the 3 seats asked free now/);
    for (let i = 0; i < 3; i += 1) leaseOf(await checkOut(world, { ...other, fingerprint: fingerprint() }));
    expect(
      await refused(await requestFor([{ assetNum: 'NO-SUCH-LOCK-1', crmProductId: null, seats: 1 }]), 400),
    ).toMatch(/^asks\.licenses\[0\]\.assetNum: no lock has this number/);
    expect(
      await refused(await requestFor([{ ...license, crmProductId: 'no-such-product', seats: 1 }]), 400),
    ).toMatch(/^asks\.licenses\[0\]\.crmProductId: the lock runs no such product/);
    // A request changed after the relay signed it.
    const [header, payload, signature] = (await requestFor([{ ...license, seats: 1 }])).split('.');
    const claims = JSON.parse(Buffer.from(payload as string, 'base64url').toString()) as {
      asks: { licenses: Ask[] };
    };
    claims.asks.licenses = [{ ...other, seats: 3 }];
    const changed = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    expect(await refused(changed, 400)).toMatch(/^request: has a signature that does not verify/);
    expect(await refused('not a request', 400)).toMatch(/^request: is not a relay request/);
    // A license with a usage limit is granted only with a share of it asked (the relay and the
    // vendor would otherwise each spend it whole); a share of a limit the license lacks is a mistake.
    const timed = await lockWith(world, { limitConcurrent: 5, limitTimeDuration: 3600 });
    expect(await refused(await requestFor([{ ...timed, seats: 1 }]), 400)).toMatch(
      /^asks\.licenses\[0\]\.timeSeconds: .* has a usage limit of 3600; ask the relay's share of it/,
    );
    const metered = await lockWith(world, { limitConcurrent: 5, limitAmount: 100 });
    expect(await refused(await requestFor([{ ...metered, seats: 1 }]), 400)).toMatch(
      /^asks\.licenses\[0\]\.amount: .* has a usage limit of 100/,
    );
    expect(await refused(await requestFor([{ ...license, seats: 1, amount: 5 }]), 400)).toMatch(
      /^asks\.licenses\[0\]\.amount: no product asked has an amount limit to share/,
    );
    expect(await refused(await requestFor([{ ...license, seats: 1, timeSeconds: 5 }]), 400)).toMatch(
      /^asks\.licenses\[0\]\.timeSeconds: no product asked has a time limit to share/,
    );
    expect(await grantCount()).toBe(grantsBefore);
  });

  it('carries the machines and overage the vendor sets, and is answered once on those terms', async () => {
    const license = await lockWith(world, { limitConcurrent: 4 });
    const request = await requestFor([{ ...license, seats: 2 }]);
    const machines = ['lab-machine-0001', 'lab-machine-0002'];
    const answer = await granted(request, { machines, overage: 3 });
    const claims = decodeJwt(answer.token) as unknown as PoolGrantClaims;
    expect(claims.machines).toEqual(machines);
    expect(claims.overage).toEqual({ policy: 'allow', seats: 3 });
    expect(answer.machines).toEqual(machines);
    // The overage is not held at the vendor: two of four seats are, two are free online.
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    refusalOf(await checkOut(world, { ...license, fingerprint: fingerprint() }), '90005');
    // Again on the same terms: the same grant; on others, refused (a new request is needed).
    expect((await granted(request, { machines, overage: 3 })).grantId).toBe(answer.grantId);
    const before = await grantCount();
    expect(await refused(request, 409, { overage: 1 })).toMatch(/^request: was answered before with other/);
    expect(await refused(request, 409)).toMatch(/^request: was answered before with other/);
    expect(await grantCount()).toBe(before);
    // Left out: any machine, overage refused.
    const plain = await granted(
      await requestFor([{ ...(await lockWith(world, { limitConcurrent: 1 })), seats: 1 }]),
    );
    expect(plain.machines).toBeNull();
    expect(plain.overage).toEqual({ policy: 'refuse', seats: 0 });
  });

  it('refuses terms it cannot carry, naming the field, and holds nothing', async () => {
    const license = await lockWith(world, { limitConcurrent: 2 });
    const request = await requestFor([{ ...license, seats: 1 }]);
    const before = await grantCount();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ machines: [] }, /machines/],
      [
        { machines: ['lab-machine-0001', 'lab-machine-0001'] },
        /^machines\[1\]: lists lab-machine-0001 twice/,
      ],
      [{ machines: ['short'] }, /machines/],
      [{ machines: ['has a space in it'] }, /machines/],
      [{ overage: -1 }, /overage/],
      [{ overage: 1.5 }, /overage/],
      [{ overage: 2_000_000 }, /overage/],
      [{ overage: '2' }, /overage/],
    ];
    for (const [terms, message] of cases) {
      expect(await refused(request, 400, terms), JSON.stringify(terms)).toMatch(message);
    }
    expect(await grantCount()).toBe(before);
    // Nothing held: both seats free online.
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
    leaseOf(await checkOut(world, { ...license, fingerprint: fingerprint() }));
  });

  it('takes a request as its typed code, answers with the grant as one, and refuses a mistyped code', async () => {
    const license = await lockWith(world, { limitConcurrent: 3 });
    const request = await requestFor([{ ...license, seats: 1 }]);
    const code = await relayRequestCode(request);
    expect(code).not.toBeNull();
    // The same request by code and by file: one grant.
    const byCode = await granted(code ?? '');
    expect(byCode.made).toBe(true);
    expect((await granted(request)).grantId).toBe(byCode.grantId);
    // The grant's code rebuilds the very grant for that relay.
    expect(byCode.code).not.toBeNull();
    const jwks = (
      await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    ).json() as JSONWebKeySet;
    const rebuilt = grantTokenOfCode(byCode.code ?? '', {
      relayId: byCode.relayId,
      relayKey: await relayPublicJwk(relayKey),
      fingerprint: 'relay-machine-fp-01',
      vendorKids: jwks.keys.map((k) => k.kid ?? ''),
    });
    expect(rebuilt).toBe(byCode.token);
    // One character changed in the third group: refused, naming the group, nothing granted.
    const other = await relayRequestCode(await requestFor([{ ...license, seats: 1 }]));
    const groups = (other ?? '').split('-');
    const third = groups[2] ?? '';
    groups[2] = `${third[0] === '0' ? '1' : '0'}${third.slice(1)}`;
    const before = await grantCount();
    expect(await refused(groups.join('-'), 400)).toMatch(/^request: as a typed code, group 3 does not check/);
    expect(await grantCount()).toBe(before);
  });

  it("holds the relay's share of a license's usage limits, and gives back what its return says went unused", async () => {
    const metered = await lockWith(world, { limitConcurrent: 5, limitAmount: 100 });
    const timed = await lockWith(world, { limitConcurrent: 5, limitTimeDuration: 3600 });
    const request = await requestFor([
      { ...metered, seats: 2, amount: 60 },
      { ...timed, seats: 1, timeSeconds: 1800 },
    ]);
    const answer = await granted(request);
    const claims = decodeJwt(answer.token) as unknown as PoolGrantClaims;
    expect(claims.licenses).toEqual([
      { ...metered, seats: 2, amount: 60 },
      { ...timed, seats: 1, timeSeconds: 1800 },
    ]);
    // The grant's code carries the shares (a version-2 code) and rebuilds the very token.
    const code = answer.code;
    if (code === null) throw new Error('a grant of two licenses has a typed code');
    expect(
      grantTokenOfCode(code, {
        relayId: answer.relayId,
        relayKey: claims.relay.key,
        fingerprint: claims.relay.fingerprint,
        vendorKids: [String(decodeProtectedHeader(answer.token).kid)],
      }),
    ).toBe(answer.token);
    // The same request again holds nothing more.
    expect((await granted(request)).made).toBe(false);

    // Online, 40 of the 100 are left to consume; the 41st is refused.
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...metered, fingerprint: fp }));
    expect(refusalOf(await consume(lease, fp, 41), '90007')).toMatch(/100/);
    expect(consumed(await consume(lease, fp, 40))).toEqual({ consumed: 100, limit: 100, remaining: 0 });

    // Another relay is refused more than what is left, naming the field; nothing is held.
    const grantsBefore = await grantCount();
    expect(await refused(await requestFor([{ ...metered, seats: 1, amount: 1 }]), 409)).toBe(
      `asks.licenses[0].amount: ${metered.crmProductId} has 0 of its 100 left; 1 asked`,
    );
    expect(await refused(await requestFor([{ ...timed, seats: 1, timeSeconds: 1801 }]), 409)).toBe(
      `asks.licenses[0].timeSeconds: ${timed.crmProductId} has 1800 of its 3600 seconds left; 1801 asked`,
    );
    expect(await grantCount()).toBe(grantsBefore);

    // The relay returns the grant having used 25 of its 60 and 600 of its 1800 seconds: the rest
    // goes back to the licenses, once.
    const returned = await signRelayReturn(
      {
        iss: RELAY_REQUEST_ISSUER,
        sub: answer.relayId,
        jti: randomUUID(),
        iat: Math.floor(clock / 1000),
        grant: answer.grantId,
        used: [
          { assetNum: metered.assetNum, crmProductId: metered.crmProductId, amount: 25 },
          { assetNum: timed.assetNum, crmProductId: timed.crmProductId, timeSeconds: 600 },
        ],
      },
      relayKey,
    );
    const back = await returnOf(returned);
    expect(back.made).toBe(true);
    expect(back.givenBack).toEqual([
      { assetNum: metered.assetNum, crmProductId: metered.crmProductId, timeSeconds: null, amount: 35 },
      { assetNum: timed.assetNum, crmProductId: timed.crmProductId, timeSeconds: 1200, amount: null },
    ]);
    expect(await returnOf(returned)).toMatchObject({ made: false, givenBack: [] });
    expect(consumed(await consume(lease, fp, 35))).toEqual({ consumed: 100, limit: 100, remaining: 0 });
    expect(refusalOf(await consume(lease, fp, 1), '90007')).toMatch(/100/);
    // 3000 of the 3600 seconds are free again: a grant of 3001 is refused, of 3000 made.
    expect(await refused(await requestFor([{ ...timed, seats: 1, timeSeconds: 3001 }]), 409)).toMatch(
      /has 3000 of its 3600 seconds left/,
    );
    expect((await granted(await requestFor([{ ...timed, seats: 1, timeSeconds: 3000 }]))).made).toBe(true);
  });

  it('never lets a grant and machines consuming at once pass an amount limit together', async () => {
    for (let round = 0; round < 3; round += 1) {
      const metered = await lockWith(world, { limitConcurrent: 20, limitAmount: 100 });
      const machinesLeases = [];
      for (let i = 0; i < 8; i += 1) {
        const fp = fingerprint();
        machinesLeases.push({ fp, lease: leaseOf(await checkOut(world, { ...metered, fingerprint: fp })) });
      }
      // Eight consumes of 10 and a grant of a share of 40, at once: 120 asked of 100.
      const [grantReply, ...draws] = await Promise.all([
        grant(await requestFor([{ ...metered, seats: 1, amount: 40 }])),
        ...machinesLeases.map(({ fp, lease }) => consume(lease, fp, 10)),
      ]);
      const shared = grantReply?.statusCode === 200 ? 40 : 0;
      if (shared === 0) expect(grantReply?.statusCode, grantReply?.body).toBe(409);
      const drawn = draws.filter((r) => (r.json() as { code: unknown }).code === 0).length * 10;
      expect(drawn + shared).toBeLessThanOrEqual(100);
      // Whatever was refused, what is left is the limit less what was taken, to the unit.
      const { fp, lease } = machinesLeases[0] as (typeof machinesLeases)[number];
      const left = 100 - drawn - shared;
      if (left > 0) expect(consumed(await consume(lease, fp, left))).toMatchObject({ remaining: 0 });
      refusalOf(await consume(lease, fp, 1), '90007');
    }
  });

  it('is refused to a caller without the admin API', async () => {
    const request = await requestFor([{ ...(await lockWith(world, { limitConcurrent: 1 })), seats: 1 }]);
    const reply = await h.app.inject({ method: 'POST', url: '/admin/relays/grants', payload: { request } });
    expect(reply.statusCode).toBe(401);
  });
});
