package keyward

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Offline activation where the software runs (docs/activation.md): a machine that never reaches
// Keyward writes a request (NewActivationRequest), someone who can reach Keyward turns it into an
// answer (the console, `keyward leases activate`, or a connected machine), and the machine
// verifies the answer with the keys the software shipped with (VerifyActivation).

// ActivationRequestOptions is what NewActivationRequest asks for.
type ActivationRequestOptions struct {
	AppKey       string
	AssetNum     string // the lock's asset number
	CRMProductID string
	// Days is how long the lease is asked for, 1 to MaxActivationDays (and at most the app's
	// offline maximum, which the server checks).
	Days int
	// Fingerprint is this machine's; only its hash goes in the request. Required.
	Fingerprint string
	// Now is when the request is made; the current time when zero. For tests.
	Now time.Time
	// Nonce is the request's nonce, NonceSize bytes; random when nil. For tests.
	Nonce []byte
}

// PendingActivation is a request just made: the request, its typed code and its file.
type PendingActivation struct {
	Request *ActivationRequest
	// Code is the typed code: show it, or print it, for the person who takes it to Keyward.
	Code string
	// File is the request file's JSON (`{"keyward":"activation-request","version":1,"code":…}`),
	// for the person who carries a file; Keyward reads its code alone.
	File []byte
}

// NewActivationRequest makes this machine's request for Days days of a product on a lock. Keep
// the request (SaveActivationRequest) until its answer comes back: only it verifies the answer.
func NewActivationRequest(opts ActivationRequestOptions) (*PendingActivation, error) {
	if opts.Fingerprint == "" {
		return nil, errors.New("keyward: NewActivationRequest: no fingerprint")
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	request := &ActivationRequest{
		AppKey:          opts.AppKey,
		AssetNum:        opts.AssetNum,
		CRMProductID:    opts.CRMProductID,
		Days:            opts.Days,
		CreatedAt:       time.Unix(now.Unix(), 0),
		FingerprintHash: FingerprintHash(opts.Fingerprint),
	}
	switch {
	case opts.Nonce == nil:
		if _, err := rand.Read(request.Nonce[:]); err != nil {
			return nil, fmt.Errorf("keyward: NewActivationRequest: %w", err)
		}
	case len(opts.Nonce) != NonceSize:
		return nil, fmt.Errorf("keyward: NewActivationRequest: the nonce must be %d bytes", NonceSize)
	default:
		copy(request.Nonce[:], opts.Nonce)
	}
	code, err := request.Code()
	if err != nil {
		return nil, err
	}
	file, err := request.File()
	if err != nil {
		return nil, err
	}
	return &PendingActivation{Request: request, Code: code, File: file}, nil
}

// activationRequestFile is a request file: its code (what the server reads) and, for people,
// what it asks.
type activationRequestFile struct {
	Keyward      string `json:"keyward"`
	Version      int    `json:"version"`
	Code         string `json:"code"`
	AppKey       string `json:"appKey"`
	AssetNum     string `json:"assetNum"`
	CRMProductID string `json:"crmProductId"`
	Days         int    `json:"days"`
	CreatedAt    string `json:"createdAt"`
}

const (
	requestFileKind = "activation-request"
	answerFileKind  = "activation-answer"
)

// File is the request file's JSON, ending in a newline.
func (r *ActivationRequest) File() ([]byte, error) {
	code, err := r.Code()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	encoder := json.NewEncoder(&out)
	encoder.SetEscapeHTML(false)
	encoder.SetIndent("", "  ")
	err = encoder.Encode(activationRequestFile{
		Keyward: requestFileKind, Version: ActivationVersion, Code: code,
		AppKey: r.AppKey, AssetNum: r.AssetNum, CRMProductID: r.CRMProductID, Days: r.Days,
		CreatedAt: r.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"),
	})
	if err != nil {
		return nil, fmt.Errorf("keyward: the request file: %w", err)
	}
	return out.Bytes(), nil
}

// fileFields reads a JSON object's fields, or nil when text is none.
func fileFields(text string) map[string]json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &fields) != nil {
		return nil
	}
	return fields
}

// fileVersionOK: a file of another version is refused rather than misread (no version: 1).
func fileVersionOK(fields map[string]json.RawMessage) (float64, bool) {
	raw, ok := fields["version"]
	if !ok {
		return ActivationVersion, true
	}
	version, ok := numberOf(raw)
	return version, ok && version == ActivationVersion
}

// ParseActivationRequest reads a request from its typed code or its file's text (the file's code
// is what counts). One that does not read is a *CodeError; for a code, its Group names the group
// that does not check.
func ParseActivationRequest(text string) (*ActivationRequest, error) {
	code := strings.TrimSpace(text)
	if strings.HasPrefix(code, "{") {
		fields := fileFields(code)
		if fields == nil {
			return nil, codeError(0, "the request file is not JSON")
		}
		kind, _ := stringOf(fields["keyward"])
		fileCode, ok := stringOf(fields["code"])
		if kind != requestFileKind || !ok {
			return nil, codeError(0, "the file is not a Keyward activation request")
		}
		if version, ok := fileVersionOK(fields); !ok {
			return nil, codeError(0, "the request file is of version %v; this reads version %d", version, ActivationVersion)
		}
		code = fileCode
	}
	data, err := DecodeTypedCode(code)
	if err != nil {
		return nil, err
	}
	request := &ActivationRequest{}
	if err := request.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return request, nil
}

// SaveActivationRequest keeps a pending request in path (its file's JSON, mode 0600), whole or not
// at all, until its answer comes back.
func SaveActivationRequest(path string, request *ActivationRequest) error {
	if request == nil {
		return errors.New("keyward: SaveActivationRequest: no request")
	}
	file, err := request.File()
	if err != nil {
		return err
	}
	return writeWhole(path, file, 0o600)
}

// LoadActivationRequest reads a request SaveActivationRequest kept (or any request file, or a
// file holding a request's typed code).
func LoadActivationRequest(path string) (*ActivationRequest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keyward: LoadActivationRequest: %w", err)
	}
	request, err := ParseActivationRequest(string(data))
	if err != nil {
		return nil, fmt.Errorf("keyward: LoadActivationRequest %s: %w", path, err)
	}
	return request, nil
}

// ActivatedLease is what a verified activation answer says.
type ActivatedLease struct {
	LeaseID   string
	IssuedAt  time.Time
	ExpiresAt time.Time
	// ExpBound says what set ExpiresAt: ExpBoundOfflineDays, ExpBoundLicenseEnd or
	// ExpBoundTimeDuration.
	ExpBound     string
	AssetNum     string
	CRMProductID string
	AppKey       string
	// Lease is the answer as verified, to save (SaveLease) and verify again with VerifyActivation
	// at each start: the typed code, written as the SDK writes it, or the signed lease (JWS).
	Lease string
	// Claims are the signed lease's claims; nil for a typed answer.
	Claims *LeaseClaims
}

// ActivationVerifyOptions says what VerifyActivation requires of an answer.
type ActivationVerifyOptions struct {
	// Request is this machine's pending request (LoadActivationRequest). Required.
	Request *ActivationRequest
	// Fingerprint is this machine's, as given to NewActivationRequest. Required.
	Fingerprint string
	// Now is the time to verify at; the current time when zero.
	Now time.Time
}

// VerifyActivation verifies an activation's answer on the machine that asked: its typed code, the
// answer file's text, or the signed lease (JWS) alone. It must be signed by a key of jwks (the keys
// the software shipped with), answer this very request (its nonce, app, lock and product), be for
// this machine and be in its time.
//
// A refusal is a *LeaseError. A typed answer is checked in this order, the first failure
// answering: the code reads and is an answer (ReasonMalformed; LeaseError.Group names a group
// that does not check), a key of the set whose kid starts with the answer's 4 bytes
// (ReasonUnknownKey), the Ed25519 signature (ReasonSignature), issued after now
// (ReasonNotYetValid), expiry at or before now (ReasonExpired), the request's nonce and what it
// asked for (ReasonRequest), this machine (ReasonFingerprint). A JWS is verified as VerifyLease
// does, with ActivatedFingerprint as the fingerprint and the request's appKey as the audience, then
// refused with ReasonRequest when its activation.nonce, assetNum or crmProductId differ from the
// request's.
func VerifyActivation(answer string, jwks *JWKS, opts ActivationVerifyOptions) (*ActivatedLease, error) {
	request := opts.Request
	if request == nil {
		return nil, errors.New("keyward: VerifyActivation: no request")
	}
	if opts.Fingerprint == "" {
		return nil, errors.New("keyward: VerifyActivation: no fingerprint")
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if jwks == nil {
		return nil, refuse(ReasonJWKSUnavailable, "no key set to verify with")
	}
	lease := strings.TrimSpace(answer)
	if strings.HasPrefix(lease, "{") {
		fields := fileFields(lease)
		if fields == nil {
			return nil, refuse(ReasonMalformed, "the answer file is not JSON")
		}
		kind, _ := stringOf(fields["keyward"])
		token, ok := stringOf(fields["lease"])
		if kind != answerFileKind || !ok {
			return nil, refuse(ReasonMalformed, "the file is not a Keyward activation answer")
		}
		if version, ok := fileVersionOK(fields); !ok {
			return nil, refuse(ReasonMalformed, "the answer file is of version %v; this reads version %d", version, ActivationVersion)
		}
		lease = strings.TrimSpace(token)
	}
	if strings.Count(lease, ".") != 2 {
		return verifyTypedAnswer(lease, jwks, request, opts.Fingerprint, now)
	}
	claims, err := VerifyLease(lease, jwks, VerifyOptions{
		Fingerprint: ActivatedFingerprint(opts.Fingerprint),
		Audience:    request.AppKey,
		Now:         now,
	})
	if err != nil {
		return nil, err
	}
	var nonce string
	if activation := objectOf(objectOf(claims.Payload)["activation"]); activation != nil {
		nonce, _ = stringOf(activation["nonce"])
	}
	if nonce == "" || nonce != base64.RawURLEncoding.EncodeToString(request.Nonce[:]) ||
		claims.AssetNum != request.AssetNum || claims.Product.CRMProductID != request.CRMProductID {
		return nil, refuse(ReasonRequest, "it answers another activation request")
	}
	bound := claims.ExpBound
	if bound == "" {
		bound = ExpBoundOfflineDays
	}
	return &ActivatedLease{
		LeaseID: claims.Subject, IssuedAt: claims.IssuedAt, ExpiresAt: claims.ExpiresAt, ExpBound: bound,
		AssetNum: claims.AssetNum, CRMProductID: request.CRMProductID, AppKey: request.AppKey,
		Lease: lease, Claims: claims,
	}, nil
}

func objectOf(raw json.RawMessage) map[string]json.RawMessage {
	if jsonKind(raw) != '{' {
		return nil
	}
	return fileFields(string(raw))
}

// kidPrefix is the first bytes of a kid (an RFC 7638 thumbprint in base64url), how a typed answer
// names its key; nil for a kid that is no base64url.
func kidPrefix(kid string) []byte {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(kid, "="))
	if err != nil || len(raw) < kidPrefixSize {
		return nil
	}
	return raw[:kidPrefixSize]
}

func verifyTypedAnswer(code string, jwks *JWKS, request *ActivationRequest, fingerprint string, now time.Time) (*ActivatedLease, error) {
	data, err := DecodeTypedCode(code)
	if err != nil {
		var bad *CodeError
		errors.As(err, &bad)
		return nil, &LeaseError{Reason: ReasonMalformed, Detail: bad.Detail, Group: bad.Group}
	}
	answer, bad := decodeTypedLease(data)
	if bad != nil {
		return nil, &LeaseError{Reason: ReasonMalformed, Detail: bad.Detail, Group: bad.Group}
	}
	var keys []ed25519.PublicKey
	for _, k := range jwks.Keys {
		if prefix := kidPrefix(k.Kid); prefix != nil && bytes.Equal(prefix, answer.kidPrefix) {
			if key, ok := k.ed25519Key(); ok {
				keys = append(keys, key)
			}
		}
	}
	if len(keys) == 0 {
		return nil, refuse(ReasonUnknownKey, "no key of the set signed it (its kid starts %x)", answer.kidPrefix)
	}
	signed := append([]byte(typedLeaseLabel), answer.signed...)
	verified := false
	for _, key := range keys {
		if ed25519.Verify(key, signed, answer.signature) {
			verified = true
			break
		}
	}
	if !verified {
		return nil, refuse(ReasonSignature, "its signature does not verify")
	}
	nowSeconds := now.Unix()
	if answer.issuedAt > nowSeconds {
		return nil, refuse(ReasonNotYetValid, "it is dated %s, in the future", time.Unix(answer.issuedAt, 0).UTC().Format(time.RFC3339))
	}
	if answer.expiresAt <= nowSeconds {
		return nil, refuse(ReasonExpired, "it expired at %s", time.Unix(answer.expiresAt, 0).UTC().Format(time.RFC3339))
	}
	if !bytes.Equal(answer.nonce, request.Nonce[:]) || !bytes.Equal(answer.binding, request.binding()) {
		return nil, refuse(ReasonRequest, "it answers another activation request")
	}
	hash := FingerprintHash(fingerprint)
	if !bytes.Equal(answer.fingerprintHash, hash[:]) {
		return nil, refuse(ReasonFingerprint, "it was activated for another machine")
	}
	return &ActivatedLease{
		LeaseID:      answer.leaseID,
		IssuedAt:     time.Unix(answer.issuedAt, 0),
		ExpiresAt:    time.Unix(answer.expiresAt, 0),
		ExpBound:     answer.expBound,
		AssetNum:     request.AssetNum,
		CRMProductID: request.CRMProductID,
		AppKey:       request.AppKey,
		Lease:        EncodeTypedCode(data),
	}, nil
}
