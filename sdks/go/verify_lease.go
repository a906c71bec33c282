package keyward

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Reason says why VerifyLease refused a lease. The strings are those of every Keyward SDK
// (sdks/conformance/README.md).
type Reason string

// The reasons VerifyLease refuses a lease with, and VerifyActivation an activation answer.
const (
	// ReasonMalformed: not a compact JWS, not a Keyward lease (typ, iss, a missing claim), or its
	// claims lack a lease's shape.
	ReasonMalformed Reason = "malformed"
	// ReasonSignature: not signed with EdDSA (alg none, HS256 …), or the signature does not verify.
	ReasonSignature Reason = "signature"
	// ReasonUnknownKey: no key of the set has the lease's kid. With a saved JWKS: a key newer than
	// the copy; fetch the JWKS again when online.
	ReasonUnknownKey Reason = "unknown-key"
	// ReasonNotYetValid: nbf is after now.
	ReasonNotYetValid Reason = "not-yet-valid"
	// ReasonExpired: exp is now or before.
	ReasonExpired Reason = "expired"
	// ReasonAudience: the lease is another application's (VerifyOptions.Audience).
	ReasonAudience Reason = "audience"
	// ReasonFingerprint: the lease was checked out for another machine.
	ReasonFingerprint Reason = "fingerprint"
	// ReasonLicenseEnded: the license the lease came from ended (limits.endDate is past).
	ReasonLicenseEnded Reason = "license-ended"
	// ReasonGrantExpired: a relay's lease whose pool grant has ended (the grant's exp is now or
	// before), whatever the lease's own exp: the relay must renew its grant.
	ReasonGrantExpired Reason = "grant-expired"
	// ReasonBeyondGrant: a relay's lease that says more than its pool grant gives: an exp after
	// the grant's, a license or product the grant does not name, no seat limit or more seats than
	// the grant gives, or a machine not on the grant's list.
	ReasonBeyondGrant Reason = "beyond-grant"
	// ReasonJWKSUnavailable: no key set to verify with.
	ReasonJWKSUnavailable Reason = "jwks-unavailable"
	// ReasonRequest: an activation answer (VerifyActivation) answers another request than the
	// machine's own: its nonce, app, lock or product differ.
	ReasonRequest Reason = "request"
)

// LeaseError is a lease VerifyLease refused, and why:
//
//	var refused *keyward.LeaseError
//	if errors.As(err, &refused) && refused.Reason == keyward.ReasonUnknownKey { … fetch the JWKS … }
type LeaseError struct {
	Reason Reason
	// Detail says what failed, for logs.
	Detail string
	// Group is, for a typed activation answer refused as malformed, the group of the code (from 1)
	// that does not check: "group 5 is mistyped". 0 otherwise.
	Group int
}

func (e *LeaseError) Error() string {
	return fmt.Sprintf("keyward: lease refused (%s): %s", e.Reason, e.Detail)
}

func refuse(reason Reason, format string, args ...interface{}) *LeaseError {
	return &LeaseError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// What an offline lease's header and issuer are, and a pool grant's header (PoolGrant).
const (
	LeaseIssuer = "keyward"
	LeaseType   = "keyward-lease+jwt"
	GrantType   = "keyward-grant+jwt"
)

// The bounds an offline lease's exp is the earliest of (LeaseClaims.ExpBound).
const (
	ExpBoundOfflineDays  = "offline-days"
	ExpBoundLicenseEnd   = "license-end"
	ExpBoundTimeDuration = "time-duration"
)

// The kinds of a lease's holder (Holder.Kind).
const (
	HolderLock   = "lock"
	HolderMember = "member"
)

// Holder is who holds a lease: a lock (AssetNum) or a member (MemberGlobalID,
// EnterpriseGlobalID).
type Holder struct {
	Kind               string `json:"kind"`
	AssetNum           string `json:"assetNum,omitempty"`
	MemberGlobalID     string `json:"memberGlobalId,omitempty"`
	EnterpriseGlobalID string `json:"enterpriseGlobalId,omitempty"`
}

// LeaseClaims is what a verified offline lease says.
type LeaseClaims struct {
	// Issuer is always "keyward".
	Issuer string
	// Subject and ID are the lease's id (sub and jti); see LeaseID.
	Subject string
	ID      string
	// Audience is the appKey of the application that checked the lease out.
	Audience string
	// IssuedAt, NotBefore and ExpiresAt are iat, nbf and exp.
	IssuedAt  time.Time
	NotBefore time.Time
	ExpiresAt time.Time
	Holder    Holder
	// Fingerprint is the machine the lease was checked out for.
	Fingerprint string
	AssetNum    string
	Product     Product
	Limits      Limits
	// ExpBound says what set ExpiresAt: ExpBoundOfflineDays, ExpBoundLicenseEnd or
	// ExpBoundTimeDuration; "" for a lease signed by a server before the claim existed.
	ExpBound string
	// Payload is the claims as signed, for claims this version does not know.
	Payload json.RawMessage
	// Grant is, for a lease a relay signed, the pool grant it carries, verified; nil for a lease
	// the vendor's server signed.
	Grant *PoolGrant
}

// LeaseID is the lease's id.
func (c *LeaseClaims) LeaseID() string { return c.Subject }

// VerifyOptions says what VerifyLease requires of a lease.
type VerifyOptions struct {
	// Fingerprint is this machine's: a lease checked out for another machine is refused. Required.
	Fingerprint string
	// Audience is the appKey the lease must be for; unchecked when "".
	Audience string
	// Now is the time to verify at; the current time when zero.
	Now time.Time
}

// VerifyLease verifies an offline lease without calling the server, against a key set the
// software holds (Session.FetchJWKS while online, LoadJWKS offline), and answers its claims.
// A refusal is a *LeaseError whose Reason says why. The checks run in this order, the first that
// fails answering (sdks/conformance/README.md): the token's form (malformed: three segments each
// exactly unpadded base64url, no whitespace; header and payload UTF-8 JSON objects naming each
// member once; no crit); alg EdDSA (signature); a key of the set with the header's kid
// (unknown-key); the Ed25519 signature (signature); typ, iss and the registered claims, sub, jti
// and aud strings, iat, nbf and exp whole seconds up to the end of year 9999 (malformed); nbf
// (not-yet-valid); exp (expired); the audience; the lease's shape (malformed); the machine
// (fingerprint); the license's end (license-ended). So no claim of an unverified lease is
// trusted, and a lease for another machine never says whether its license still runs.
//
// A relay's lease (a license server inside a closed network signs it with its own Ed25519 key)
// verifies with the same key set: its header carries grant, the pool grant the vendor signed,
// which certifies the relay's key. After alg, the grant is checked as a lease is: its form
// (malformed), alg (signature), a key of the set with its kid (unknown-key), its signature
// (signature), typ keyward-grant+jwt and its claims (malformed), its nbf (not-yet-valid), its exp
// (grant-expired). The lease must then name and be signed by the relay key the grant certifies
// (unknown-key, signature), and, after its shape, say no more than the grant gives
// (beyond-grant); LeaseClaims.Grant is the grant.
func VerifyLease(token string, jwks *JWKS, opts VerifyOptions) (*LeaseClaims, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if jwks == nil {
		return nil, refuse(ReasonJWKSUnavailable, "no key set to verify with")
	}
	jws, refusal := parseCompactJWS(token, "")
	if refusal != nil {
		return nil, refusal
	}
	header, payload := jws.header, jws.payload
	// No alg, or another (none, HS256 …): no signature of a Keyward key, whatever it claims.
	if alg, _ := stringOf(header["alg"]); alg != "EdDSA" {
		return nil, refuse(ReasonSignature, "alg %s is not EdDSA", bytes.TrimSpace(header["alg"]))
	}
	// A relay's lease: its grant, checked first, certifies the one key that may have signed it.
	var grant *PoolGrant
	if raw, ok := header[grantHeader]; ok {
		if grant, refusal = verifyGrant(raw, jwks, now); refusal != nil {
			return nil, refusal
		}
	}
	// A key is chosen by kid alone: without one, no key is tried.
	kid, ok := stringOf(header["kid"])
	if !ok {
		return nil, refuse(ReasonUnknownKey, "the header names no key (kid)")
	}
	var keys []ed25519.PublicKey
	if grant == nil {
		if keys = jwks.keysFor(kid); len(keys) == 0 {
			return nil, refuse(ReasonUnknownKey, "no key of the set has kid %q", kid)
		}
	} else {
		if kid != grant.RelayKeyID {
			return nil, refuse(ReasonUnknownKey, "kid %q is not the relay key its grant certifies", kid)
		}
		keys = []ed25519.PublicKey{grant.RelayKey}
	}
	if !jws.verifiedBy(keys) {
		return nil, refuse(ReasonSignature, "the signature does not verify")
	}
	// Signed: the claims may be read.
	if text, _ := stringOf(header["typ"]); !typMatches(text, LeaseType) {
		return nil, refuse(ReasonMalformed, "typ is not %s", LeaseType)
	}
	if text, _ := stringOf(payload["iss"]); text != LeaseIssuer {
		return nil, refuse(ReasonMalformed, "iss is not %s", LeaseIssuer)
	}
	for _, claim := range []string{"sub", "jti", "aud", "iat", "nbf", "exp"} {
		if _, ok := payload[claim]; !ok {
			return nil, refuse(ReasonMalformed, "the %s claim is missing", claim)
		}
	}
	for _, claim := range []string{"sub", "jti", "aud"} {
		if _, ok := stringOf(payload[claim]); !ok {
			return nil, refuse(ReasonMalformed, "the %s claim is not a string", claim)
		}
	}
	var times [3]float64
	for i, claim := range []string{"iat", "nbf", "exp"} {
		value, ok := numberOf(payload[claim])
		if !ok || !isWholeSeconds(value) {
			return nil, refuse(ReasonMalformed, "the %s claim is not whole seconds from 0 to %d", claim, lastSecond)
		}
		times[i] = value
	}
	nowSeconds := float64(now.Unix())
	if nbf := times[1]; nbf > nowSeconds {
		return nil, refuse(ReasonNotYetValid, "valid from %s", secondsTime(nbf).UTC().Format(time.RFC3339))
	}
	if exp := times[2]; exp <= nowSeconds {
		return nil, refuse(ReasonExpired, "expired at %s", secondsTime(exp).UTC().Format(time.RFC3339))
	}
	if opts.Audience != "" && !hasAudience(payload["aud"], opts.Audience) {
		return nil, refuse(ReasonAudience, "the lease is not for %s", opts.Audience)
	}
	claims, ok := leaseClaimsOf(payload, jws.rawPayload)
	if !ok {
		return nil, refuse(ReasonMalformed, "its claims are not an offline lease")
	}
	claims.IssuedAt, claims.NotBefore, claims.ExpiresAt = secondsTime(times[0]), secondsTime(times[1]), secondsTime(times[2])
	if grant != nil {
		if beyond := grant.beyond(claims, payload); beyond != "" {
			return nil, refuse(ReasonBeyondGrant, "%s", beyond)
		}
		claims.Grant = grant
	}
	if claims.Fingerprint != opts.Fingerprint {
		return nil, refuse(ReasonFingerprint, "it was checked out for another machine")
	}
	// A lease signed before the server bounded exp by the license's end may outlive the license;
	// the end date it carries still holds.
	if end := claims.Limits.EndDate; end != nil && now.UnixMilli() > end.UnixMilli() {
		return nil, refuse(ReasonLicenseEnded, "the license ended at %s", end.UTC().Format(time.RFC3339))
	}
	return claims, nil
}

// compactJWS is a compact JWS past its form's checks, not yet its signature's: nothing of its
// payload is to be trusted before verifiedBy.
type compactJWS struct {
	header, payload map[string]json.RawMessage
	rawPayload      []byte
	signingInput    []byte
	signature       []byte
}

// parseCompactJWS checks the form of a lease (what "") or of the pool grant a relay's lease
// carries ("its grant"): three segments, each exactly unpadded base64url; header and payload UTF-8
// JSON objects naming each member once; no crit (neither uses an extension, RFC 7515 §4.1.11).
func parseCompactJWS(token, what string) (*compactJWS, *LeaseError) {
	about := ""
	if what != "" {
		about = what + ": "
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, refuse(ReasonMalformed, "%snot a compact JWS (three base64url parts)", about)
	}
	var decoded [3][]byte
	for i, part := range parts {
		data, ok := segmentBytes(part)
		if !ok {
			return nil, refuse(ReasonMalformed, "%spart %d is not unpadded base64url", about, i+1)
		}
		decoded[i] = data
	}
	jws := &compactJWS{
		rawPayload:   decoded[1],
		signingInput: []byte(parts[0] + "." + parts[1]),
		signature:    decoded[2],
	}
	if jws.header = jsonObject(decoded[0]); jws.header == nil {
		return nil, refuse(ReasonMalformed, "%sthe header is not a JSON object naming each member once", about)
	}
	if jws.payload = jsonObject(decoded[1]); jws.payload == nil {
		return nil, refuse(ReasonMalformed, "%sthe payload is not a JSON object naming each member once", about)
	}
	if _, ok := jws.header["crit"]; ok {
		return nil, refuse(ReasonMalformed, "%sthe header names critical extensions", about)
	}
	return jws, nil
}

// verifiedBy says whether one of keys signed the JWS (Ed25519 over the segments as written).
func (j *compactJWS) verifiedBy(keys []ed25519.PublicKey) bool {
	for _, key := range keys {
		if ed25519.Verify(key, j.signingInput, j.signature) {
			return true
		}
	}
	return false
}

// segmentBytes decodes one segment of a compact JWS when it is exactly the unpadded base64url of
// its bytes: the URL alphabet only (base64's decoder would skip CR and LF, so they are refused
// here), and zero unused bits (Strict), so one token has one text.
func segmentBytes(part string) ([]byte, bool) {
	for i := 0; i < len(part); i++ {
		c := part[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, false
		}
	}
	data, err := base64.RawURLEncoding.Strict().DecodeString(part)
	return data, err == nil
}

// jsonObject reads a header or payload: UTF-8 JSON (no byte order mark) of one object in which no
// object names a member twice. nil otherwise.
func jsonObject(data []byte) map[string]json.RawMessage {
	var fields map[string]json.RawMessage
	if !utf8.Valid(data) || json.Unmarshal(data, &fields) != nil || fields == nil {
		return nil
	}
	if twice, err := namesAMemberTwice(data); err != nil || twice {
		return nil
	}
	return fields
}

// namesAMemberTwice scans JSON text that json.Unmarshal read without error: whether an object in
// it, at any depth, names a member twice (names compared unescaped). encoding/json keeps the last
// of them, another parser the first: one token would say two things. A scan of the bytes, not a
// json.Decoder token walk, which cost more than the signature's check.
func namesAMemberTwice(data []byte) (bool, error) {
	type open struct {
		object bool
		names  []string
	}
	var stack []open
	nameNext := false
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			start, escaped := i, false
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
					escaped = true
				}
			}
			if i >= len(data) {
				return false, errors.New("a string does not end")
			}
			if nameNext && len(stack) > 0 && stack[len(stack)-1].object {
				name := string(data[start+1 : i])
				if escaped {
					if err := json.Unmarshal(data[start:i+1], &name); err != nil {
						return false, err
					}
				}
				top := &stack[len(stack)-1]
				for _, seen := range top.names {
					if seen == name {
						return true, nil
					}
				}
				top.names = append(top.names, name)
			}
			nameNext = false
		case '{':
			stack = append(stack, open{object: true})
			nameNext = true
		case '[':
			stack = append(stack, open{})
			nameNext = false
		case '}', ']':
			if len(stack) == 0 {
				return false, errors.New("a bracket closes nothing")
			}
			stack = stack[:len(stack)-1]
			nameNext = false
		case ',':
			nameNext = len(stack) > 0 && stack[len(stack)-1].object
		}
	}
	return false, nil
}

// typMatches compares typ as a media type (RFC 7515 §4.1.9): without case, "application/" implied.
func typMatches(typ, expected string) bool {
	lower := strings.ToLower(typ)
	return strings.TrimPrefix(lower, "application/") == expected
}

// lastSecond is the latest time a lease may name: 9999-12-31T23:59:59Z.
const lastSecond = 253402300799

// isWholeSeconds: a time claim is a whole number of seconds from 1970 to the end of year 9999.
func isWholeSeconds(value float64) bool {
	return value == math.Trunc(value) && value >= 0 && value <= lastSecond
}

// jsonKind is the first byte of a JSON value: '"', '{', '[', 'n', 't', 'f', or a number's first.
func jsonKind(raw json.RawMessage) byte {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return 0
	}
	return trimmed[0]
}

func isNumberKind(k byte) bool { return k == '-' || k >= '0' && k <= '9' }

func stringOf(raw json.RawMessage) (string, bool) {
	var text string
	if jsonKind(raw) != '"' || json.Unmarshal(raw, &text) != nil {
		return "", false
	}
	return text, true
}

func numberOf(raw json.RawMessage) (float64, bool) {
	var value float64
	if !isNumberKind(jsonKind(raw)) || json.Unmarshal(raw, &value) != nil {
		return 0, false
	}
	return value, true
}

func secondsTime(seconds float64) time.Time {
	whole := int64(seconds)
	return time.Unix(whole, int64((seconds-float64(whole))*1e9))
}

// hasAudience: aud is the audience (a list of audiences is no lease's).
func hasAudience(raw json.RawMessage, audience string) bool {
	text, ok := stringOf(raw)
	return ok && text == audience
}

// leaseClaimsOf answers the claims when they have the lease's shape.
func leaseClaimsOf(payload map[string]json.RawMessage, raw []byte) (*LeaseClaims, bool) {
	object := func(value json.RawMessage) map[string]json.RawMessage {
		var fields map[string]json.RawMessage
		if jsonKind(value) != '{' || json.Unmarshal(value, &fields) != nil {
			return nil
		}
		return fields
	}
	isText := func(value json.RawMessage) bool { _, ok := stringOf(value); return ok }

	holder := object(payload["holder"])
	if holder == nil {
		return nil, false
	}
	switch kind, _ := stringOf(holder["kind"]); kind {
	case HolderMember:
		if !isText(holder["memberGlobalId"]) || !isText(holder["enterpriseGlobalId"]) {
			return nil, false
		}
	case HolderLock:
		if !isText(holder["assetNum"]) {
			return nil, false
		}
	default:
		return nil, false
	}
	for _, claim := range []string{"sub", "jti", "aud", "fingerprint", "assetNum"} {
		if !isText(payload[claim]) {
			return nil, false
		}
	}
	limits := object(payload["limits"])
	if object(payload["product"]) == nil || limits == nil {
		return nil, false
	}
	if end, ok := limits["endDate"]; !ok || jsonKind(end) != 'n' && !isNumberKind(jsonKind(end)) {
		return nil, false
	}
	expBound := ""
	if value, ok := payload["expBound"]; ok {
		expBound, _ = stringOf(value)
		if expBound != ExpBoundOfflineDays && expBound != ExpBoundLicenseEnd && expBound != ExpBoundTimeDuration {
			return nil, false
		}
	}
	var typed struct {
		Issuer      string  `json:"iss"`
		Subject     string  `json:"sub"`
		ID          string  `json:"jti"`
		Audience    string  `json:"aud"`
		Holder      Holder  `json:"holder"`
		Fingerprint string  `json:"fingerprint"`
		AssetNum    string  `json:"assetNum"`
		Product     Product `json:"product"`
		Limits      Limits  `json:"limits"`
	}
	if json.Unmarshal(raw, &typed) != nil {
		return nil, false
	}
	return &LeaseClaims{
		Issuer:      typed.Issuer,
		Subject:     typed.Subject,
		ID:          typed.ID,
		Audience:    typed.Audience,
		Holder:      typed.Holder,
		Fingerprint: typed.Fingerprint,
		AssetNum:    typed.AssetNum,
		Product:     typed.Product,
		Limits:      typed.Limits,
		ExpBound:    expBound,
		Payload:     append(json.RawMessage(nil), raw...),
	}, true
}
