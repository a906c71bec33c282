/**
 * What a pool grant says: the payload of the compact JWS (EdDSA, Ed25519) a vendor's server signs
 * with its runtime key to let one relay hand out seats inside a closed network. A lease the relay
 * signs carries the grant in its protected header (`grant`), and the grant certifies the relay's
 * key: so a lease from a relay verifies against the vendor's JWKS alone (sdks/conformance/README.md,
 * "relay-leases.json"). The same shape as the server's; kept here so the client depends on nothing
 * of the server.
 */
export interface PoolGrantClaims {
  /** Always `keyward`. */
  iss: string;
  /** The relay's id. */
  sub: string;
  /** The grant's id: a renewal is a new grant. */
  jti: string;
  /** Seconds since the epoch, as JWT times are. */
  iat: number;
  nbf: number;
  exp: number;
  relay: {
    /** The relay's public key; its `kid` is the one the relay's leases name. */
    key: RelayPublicJwk;
    /** The fingerprint of the machine the relay runs on: it starts on no other. */
    fingerprint: string;
  };
  /** The seats granted, per license (lock asset number) and product. */
  licenses: GrantedLicense[];
  /** The machines that may check out from the relay; null: any machine of the closed network. */
  machines: string[] | null;
  /** What the relay does past the granted seats: refuse, or allow `seats` more and report them. */
  overage: { policy: 'refuse' | 'allow'; seats: number };
}

export interface GrantedLicense {
  assetNum: string;
  crmProductId: string | null;
  seats: number;
  /**
   * The relay's share of a time-limited license: seconds of use it may give (of the license's
   * limitTimeDuration), held at the vendor for it. Absent for a license without a time limit.
   */
  timeSeconds?: number;
  /** Its share of a license's limitAmount, held at the vendor for it; absent for one without. */
  amount?: number;
}

export interface RelayPublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
}

/** The `typ` of a pool grant's protected header. */
export const GRANT_TYP = 'keyward-grant+jwt';

/** The protected header parameter of a relay's lease that carries its pool grant. */
export const GRANT_HEADER = 'grant';
