import { randomUUID } from 'node:crypto';
import { relayPublicJwk } from '../../src/domain/relay/relay-lease.js';
import { signRelayReport, type ReportedHour } from '../../src/domain/relay/relay-report.js';
import {
  RELAY_REQUEST_ISSUER,
  signRelayRequest,
  type UsedShare,
} from '../../src/domain/relay/relay-request.js';
import { signRelayReturn } from '../../src/domain/relay/relay-return.js';
import { generateEd25519, type Ed25519PrivateJwk } from '../../src/domain/runtime-keys/ed25519.js';
import { uniqueCode } from './harness.js';

// The three files a relay writes (docs/relay.md), made as `keyward relay init`, `report` and
// `return` make them, signed by a relay key of the test's own: for the console's Relays pages.

export const HOUR_MS = 3_600_000;

export interface TestRelay {
  relayId: string;
  key: Ed25519PrivateJwk;
}

export async function newRelay(): Promise<TestRelay> {
  return { relayId: uniqueCode('relay_'), key: await generateEd25519() };
}

/** The relay's request for `seats` of each license, for `days` days. */
export async function relayRequest(
  relay: TestRelay,
  licenses: Array<{
    assetNum: string;
    crmProductId: string | null;
    seats: number;
    timeSeconds?: number;
    amount?: number;
  }>,
  days = 30,
): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return signRelayRequest(
    {
      iss: RELAY_REQUEST_ISSUER,
      sub: relay.relayId,
      iat,
      relay: { key: await relayPublicJwk(relay.key), fingerprint: 'relay-console-test-fp' },
      asks: { licenses, until: iat + days * 86_400 },
    },
    relay.key,
  );
}

/** The last whole hour before now: a report's hour that any range ending today holds. */
export function lastWholeHour(now = Date.now()): number {
  return Math.floor(now / HOUR_MS) * HOUR_MS - HOUR_MS;
}

/** A report of `hours` (by default one hour: 3 seats at peak, 2 seat-hours, 3 refused). */
export async function relayReport(
  relay: TestRelay,
  grantId: string,
  license: { assetNum: string; crmProductId: string },
  hours: Array<Partial<ReportedHour>> = [{}],
  used?: UsedShare[],
): Promise<string> {
  return signRelayReport(
    {
      iss: RELAY_REQUEST_ISSUER,
      sub: relay.relayId,
      jti: randomUUID(),
      iat: Math.floor(Date.now() / 1000),
      grant: grantId,
      hours: hours.map((h) => ({
        at: lastWholeHour(),
        ...license,
        peakSeats: 3,
        seatMs: 2 * HOUR_MS,
        refusals: { '90005': 3 },
        overage: 0,
        ...h,
      })),
      audit: { entries: 0, digest: 'e'.repeat(64) },
      ...(used === undefined ? {} : { used }),
    },
    relay.key,
  );
}

export async function relayReturn(relay: TestRelay, grantId: string, used?: UsedShare[]): Promise<string> {
  return signRelayReturn(
    {
      iss: RELAY_REQUEST_ISSUER,
      sub: relay.relayId,
      jti: randomUUID(),
      iat: Math.floor(Date.now() / 1000),
      grant: grantId,
      ...(used === undefined ? {} : { used }),
    },
    relay.key,
  );
}
