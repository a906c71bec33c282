package keyward

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSavedJWKSAndLeaseVerifyAfterReading(t *testing.T) {
	key := newTestKey(t, "kid-a")
	dir := t.TempDir()
	jwksFile, leaseFile := filepath.Join(dir, "jwks.json"), filepath.Join(dir, "lease.jws")
	token := key.sign(t, leaseHeader("kid-a"), leasePayload())

	if err := SaveJWKS(jwksFile, &JWKS{Keys: []JWK{key.jwk}}); err != nil {
		t.Fatal(err)
	}
	if err := SaveLease(leaseFile, token); err != nil {
		t.Fatal(err)
	}
	jwks, err := LoadJWKS(jwksFile)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadLease(leaseFile)
	if err != nil || loaded != token {
		t.Fatalf("lease read back %q, %v", loaded, err)
	}
	claims, err := VerifyLease(loaded, jwks, VerifyOptions{Fingerprint: testFingerprint, Now: time.Unix(testNow, 0)})
	if err != nil || claims.LeaseID() != "lease-1" {
		t.Fatalf("claims %+v, %v", claims, err)
	}

	// The lease is a credential of this machine: its file is the user's alone.
	if info, err := os.Stat(leaseFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("lease file mode %v, %v", info.Mode(), err)
	}
	// Written whole by a rename: no temporary file is left beside them.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("files left: %v", entries)
	}

	// Saved again over the old file.
	if err := SaveJWKS(jwksFile, &JWKS{}); err != nil {
		t.Fatal(err)
	}
	if jwks, err := LoadJWKS(jwksFile); err != nil || len(jwks.Keys) != 0 {
		t.Fatalf("overwritten jwks %+v, %v", jwks, err)
	}
}

func TestLoadRefusesWhatIsNoKeySet(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"garbage": "not json", "no keys": `{"kty":"OKP"}`} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadJWKS(file); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if _, err := LoadJWKS(filepath.Join(dir, "absent")); err == nil {
		t.Error("absent file loaded")
	}
	if err := SaveLease(filepath.Join(dir, "lease"), "  "); err == nil {
		t.Error("saved an empty lease")
	}
	if err := SaveJWKS(filepath.Join(dir, "missing-dir", "jwks.json"), &JWKS{}); err == nil {
		t.Error("saved into a missing directory")
	}
}
