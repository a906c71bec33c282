import fs from 'node:fs';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { KeywardLeaseError, verifyPoolGrant, type PoolGrantClaims } from '../../keyward-client.js';
import { isEd25519PrivateJwk, thumbprintOf } from '../runtime-keys/ed25519.js';
import {
  machineFingerprint,
  readIdentity,
  readIfThere,
  RELAY_FILES,
  RelayHomeError,
  vendorKeysOf,
  writePrivate,
} from './relay-home.js';

/** The relay's files beyond those `relay init` makes: its grant, its clock, its own audit trail. */
export const RELAY_STATE_FILES = {
  grant: 'grant.jwt',
  clock: 'clock.json',
  audit: 'audit.jsonl',
} as const;

/**
 * How far the clock may seem to go back before the relay refuses new grants: a machine's clock
 * corrected by NTP moves by seconds; one set back by hours would stretch a grant past its end.
 */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;

/** What `relay import` was given. */
export interface RelayImport {
  dir: string;
  grant: string;
  now: number;
  fingerprint?: string;
}

export interface RelayImportResult {
  claims: PoolGrantClaims;
  /** False when this very grant was imported before. */
  imported: boolean;
}

/** The grant the relay holds, as imported (verified then, so read here without a check). */
function heldGrant(dir: string): PoolGrantClaims | undefined {
  const held = readIfThere(path.join(dir, RELAY_STATE_FILES.grant))?.trim();
  return held === undefined || held === '' ? undefined : (decodeJwt(held) as unknown as PoolGrantClaims);
}

/** The latest time this relay has seen (ms), or undefined before its first import. */
function lastSeenOf(dir: string): number | undefined {
  const stored = readIfThere(path.join(dir, RELAY_STATE_FILES.clock));
  return stored === undefined
    ? undefined
    : Number((JSON.parse(stored) as { lastSeen?: unknown }).lastSeen ?? 0);
}

/** One line of the relay's own audit trail (what it accepted or refused, and when). */
function audit(dir: string, entry: Record<string, unknown>): void {
  fs.appendFileSync(path.join(dir, RELAY_STATE_FILES.audit), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
}

/**
 * The latest time this relay has seen. A clock that reads more than CLOCK_TOLERANCE_MS before it
 * has been moved back: refused (and audited) until corrected, so no grant is stretched that way.
 */
function checkClock(dir: string, now: number): number {
  const lastSeen = lastSeenOf(dir) ?? 0;
  if (now < lastSeen - CLOCK_TOLERANCE_MS) {
    audit(dir, {
      at: new Date(now).toISOString(),
      event: 'clock.behind',
      lastSeen: new Date(lastSeen).toISOString(),
    });
    throw new RelayHomeError(
      `this machine's clock reads ${new Date(now).toISOString()}, before ${new Date(lastSeen).toISOString()} that this relay has already seen: correct the clock, then import again`,
    );
  }
  return Math.max(lastSeen, now);
}

/**
 * `keyward relay import GRANT`: the vendor's answer checked and kept. It must verify against the
 * vendor keys pinned at `relay init` exactly as the machines' SDKs will verify it, be for this
 * relay, certify this relay's key, name this machine, and not be older than the grant the relay
 * holds (a replayed earlier grant would give back seats a renewal took away).
 */
export async function importGrant(given: RelayImport): Promise<RelayImportResult> {
  const file = (name: string) => path.join(given.dir, name);
  const identity = readIdentity(given.dir);
  const fingerprint = given.fingerprint ?? machineFingerprint();
  if (fingerprint !== identity.fingerprint) {
    throw new RelayHomeError(
      `${given.dir} belongs to a relay made on another machine (fingerprint ${identity.fingerprint})`,
    );
  }
  const key: unknown = JSON.parse(readIfThere(file(RELAY_FILES.key)) ?? 'null');
  if (!isEd25519PrivateJwk(key)) throw new RelayHomeError(`${file(RELAY_FILES.key)} is not the relay's key`);
  const vendorKeys = vendorKeysOf(
    readIfThere(file(RELAY_FILES.vendorJwks)) ?? '',
    file(RELAY_FILES.vendorJwks),
  );
  const lastSeen = checkClock(given.dir, given.now);

  const token = given.grant.trim();
  let claims: PoolGrantClaims;
  try {
    claims = await verifyPoolGrant(token, { jwks: { keys: vendorKeys }, now: new Date(given.now) });
  } catch (error) {
    if (error instanceof KeywardLeaseError) {
      audit(given.dir, {
        at: new Date(given.now).toISOString(),
        event: 'grant.refused',
        reason: error.reason,
      });
      throw new RelayHomeError(`the grant is refused (${error.reason}): ${error.message}`);
    }
    throw error;
  }
  const refuse = (why: string): never => {
    audit(given.dir, {
      at: new Date(given.now).toISOString(),
      event: 'grant.refused',
      grantId: claims.jti,
      why,
    });
    throw new RelayHomeError(`the grant is refused: ${why}`);
  };
  if (claims.sub !== identity.relayId)
    refuse(`it is for relay ${claims.sub}, not this one (${identity.relayId})`);
  if (claims.relay.key.kid !== (await thumbprintOf(key)) || claims.relay.key.x !== key.x) {
    refuse("it certifies another key than this relay's");
  }
  if (claims.relay.fingerprint !== identity.fingerprint) refuse('it names another machine than this one');
  const heldClaims = heldGrant(given.dir);
  if (heldClaims !== undefined) {
    if (heldClaims.jti === claims.jti) {
      writePrivate(file(RELAY_STATE_FILES.clock), `${JSON.stringify({ lastSeen })}\n`);
      return { claims, imported: false };
    }
    if (claims.iat < heldClaims.iat)
      refuse(`it is older than the grant this relay holds (${heldClaims.jti})`);
  }
  writePrivate(file(RELAY_STATE_FILES.grant), `${token}\n`);
  writePrivate(file(RELAY_STATE_FILES.clock), `${JSON.stringify({ lastSeen })}\n`);
  audit(given.dir, {
    at: new Date(given.now).toISOString(),
    event: 'grant.imported',
    grantId: claims.jti,
    endsAt: new Date(claims.exp * 1000).toISOString(),
  });
  return { claims, imported: true };
}

/** What `keyward relay status` shows: the relay's state as its directory holds it. */
export interface RelayStatus {
  relayId: string;
  fingerprint: string;
  /** Whether this machine is the one the relay was made on. */
  thisMachine: boolean;
  vendorKeys: number;
  grant: { grantId: string; endsAt: number; ended: boolean; licenses: PoolGrantClaims['licenses'] } | null;
  /** Milliseconds since the epoch: the latest time the relay has seen, or null before any import. */
  clockSeen: number | null;
}

/** The relay's state, read from its directory without changing it. */
export function relayStatus(dir: string, now: number, fingerprint?: string): RelayStatus {
  const file = (name: string) => path.join(dir, name);
  const identity = readIdentity(dir);
  let here: string | undefined = fingerprint;
  try {
    here ??= machineFingerprint();
  } catch {
    here = undefined;
  }
  const vendorText = readIfThere(file(RELAY_FILES.vendorJwks));
  const claims = heldGrant(dir);
  const grant: RelayStatus['grant'] =
    claims === undefined
      ? null
      : {
          grantId: claims.jti,
          endsAt: claims.exp * 1000,
          ended: claims.exp * 1000 <= now,
          licenses: claims.licenses,
        };
  return {
    relayId: identity.relayId,
    fingerprint: identity.fingerprint,
    thisMachine: here === identity.fingerprint,
    vendorKeys: vendorText === undefined ? 0 : vendorKeysOf(vendorText, file(RELAY_FILES.vendorJwks)).length,
    grant,
    clockSeen: lastSeenOf(dir) ?? null,
  };
}
