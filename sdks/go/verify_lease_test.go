package keyward

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Leases signed here by keys of this test, to check what the vectors do not: the order of the
// checks when a lease has several defects, and the boundaries.

const (
	testNow         = int64(1_800_000_000)
	testFingerprint = "fp-test-machine-0001"
	testAudience    = "kw_test_app"
)

type testKey struct {
	kid     string
	private ed25519.PrivateKey
	jwk     JWK
}

func newTestKey(t *testing.T, kid string) testKey {
	t.Helper()
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{kid: kid, private: private, jwk: JWK{
		Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(public), Kid: kid, Alg: "EdDSA", Use: "sig",
	}}
}

func b64json(t *testing.T, value interface{}) string {
	t.Helper()
	data, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(data)
}

// sign makes a compact JWS of header and payload under key.
func (k testKey) sign(t *testing.T, header, payload map[string]interface{}) string {
	t.Helper()
	signed := b64json(t, header) + "." + b64json(t, payload)
	return signed + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(k.private, []byte(signed)))
}

func leaseHeader(kid string) map[string]interface{} {
	return map[string]interface{}{"alg": "EdDSA", "kid": kid, "typ": LeaseType}
}

func leasePayload() map[string]interface{} {
	return map[string]interface{}{
		"iss": LeaseIssuer, "sub": "lease-1", "jti": "lease-1", "aud": testAudience,
		"iat": testNow - 3600, "nbf": testNow - 3600, "exp": testNow + 86400,
		"holder":      map[string]interface{}{"kind": "lock", "assetNum": "A-1"},
		"fingerprint": testFingerprint,
		"assetNum":    "A-1",
		"product":     map[string]interface{}{"crmProductId": "P-1", "productUri": nil, "productName": "Modeler"},
		"limits": map[string]interface{}{
			"concurrent": 2, "timeDurationSeconds": nil, "amount": 100,
			"startDate": (testNow - 86400) * 1000, "endDate": (testNow + 30*86400) * 1000,
		},
		"expBound": ExpBoundOfflineDays,
	}
}

func reasonOf(err error) Reason {
	var refused *LeaseError
	if errors.As(err, &refused) {
		return refused.Reason
	}
	return ""
}

func TestVerifyLeaseOrderAndBoundaries(t *testing.T) {
	key := newTestKey(t, "kid-a")
	other := newTestKey(t, "kid-other") // no key of the set
	jwks := &JWKS{Keys: []JWK{key.jwk}}
	now := time.Unix(testNow, 0)

	limits := func(p map[string]interface{}) map[string]interface{} { return p["limits"].(map[string]interface{}) }
	cases := []struct {
		name   string
		token  func() string
		opts   func(*VerifyOptions)
		reason Reason // "" for valid
	}{
		{name: "valid", token: func() string { return key.sign(t, leaseHeader("kid-a"), leasePayload()) }},
		{name: "not three parts", token: func() string { return "a.b.c.d" }, reason: ReasonMalformed},
		{name: "padded base64", token: func() string {
			parts := strings.Split(key.sign(t, leaseHeader("kid-a"), leasePayload()), ".")
			return parts[0] + "=." + parts[1] + "." + parts[2]
		}, reason: ReasonMalformed},
		{name: "payload not JSON, bad signature: malformed first", token: func() string {
			return b64json(t, leaseHeader("kid-a")) + "." + base64.RawURLEncoding.EncodeToString([]byte("{not json")) + ".AAAA"
		}, reason: ReasonMalformed},
		{name: "payload a JSON array", token: func() string {
			return b64json(t, leaseHeader("kid-a")) + "." + b64json(t, []int{1}) + ".AAAA"
		}, reason: ReasonMalformed},
		{name: "payload null", token: func() string {
			return b64json(t, leaseHeader("kid-a")) + "." + base64.RawURLEncoding.EncodeToString([]byte("null")) + ".AAAA"
		}, reason: ReasonMalformed},
		{name: "alg none and an unknown kid: signature before the key", token: func() string {
			h := leaseHeader("kid-nobody")
			h["alg"] = "none"
			return b64json(t, h) + "." + b64json(t, leasePayload()) + "."
		}, reason: ReasonSignature},
		{name: "no alg: no signature of a Keyward key, as every SDK says", token: func() string {
			h := leaseHeader("kid-a")
			delete(h, "alg")
			return key.sign(t, h, leasePayload())
		}, reason: ReasonSignature},
		{name: "critical extension", token: func() string {
			h := leaseHeader("kid-a")
			h["crit"] = []string{"exp"}
			return key.sign(t, h, leasePayload())
		}, reason: ReasonMalformed},
		{name: "unknown kid and expired: the key first", token: func() string {
			p := leasePayload()
			p["exp"] = testNow - 1
			return other.sign(t, leaseHeader("kid-other"), p)
		}, reason: ReasonUnknownKey},
		{name: "no kid", token: func() string {
			h := leaseHeader("kid-a")
			delete(h, "kid")
			return key.sign(t, h, leasePayload())
		}, reason: ReasonUnknownKey},
		{name: "known kid, another key's signature, expired: the signature first", token: func() string {
			p := leasePayload()
			p["exp"] = testNow - 1
			return other.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonSignature},
		{name: "wrong typ and expired: malformed first", token: func() string {
			h := leaseHeader("kid-a")
			h["typ"] = "JWT"
			p := leasePayload()
			p["exp"] = testNow - 1
			return key.sign(t, h, p)
		}, reason: ReasonMalformed},
		{name: "no jti", token: func() string {
			p := leasePayload()
			delete(p, "jti")
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "nbf not a number", token: func() string {
			p := leasePayload()
			p["nbf"] = "soon"
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "exp null", token: func() string {
			p := leasePayload()
			p["exp"] = nil
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "not yet valid and expired: nbf first", token: func() string {
			p := leasePayload()
			p["nbf"], p["exp"] = testNow+10, testNow-10
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonNotYetValid},
		{name: "nbf is now: valid", token: func() string {
			p := leasePayload()
			p["nbf"] = testNow
			return key.sign(t, leaseHeader("kid-a"), p)
		}},
		{name: "exp is now: expired", token: func() string {
			p := leasePayload()
			p["exp"] = testNow
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonExpired},
		{name: "expired and another audience: expired first", token: func() string {
			p := leasePayload()
			p["exp"], p["aud"] = testNow-1, "kw_other"
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonExpired},
		{name: "another audience and no holder: audience first", token: func() string {
			p := leasePayload()
			p["aud"] = "kw_other"
			delete(p, "holder")
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonAudience},
		{name: "another audience, none asked: valid", token: func() string {
			p := leasePayload()
			p["aud"] = "kw_other"
			return key.sign(t, leaseHeader("kid-a"), p)
		}, opts: func(o *VerifyOptions) { o.Audience = "" }},
		{name: "audience list holding the audience: aud is no string", token: func() string {
			p := leasePayload()
			p["aud"] = []string{testAudience}
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "audience list, none asked: aud is no string", token: func() string {
			p := leasePayload()
			p["aud"] = []string{testAudience}
			return key.sign(t, leaseHeader("kid-a"), p)
		}, opts: func(o *VerifyOptions) { o.Audience = "" }, reason: ReasonMalformed},
		{name: "no holder and another machine: malformed first", token: func() string {
			p := leasePayload()
			delete(p, "holder")
			p["fingerprint"] = "fp-another-machine"
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "member holder without enterprise", token: func() string {
			p := leasePayload()
			p["holder"] = map[string]interface{}{"kind": "member", "memberGlobalId": "m-1"}
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "holder of another kind", token: func() string {
			p := leasePayload()
			p["holder"] = map[string]interface{}{"kind": "robot", "assetNum": "A-1"}
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "limits without endDate", token: func() string {
			p := leasePayload()
			delete(limits(p), "endDate")
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "endDate null: no end", token: func() string {
			p := leasePayload()
			limits(p)["endDate"] = nil
			return key.sign(t, leaseHeader("kid-a"), p)
		}},
		{name: "expBound unknown", token: func() string {
			p := leasePayload()
			p["expBound"] = "forever"
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "expBound null", token: func() string {
			p := leasePayload()
			p["expBound"] = nil
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonMalformed},
		{name: "another machine and license ended: fingerprint first", token: func() string {
			p := leasePayload()
			p["fingerprint"] = "fp-another-machine"
			limits(p)["endDate"] = testNow*1000 - 1
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonFingerprint},
		{name: "license ended a millisecond ago", token: func() string {
			p := leasePayload()
			limits(p)["endDate"] = testNow*1000 - 1
			return key.sign(t, leaseHeader("kid-a"), p)
		}, reason: ReasonLicenseEnded},
		{name: "license ends now: valid", token: func() string {
			p := leasePayload()
			limits(p)["endDate"] = testNow * 1000
			return key.sign(t, leaseHeader("kid-a"), p)
		}},
		{name: "no fingerprint asked: another machine's", token: func() string {
			return key.sign(t, leaseHeader("kid-a"), leasePayload())
		}, opts: func(o *VerifyOptions) { o.Fingerprint = "" }, reason: ReasonFingerprint},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			opts := VerifyOptions{Fingerprint: testFingerprint, Audience: testAudience, Now: now}
			if c.opts != nil {
				c.opts(&opts)
			}
			claims, err := VerifyLease(c.token(), jwks, opts)
			expectVerdict(t, claims, err, c.reason)
		})
	}
}

func TestVerifyLeaseKeys(t *testing.T) {
	a, b := newTestKey(t, "kid-a"), newTestKey(t, "kid-b")
	now := time.Unix(testNow, 0)
	opts := VerifyOptions{Fingerprint: testFingerprint, Now: now}

	// Two keys under one kid (a botched rotation): the one that verifies wins.
	twin := b.jwk
	twin.Kid = "kid-a"
	if _, err := VerifyLease(a.sign(t, leaseHeader("kid-a"), leasePayload()), &JWKS{Keys: []JWK{twin, a.jwk}}, opts); err != nil {
		t.Fatalf("two keys under one kid: %v", err)
	}
	// A key is chosen by kid alone: b's key under a's kid does not verify b's lease named kid-b.
	if got := reasonOf(VerifyLeaseErr(b.sign(t, leaseHeader("kid-b"), leasePayload()), &JWKS{Keys: []JWK{twin}}, opts)); got != ReasonUnknownKey {
		t.Fatalf("reason %q, want unknown-key", got)
	}
	// A key for encryption, or of another curve, is no signing key.
	enc := a.jwk
	enc.Use = "enc"
	if got := reasonOf(VerifyLeaseErr(a.sign(t, leaseHeader("kid-a"), leasePayload()), &JWKS{Keys: []JWK{enc}}, opts)); got != ReasonUnknownKey {
		t.Fatalf("enc key: reason %q, want unknown-key", got)
	}
	x448 := a.jwk
	x448.Crv = "Ed448"
	if got := reasonOf(VerifyLeaseErr(a.sign(t, leaseHeader("kid-a"), leasePayload()), &JWKS{Keys: []JWK{x448}}, opts)); got != ReasonUnknownKey {
		t.Fatalf("Ed448 key: reason %q, want unknown-key", got)
	}
	if got := reasonOf(VerifyLeaseErr(a.sign(t, leaseHeader("kid-a"), leasePayload()), nil, opts)); got != ReasonJWKSUnavailable {
		t.Fatalf("no key set: reason %q, want jwks-unavailable", got)
	}
}

// VerifyLeaseErr is VerifyLease's error alone.
func VerifyLeaseErr(token string, jwks *JWKS, opts VerifyOptions) error {
	_, err := VerifyLease(token, jwks, opts)
	return err
}

func TestVerifyLeaseClaims(t *testing.T) {
	key := newTestKey(t, "kid-a")
	p := leasePayload()
	p["holder"] = map[string]interface{}{"kind": "member", "memberGlobalId": "m-1", "enterpriseGlobalId": "e-1"}
	p["futureClaim"] = "kept"
	claims, err := VerifyLease(key.sign(t, leaseHeader("kid-a"), p), &JWKS{Keys: []JWK{key.jwk}},
		VerifyOptions{Fingerprint: testFingerprint, Audience: testAudience, Now: time.Unix(testNow, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if claims.LeaseID() != "lease-1" || claims.ID != "lease-1" || claims.Audience != testAudience {
		t.Errorf("ids: %+v", claims)
	}
	if claims.Holder != (Holder{Kind: HolderMember, MemberGlobalID: "m-1", EnterpriseGlobalID: "e-1"}) {
		t.Errorf("holder %+v", claims.Holder)
	}
	if claims.Product != (Product{CRMProductID: "P-1", ProductName: "Modeler"}) {
		t.Errorf("product %+v", claims.Product)
	}
	l := claims.Limits
	if l.Concurrent == nil || *l.Concurrent != 2 || l.TimeDurationSeconds != nil || l.Amount == nil || *l.Amount != 100 {
		t.Errorf("limits %+v", l)
	}
	if l.EndDate == nil || !l.EndDate.Equal(time.Unix(testNow+30*86400, 0)) ||
		l.StartDate == nil || !l.StartDate.Equal(time.Unix(testNow-86400, 0)) {
		t.Errorf("dates %v %v", l.StartDate, l.EndDate)
	}
	// Written back as Keyward sends them: dates in epoch milliseconds.
	if wire, err := json.Marshal(l); err != nil || !strings.Contains(string(wire), fmt.Sprintf(`"endDate":%d`, (testNow+30*86400)*1000)) ||
		!strings.Contains(string(wire), fmt.Sprintf(`"startDate":%d`, (testNow-86400)*1000)) {
		t.Errorf("limits as JSON %s, %v", wire, err)
	}
	if !claims.ExpiresAt.Equal(time.Unix(testNow+86400, 0)) || !claims.IssuedAt.Equal(time.Unix(testNow-3600, 0)) {
		t.Errorf("times %v %v", claims.IssuedAt, claims.ExpiresAt)
	}
	if claims.ExpBound != ExpBoundOfflineDays {
		t.Errorf("expBound %q", claims.ExpBound)
	}
	var extra struct {
		FutureClaim string `json:"futureClaim"`
	}
	if json.Unmarshal(claims.Payload, &extra) != nil || extra.FutureClaim != "kept" {
		t.Errorf("payload %s", claims.Payload)
	}
}

func TestNamesAMemberTwice(t *testing.T) {
	for text, want := range map[string]bool{
		`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`: false, // one name in sibling and nested objects
		`{"a":{},"b":[],"c":[[{}],{}],"d":"a"}`:     false,
		`{"a":1,"b":2,"a":3}`:                       true,
		`{"a":{"x":1,"x":1}}`:                       true,
		`{"a":[1,{"y":1,"z":[],"y":2}]}`:            true,
		`{"a\u0062":1,"ab":2}`:                      true, // names compare unescaped
		`{"a":[{"b":1}],"a":2}`:                     true, // after a nested value
	} {
		got, err := namesAMemberTwice([]byte(text))
		if err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", text, got, err, want)
		}
	}
}

// expectVerdict fails the test unless VerifyLease answered as wanted: claims and no error for
// no reason, else that reason and no claims.
func expectVerdict(t *testing.T, claims *LeaseClaims, err error, reason Reason) {
	t.Helper()
	if reason == "" {
		if err != nil || claims == nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if got := reasonOf(err); got != reason {
		t.Fatalf("reason %q, want %q (%v)", got, reason, err)
	}
	if claims != nil {
		t.Fatal("claims with a refusal")
	}
}
