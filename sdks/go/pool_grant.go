package keyward

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"time"
)

// grantHeader is the protected header parameter of a relay's lease that carries its pool grant.
const grantHeader = "grant"

// maxGrantedSeats is the most seats a pool grant gives of one license.
const maxGrantedSeats = 1_000_000_000

// PoolGrant is the pool grant a relay's lease carries (LeaseClaims.Grant): the vendor's word,
// signed by a key of its JWKS, that the relay RelayID, whose key is RelayKey, may hand out the
// seats of Licenses to Machines until ExpiresAt. A relay is a small license server inside a
// closed network (docs/relay.md).
type PoolGrant struct {
	// RelayID is the relay's id (sub); ID is the grant's (jti): a renewal is a new grant.
	RelayID string
	ID      string
	// IssuedAt, NotBefore and ExpiresAt are iat, nbf and exp.
	IssuedAt  time.Time
	NotBefore time.Time
	ExpiresAt time.Time
	// RelayKeyID and RelayKey are the relay's Ed25519 public key (relay.key's kid and x): the one
	// key the relay's leases verify with.
	RelayKeyID string
	RelayKey   ed25519.PublicKey
	// RelayFingerprint is the machine the relay runs on.
	RelayFingerprint string
	// Licenses are the seats granted, per license and product.
	Licenses []GrantedLicense
	// Machines are the machines that may check out from the relay; nil when the grant lists none
	// (any machine of the relay's network). An empty list, which the grant may name, allows none.
	Machines []string
	// Payload is the grant's claims as signed (its overage is the relay's to apply: VerifyLease
	// does not read it).
	Payload json.RawMessage
}

// GrantedLicense is the seats a pool grant gives of one license (the lock's AssetNum) and product.
type GrantedLicense struct {
	AssetNum string
	// CRMProductID is the product's crmProductId; nil for a product without one.
	CRMProductID *string
	Seats        int64
}

// verifyGrant checks the pool grant a relay's lease carries as a lease is checked up to its
// times: its form, a key of the set by its kid and its signature, its type and claims, then its
// period.
func verifyGrant(raw json.RawMessage, jwks *JWKS, now time.Time) (*PoolGrant, *LeaseError) {
	token, ok := stringOf(raw)
	if !ok {
		return nil, refuse(ReasonMalformed, "its grant is not a string")
	}
	jws, refusal := parseCompactJWS(token, "its grant")
	if refusal != nil {
		return nil, refusal
	}
	if alg, _ := stringOf(jws.header["alg"]); alg != "EdDSA" {
		return nil, refuse(ReasonSignature, "its grant is not signed with EdDSA")
	}
	kid, ok := stringOf(jws.header["kid"])
	if !ok {
		return nil, refuse(ReasonUnknownKey, "its grant names no key (kid)")
	}
	keys := jwks.keysFor(kid)
	if len(keys) == 0 {
		return nil, refuse(ReasonUnknownKey, "no key of the set has its grant's kid %q", kid)
	}
	if !jws.verifiedBy(keys) {
		return nil, refuse(ReasonSignature, "its grant's signature does not verify")
	}
	if typ, _ := stringOf(jws.header["typ"]); !typMatches(typ, GrantType) {
		return nil, refuse(ReasonMalformed, "its grant's typ is not %s", GrantType)
	}
	grant, ok := grantOf(jws.payload, jws.rawPayload)
	if !ok {
		return nil, refuse(ReasonMalformed, "its grant's claims are not a pool grant")
	}
	if grant.NotBefore.After(now) {
		return nil, refuse(ReasonNotYetValid, "its grant is valid from %s", grant.NotBefore.UTC().Format(time.RFC3339))
	}
	if !grant.ExpiresAt.After(now) {
		return nil, refuse(ReasonGrantExpired, "its grant ended at %s", grant.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return grant, nil
}

// grantOf answers a pool grant's claims, past its signature's check, when they have the grant's
// shape.
func grantOf(payload map[string]json.RawMessage, raw []byte) (*PoolGrant, bool) {
	if iss, _ := stringOf(payload["iss"]); iss != LeaseIssuer {
		return nil, false
	}
	grant := &PoolGrant{Payload: append(json.RawMessage(nil), raw...)}
	var ok bool
	if grant.RelayID, ok = stringOf(payload["sub"]); !ok {
		return nil, false
	}
	if grant.ID, ok = stringOf(payload["jti"]); !ok {
		return nil, false
	}
	for _, claim := range []struct {
		name string
		into *time.Time
	}{{"iat", &grant.IssuedAt}, {"nbf", &grant.NotBefore}, {"exp", &grant.ExpiresAt}} {
		seconds, ok := numberOf(payload[claim.name])
		if !ok || !isWholeSeconds(seconds) {
			return nil, false
		}
		*claim.into = secondsTime(seconds)
	}
	relay := objectOf(payload["relay"])
	if relay == nil {
		return nil, false
	}
	if grant.RelayKeyID, grant.RelayKey, ok = relayKeyOf(relay["key"]); !ok {
		return nil, false
	}
	if grant.RelayFingerprint, ok = stringOf(relay["fingerprint"]); !ok {
		return nil, false
	}
	var licenses []json.RawMessage
	if jsonKind(payload["licenses"]) != '[' || json.Unmarshal(payload["licenses"], &licenses) != nil || len(licenses) == 0 {
		return nil, false
	}
	for _, value := range licenses {
		license, ok := grantedLicenseOf(value)
		if !ok {
			return nil, false
		}
		grant.Licenses = append(grant.Licenses, license)
	}
	if machines, listed := payload["machines"]; listed && jsonKind(machines) != 'n' {
		var list []json.RawMessage
		if jsonKind(machines) != '[' || json.Unmarshal(machines, &list) != nil {
			return nil, false
		}
		grant.Machines = make([]string, 0, len(list))
		for _, value := range list {
			machine, ok := stringOf(value)
			if !ok {
				return nil, false
			}
			grant.Machines = append(grant.Machines, machine)
		}
	}
	return grant, true
}

// relayKeyOf reads the relay key a grant certifies: kty OKP, crv Ed25519, x exactly the unpadded
// base64url of 32 bytes, and a string kid.
func relayKeyOf(raw json.RawMessage) (kid string, key ed25519.PublicKey, ok bool) {
	jwk := objectOf(raw)
	if jwk == nil {
		return "", nil, false
	}
	if kty, _ := stringOf(jwk["kty"]); kty != "OKP" {
		return "", nil, false
	}
	if crv, _ := stringOf(jwk["crv"]); crv != "Ed25519" {
		return "", nil, false
	}
	x, _ := stringOf(jwk["x"])
	public, decoded := segmentBytes(x)
	if !decoded || len(public) != ed25519.PublicKeySize {
		return "", nil, false
	}
	if kid, ok = stringOf(jwk["kid"]); !ok {
		return "", nil, false
	}
	return kid, ed25519.PublicKey(public), true
}

// grantedLicenseOf reads one license of a grant: a string assetNum, a string or null
// crmProductId, and seats a whole number from 1 to 1,000,000,000.
func grantedLicenseOf(raw json.RawMessage) (GrantedLicense, bool) {
	fields := objectOf(raw)
	if fields == nil {
		return GrantedLicense{}, false
	}
	assetNum, ok := stringOf(fields["assetNum"])
	if !ok {
		return GrantedLicense{}, false
	}
	product, ok := nullableStringOf(fields["crmProductId"])
	if !ok {
		return GrantedLicense{}, false
	}
	seats, ok := numberOf(fields["seats"])
	if !ok || seats != float64(int64(seats)) || seats < 1 || seats > maxGrantedSeats {
		return GrantedLicense{}, false
	}
	return GrantedLicense{AssetNum: assetNum, CRMProductID: product, Seats: int64(seats)}, true
}

// nullableStringOf reads a member that is a string or null (nil); absent or anything else is not
// ok.
func nullableStringOf(raw json.RawMessage) (*string, bool) {
	if jsonKind(raw) == 'n' {
		return nil, true
	}
	text, ok := stringOf(raw)
	return &text, ok
}

// license answers the grant's license of this asset number and product (nil matches nil).
func (g *PoolGrant) license(assetNum string, crmProductID *string) *GrantedLicense {
	for i := range g.Licenses {
		l := &g.Licenses[i]
		if l.AssetNum != assetNum || (l.CRMProductID == nil) != (crmProductID == nil) {
			continue
		}
		if l.CRMProductID == nil || *l.CRMProductID == *crmProductID {
			return l
		}
	}
	return nil
}

// beyond says why a relay's lease, its shape checked, says more than its grant lets the relay
// give: "" when it does not.
func (g *PoolGrant) beyond(claims *LeaseClaims, payload map[string]json.RawMessage) string {
	if claims.ExpiresAt.After(g.ExpiresAt) {
		return "it runs past its grant"
	}
	// The product as signed: Product.CRMProductID reads null and absent alike, as "".
	product, ok := nullableStringOf(objectOf(payload["product"])["crmProductId"])
	var license *GrantedLicense
	if ok {
		license = g.license(claims.AssetNum, product)
	}
	if license == nil {
		return "its license and product are not in its grant"
	}
	// No seat limit (null or absent) is more than any grant gives.
	if seats := claims.Limits.Concurrent; seats == nil {
		return fmt.Sprintf("it names no seat limit, and its grant gives %d seats", license.Seats)
	} else if *seats > license.Seats {
		return fmt.Sprintf("it names %d seats, and its grant gives %d", *seats, license.Seats)
	}
	if g.Machines != nil && !contains(g.Machines, claims.Fingerprint) {
		return "its machine is not on its grant's list"
	}
	return ""
}

func contains(list []string, text string) bool {
	for _, item := range list {
		if item == text {
			return true
		}
	}
	return false
}
