package keyward

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Answers signed here by keys of this test, to check what the vectors do not: the order of the
// checks when an answer has several defects, the boundaries, other kinds and versions of message,
// and that every single mistyped character is caught and named by its group.

const activationFingerprint = "fp-activation-test-machine"

func testActivationRequest(t *testing.T) *ActivationRequest {
	t.Helper()
	pending, err := NewActivationRequest(ActivationRequestOptions{
		AppKey: testAudience, AssetNum: "8000000042", CRMProductID: "P-MODELER", Days: 30,
		Fingerprint: activationFingerprint, Now: time.Unix(testNow-600, 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	return pending.Request
}

// activationKey is a signing key whose kid is a base64url thumbprint-like, as the server's are.
type activationKey struct {
	private ed25519.PrivateKey
	jwk     JWK
}

func newActivationKey(t *testing.T) activationKey {
	t.Helper()
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(public)
	return activationKey{private: private, jwk: JWK{
		Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(public),
		Kid: base64.RawURLEncoding.EncodeToString(sum[:]), Alg: "EdDSA", Use: "sig",
	}}
}

// typedBody is a typed answer's signed fields, before signing.
type typedBody struct {
	kind, version byte
	kidPrefix     []byte
	leaseID       string
	issuedAt      uint32
	expiresAt     uint32
	bound         byte
	nonce         []byte
	hash          []byte
	binding       []byte
}

func answerBody(k activationKey, r *ActivationRequest) typedBody {
	return typedBody{
		kind: kindLease, version: ActivationVersion, kidPrefix: kidPrefix(k.jwk.Kid),
		leaseID: "01938f2e-7c1a-7000-8000-00000000b002", issuedAt: uint32(testNow - 300),
		expiresAt: uint32(testNow + 30*86400), nonce: r.Nonce[:], hash: r.FingerprintHash[:], binding: r.binding(),
	}
}

// sign answers the typed code of body signed by k, as the server signs it.
func (b typedBody) sign(t *testing.T, k activationKey) string {
	t.Helper()
	id, err := uuidBytes(b.leaseID)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte{b.kind, b.version}
	data = append(data, b.kidPrefix...)
	data = append(data, id...)
	data = binary.BigEndian.AppendUint32(data, b.issuedAt)
	data = binary.BigEndian.AppendUint32(data, b.expiresAt)
	data = append(data, b.bound)
	data = append(data, b.nonce...)
	data = append(data, b.hash...)
	data = append(data, b.binding...)
	signature := ed25519.Sign(k.private, append([]byte(typedLeaseLabel), data...))
	return EncodeTypedCode(append(data, signature...))
}

func verifyTypedAt(t *testing.T, answer string, k activationKey, r *ActivationRequest, now int64) (*ActivatedLease, error) {
	t.Helper()
	return VerifyActivation(answer, &JWKS{Keys: []JWK{k.jwk}}, ActivationVerifyOptions{
		Request: r, Fingerprint: activationFingerprint, Now: time.Unix(now, 0),
	})
}

func TestVerifyActivationTypedOrderAndBoundaries(t *testing.T) {
	key, other := newActivationKey(t), newActivationKey(t)
	request := testActivationRequest(t)
	otherRequest := *request
	otherRequest.Nonce[0] ^= 1
	otherProduct := *request
	otherProduct.CRMProductID = "P-VIEWER"
	stranger := *request
	stranger.FingerprintHash = FingerprintHash("fp-another-machine")

	cases := []struct {
		name string
		edit func(b *typedBody)
		key  activationKey
		now  int64
		want Reason
	}{
		{"valid", func(b *typedBody) {}, key, testNow, ""},
		{"issued now", func(b *typedBody) { b.issuedAt = uint32(testNow) }, key, testNow, ""},
		{"expires a second after now", func(b *typedBody) { b.expiresAt = uint32(testNow + 1) }, key, testNow, ""},
		{"expires now", func(b *typedBody) { b.expiresAt = uint32(testNow) }, key, testNow, ReasonExpired},
		{"issued a second ahead", func(b *typedBody) { b.issuedAt = uint32(testNow + 1) }, key, testNow, ReasonNotYetValid},
		{"unknown bound", func(b *typedBody) { b.bound = 3 }, key, testNow, ReasonMalformed},
		{"version 2", func(b *typedBody) { b.version = 2 }, key, testNow, ReasonMalformed},
		{"a request's kind", func(b *typedBody) { b.kind = kindRequest }, key, testNow, ReasonMalformed},
		// A malformed answer is refused before its key is looked for; the key before the signature;
		// the signature before any field is trusted; time before the request; request before machine.
		{"unknown bound and unknown key", func(b *typedBody) { b.bound = 7 }, other, testNow, ReasonMalformed},
		{"unknown key and expired", func(b *typedBody) { b.kidPrefix = kidPrefix(other.jwk.Kid); b.expiresAt = 1 }, other, testNow, ReasonUnknownKey},
		{"signed by another key under the kid", func(b *typedBody) {}, other, testNow, ReasonSignature},
		{"forged and expired", func(b *typedBody) { b.expiresAt = 1 }, other, testNow, ReasonSignature},
		{"not yet valid and expired", func(b *typedBody) { b.issuedAt = uint32(testNow + 10); b.expiresAt = 5 }, key, testNow, ReasonNotYetValid},
		{"expired, other request", func(b *typedBody) { b.expiresAt = 5; b.nonce = otherRequest.Nonce[:] }, key, testNow, ReasonExpired},
		{"other request, other machine", func(b *typedBody) { b.nonce = otherRequest.Nonce[:]; b.hash = stranger.FingerprintHash[:] }, key, testNow, ReasonRequest},
		{"other product", func(b *typedBody) { b.binding = otherProduct.binding() }, key, testNow, ReasonRequest},
		{"other machine", func(b *typedBody) { b.hash = stranger.FingerprintHash[:] }, key, testNow, ReasonFingerprint},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			body := answerBody(key, request)
			c.edit(&body)
			answer := body.sign(t, c.key)
			lease, err := verifyTypedAt(t, answer, key, request, c.now)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if lease.LeaseID != body.leaseID || lease.ExpiresAt.Unix() != int64(body.expiresAt) ||
					lease.IssuedAt.Unix() != int64(body.issuedAt) || lease.ExpBound != ExpBoundOfflineDays ||
					lease.Lease != answer || lease.Claims != nil {
					t.Fatalf("lease %+v", lease)
				}
				return
			}
			if reasonOf(err) != c.want || lease != nil {
				t.Fatalf("reason %q, want %q (%v)", reasonOf(err), c.want, err)
			}
		})
	}

	t.Run("the bounds by their byte", func(t *testing.T) {
		for b, want := range []string{ExpBoundOfflineDays, ExpBoundLicenseEnd, ExpBoundTimeDuration} {
			body := answerBody(key, request)
			body.bound = byte(b)
			lease, err := verifyTypedAt(t, body.sign(t, key), key, request, testNow)
			if err != nil || lease.ExpBound != want {
				t.Fatalf("bound %d: %+v, %v", b, lease, err)
			}
		}
	})
	t.Run("another kind of message names itself", func(t *testing.T) {
		code, _ := request.Code()
		_, err := verifyTypedAt(t, code, key, request, testNow)
		var refused *LeaseError
		if !errors.As(err, &refused) || refused.Reason != ReasonMalformed ||
			!strings.Contains(refused.Detail, "activation request, not an activation answer") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("no key set", func(t *testing.T) {
		_, err := VerifyActivation(answerBody(key, request).sign(t, key), nil,
			ActivationVerifyOptions{Request: request, Fingerprint: activationFingerprint})
		if reasonOf(err) != ReasonJWKSUnavailable {
			t.Fatalf("%v", err)
		}
	})
	t.Run("a key unfit to sign is none", func(t *testing.T) {
		unfit := key
		unfit.jwk.Use = "enc"
		_, err := verifyTypedAt(t, answerBody(key, request).sign(t, key), unfit, request, testNow)
		if reasonOf(err) != ReasonUnknownKey {
			t.Fatalf("%v", err)
		}
	})
}

func TestVerifyActivationNamesTheMistypedGroup(t *testing.T) {
	key := newActivationKey(t)
	request := testActivationRequest(t)
	answer := answerBody(key, request).sign(t, key)
	groups := strings.Split(answer, "-")
	for g := range groups {
		mistyped := append([]string(nil), groups...)
		first := mistyped[g][0]
		swap := byte('Z')
		if first == 'Z' {
			swap = 'Y'
		}
		mistyped[g] = string(swap) + mistyped[g][1:]
		_, err := verifyTypedAt(t, strings.Join(mistyped, "-"), key, request, testNow)
		var refused *LeaseError
		if !errors.As(err, &refused) || refused.Reason != ReasonMalformed || refused.Group != g+1 {
			t.Fatalf("group %d mistyped: %v (group %d)", g+1, err, refused.Group)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("group %d does not check", g+1)) {
			t.Fatalf("the message does not name the group: %v", err)
		}
	}
	// The last three groups missing: cut short, no group to blame.
	_, err := verifyTypedAt(t, strings.Join(groups[:len(groups)-3], "-"), key, request, testNow)
	var refused *LeaseError
	if !errors.As(err, &refused) || refused.Reason != ReasonMalformed || refused.Group != 0 ||
		!strings.Contains(refused.Detail, "cut short") {
		t.Fatalf("cut short: %v", err)
	}
	// Typed sloppily, it reads.
	sloppy := strings.NewReplacer("-", "  ", "0", "O", "1", "I").Replace(strings.ToLower(answer))
	if _, err := verifyTypedAt(t, "\n"+sloppy+"\n", key, request, testNow); err != nil {
		t.Fatalf("sloppy: %v", err)
	}
}

func TestTypedCodeCatchesEverySingleMistypedCharacter(t *testing.T) {
	for length := 0; length <= 40; length++ {
		data := make([]byte, length)
		if _, err := rand.Read(data); err != nil {
			t.Fatal(err)
		}
		code := EncodeTypedCode(data)
		read, err := DecodeTypedCode(code)
		if length == 0 {
			var bad *CodeError
			if code != "" || !errors.As(err, &bad) || bad.Group != 0 {
				t.Fatalf("empty: %q, %v", code, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(read, data) {
			t.Fatalf("%d bytes: %x read back as %x, %v", length, data, read, err)
		}
		for i := 0; i < len(code); i++ {
			if code[i] == '-' {
				continue
			}
			for _, c := range crockford {
				if byte(c) == code[i] {
					continue
				}
				mistyped := code[:i] + string(c) + code[i+1:]
				_, err := DecodeTypedCode(mistyped)
				var bad *CodeError
				if !errors.As(err, &bad) || bad.Group != i/7+1 {
					t.Fatalf("%s (position %d): %v, want group %d", mistyped, i, err, i/7+1)
				}
			}
		}
	}
}

func TestActivationRequestRefusesWhatDoesNotFit(t *testing.T) {
	base := ActivationRequestOptions{
		AppKey: "kw_app", AssetNum: "8000000001", CRMProductID: "P-1", Days: 1, Fingerprint: "fp",
	}
	for name, edit := range map[string]func(o *ActivationRequestOptions){
		"no days":          func(o *ActivationRequestOptions) { o.Days = 0 },
		"366 days":         func(o *ActivationRequestOptions) { o.Days = MaxActivationDays + 1 },
		"no app key":       func(o *ActivationRequestOptions) { o.AppKey = "" },
		"a long product":   func(o *ActivationRequestOptions) { o.CRMProductID = strings.Repeat("x", 256) },
		"no UTF-8":         func(o *ActivationRequestOptions) { o.AssetNum = "\xff" },
		"no fingerprint":   func(o *ActivationRequestOptions) { o.Fingerprint = "" },
		"a short nonce":    func(o *ActivationRequestOptions) { o.Nonce = []byte{1, 2, 3} },
		"before the epoch": func(o *ActivationRequestOptions) { o.Now = time.Unix(-5, 0) },
	} {
		options := base
		edit(&options)
		if pending, err := NewActivationRequest(options); err == nil {
			t.Errorf("%s: made %s", name, pending.Code)
		}
	}
	// 365 days and 255 bytes are possible; two requests never share a nonce.
	options := base
	options.Days, options.CRMProductID = MaxActivationDays, strings.Repeat("é", 127)+"x"
	one, err := NewActivationRequest(options)
	if err != nil {
		t.Fatal(err)
	}
	two, err := NewActivationRequest(options)
	if err != nil || one.Request.Nonce == two.Request.Nonce || one.Code == two.Code {
		t.Fatalf("nonces %x and %x, %v", one.Request.Nonce, two.Request.Nonce, err)
	}
	if read, err := ParseActivationRequest(one.Code); err != nil || *read != *one.Request {
		t.Fatalf("read back %+v, %v", read, err)
	}
}

func TestParseActivationRequestRefusesOtherMessages(t *testing.T) {
	request := testActivationRequest(t)
	data, err := request.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	edited := func(edit func(d []byte) []byte) string {
		return EncodeTypedCode(edit(append([]byte(nil), data...)))
	}
	returnCode, err := ActivationReturnCode(request, "01938f2e-7c1a-7000-8000-00000000b002")
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		returnCode: "this is an activation return code, not an activation request",
		edited(func(d []byte) []byte { d[0] = 0x41; return d }):       "this is not a Keyward activation request",
		edited(func(d []byte) []byte { d[1] = 2; return d }):          "of version 2; this reads version 1",
		edited(func(d []byte) []byte { d[2], d[3] = 0, 0; return d }): "asks for 0 days",
		edited(func(d []byte) []byte { return append(d, 0) }):         "1 bytes too many",
		edited(func(d []byte) []byte { return d[:len(d)-2] }):         "cut short: crmProductId is missing",
		"":  "the code is empty",
		"{": "not JSON",
		`{"keyward":"activation-answer","code":"x"}`:              "not a Keyward activation request",
		`{"keyward":"activation-request","version":2,"code":"x"}`: "of version 2",
	} {
		_, err := ParseActivationRequest(text)
		var bad *CodeError
		if !errors.As(err, &bad) || !strings.Contains(bad.Detail, want) {
			t.Errorf("%.30s…: %v, want %q", text, err, want)
		}
	}
}

func TestVerifyActivationJWS(t *testing.T) {
	key := newActivationKey(t)
	request := testActivationRequest(t)
	jwks := &JWKS{Keys: []JWK{key.jwk}}
	signer := testKey{kid: key.jwk.Kid, private: key.private, jwk: key.jwk}
	payload := func() map[string]interface{} {
		p := leasePayload()
		p["aud"] = request.AppKey
		p["assetNum"] = request.AssetNum
		p["holder"] = map[string]interface{}{"kind": "lock", "assetNum": request.AssetNum}
		p["product"] = map[string]interface{}{"crmProductId": request.CRMProductID, "productUri": "u", "productName": "n"}
		p["fingerprint"] = ActivatedFingerprint(activationFingerprint)
		p["activation"] = map[string]interface{}{"nonce": base64.RawURLEncoding.EncodeToString(request.Nonce[:])}
		return p
	}
	verify := func(edit func(p map[string]interface{})) (*ActivatedLease, error) {
		p := payload()
		edit(p)
		token := signer.sign(t, leaseHeader(key.jwk.Kid), p)
		return VerifyActivation(token, jwks, ActivationVerifyOptions{
			Request: request, Fingerprint: activationFingerprint, Now: time.Unix(testNow, 0),
		})
	}
	lease, err := verify(func(p map[string]interface{}) {})
	if err != nil || lease.LeaseID != "lease-1" || lease.Claims == nil || lease.Claims.Fingerprint != ActivatedFingerprint(activationFingerprint) {
		t.Fatalf("%+v, %v", lease, err)
	}
	if fph := ActivatedFingerprint(activationFingerprint); len(fph) != len("fph1:")+16 {
		t.Fatalf("fingerprint %q", fph)
	}
	for name, c := range map[string]struct {
		edit func(p map[string]interface{})
		want Reason
	}{
		"no activation claim":       {func(p map[string]interface{}) { delete(p, "activation") }, ReasonRequest},
		"activation not an object":  {func(p map[string]interface{}) { p["activation"] = "x" }, ReasonRequest},
		"another nonce":             {func(p map[string]interface{}) { p["activation"] = map[string]interface{}{"nonce": "AAAAAAAAAAA"} }, ReasonRequest},
		"another product":           {func(p map[string]interface{}) { p["product"].(map[string]interface{})["crmProductId"] = "P-2" }, ReasonRequest},
		"another lock":              {func(p map[string]interface{}) { p["assetNum"] = "8000000043" }, ReasonRequest},
		"another app":               {func(p map[string]interface{}) { p["aud"] = "kw_other" }, ReasonAudience},
		"the raw fingerprint":       {func(p map[string]interface{}) { p["fingerprint"] = activationFingerprint }, ReasonFingerprint},
		"expired, another nonce":    {func(p map[string]interface{}) { p["exp"] = testNow; delete(p, "activation") }, ReasonExpired},
		"another machine and nonce": {func(p map[string]interface{}) { p["fingerprint"] = "fph1:X"; delete(p, "activation") }, ReasonFingerprint},
	} {
		if lease, err := verify(c.edit); reasonOf(err) != c.want || lease != nil {
			t.Errorf("%s: reason %q, want %q (%v)", name, reasonOf(err), c.want, err)
		}
	}
	// An answer file of another kind or version is refused as malformed.
	for _, file := range []string{
		`{"keyward":"activation-request","version":1,"lease":"a.b.c"}`,
		`{"keyward":"activation-answer","version":2,"lease":"a.b.c"}`,
		`{"keyward":"activation-answer","version":1}`,
		`{"keyward":`,
	} {
		_, err := VerifyActivation(file, jwks, ActivationVerifyOptions{Request: request, Fingerprint: activationFingerprint})
		if reasonOf(err) != ReasonMalformed {
			t.Errorf("%s: %v", file, err)
		}
	}
}

func TestActivationReturnCodeReadsBack(t *testing.T) {
	request := testActivationRequest(t)
	code, err := ActivationReturnCode(request, "01938F2E-7C1A-7000-8000-00000000B002")
	if err != nil {
		t.Fatal(err)
	}
	data, err := DecodeTypedCode(code)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{kindReturn, ActivationVersion, 0x01, 0x93, 0x8f, 0x2e, 0x7c, 0x1a, 0x70, 0x00, 0x80, 0x00, 0, 0, 0, 0, 0xb0, 0x02}
	want = append(append(want, request.Nonce[:]...), request.FingerprintHash[:]...)
	if !bytes.Equal(data, want) {
		t.Fatalf("%x, want %x", data, want)
	}
	for _, bad := range []string{"", "lease-1", "01938f2e-7c1a-7000-8000-00000000b0", "01938f2e-7c1a-7000-8000-00000000b0zz"} {
		if _, err := ActivationReturnCode(request, bad); err == nil {
			t.Errorf("%q: a return code", bad)
		}
	}
}

func TestSavedActivationRequestIsTheMachines(t *testing.T) {
	request := testActivationRequest(t)
	path := filepath.Join(t.TempDir(), "pending.json")
	if err := SaveActivationRequest(path, request); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", info.Mode(), err)
	}
	loaded, err := LoadActivationRequest(path)
	if err != nil || *loaded != *request {
		t.Fatalf("%+v, %v", loaded, err)
	}
	if _, err := LoadActivationRequest(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Fatal("a missing file loaded")
	}
}
