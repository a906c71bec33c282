package keyward

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The offline-activation half of the SDK conformance suite: every case of
// sdks/conformance/activation.json, read from the repository at test time. A field, an
// expectation or a version this SDK does not know fails here.

type activationVectors struct {
	Version  int             `json:"version"`
	Now      int64           `json:"now"`
	JWKS     json.RawMessage `json:"jwks"`
	Requests []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Fields      struct {
			AppKey       string `json:"appKey"`
			AssetNum     string `json:"assetNum"`
			CRMProductID string `json:"crmProductId"`
			Days         int    `json:"days"`
			CreatedAt    int64  `json:"createdAt"`
			Nonce        string `json:"nonce"`
			Fingerprint  string `json:"fingerprint"`
		} `json:"fields"`
		FingerprintHash string `json:"fingerprintHash"`
		Code            string `json:"code"`
	} `json:"requests"`
	TypedCodes []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Text        string `json:"text"`
		Expect      struct {
			Bytes *string `json:"bytes"`
			Error *bool   `json:"error"`
			Group *int    `json:"group"`
		} `json:"expect"`
	} `json:"typedCodes"`
	Answers []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Request     string `json:"request"`
		Fingerprint string `json:"fingerprint"`
		Answer      string `json:"answer"`
		Expect      struct {
			Valid     *bool   `json:"valid"`
			Reason    *string `json:"reason"`
			LeaseID   *string `json:"leaseId"`
			ExpiresAt *int64  `json:"expiresAt"`
			ExpBound  *string `json:"expBound"`
		} `json:"expect"`
	} `json:"answers"`
	Returns []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Request     string `json:"request"`
		LeaseID     string `json:"leaseId"`
		Code        string `json:"code"`
	} `json:"returns"`
}

func readActivationVectors(t *testing.T) (*activationVectors, *JWKS) {
	t.Helper()
	var vectors activationVectors
	readStrict(t, "activation.json", &vectors)
	if vectors.Version != 1 {
		t.Fatalf("activation.json version %d: this SDK knows version 1", vectors.Version)
	}
	if vectors.Now == 0 || len(vectors.Requests) == 0 || len(vectors.TypedCodes) == 0 ||
		len(vectors.Answers) == 0 || len(vectors.Returns) == 0 {
		t.Fatal("activation.json lacks now or a kind of case")
	}
	// Loaded as the software loads the JWKS it shipped with.
	jwksFile := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksFile, vectors.JWKS, 0o644); err != nil {
		t.Fatal(err)
	}
	jwks, err := LoadJWKS(jwksFile)
	if err != nil {
		t.Fatal(err)
	}
	return &vectors, jwks
}

func TestConformanceActivationRequests(t *testing.T) {
	vectors, _ := readActivationVectors(t)
	for _, c := range vectors.Requests {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			f := c.Fields
			if c.Code == "" || f.Fingerprint == "" || c.FingerprintHash == "" || f.CreatedAt == 0 {
				t.Fatalf("case lacks code, fingerprint, fingerprintHash or createdAt: %+v", c)
			}
			nonce, err := hex.DecodeString(f.Nonce)
			if err != nil {
				t.Fatal(err)
			}
			pending, err := NewActivationRequest(ActivationRequestOptions{
				AppKey: f.AppKey, AssetNum: f.AssetNum, CRMProductID: f.CRMProductID, Days: f.Days,
				Fingerprint: f.Fingerprint, Now: time.Unix(f.CreatedAt, 0), Nonce: nonce,
			})
			if err != nil {
				t.Fatal(err)
			}
			if pending.Code != c.Code {
				t.Fatalf("code\n %s\nwant\n %s", pending.Code, c.Code)
			}
			if got := hex.EncodeToString(pending.Request.FingerprintHash[:]); got != c.FingerprintHash {
				t.Fatalf("fingerprint hash %s, want %s", got, c.FingerprintHash)
			}

			// Read back from the code (as typed, and sloppily), from the file, from a saved file.
			sloppy := strings.NewReplacer("-", " ", "0", "o", "1", "l").Replace(strings.ToLower(c.Code))
			saved := filepath.Join(t.TempDir(), "pending.json")
			if err := SaveActivationRequest(saved, pending.Request); err != nil {
				t.Fatal(err)
			}
			loaded, err := LoadActivationRequest(saved)
			if err != nil {
				t.Fatal(err)
			}
			for form, text := range map[string]string{"code": c.Code, "sloppy": sloppy, "file": string(pending.File)} {
				read, err := ParseActivationRequest(text)
				if err != nil {
					t.Fatalf("%s: %v", form, err)
				}
				for _, got := range []*ActivationRequest{read, loaded} {
					if got.AppKey != f.AppKey || got.AssetNum != f.AssetNum || got.CRMProductID != f.CRMProductID ||
						got.Days != f.Days || got.CreatedAt.Unix() != f.CreatedAt ||
						hex.EncodeToString(got.Nonce[:]) != f.Nonce ||
						hex.EncodeToString(got.FingerprintHash[:]) != c.FingerprintHash {
						t.Fatalf("%s: read back %+v", form, got)
					}
				}
			}

			// The file: the code, and for people what it asks.
			var file map[string]interface{}
			if err := json.Unmarshal(pending.File, &file); err != nil {
				t.Fatal(err)
			}
			want := map[string]interface{}{
				"keyward": "activation-request", "version": 1.0, "code": c.Code, "appKey": f.AppKey,
				"assetNum": f.AssetNum, "crmProductId": f.CRMProductID, "days": float64(f.Days),
				"createdAt": time.Unix(f.CreatedAt, 0).UTC().Format("2006-01-02T15:04:05.000Z"),
			}
			if fmt.Sprint(file) != fmt.Sprint(want) {
				t.Fatalf("file %v\nwant %v", file, want)
			}
		})
	}
}

func TestConformanceTypedCodes(t *testing.T) {
	vectors, _ := readActivationVectors(t)
	for _, c := range vectors.TypedCodes {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			got, err := DecodeTypedCode(c.Text)
			switch e := c.Expect; {
			case e.Bytes != nil && e.Error == nil && e.Group == nil:
				if err != nil {
					t.Fatal(err)
				}
				if hex.EncodeToString(got) != *e.Bytes {
					t.Fatalf("bytes %x, want %s", got, *e.Bytes)
				}
				// Written back, the code reads as written.
				again, err := DecodeTypedCode(EncodeTypedCode(got))
				if err != nil || hex.EncodeToString(again) != *e.Bytes {
					t.Fatalf("written back: %x, %v", again, err)
				}
			case e.Bytes == nil && e.Error != nil && *e.Error && e.Group != nil:
				var bad *CodeError
				if !errors.As(err, &bad) {
					t.Fatalf("want a CodeError, got %x, %v", got, err)
				}
				if bad.Group != *e.Group {
					t.Fatalf("group %d, want %d (%v)", bad.Group, *e.Group, err)
				}
				if !strings.Contains(bad.Error(), fmt.Sprintf("group %d ", *e.Group)) {
					t.Fatalf("the message does not name group %d: %v", *e.Group, err)
				}
			default:
				t.Fatalf("expectation not understood: %+v", e)
			}
		})
	}
}

func TestConformanceActivationAnswers(t *testing.T) {
	vectors, jwks := readActivationVectors(t)
	known := map[Reason]bool{
		ReasonMalformed: true, ReasonSignature: true, ReasonUnknownKey: true, ReasonNotYetValid: true,
		ReasonExpired: true, ReasonAudience: true, ReasonFingerprint: true, ReasonLicenseEnded: true,
		ReasonRequest: true,
	}
	now := time.Unix(vectors.Now, 0)
	for _, c := range vectors.Answers {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			if c.Answer == "" || c.Request == "" || c.Fingerprint == "" || c.Expect.Valid == nil {
				t.Fatalf("case lacks answer, request, fingerprint or expect.valid: %+v", c)
			}
			request, err := ParseActivationRequest(c.Request)
			if err != nil {
				t.Fatal(err)
			}
			options := ActivationVerifyOptions{Request: request, Fingerprint: c.Fingerprint, Now: now}
			lease, err := VerifyActivation(c.Answer, jwks, options)
			e := c.Expect
			if !*e.Valid {
				if e.Reason == nil || e.LeaseID != nil || e.ExpiresAt != nil || e.ExpBound != nil {
					t.Fatalf("a refused case not understood: %+v", e)
				}
				if !known[Reason(*e.Reason)] {
					t.Fatalf("expected reason %q is none this SDK knows", *e.Reason)
				}
				var refused *LeaseError
				if !errors.As(err, &refused) {
					t.Fatalf("want refusal %q, got %+v, %v", *e.Reason, lease, err)
				}
				if string(refused.Reason) != *e.Reason || lease != nil {
					t.Fatalf("reason %q, want %q (%v)", refused.Reason, *e.Reason, err)
				}
				return
			}
			if e.Reason != nil || e.LeaseID == nil || e.ExpiresAt == nil || e.ExpBound == nil {
				t.Fatalf("a valid case not understood: %+v", e)
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if lease.LeaseID != *e.LeaseID || lease.ExpiresAt.Unix() != *e.ExpiresAt || lease.ExpBound != *e.ExpBound {
				t.Fatalf("lease %s until %d (%s), want %s until %d (%s)",
					lease.LeaseID, lease.ExpiresAt.Unix(), lease.ExpBound, *e.LeaseID, *e.ExpiresAt, *e.ExpBound)
			}
			if lease.AppKey != request.AppKey || lease.AssetNum != request.AssetNum ||
				lease.CRMProductID != request.CRMProductID || lease.IssuedAt.After(now) {
				t.Fatalf("lease %+v for request %+v", lease, request)
			}
			// What the machine saves verifies again, to the same lease.
			again, err := VerifyActivation(lease.Lease, jwks, options)
			if err != nil || again.LeaseID != lease.LeaseID || !again.ExpiresAt.Equal(lease.ExpiresAt) {
				t.Fatalf("the saved form verified again: %+v, %v", again, err)
			}
			if (lease.Claims == nil) != (strings.Count(lease.Lease, ".") != 2) {
				t.Fatalf("claims %v for %q", lease.Claims, lease.Lease)
			}
		})
	}
}

func TestConformanceActivationReturns(t *testing.T) {
	vectors, _ := readActivationVectors(t)
	for _, c := range vectors.Returns {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			request, err := ParseActivationRequest(c.Request)
			if err != nil {
				t.Fatal(err)
			}
			code, err := ActivationReturnCode(request, c.LeaseID)
			if err != nil {
				t.Fatal(err)
			}
			if code != c.Code {
				t.Fatalf("return code\n %s\nwant\n %s", code, c.Code)
			}
		})
	}
}
