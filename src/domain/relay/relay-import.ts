import fs from 'node:fs';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { KeywardLeaseError, verifyPoolGrant, type PoolGrantClaims } from '../../keyward-client.js';
import { isEd25519PrivateJwk, thumbprintOf, type Ed25519PrivateJwk } from '../runtime-keys/ed25519.js';
import {
  machineFingerprint,
  readIdentity,
  readIfThere,
  RELAY_FILES,
  RelayHomeError,
  vendorKeysOf,
  type RelayIdentity,
  type VendorJwk,
  writePrivate,
} from './relay-home.js';
import { codeRefusalOf, grantTokenOfCode, isTypedCode, RelayCodeError } from './relay-typed.js';

/** The relay's files beyond those `relay init` makes: its grant, its clock, its own audit trail. */
export const RELAY_STATE_FILES = {
  grant: 'grant.jwt',
  clock: 'clock.json',
  audit: 'audit.jsonl',
  /** The relay's return of its grant, once it gave it back (relay-return.service.ts). */
  returned: 'return.jwt',
  /**
   * The grant a renewal replaced, until `relay serve` has replaced its products and returned it
   * (RelayReturnService.applyGrant): the one the relay's database serves until then.
   */
  superseded: 'superseded.jwt',
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

/** Whether the relay gave `grant` back already (`keyward relay return`): nothing is left to return. */
function returnedAlready(dir: string, grant: PoolGrantClaims): boolean {
  const returned = readIfThere(path.join(dir, RELAY_STATE_FILES.returned))?.trim();
  return returned !== undefined && returned !== '' && decodeJwt(returned).grant === grant.jti;
}

/** One line of the relay's own audit trail (what it accepted or refused, and when). */
export function appendRelayAudit(dir: string, entry: Record<string, unknown>): void {
  fs.appendFileSync(path.join(dir, RELAY_STATE_FILES.audit), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
}

/**
 * The latest time this relay has seen. A clock that reads more than CLOCK_TOLERANCE_MS before it
 * has been moved back: refused (and audited) until corrected, so no grant is stretched that way.
 */
function checkClock(dir: string, now: number): number {
  const lastSeen = lastSeenOf(dir) ?? 0;
  if (now < lastSeen - CLOCK_TOLERANCE_MS) {
    appendRelayAudit(dir, {
      at: new Date(now).toISOString(),
      event: 'clock.behind',
      lastSeen: new Date(lastSeen).toISOString(),
    });
    throw new RelayHomeError(
      `this machine's clock reads ${new Date(now).toISOString()}, before ${new Date(lastSeen).toISOString()} that this relay has already seen: correct the clock, then try again`,
    );
  }
  return Math.max(lastSeen, now);
}

/** A grant checked for this relay, and what the check read of the relay's directory. */
interface CheckedGrant {
  token: string;
  claims: PoolGrantClaims;
  identity: RelayIdentity;
  key: Ed25519PrivateJwk;
  vendorKeys: VendorJwk[];
  /** The latest time seen, this reading included: what clock.json keeps next. */
  lastSeen: number;
}

/**
 * The grant's compact JWS: the file's text, or rebuilt from its typed code with what this relay
 * knows of itself (its id, key and machine) and the vendor keys it trusts. A code that does not
 * read is refused and audited as a grant that does not verify is.
 */
async function grantToken(
  text: string,
  at: { dir: string; now: number; identity: RelayIdentity; key: Ed25519PrivateJwk; vendorKeys: VendorJwk[] },
): Promise<string> {
  if (!isTypedCode(text)) return text.trim();
  try {
    return grantTokenOfCode(text, {
      relayId: at.identity.relayId,
      relayKey: { kty: 'OKP', crv: 'Ed25519', x: at.key.x, kid: await thumbprintOf(at.key) },
      fingerprint: at.identity.fingerprint,
      vendorKids: at.vendorKeys.map((k) => k.kid),
    });
  } catch (error) {
    if (!(error instanceof RelayCodeError)) throw error;
    appendRelayAudit(at.dir, { at: new Date(at.now).toISOString(), event: 'grant.refused', reason: 'code' });
    throw new RelayHomeError(`the grant is refused: ${codeRefusalOf('grant', error)}`);
  }
}

/**
 * A grant checked as the machines' SDKs will check it, on this relay's machine: it verifies
 * against the vendor keys pinned at `relay init`, is for this relay, certifies this relay's key
 * and names this machine, and the clock has not been set back. Each refusal is audited.
 */
async function checkForThisRelay(
  dir: string,
  grant: string,
  now: number,
  given: string | undefined,
): Promise<CheckedGrant> {
  const file = (name: string) => path.join(dir, name);
  const identity = readIdentity(dir);
  const fingerprint = given ?? machineFingerprint();
  if (fingerprint !== identity.fingerprint) {
    appendRelayAudit(dir, { at: new Date(now).toISOString(), event: 'machine.refused', fingerprint });
    throw new RelayHomeError(
      `${dir} belongs to a relay made on another machine (fingerprint ${identity.fingerprint})`,
    );
  }
  const key: unknown = JSON.parse(readIfThere(file(RELAY_FILES.key)) ?? 'null');
  if (!isEd25519PrivateJwk(key)) throw new RelayHomeError(`${file(RELAY_FILES.key)} is not the relay's key`);
  const vendorKeys = vendorKeysOf(
    readIfThere(file(RELAY_FILES.vendorJwks)) ?? '',
    file(RELAY_FILES.vendorJwks),
  );
  const lastSeen = checkClock(dir, now);

  const token = await grantToken(grant, { dir, now, identity, key, vendorKeys });
  let claims: PoolGrantClaims;
  try {
    claims = await verifyPoolGrant(token, { jwks: { keys: vendorKeys }, now: new Date(now) });
  } catch (error) {
    if (error instanceof KeywardLeaseError) {
      appendRelayAudit(dir, {
        at: new Date(now).toISOString(),
        event: 'grant.refused',
        reason: error.reason,
      });
      throw new RelayHomeError(`the grant is refused (${error.reason}): ${error.message}`);
    }
    throw error;
  }
  const refuse = (why: string): never => {
    appendRelayAudit(dir, {
      at: new Date(now).toISOString(),
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
  return { token, claims, identity, key, vendorKeys, lastSeen };
}

/**
 * `keyward relay import GRANT`: the vendor's answer checked for this relay (checkForThisRelay) and
 * kept, unless it is older than the grant the relay holds (a replayed earlier grant would give
 * back seats a renewal took away).
 */
export async function importGrant(given: RelayImport): Promise<RelayImportResult> {
  const file = (name: string) => path.join(given.dir, name);
  const { token, claims, lastSeen } = await checkForThisRelay(
    given.dir,
    given.grant,
    given.now,
    given.fingerprint,
  );
  const refuse = (why: string): never => {
    appendRelayAudit(given.dir, {
      at: new Date(given.now).toISOString(),
      event: 'grant.refused',
      grantId: claims.jti,
      why,
    });
    throw new RelayHomeError(`the grant is refused: ${why}`);
  };
  const heldClaims = heldGrant(given.dir);
  if (heldClaims !== undefined) {
    if (heldClaims.jti === claims.jti) {
      writePrivate(file(RELAY_STATE_FILES.clock), `${JSON.stringify({ lastSeen })}\n`);
      return { claims, imported: false };
    }
    if (claims.iat < heldClaims.iat)
      refuse(`it is older than the grant this relay holds (${heldClaims.jti})`);
    // Kept for the relay to return once it serves the new grant. A second renewal before then
    // keeps the first one's: the grant the relay's database still serves.
    const held = readIfThere(file(RELAY_STATE_FILES.grant)) ?? '';
    if (
      readIfThere(file(RELAY_STATE_FILES.superseded)) === undefined &&
      !returnedAlready(given.dir, heldClaims)
    ) {
      writePrivate(file(RELAY_STATE_FILES.superseded), held);
    }
  }
  writePrivate(file(RELAY_STATE_FILES.grant), `${token}\n`);
  writePrivate(file(RELAY_STATE_FILES.clock), `${JSON.stringify({ lastSeen })}\n`);
  appendRelayAudit(given.dir, {
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

/** What `relay serve` starts with: the relay's grant, checked again, and its key. */
export interface OpenedRelay extends CheckedGrant {
  dir: string;
}

/**
 * Before `relay serve` listens: the held grant checked again as at its import, on this machine,
 * with the clock not set back and the grant not ended. A relay whose grant ended serves nothing:
 * its leases would be refused by every verifier (`grant-expired`).
 */
export async function openRelay(dir: string, now: number, fingerprint?: string): Promise<OpenedRelay> {
  const held = readIfThere(path.join(dir, RELAY_STATE_FILES.grant));
  if (held === undefined || held.trim() === '') {
    readIdentity(dir);
    throw new RelayHomeError(
      `${dir} holds no grant: import the vendor's answer first (keyward relay import GRANT)`,
    );
  }
  const checked = await checkForThisRelay(dir, held, now, fingerprint);
  const returned = readIfThere(path.join(dir, RELAY_STATE_FILES.returned))?.trim();
  if (returned !== undefined && returned !== '' && decodeJwt(returned).grant === checked.claims.jti) {
    throw new RelayHomeError(
      `grant ${checked.claims.jti} was returned to the vendor: import a new grant to serve again`,
    );
  }
  writePrivate(
    path.join(dir, RELAY_STATE_FILES.clock),
    `${JSON.stringify({ lastSeen: checked.lastSeen })}\n`,
  );
  appendRelayAudit(dir, {
    at: new Date(now).toISOString(),
    event: 'serve.started',
    grantId: checked.claims.jti,
  });
  return { ...checked, dir };
}
