package keyward

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// Relay leases signed here by keys of this test, to check what the vectors do not: the order of
// the grant's checks among the lease's, the grant's claim types, what the lease may say within
// its grant, and the grant LeaseClaims carries.

func grantPayload(relay testKey) map[string]interface{} {
	return map[string]interface{}{
		"iss": LeaseIssuer, "sub": "relay-1", "jti": "grant-1",
		"iat": testNow - 86400, "nbf": testNow - 86400, "exp": testNow + 30*86400,
		"relay": map[string]interface{}{
			"key":         map[string]interface{}{"kty": "OKP", "crv": "Ed25519", "x": relay.jwk.X, "kid": relay.kid},
			"fingerprint": "fp-relay-host",
		},
		"licenses": []interface{}{
			map[string]interface{}{"assetNum": "A-1", "crmProductId": "P-1", "seats": 10},
			map[string]interface{}{"assetNum": "A-2", "crmProductId": nil, "seats": 2},
		},
		"machines": nil,
		"overage":  map[string]interface{}{"policy": "refuse", "seats": 0},
	}
}

func grantHeaderOf(kid string) map[string]interface{} {
	return map[string]interface{}{"alg": "EdDSA", "kid": kid, "typ": GrantType}
}

type relayFixture struct {
	t             *testing.T
	vendor, relay testKey
	jwks          *JWKS
}

func newRelayFixture(t *testing.T) relayFixture {
	vendor := newTestKey(t, "vendor-key")
	return relayFixture{t: t, vendor: vendor, relay: newTestKey(t, "relay-key"), jwks: &JWKS{Keys: []JWK{vendor.jwk}}}
}

// grant is the vendor's grant of grantPayload, changed by change.
func (f relayFixture) grant(change func(g map[string]interface{})) string {
	g := grantPayload(f.relay)
	if change != nil {
		change(g)
	}
	return f.vendor.sign(f.t, grantHeaderOf(f.vendor.kid), g)
}

// lease is the relay's lease of leasePayload (within the grant: A-1, P-1, 2 seats) carrying grant.
func (f relayFixture) lease(grant interface{}, change func(h, p map[string]interface{})) string {
	h, p := leaseHeader(f.relay.kid), leasePayload()
	h["grant"] = grant
	if change != nil {
		change(h, p)
	}
	return f.relay.sign(f.t, h, p)
}

func (f relayFixture) verify(token string) (*LeaseClaims, error) {
	return VerifyLease(token, f.jwks, VerifyOptions{Fingerprint: testFingerprint, Audience: testAudience, Now: time.Unix(testNow, 0)})
}

func TestRelayLeaseClaimsCarryTheGrant(t *testing.T) {
	f := newRelayFixture(t)
	claims, err := f.verify(f.lease(f.grant(nil), nil))
	if err != nil {
		t.Fatal(err)
	}
	g := claims.Grant
	if g == nil {
		t.Fatal("no grant")
	}
	if g.RelayID != "relay-1" || g.ID != "grant-1" || g.RelayKeyID != "relay-key" || g.RelayFingerprint != "fp-relay-host" {
		t.Errorf("grant %+v", g)
	}
	if base64.RawURLEncoding.EncodeToString(g.RelayKey) != f.relay.jwk.X {
		t.Errorf("relay key %x", g.RelayKey)
	}
	if !g.ExpiresAt.Equal(time.Unix(testNow+30*86400, 0)) || !g.NotBefore.Equal(time.Unix(testNow-86400, 0)) {
		t.Errorf("times %v %v", g.NotBefore, g.ExpiresAt)
	}
	if len(g.Licenses) != 2 || g.Licenses[0].CRMProductID == nil || *g.Licenses[0].CRMProductID != "P-1" ||
		g.Licenses[1] != (GrantedLicense{AssetNum: "A-2", Seats: 2}) {
		t.Errorf("licenses %+v", g.Licenses)
	}
	if g.Machines != nil || !strings.Contains(string(g.Payload), `"overage"`) {
		t.Errorf("machines %v, payload %s", g.Machines, g.Payload)
	}
	// A vendor's lease carries none.
	plain, err := f.verify(f.vendor.sign(t, leaseHeader(f.vendor.kid), leasePayload()))
	if err != nil || plain.Grant != nil {
		t.Fatalf("vendor's lease: %+v, %v", plain, err)
	}
}

func TestRelayLeaseOrderAndBoundaries(t *testing.T) {
	f := newRelayFixture(t)
	other := newTestKey(t, "vendor-key") // the vendor's kid, another key
	limits := func(p map[string]interface{}) map[string]interface{} { return p["limits"].(map[string]interface{}) }
	// A lease naming no key, expired, for another machine: its grant answers first.
	many := func(h, p map[string]interface{}) {
		delete(h, "kid")
		p["exp"] = testNow - 1
		p["fingerprint"] = "fp-elsewhere"
	}
	grantKey := func(change func(k map[string]interface{})) func(g map[string]interface{}) {
		return func(g map[string]interface{}) {
			k := g["relay"].(map[string]interface{})["key"].(map[string]interface{})
			change(k)
		}
	}
	license := func(change func(l map[string]interface{})) func(g map[string]interface{}) {
		return func(g map[string]interface{}) {
			change(g["licenses"].([]interface{})[0].(map[string]interface{}))
		}
	}
	set := func(name string, value interface{}) func(g map[string]interface{}) {
		return func(g map[string]interface{}) { g[name] = value }
	}
	cases := []struct {
		name   string
		token  func() string
		reason Reason // "" for valid
	}{
		{"valid", func() string { return f.lease(f.grant(nil), nil) }, ""},
		{"the lease's alg before its grant", func() string {
			return f.lease(f.grant(set("exp", testNow-1)), func(h, p map[string]interface{}) { h["alg"] = "HS256" })
		}, ReasonSignature},
		{"the lease's crit before its grant", func() string {
			return f.lease(f.grant(set("exp", testNow-1)), func(h, p map[string]interface{}) { h["crit"] = []string{"exp"} })
		}, ReasonMalformed},
		{"grant not a compact JWS, before the lease's kid", func() string { return f.lease("not.a.jws", many) }, ReasonMalformed},
		{"grant null", func() string { return f.lease(nil, nil) }, ReasonMalformed},
		{"grant a number", func() string { return f.lease(42, nil) }, ReasonMalformed},
		{"grant an array", func() string { return f.lease([]string{f.grant(nil)}, nil) }, ReasonMalformed},
		{"grant with padding", func() string { return f.lease(f.grant(nil)+"=", nil) }, ReasonMalformed},
		{"grant not yet valid, before the lease's kid", func() string { return f.lease(f.grant(set("nbf", testNow+1)), many) }, ReasonNotYetValid},
		{"grant ending now, before the lease's kid", func() string { return f.lease(f.grant(set("exp", testNow)), many) }, ReasonGrantExpired},
		{"then the lease's kid", func() string { return f.lease(f.grant(nil), many) }, ReasonUnknownKey},
		{"grant alg HS256", func() string {
			h := grantHeaderOf(f.vendor.kid)
			h["alg"] = "HS256"
			delete(h, "kid")
			return f.lease(f.vendor.sign(t, h, grantPayload(f.relay)), nil)
		}, ReasonSignature},
		{"grant kid a number", func() string {
			h := grantHeaderOf(f.vendor.kid)
			h["kid"] = 7
			return f.lease(f.vendor.sign(t, h, grantPayload(f.relay)), nil)
		}, ReasonUnknownKey},
		{"grant forged under the vendor's kid: signature before typ and period", func() string {
			h := grantHeaderOf(f.vendor.kid)
			h["typ"] = "nonsense"
			g := grantPayload(f.relay)
			g["exp"] = testNow - 1
			return f.lease(other.sign(t, h, g), nil)
		}, ReasonSignature},
		{"grant typ a lease's, before its period", func() string {
			g := grantPayload(f.relay)
			g["exp"] = testNow - 1
			return f.lease(f.vendor.sign(t, leaseHeader(f.vendor.kid), g), nil)
		}, ReasonMalformed},
		{"grant typ as a media type", func() string {
			h := grantHeaderOf(f.vendor.kid)
			h["typ"] = "Application/Keyward-Grant+JWT"
			return f.lease(f.vendor.sign(t, h, grantPayload(f.relay)), nil)
		}, ""},
		{"grant iss, before its period", func() string {
			return f.lease(f.grant(func(g map[string]interface{}) { g["iss"] = "x"; g["exp"] = testNow - 1 }), nil)
		}, ReasonMalformed},
		{"grant sub a number", func() string { return f.lease(f.grant(set("sub", 1)), nil) }, ReasonMalformed},
		{"grant without jti", func() string {
			return f.lease(f.grant(func(g map[string]interface{}) { delete(g, "jti") }), nil)
		}, ReasonMalformed},
		{"grant iat fractional", func() string { return f.lease(f.grant(set("iat", 1.5)), nil) }, ReasonMalformed},
		{"grant exp past year 9999", func() string { return f.lease(f.grant(set("exp", 253402300800)), nil) }, ReasonMalformed},
		{"grant without relay", func() string {
			return f.lease(f.grant(func(g map[string]interface{}) { delete(g, "relay") }), nil)
		}, ReasonMalformed},
		{"grant relay without fingerprint", func() string {
			return f.lease(f.grant(func(g map[string]interface{}) { delete(g["relay"].(map[string]interface{}), "fingerprint") }), nil)
		}, ReasonMalformed},
		{"grant relay key EC", func() string {
			return f.lease(f.grant(grantKey(func(k map[string]interface{}) { k["kty"] = "EC" })), nil)
		}, ReasonMalformed},
		{"grant relay key Ed448", func() string {
			return f.lease(f.grant(grantKey(func(k map[string]interface{}) { k["crv"] = "Ed448" })), nil)
		}, ReasonMalformed},
		{"grant relay key padded", func() string {
			return f.lease(f.grant(grantKey(func(k map[string]interface{}) { k["x"] = f.relay.jwk.X + "=" })), nil)
		}, ReasonMalformed},
		{"grant relay key with unused bits", func() string {
			return f.lease(f.grant(grantKey(func(k map[string]interface{}) { k["x"] = f.relay.jwk.X[:42] + "B" })), nil)
		}, ReasonMalformed},
		{"grant relay key of 33 bytes", func() string {
			x := base64.RawURLEncoding.EncodeToString(make([]byte, 33))
			return f.lease(f.grant(grantKey(func(k map[string]interface{}) { k["x"] = x })), nil)
		}, ReasonMalformed},
		{"grant relay key kid a number", func() string {
			return f.lease(f.grant(grantKey(func(k map[string]interface{}) { k["kid"] = 1 })), nil)
		}, ReasonMalformed},
		{"grant licenses empty", func() string { return f.lease(f.grant(set("licenses", []interface{}{})), nil) }, ReasonMalformed},
		{"grant licenses null", func() string { return f.lease(f.grant(set("licenses", nil)), nil) }, ReasonMalformed},
		{"grant license a string", func() string {
			return f.lease(f.grant(set("licenses", []interface{}{"A-1"})), nil)
		}, ReasonMalformed},
		{"grant license without crmProductId", func() string {
			return f.lease(f.grant(license(func(l map[string]interface{}) { delete(l, "crmProductId") })), nil)
		}, ReasonMalformed},
		{"grant license crmProductId a number", func() string {
			return f.lease(f.grant(license(func(l map[string]interface{}) { l["crmProductId"] = 5 })), nil)
		}, ReasonMalformed},
		{"grant license assetNum a number", func() string {
			return f.lease(f.grant(license(func(l map[string]interface{}) { l["assetNum"] = 1 })), nil)
		}, ReasonMalformed},
		{"grant seats true", func() string {
			return f.lease(f.grant(license(func(l map[string]interface{}) { l["seats"] = true })), nil)
		}, ReasonMalformed},
		{"grant seats fractional", func() string {
			return f.lease(f.grant(license(func(l map[string]interface{}) { l["seats"] = 1.5 })), nil)
		}, ReasonMalformed},
		{"grant seats past a billion", func() string {
			return f.lease(f.grant(license(func(l map[string]interface{}) { l["seats"] = 1_000_000_001 })), nil)
		}, ReasonMalformed},
		{"grant seats a whole number written as a float", func() string {
			return f.lease(f.grant(license(func(l map[string]interface{}) { l["seats"] = 2.0 })), nil)
		}, ""},
		{"grant machines a string", func() string {
			return f.lease(f.grant(set("machines", testFingerprint)), nil)
		}, ReasonMalformed},
		{"grant machines of numbers", func() string {
			return f.lease(f.grant(set("machines", []int{1})), nil)
		}, ReasonMalformed},
		{"grant machines absent: any machine", func() string {
			return f.lease(f.grant(func(g map[string]interface{}) { delete(g, "machines") }), nil)
		}, ""},
		{"a vendor's lease with a grant added", func() string {
			h := leaseHeader(f.vendor.kid)
			h["grant"] = f.grant(nil)
			return f.vendor.sign(t, h, leasePayload())
		}, ReasonUnknownKey},
		{"another key under the relay's kid", func() string {
			h := leaseHeader(f.relay.kid)
			h["grant"] = f.grant(nil)
			return newTestKey(t, f.relay.kid).sign(t, h, leasePayload())
		}, ReasonSignature},
		{"the relay's key without a grant", func() string {
			return f.relay.sign(t, leaseHeader(f.relay.kid), leasePayload())
		}, ReasonUnknownKey},
		{"the lease's claims before beyond-grant: expired", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { p["exp"] = testNow; p["assetNum"] = "A-9" })
		}, ReasonExpired},
		{"the lease's shape before beyond-grant", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { delete(p, "holder"); p["assetNum"] = "A-9" })
		}, ReasonMalformed},
		{"exp at the grant's", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { p["exp"] = testNow + 30*86400 })
		}, ""},
		{"exp past the grant's", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { p["exp"] = testNow + 30*86400 + 1 })
		}, ReasonBeyondGrant},
		{"another license", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { p["assetNum"] = "A-2" })
		}, ReasonBeyondGrant},
		{"another product", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { p["product"] = map[string]interface{}{"crmProductId": "P-2"} })
		}, ReasonBeyondGrant},
		{"a product without crmProductId matches no license", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) {
				p["assetNum"] = "A-2"
				p["product"] = map[string]interface{}{"productName": "Viewer"}
			})
		}, ReasonBeyondGrant},
		{"a null product matches the null one", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) {
				p["assetNum"] = "A-2"
				p["product"] = map[string]interface{}{"crmProductId": nil}
			})
		}, ""},
		{"a null product matches no named one", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { p["product"] = map[string]interface{}{"crmProductId": nil} })
		}, ReasonBeyondGrant},
		{"seats at the grant's", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { limits(p)["concurrent"] = 10 })
		}, ""},
		{"seats past the grant's", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { limits(p)["concurrent"] = 11 })
		}, ReasonBeyondGrant},
		{"no seat limit", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { limits(p)["concurrent"] = nil })
		}, ReasonBeyondGrant},
		{"seat limit absent", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { delete(limits(p), "concurrent") })
		}, ReasonBeyondGrant},
		{"a machine on the grant's list", func() string {
			return f.lease(f.grant(set("machines", []string{"fp-other", testFingerprint})), nil)
		}, ""},
		{"a machine not on the grant's list, before fingerprint and license end", func() string {
			return f.lease(f.grant(set("machines", []string{"fp-other"})), func(h, p map[string]interface{}) {
				p["fingerprint"] = "fp-elsewhere"
				limits(p)["endDate"] = (testNow - 1) * 1000
			})
		}, ReasonBeyondGrant},
		{"an empty list of machines allows none", func() string {
			return f.lease(f.grant(set("machines", []string{})), nil)
		}, ReasonBeyondGrant},
		{"then the machine", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { p["fingerprint"] = "fp-elsewhere" })
		}, ReasonFingerprint},
		{"then the license's end", func() string {
			return f.lease(f.grant(nil), func(h, p map[string]interface{}) { limits(p)["endDate"] = (testNow - 1) * 1000 })
		}, ReasonLicenseEnded},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			claims, err := f.verify(c.token())
			expectVerdict(t, claims, err, c.reason)
			if c.reason == "" && claims.Grant == nil {
				t.Fatal("a relay's lease answered without its grant")
			}
		})
	}
}

// The valid relay vectors answer the grant that certified their key.
func TestConformanceRelayLeasesCarryTheirGrant(t *testing.T) {
	var vectors leaseVectors
	readStrict(t, "relay-leases.json", &vectors)
	jwks, err := ParseJWKS(vectors.JWKS)
	if err != nil {
		t.Fatal(err)
	}
	valid := 0
	for _, c := range vectors.Cases {
		if !*c.Expect.Valid {
			continue
		}
		claims, err := VerifyLease(c.Token, jwks, VerifyOptions{Fingerprint: c.Fingerprint, Now: time.Unix(*c.Now, 0)})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if g := claims.Grant; g == nil || len(g.RelayKey) != 32 || g.license(claims.AssetNum, nullable(claims)) == nil {
			t.Errorf("%s: grant %+v", c.Name, claims.Grant)
		}
		valid++
	}
	if valid == 0 {
		t.Fatal("relay-leases.json has no valid case")
	}
}

func nullable(claims *LeaseClaims) *string {
	if claims.Product.CRMProductID == "" {
		return nil
	}
	return &claims.Product.CRMProductID
}
