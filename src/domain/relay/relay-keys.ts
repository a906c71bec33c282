import { NO_REQUEST, type OperatorRequest } from '../audit/audit-actions.js';
import type { OfflineLeaseClaims } from '../runtime/lease-claims.js';
import { LEASE_ALGORITHM, thumbprintOf, type Ed25519PrivateJwk } from '../runtime-keys/ed25519.js';
import {
  RuntimeKeyManagedError,
  type Jwks,
  type RotatedKey,
  type RuntimeKeyList,
  type RuntimeKeys,
} from '../runtime-keys/runtime-keys.service.js';
import type { PoolGrantClaims } from './pool-grant.js';
import type { VendorJwk } from './relay-home.js';
import { signRelayLease } from './relay-lease.js';

/** What a relay serves with: its key, the grant that certifies it, and the vendor keys it trusts. */
export interface RelayKeyMaterial {
  key: Ed25519PrivateJwk;
  /** The pool grant as the vendor signed it: every lease carries it in its header. */
  grantToken: string;
  grant: PoolGrantClaims;
  vendorKeys: VendorJwk[];
  /** When the relay's directory was made (ms): its key's age, as `keyward keys list` shows it. */
  createdAt: number;
  /** The relay's directory: its own audit trail is there. */
  dir: string;
}

/**
 * The runtime's keys on a relay. Leases are signed by the relay's own key with the grant in their
 * header, so software verifies them against the vendor's keys alone; the JWKS route therefore
 * publishes the vendor's keys, never the relay's. A relay grants nothing, rotates nothing (its key
 * is the one its grant certifies) and writes no typed activation code (that form names the
 * vendor's key only).
 */
export class RelayKeys implements RuntimeKeys {
  readonly source = 'relay' as const;

  constructor(private readonly material: RelayKeyMaterial) {}

  async prepare(): Promise<string> {
    return thumbprintOf(this.material.key);
  }

  async sign(claims: OfflineLeaseClaims): Promise<{ token: string; kid: string }> {
    const token = await signRelayLease(claims, this.material.key, this.material.grantToken);
    return { token, kid: await this.prepare() };
  }

  signBytes(): Promise<{ data: Uint8Array; signature: Uint8Array; kid: string }> {
    return Promise.reject(new RuntimeKeyManagedError('a relay writes no typed activation code'));
  }

  signGrant(): Promise<{ token: string; kid: string }> {
    return Promise.reject(
      new RuntimeKeyManagedError(
        'a relay grants no seats: grants come from the vendor (keyward relay grant)',
      ),
    );
  }

  jwks(): Promise<Jwks> {
    return Promise.resolve({
      keys: this.material.vendorKeys.map((k) => ({ ...k, alg: LEASE_ALGORITHM, use: 'sig' as const })),
    });
  }

  async list(): Promise<RuntimeKeyList> {
    return {
      source: this.source,
      keys: [
        { kid: await this.prepare(), createdAt: this.material.createdAt, retiredAt: null, current: true },
      ],
    };
  }

  rotate(_request: OperatorRequest = NO_REQUEST): Promise<RotatedKey> {
    return Promise.reject(
      new RuntimeKeyManagedError(
        'a relay signs with the key its grant certifies: a new key needs a new grant (keyward relay init on a new directory)',
      ),
    );
  }
}
