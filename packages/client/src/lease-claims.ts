/**
 * What a signed offline lease says: the payload of the compact JWS (EdDSA, Ed25519) that the
 * runtime's check-out returns for running offline. The same shape as the server's; kept here so the
 * client depends on nothing of the server.
 */
export interface OfflineLeaseClaims {
  /** Always `keyward`. */
  iss: string;
  /** The lease id; also `jti`. */
  sub: string;
  jti: string;
  /** The appKey of the application that checked the lease out. */
  aud: string;
  /** Seconds since the epoch, as JWT times are. */
  iat: number;
  nbf: number;
  exp: number;
  holder: LeaseHolderClaim;
  fingerprint: string;
  assetNum: string;
  product: {
    crmProductId: string | null;
    productUri: string | null;
    productName: string | null;
  };
  limits: {
    concurrent: number | null;
    /** Accumulated usage allowed, in seconds. */
    timeDurationSeconds: number | null;
    amount: number | null;
    /** Epoch milliseconds, as the order service's Long times. */
    startDate: number | null;
    endDate: number | null;
  };
  /**
   * What set `exp`: the application's offline days, the license's end (`limits.endDate`), or what
   * remained of its usage time (`limits.timeDurationSeconds`) at check-out. Every lease this version
   * of the server signs carries it; leases signed by earlier servers do not.
   */
  expBound?: LeaseExpBound;
  /**
   * On a lease made by offline activation (docs/activation.md): the request's nonce, base64url, so
   * the machine knows the answer is to its own request. Its `fingerprint` is then `fph1:…`.
   */
  activation?: { nonce: string };
}

/** The bounds an offline lease's `exp` is the earliest of (`OfflineLeaseClaims.expBound`). */
export const LEASE_EXP_BOUNDS = ['offline-days', 'license-end', 'time-duration'] as const;
export type LeaseExpBound = (typeof LEASE_EXP_BOUNDS)[number];

export type LeaseHolderClaim =
  { kind: 'member'; memberGlobalId: string; enterpriseGlobalId: string } | { kind: 'lock'; assetNum: string };

export const LEASE_ISSUER = 'keyward';

/** The `typ` of a lease's protected header. */
export const LEASE_TYP = 'keyward-lease+jwt';
