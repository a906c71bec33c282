import type { OfflineLeaseClaims } from '../../keyward-client.js';

// What an offline lease says is defined once, by the client that verifies it (packages/client,
// lease-claims.ts): the server signs exactly that shape.
export {
  LEASE_ISSUER,
  LEASE_TYP,
  type LeaseExpBound,
  type LeaseHolderClaim,
  type OfflineLeaseClaims,
} from '../../keyward-client.js';

/** Signs offline leases with the current runtime key; every key ever used stays published. */
export interface LeaseSigner {
  sign(claims: OfflineLeaseClaims): Promise<{ token: string; kid: string }>;
  /** Raw bytes (an activation's typed answer) made by `build` for the key that signs them. */
  signBytes(
    build: (kid: string) => Promise<Uint8Array>,
  ): Promise<{ data: Uint8Array; signature: Uint8Array; kid: string }>;
}
