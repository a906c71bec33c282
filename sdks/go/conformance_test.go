package keyward

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The offline half of the SDK conformance suite: every case of sdks/conformance/leases.json,
// relay-leases.json and webhooks.json, read from the repository at test time. A case this SDK does not handle (a field
// or an expectation it does not know, a new version of the files) fails here.

func conformanceDir() string {
	if dir := os.Getenv("KEYWARD_CONFORMANCE_DIR"); dir != "" {
		return dir
	}
	return filepath.Join("..", "conformance")
}

// readStrict decodes a conformance file, refusing any field this test does not know.
func readStrict(t *testing.T, name string, into interface{}) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(conformanceDir(), name))
	if err != nil {
		t.Fatalf("conformance vectors: %v", err)
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(into); err != nil {
		t.Fatalf("%s: %v (a field this SDK does not handle?)", name, err)
	}
}

type leaseVectors struct {
	Version int             `json:"version"`
	Now     int64           `json:"now"`
	JWKS    json.RawMessage `json:"jwks"`
	Cases   []struct {
		Name        string  `json:"name"`
		Description string  `json:"description"`
		Token       string  `json:"token"`
		Fingerprint string  `json:"fingerprint"`
		Audience    *string `json:"audience"`
		Now         *int64  `json:"now"`
		Expect      struct {
			Valid      *bool           `json:"valid"`
			Reason     *string         `json:"reason"`
			Sub        *string         `json:"sub"`
			AssetNum   *string         `json:"assetNum"`
			HolderKind *string         `json:"holderKind"`
			ExpBound   json.RawMessage `json:"expBound"` // null, or a string
		} `json:"expect"`
	} `json:"cases"`
}

func TestConformanceLeases(t *testing.T) { runLeaseVectors(t, "leases.json") }

// Leases a relay signed, each carrying the pool grant that certifies its key: the same file and
// case shape, judged the same way, with the vendor's key set alone.
func TestConformanceRelayLeases(t *testing.T) { runLeaseVectors(t, "relay-leases.json") }

// runLeaseVectors verifies every case of a file of lease vectors as the case expects.
func runLeaseVectors(t *testing.T, file string) {
	var vectors leaseVectors
	readStrict(t, file, &vectors)
	if vectors.Version != 1 {
		t.Fatalf("%s version %d: this SDK knows version 1", file, vectors.Version)
	}
	if len(vectors.Cases) == 0 {
		t.Fatalf("%s has no case", file)
	}
	// Loaded as an SDK loads a saved JWKS file.
	jwksFile := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksFile, vectors.JWKS, 0o644); err != nil {
		t.Fatal(err)
	}
	jwks, err := LoadJWKS(jwksFile)
	if err != nil {
		t.Fatal(err)
	}
	known := map[Reason]bool{
		ReasonMalformed: true, ReasonSignature: true, ReasonUnknownKey: true, ReasonNotYetValid: true,
		ReasonExpired: true, ReasonAudience: true, ReasonFingerprint: true, ReasonLicenseEnded: true,
		ReasonGrantExpired: true, ReasonBeyondGrant: true,
	}
	for _, c := range vectors.Cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			if c.Name == "" || c.Token == "" || c.Now == nil || c.Expect.Valid == nil {
				t.Fatalf("case lacks name, token, now or expect.valid: %+v", c)
			}
			options := VerifyOptions{Fingerprint: c.Fingerprint, Now: time.Unix(*c.Now, 0)}
			if c.Audience != nil {
				options.Audience = *c.Audience
			}
			claims, err := VerifyLease(c.Token, jwks, options)
			expect := c.Expect
			if !*expect.Valid {
				if expect.Reason == nil {
					t.Fatal("a refused case without a reason")
				}
				if !known[Reason(*expect.Reason)] {
					t.Fatalf("expected reason %q is none this SDK knows", *expect.Reason)
				}
				if expect.Sub != nil || expect.AssetNum != nil || expect.HolderKind != nil || expect.ExpBound != nil {
					t.Fatal("a refused case with claims to compare: not understood")
				}
				var refused *LeaseError
				if !errors.As(err, &refused) {
					t.Fatalf("want refusal %q, got claims %+v, error %v", *expect.Reason, claims, err)
				}
				if string(refused.Reason) != *expect.Reason {
					t.Fatalf("reason %q, want %q (%v)", refused.Reason, *expect.Reason, err)
				}
				if claims != nil {
					t.Fatal("claims answered with a refusal")
				}
				return
			}
			if expect.Reason != nil || expect.Sub == nil || expect.AssetNum == nil || expect.HolderKind == nil ||
				len(expect.ExpBound) == 0 {
				t.Fatal("a valid case without sub, assetNum, holderKind and expBound: not understood")
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if claims.Subject != *expect.Sub || claims.LeaseID() != *expect.Sub || claims.ID != *expect.Sub {
				t.Errorf("sub %q, jti %q, want %q", claims.Subject, claims.ID, *expect.Sub)
			}
			if claims.AssetNum != *expect.AssetNum {
				t.Errorf("assetNum %q, want %q", claims.AssetNum, *expect.AssetNum)
			}
			if claims.Holder.Kind != *expect.HolderKind {
				t.Errorf("holder kind %q, want %q", claims.Holder.Kind, *expect.HolderKind)
			}
			var bound *string
			if err := json.Unmarshal(expect.ExpBound, &bound); err != nil {
				t.Fatalf("expBound %s: %v", expect.ExpBound, err)
			}
			wantBound := "" // the SDK's "none", the vectors' null
			if bound != nil {
				wantBound = *bound
			}
			if claims.ExpBound != wantBound {
				t.Errorf("expBound %q, want %q", claims.ExpBound, wantBound)
			}
			if claims.Fingerprint != c.Fingerprint {
				t.Errorf("fingerprint %q, want %q", claims.Fingerprint, c.Fingerprint)
			}
			if claims.Issuer != LeaseIssuer {
				t.Errorf("iss %q", claims.Issuer)
			}
			if c.Audience != nil && claims.Audience != *c.Audience {
				t.Errorf("aud %q, want %q", claims.Audience, *c.Audience)
			}
			at := time.Unix(*c.Now, 0)
			if claims.NotBefore.After(at) || !claims.ExpiresAt.After(at) {
				t.Errorf("nbf %v, exp %v around %v", claims.NotBefore, claims.ExpiresAt, at)
			}
		})
	}
}

type webhookVectors struct {
	Version          int   `json:"version"`
	ToleranceSeconds int64 `json:"toleranceSeconds"`
	Cases            []struct {
		Name        string            `json:"name"`
		Description string            `json:"description"`
		Secrets     []string          `json:"secrets"`
		Headers     map[string]string `json:"headers"`
		Body        *string           `json:"body"`
		Now         *int64            `json:"now"`
		Expect      struct {
			Valid *bool   `json:"valid"`
			ID    *string `json:"id"`
			Type  *string `json:"type"`
		} `json:"expect"`
	} `json:"cases"`
}

func TestConformanceWebhooks(t *testing.T) {
	var vectors webhookVectors
	readStrict(t, "webhooks.json", &vectors)
	if vectors.Version != 1 {
		t.Fatalf("webhooks.json version %d: this SDK knows version 1", vectors.Version)
	}
	if len(vectors.Cases) == 0 || vectors.ToleranceSeconds <= 0 {
		t.Fatal("webhooks.json has no case or no tolerance")
	}
	for _, c := range vectors.Cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			if c.Body == nil || c.Now == nil || c.Expect.Valid == nil {
				t.Fatalf("case lacks body, now or expect.valid: %+v", c)
			}
			header := http.Header{}
			for name, value := range c.Headers {
				header.Set(name, value)
			}
			now := time.Unix(*c.Now, 0)
			event, err := VerifyWebhook(c.Secrets, []byte(*c.Body), header,
				WithTolerance(time.Duration(vectors.ToleranceSeconds)*time.Second),
				WithWebhookClock(func() time.Time { return now }))
			if !*c.Expect.Valid {
				if c.Expect.ID != nil || c.Expect.Type != nil {
					t.Fatal("a refused case with an event to compare: not understood")
				}
				if !errors.Is(err, ErrInvalidWebhook) {
					t.Fatalf("want ErrInvalidWebhook, got event %+v, error %v", event, err)
				}
				return
			}
			if c.Expect.ID == nil || c.Expect.Type == nil {
				t.Fatal("a valid case without id and type: not understood")
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if event.ID != *c.Expect.ID || event.Type != *c.Expect.Type {
				t.Fatalf("event %s %s, want %s %s", event.ID, event.Type, *c.Expect.ID, *c.Expect.Type)
			}
		})
	}
}
