import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relayPublicJwk } from '../../src/domain/relay/relay-lease.js';
import { signRelayReport, type RelayReportClaims } from '../../src/domain/relay/relay-report.js';
import { RELAY_REQUEST_ISSUER, signRelayRequest } from '../../src/domain/relay/relay-request.js';
import { signRelayReturn } from '../../src/domain/relay/relay-return.js';
import { generateEd25519, type Ed25519PrivateJwk } from '../../src/domain/runtime-keys/ed25519.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { lockWith, runtimeWorld, type RuntimeWorld } from './runtime-helpers.js';

// POST /admin/relays/reports and /admin/relays/returns (`keyward relay import-report`,
// `import-return`): what a relay sends back across the gap, refused when it is not the granted
// relay's, names what it was not granted, comes again or comes late; each refusal changes nothing.

let h: Harness;
let world: RuntimeWorld;
const HOUR = 3_600_000;

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
});
afterAll(() => h.close());

function post(url: string, payload: object) {
  return h.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${ADMIN_KEY}` }, payload });
}

interface Granted {
  relayId: string;
  grantId: string;
  key: Ed25519PrivateJwk;
  license: { assetNum: string; crmProductId: string };
}

async function grantedRelay(): Promise<Granted> {
  const key = await generateEd25519();
  const license = await lockWith(world, { limitConcurrent: 6 });
  const relayId = uniqueCode('relay_');
  const iat = Math.floor(Date.now() / 1000);
  const request = await signRelayRequest(
    {
      iss: RELAY_REQUEST_ISSUER,
      sub: relayId,
      iat,
      relay: { key: await relayPublicJwk(key), fingerprint: 'relay-report-test-fp' },
      asks: { licenses: [{ ...license, seats: 4 }], until: iat + 7 * 86_400 },
    },
    key,
  );
  const reply = await post('/admin/relays/grants', { request });
  expect(reply.statusCode, reply.body).toBe(200);
  return { relayId, grantId: (reply.json() as { grantId: string }).grantId, key, license };
}

function reportOf(relay: Granted, changes: Partial<RelayReportClaims> = {}): RelayReportClaims {
  const at = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  return {
    iss: RELAY_REQUEST_ISSUER,
    sub: relay.relayId,
    jti: randomUUID(),
    iat: Math.floor(Date.now() / 1000),
    grant: relay.grantId,
    hours: [{ at, ...relay.license, peakSeats: 3, seatMs: 2 * HOUR, refusals: { '90005': 2 }, overage: 0 }],
    audit: { entries: 4, digest: 'a'.repeat(64) },
    ...changes,
  };
}

async function importReport(report: string) {
  return post('/admin/relays/reports', { report });
}

async function reportsOf(relayId: string): Promise<number> {
  const rows = await h.database.db
    .selectFrom('relay_reports')
    .select('id')
    .where('relay_id', '=', relayId)
    .execute();
  return rows.length;
}

describe("a relay's usage report at the vendor", () => {
  it('is imported once, counted under the relay, and a report older than the last is refused', async () => {
    const relay = await grantedRelay();
    const older = await signRelayReport(
      reportOf(relay, { iat: Math.floor(Date.now() / 1000) - 600 }),
      relay.key,
    );
    const report = await signRelayReport(reportOf(relay), relay.key);
    const imported = await importReport(report);
    expect(imported.statusCode, imported.body).toBe(200);
    expect(imported.json()).toMatchObject({ relayId: relay.relayId, peakSeats: 3, seatHours: 2, refused: 2 });
    const { rows } = await sql<{ peak_seats: number; licensed_seats: number; asset_num: string }>`
      select peak_seats, licensed_seats, asset_num from usage_hourly where app_id = ${`relay:${relay.relayId}`}
    `.execute(h.database.db);
    expect(rows).toEqual([{ peak_seats: 3, licensed_seats: 4, asset_num: relay.license.assetNum }]);

    const again = await importReport(report);
    expect(again.statusCode).toBe(409);
    const late = await importReport(older);
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({
      error: expect.stringMatching(/^report: older than report/) as unknown,
    });
    expect(await reportsOf(relay.relayId)).toBe(1);
  });

  it("refuses another key's report, an unknown relay's, another relay's grant and a license never granted", async () => {
    const relay = await grantedRelay();
    const other = await grantedRelay();
    const cases: Array<[string, string, number, RegExp]> = [
      [
        'another key',
        await signRelayReport(reportOf(relay), other.key),
        400,
        /^report: is signed with another key/,
      ],
      [
        'an unknown relay',
        await signRelayReport(reportOf(relay, { sub: uniqueCode('relay_') }), relay.key),
        404,
        /^sub: relay relay_\S+ was never granted seats here/,
      ],
      [
        "another relay's grant",
        await signRelayReport(reportOf(relay, { grant: other.grantId }), relay.key),
        400,
        /^grant: .* is not a grant of relay/,
      ],
      [
        'a license never granted',
        await signRelayReport(
          reportOf(relay, {
            hours: [
              {
                at: Math.floor(Date.now() / HOUR) * HOUR,
                ...other.license,
                peakSeats: 1,
                seatMs: 1000,
                refusals: {},
                overage: 0,
              },
            ],
          }),
          relay.key,
        ),
        400,
        /^hours\[0\]: .* was never granted to relay/,
      ],
      ['no report at all', 'not.a.report', 400, /^report: is not a relay report/],
    ];
    for (const [what, report, status, message] of cases) {
      const reply = await importReport(report);
      expect(reply.statusCode, what).toBe(status);
      expect((reply.json() as { error: string }).error, what).toMatch(message);
    }
    expect(await reportsOf(relay.relayId)).toBe(0);
    const usage = await sql`
      select app_id from usage_hourly where app_id in (${`relay:${relay.relayId}`}, ${`relay:${other.relayId}`})
    `.execute(h.database.db);
    expect(usage.rows).toEqual([]);
  });

  it("refuses a return signed by another relay's key, and the relay's own commands on a server that is no relay", async () => {
    const relay = await grantedRelay();
    const other = await grantedRelay();
    const claims = {
      iss: RELAY_REQUEST_ISSUER,
      sub: relay.relayId,
      jti: randomUUID(),
      iat: Math.floor(Date.now() / 1000),
      grant: relay.grantId,
    } as const;
    const forged = await post('/admin/relays/returns', { return: await signRelayReturn(claims, other.key) });
    expect(forged.statusCode).toBe(400);
    const foreign = await post('/admin/relays/returns', {
      return: await signRelayReturn({ ...claims, grant: other.grantId }, relay.key),
    });
    expect(foreign.statusCode).toBe(404);
    const grant = await h.database.db
      .selectFrom('relay_grants')
      .select('returned_at')
      .where('id', 'in', [relay.grantId, other.grantId])
      .execute();
    expect(grant.map((g) => g.returned_at)).toEqual([null, null]);

    for (const url of ['/admin/relay/report', '/admin/relay/return']) {
      const reply = await post(url, {});
      expect(reply.statusCode, url).toBe(409);
      expect((reply.json() as { error: string }).error).toMatch(/this server is not a relay/);
    }
  });
});

describe('whose licenses a grant gives seats of', () => {
  it("refuses asks of two enterprises' locks, and an enterprise's grant of another's lock, as a lock that does not exist", async () => {
    const elsewhere = await runtimeWorld(h);
    const ours = await lockWith(world, { limitConcurrent: 3 });
    const theirs = await lockWith(elsewhere, { limitConcurrent: 3 });
    const key = await generateEd25519();
    const requestOf = async (licenses: Array<{ assetNum: string; crmProductId: string; seats: number }>) => {
      const iat = Math.floor(Date.now() / 1000);
      return signRelayRequest(
        {
          iss: RELAY_REQUEST_ISSUER,
          sub: uniqueCode('relay_'),
          iat,
          relay: { key: await relayPublicJwk(key), fingerprint: 'relay-scope-test-fp' },
          asks: { licenses, until: iat + 86_400 },
        },
        key,
      );
    };
    const mixed = await post('/admin/relays/grants', {
      request: await requestOf([
        { ...ours, seats: 1 },
        { ...theirs, seats: 1 },
      ]),
    });
    expect(mixed.statusCode).toBe(400);
    expect((mixed.json() as { error: string }).error).toBe(
      'asks.licenses[1].assetNum: belongs to another enterprise than asks.licenses[0]',
    );

    const enterprise = await h.database.db
      .selectFrom('enterprises')
      .select('id')
      .where('global_id', '=', world.enterpriseGlobalId)
      .executeTakeFirstOrThrow();
    const actor = { appId: null, operator: 'test', requestId: null, clientRequestId: null };
    const scope = { enterpriseId: Number(enterprise.id) };
    await expect(
      h.app.services.relayGrants.grant(await requestOf([{ ...theirs, seats: 1 }]), actor, scope),
    ).rejects.toThrow('asks.licenses[0].assetNum: no lock has this number');
    const own = await h.app.services.relayGrants.grant(
      await requestOf([{ ...ours, seats: 1 }]),
      actor,
      scope,
    );
    expect(own.made).toBe(true);
    const listed = await h.app.services.relayGrants.list(scope);
    expect(listed.map((g) => g.grantId)).toContain(own.grantId);
    expect(listed.every((g) => g.enterpriseId === scope.enterpriseId)).toBe(true);
  });
});
