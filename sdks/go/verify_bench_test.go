package keyward

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"
)

// TestVerifyLeaseTiming times VerifyLease on the suite's valid lease, as bench/sdks.ts times every
// SDK; it runs only when KEYWARD_VERIFY_BENCH is a number of calls:
//
//	KEYWARD_VERIFY_BENCH=5000 go test -run TestVerifyLeaseTiming -v
//
// After a warm-up it times the calls one by one and prints lines in the C benchmark's form:
// "VerifyLease, signature verified, wall clock: N calls, mean … us, median … us, p99 … us".
func TestVerifyLeaseTiming(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KEYWARD_VERIFY_BENCH"))
	if n <= 0 {
		t.Skip("KEYWARD_VERIFY_BENCH=N times N calls of VerifyLease (bench/sdks.ts)")
	}
	var vectors leaseVectors
	readStrict(t, "leases.json", &vectors)
	jwksFile := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksFile, vectors.JWKS, 0o644); err != nil {
		t.Fatal(err)
	}
	jwks, err := LoadJWKS(jwksFile)
	if err != nil {
		t.Fatal(err)
	}
	var options VerifyOptions
	token := ""
	for _, c := range vectors.Cases {
		if c.Name == "valid" {
			token = c.Token
			options = VerifyOptions{Fingerprint: c.Fingerprint, Audience: *c.Audience, Now: time.Unix(*c.Now, 0)}
		}
	}
	if token == "" {
		t.Fatal("no case named valid")
	}
	for i := 0; i < 2000; i++ {
		if _, err := VerifyLease(token, jwks, options); err != nil {
			t.Fatal(err)
		}
	}
	wall := make([]float64, n)
	for i := range wall {
		w0 := time.Now()
		if _, err := VerifyLease(token, jwks, options); err != nil {
			t.Fatal(err)
		}
		wall[i] = float64(time.Since(w0).Nanoseconds()) / 1e3
	}
	summary := func(what string, samples []float64) {
		total := 0.0
		for _, s := range samples {
			total += s
		}
		sort.Float64s(samples)
		median := samples[n/2]
		if n%2 == 0 {
			median = (samples[n/2-1] + samples[n/2]) / 2
		}
		fmt.Printf("VerifyLease, signature verified, %s: %d calls, mean %.1f us, median %.1f us, p99 %.1f us\n",
			what, n, total/float64(n), median, samples[int(float64(n)*0.99)])
	}
	summary("wall clock", wall)
}
