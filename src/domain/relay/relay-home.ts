import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { generateEd25519, isEd25519PrivateJwk, type Ed25519PrivateJwk } from '../runtime-keys/ed25519.js';
import { relayPublicJwk } from './relay-lease.js';
import {
  RELAY_REQUEST_ISSUER,
  relayRequestClaims,
  signRelayRequest,
  type RelayAsks,
  type RelayRequestClaims,
} from './relay-request.js';

/** The files of a relay's directory: who it is, its key, and the vendor keys it trusts. */
export const RELAY_FILES = {
  identity: 'relay.json',
  key: 'relay-key.json',
  vendorJwks: 'vendor-jwks.json',
  request: 'request.jwt',
} as const;

/** Who a relay is: made once by its first `keyward relay init`, kept by every later one. */
export interface RelayIdentity {
  relayId: string;
  fingerprint: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/** A public key of the vendor's JWKS: the only keys a relay trusts a grant from. */
export interface VendorJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
}

/** Something about the relay's directory or what it was given that keeps it from going on. */
export class RelayHomeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RelayHomeError';
  }
}

const MACHINE_ID_FILES = ['/etc/machine-id', '/var/lib/dbus/machine-id'];

/**
 * The fingerprint of the machine a relay runs on: a hash of its machine id (systemd's, stable
 * across reboots and network changes), never the id itself. A container without one is given a
 * fingerprint with --fingerprint (or KEYWARD_RELAY_FINGERPRINT), kept stable by its operator.
 */
export function machineFingerprint(files: readonly string[] = MACHINE_ID_FILES): string {
  for (const file of files) {
    let id: string;
    try {
      id = fs.readFileSync(file, 'utf8').trim();
    } catch {
      continue;
    }
    if (id !== '') {
      return createHash('sha256').update(`keyward-relay\u0000${id}`).digest('base64url').slice(0, 32);
    }
  }
  throw new RelayHomeError(
    `this machine has no machine id (${files.join(', ')}): give the relay's fingerprint with --fingerprint`,
  );
}

/** The vendor's JWKS as given to `relay init`: its Ed25519 public keys, and nothing secret. */
export function vendorKeysOf(text: string, source: string): VendorJwk[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RelayHomeError(`${source} is not JSON: give the vendor's JWKS (GET /runtime/v1/jwks)`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new RelayHomeError(`${source} has no "keys": it is not a JWKS`);
  const found: VendorJwk[] = [];
  for (const key of keys as unknown[]) {
    const jwk = key as Record<string, unknown> | null;
    if (jwk === null || typeof jwk !== 'object') continue;
    if ('d' in jwk)
      throw new RelayHomeError(`${source} holds a private key: give the vendor's public JWKS only`);
    if (
      jwk.kty === 'OKP' &&
      jwk.crv === 'Ed25519' &&
      typeof jwk.x === 'string' &&
      typeof jwk.kid === 'string'
    ) {
      found.push({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid: jwk.kid });
    }
  }
  if (found.length === 0) throw new RelayHomeError(`${source} holds no Ed25519 key with a kid`);
  return found;
}

function readJson(file: string): unknown {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
}

/** A file's text, or undefined when it is not there. */
export function readIfThere(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The relay a directory holds; refused when `relay init` has not made one there. */
export function readIdentity(dir: string): RelayIdentity {
  const text = readIfThere(path.join(dir, RELAY_FILES.identity));
  if (text === undefined) throw new RelayHomeError(`${dir} holds no relay: run keyward relay init first`);
  return JSON.parse(text) as RelayIdentity;
}

/** Writes a file the relay's user alone may read, replacing it whole (a rename) or not at all. */
export function writePrivate(file: string, content: string): void {
  const partial = `${file}.${process.pid}.partial`;
  fs.writeFileSync(partial, content, { mode: 0o600 });
  fs.renameSync(partial, file);
}

/** What `relay init` is given. */
export interface RelayInit {
  dir: string;
  /** The vendor's JWKS text; needed the first time, and replaces the pinned one when given later. */
  vendorJwks?: { text: string; source: string };
  /** The machine's fingerprint; the machine id's hash when not given. */
  fingerprint?: string;
  asks: RelayAsks;
  now: number;
}

/** What `relay init` made or found, and the request it wrote. */
export interface RelayInitResult {
  identity: RelayIdentity;
  /** Whether this init made the relay (its id and key) rather than renewing its request. */
  made: boolean;
  vendorKeys: number;
  request: string;
  claims: RelayRequestClaims;
}

/**
 * `keyward relay init`: makes the relay's directory (its id, its Ed25519 key, the vendor's keys
 * pinned) the first time, and writes a signed request for what it asks. Run again on the same
 * machine, it keeps the relay's id and key and writes a new request: that is how a relay renews.
 * On another machine than the one it was made on it refuses: a grant names one machine.
 */
export async function initRelay(given: RelayInit): Promise<RelayInitResult> {
  fs.mkdirSync(given.dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => path.join(given.dir, name);
  const fingerprint = given.fingerprint ?? machineFingerprint();
  let identity: RelayIdentity;
  let made = false;
  if (fs.existsSync(file(RELAY_FILES.identity))) {
    identity = readJson(file(RELAY_FILES.identity)) as RelayIdentity;
    if (identity.fingerprint !== fingerprint) {
      throw new RelayHomeError(
        `${given.dir} belongs to a relay made on another machine (fingerprint ${identity.fingerprint}, this one ${fingerprint})`,
      );
    }
  } else {
    identity = {
      relayId: `relay_${randomBytes(9).toString('base64url')}`,
      fingerprint,
      createdAt: given.now,
    };
    made = true;
  }
  let key: Ed25519PrivateJwk;
  if (made) {
    key = await generateEd25519();
  } else {
    const stored = readJson(file(RELAY_FILES.key));
    if (!isEd25519PrivateJwk(stored))
      throw new RelayHomeError(`${file(RELAY_FILES.key)} is not the relay's key`);
    key = stored;
  }
  let vendorKeys: VendorJwk[];
  if (given.vendorJwks !== undefined) {
    vendorKeys = vendorKeysOf(given.vendorJwks.text, given.vendorJwks.source);
  } else if (fs.existsSync(file(RELAY_FILES.vendorJwks))) {
    vendorKeys = vendorKeysOf(
      fs.readFileSync(file(RELAY_FILES.vendorJwks), 'utf8'),
      file(RELAY_FILES.vendorJwks),
    );
  } else {
    throw new RelayHomeError(
      "a new relay trusts the vendor's keys it is given: give them with --vendor-jwks FILE",
    );
  }
  const nowSeconds = Math.floor(given.now / 1000);
  // The claims are checked as the vendor will check them, so a mistake is named here, not there.
  const claims = relayRequestClaims(
    {
      iss: RELAY_REQUEST_ISSUER,
      sub: identity.relayId,
      iat: nowSeconds,
      relay: { key: await relayPublicJwk(key), fingerprint },
      asks: given.asks,
    },
    nowSeconds,
  );
  const request = await signRelayRequest(claims, key);
  // The key first: a directory with an identity always has the key that goes with it.
  if (made) writePrivate(file(RELAY_FILES.key), `${JSON.stringify(key)}\n`);
  writePrivate(file(RELAY_FILES.vendorJwks), `${JSON.stringify({ keys: vendorKeys }, null, 2)}\n`);
  if (made) writePrivate(file(RELAY_FILES.identity), `${JSON.stringify(identity, null, 2)}\n`);
  return { identity, made, vendorKeys: vendorKeys.length, request, claims };
}
