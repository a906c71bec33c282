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

// What an offline lease's header and issuer are.
const (
	LeaseIssuer = "keyward"
	LeaseType   = "keyward-lease+jwt"
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
func VerifyLease(token string, jwks *JWKS, opts VerifyOptions) (*LeaseClaims, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if jwks == nil {
		return nil, refuse(ReasonJWKSUnavailable, "no key set to verify with")
	}
	header, payload, rawPayload, refusal := verifyCompactJWS(token, jwks)
	if refusal != nil {
		return nil, refusal
	}
	if text, _ := stringOf(header["typ"]); !typMatches(text) {
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
	claims, ok := leaseClaimsOf(payload, rawPayload)
	if !ok {
		return nil, refuse(ReasonMalformed, "its claims are not an offline lease")
	}
	claims.IssuedAt, claims.NotBefore, claims.ExpiresAt = secondsTime(times[0]), secondsTime(times[1]), secondsTime(times[2])
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

// verifyCompactJWS parses a compact JWS and verifies its EdDSA signature by the key of jwks its
// kid names, answering its header and payload (JSON objects) or why it is refused. Nothing of the
// payload is looked at before the signature verified.
func verifyCompactJWS(token string, jwks *JWKS) (header, payload map[string]json.RawMessage, raw []byte, refusal *LeaseError) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, nil, nil, refuse(ReasonMalformed, "not a compact JWS (three base64url parts)")
	}
	var decoded [3][]byte
	for i, part := range parts {
		data, ok := segmentBytes(part)
		if !ok {
			return nil, nil, nil, refuse(ReasonMalformed, "part %d is not unpadded base64url", i+1)
		}
		decoded[i] = data
	}
	if header = jsonObject(decoded[0]); header == nil {
		return nil, nil, nil, refuse(ReasonMalformed, "the header is not a JSON object naming each member once")
	}
	if payload = jsonObject(decoded[1]); payload == nil {
		return nil, nil, nil, refuse(ReasonMalformed, "the payload is not a JSON object naming each member once")
	}
	if _, ok := header["crit"]; ok {
		return nil, nil, nil, refuse(ReasonMalformed, "the header names critical extensions")
	}
	// No alg, or another (none, HS256 …): no signature of a Keyward key, whatever it claims.
	if alg, _ := stringOf(header["alg"]); alg != "EdDSA" {
		return nil, nil, nil, refuse(ReasonSignature, "alg %s is not EdDSA", bytes.TrimSpace(header["alg"]))
	}
	// A key is chosen by kid alone: without one, no key is tried.
	kid, ok := stringOf(header["kid"])
	if !ok {
		return nil, nil, nil, refuse(ReasonUnknownKey, "the header names no key (kid)")
	}
	keys := jwks.keysFor(kid)
	if len(keys) == 0 {
		return nil, nil, nil, refuse(ReasonUnknownKey, "no key of the set has kid %q", kid)
	}
	signed := []byte(parts[0] + "." + parts[1])
	for _, key := range keys {
		if ed25519.Verify(key, signed, decoded[2]) {
			return header, payload, decoded[1], nil
		}
	}
	return nil, nil, nil, refuse(ReasonSignature, "the signature does not verify")
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
func typMatches(typ string) bool {
	lower := strings.ToLower(typ)
	return strings.TrimPrefix(lower, "application/") == LeaseType
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
