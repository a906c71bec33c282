package keyward

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// The binary layouts of offline activation, version 1 (docs/activation.md). Every message starts
// with its kind and its version, so a reader refuses what it does not know rather than misreading
// it; integers are big-endian; a string is a length byte (1–255) and UTF-8.

// ActivationVersion is the version of the activation messages this SDK reads and writes.
const ActivationVersion = 1

// MaxActivationDays is the longest activation a request may ask for.
const MaxActivationDays = 365

// The sizes of an activation request's nonce and of the fingerprint hash it carries.
const (
	NonceSize           = 8
	FingerprintHashSize = 10
)

const (
	kindRequest   = 0x52 // "R"
	kindLease     = 0x4c // "L": a typed answer
	kindReturn    = 0x58 // "X"
	bindingSize   = 6
	kidPrefixSize = 4
	leaseIDSize   = 16
	signatureSize = 64
	// typedLeaseLabel goes in front of the bytes a typed answer's signature covers, so the
	// signature can never be taken for one over another message a Keyward key signs.
	typedLeaseLabel = "keyward typed lease v1\n"
)

// The bounds of a typed answer's expiry, by their byte.
var typedExpBounds = [...]string{ExpBoundOfflineDays, ExpBoundLicenseEnd, ExpBoundTimeDuration}

// ActivationRequest is what an offline machine asks for: a seat of a product on a lock, for so many
// days. Its typed form (Code) or its file (File) goes to whoever can reach Keyward; the machine
// keeps it, nonce included, until the answer comes back (SaveActivationRequest).
type ActivationRequest struct {
	AppKey       string
	AssetNum     string
	CRMProductID string
	// Days is how long the lease is asked for, 1 to MaxActivationDays.
	Days int
	// CreatedAt is when the machine made the request, in whole seconds.
	CreatedAt time.Time
	// Nonce is random: the answer names it, so an answer fits this request alone.
	Nonce [NonceSize]byte
	// FingerprintHash is the first bytes of SHA-256 of the machine's fingerprint: the fingerprint
	// itself never leaves the machine.
	FingerprintHash [FingerprintHashSize]byte
}

// FingerprintHash is a machine's fingerprint as an activation carries it: the first 10 bytes of
// the SHA-256 of its UTF-8.
func FingerprintHash(fingerprint string) [FingerprintHashSize]byte {
	sum := sha256.Sum256([]byte(fingerprint))
	var hash [FingerprintHashSize]byte
	copy(hash[:], sum[:])
	return hash
}

// ActivatedFingerprint is the fingerprint claim of a lease made by an activation for the machine
// whose fingerprint is fingerprint: "fph1:" and its hash in base32 (16 characters). Verify an
// activated lease's JWS with VerifyLease and this as VerifyOptions.Fingerprint (VerifyActivation
// does).
func ActivatedFingerprint(fingerprint string) string {
	hash := FingerprintHash(fingerprint)
	var out strings.Builder
	out.WriteString("fph1:")
	for _, v := range toFiveBits(hash[:]) {
		out.WriteByte(crockford[v])
	}
	return out.String()
}

// binding is what a typed answer says it answers: the first bytes of SHA-256 of
// appKey "\n" assetNum "\n" crmProductId.
func (r *ActivationRequest) binding() []byte {
	sum := sha256.Sum256([]byte(r.AppKey + "\n" + r.AssetNum + "\n" + r.CRMProductID))
	return sum[:bindingSize]
}

type messageWriter struct {
	buf bytes.Buffer
	err error
}

func (w *messageWriter) byte(v byte) { w.buf.WriteByte(v) }

func (w *messageWriter) text(value, field string) {
	if len(value) < 1 || len(value) > 255 || !utf8.ValidString(value) {
		if w.err == nil {
			w.err = fmt.Errorf("keyward: %s must be 1 to 255 bytes of UTF-8", field)
		}
		return
	}
	w.buf.WriteByte(byte(len(value)))
	w.buf.WriteString(value)
}

// MarshalBinary is the request's layout (kind 0x52, version 1); Code is its typed form.
func (r *ActivationRequest) MarshalBinary() ([]byte, error) {
	if r.Days < 1 || r.Days > MaxActivationDays {
		return nil, fmt.Errorf("keyward: days must be 1 to %d, not %d", MaxActivationDays, r.Days)
	}
	created := r.CreatedAt.Unix()
	if created < 0 || created > 0xffffffff {
		return nil, fmt.Errorf("keyward: the request's time %v does not fit its layout", r.CreatedAt)
	}
	w := &messageWriter{}
	w.byte(kindRequest)
	w.byte(ActivationVersion)
	w.buf.Write(binary.BigEndian.AppendUint16(nil, uint16(r.Days)))
	w.buf.Write(binary.BigEndian.AppendUint32(nil, uint32(created)))
	w.buf.Write(r.Nonce[:])
	w.buf.Write(r.FingerprintHash[:])
	w.text(r.AppKey, "appKey")
	w.text(r.AssetNum, "assetNum")
	w.text(r.CRMProductID, "crmProductId")
	if w.err != nil {
		return nil, w.err
	}
	return w.buf.Bytes(), nil
}

// Code is the request's typed code, to show the person who takes it to Keyward.
func (r *ActivationRequest) Code() (string, error) {
	data, err := r.MarshalBinary()
	if err != nil {
		return "", err
	}
	return EncodeTypedCode(data), nil
}

// messageReader reads a message's fields; the first field missing is its error.
type messageReader struct {
	data []byte
	at   int
	what string
	err  *CodeError
}

func (m *messageReader) take(n int, field string) []byte {
	if m.err != nil {
		return make([]byte, n)
	}
	if m.at+n > len(m.data) {
		m.err = codeError(0, "the %s is cut short: %s is missing", m.what, field)
		return make([]byte, n)
	}
	out := m.data[m.at : m.at+n]
	m.at += n
	return out
}

func (m *messageReader) byte(field string) byte { return m.take(1, field)[0] }

func (m *messageReader) u16(field string) uint16 { return binary.BigEndian.Uint16(m.take(2, field)) }

func (m *messageReader) u32(field string) uint32 { return binary.BigEndian.Uint32(m.take(4, field)) }

func (m *messageReader) text(field string) string {
	n := int(m.byte(field))
	if m.err != nil {
		return ""
	}
	if n == 0 {
		m.err = codeError(0, "the %s's %s is empty", m.what, field)
		return ""
	}
	raw := m.take(n, field)
	if m.err == nil && !utf8.Valid(raw) {
		m.err = codeError(0, "the %s's %s is not UTF-8", m.what, field)
	}
	return string(raw)
}

func (m *messageReader) end() {
	if m.err == nil && m.at != len(m.data) {
		m.err = codeError(0, "the %s has %d bytes too many", m.what, len(m.data)-m.at)
	}
}

func messageName(kind byte) string {
	switch kind {
	case kindRequest:
		return "activation request"
	case kindLease:
		return "activation answer"
	case kindReturn:
		return "activation return code"
	}
	return ""
}

// header reads a message's kind and version, refusing another kind or version by name.
func (m *messageReader) header(kind byte) {
	found := m.byte("its kind")
	if m.err != nil {
		return
	}
	if found != kind {
		if other := messageName(found); other != "" {
			m.err = codeError(0, "this is an %s, not an %s", other, m.what)
		} else {
			m.err = codeError(0, "this is not a Keyward %s", m.what)
		}
		return
	}
	version := m.byte("its version")
	if m.err == nil && version != ActivationVersion {
		m.err = codeError(0, "the %s is of version %d; this reads version %d", m.what, version, ActivationVersion)
	}
}

// UnmarshalBinary reads a request's layout; one that does not read is a *CodeError.
func (r *ActivationRequest) UnmarshalBinary(data []byte) error {
	m := &messageReader{data: data, what: messageName(kindRequest)}
	m.header(kindRequest)
	var read ActivationRequest
	read.Days = int(m.u16("days"))
	read.CreatedAt = time.Unix(int64(m.u32("its time")), 0)
	copy(read.Nonce[:], m.take(NonceSize, "its nonce"))
	copy(read.FingerprintHash[:], m.take(FingerprintHashSize, "the machine's fingerprint"))
	read.AppKey = m.text("appKey")
	read.AssetNum = m.text("assetNum")
	read.CRMProductID = m.text("crmProductId")
	m.end()
	if m.err != nil {
		return m.err
	}
	if read.Days < 1 || read.Days > MaxActivationDays {
		return codeError(0, "the activation request asks for %d days; 1 to %d are possible", read.Days, MaxActivationDays)
	}
	*r = read
	return nil
}

// typedLease is a typed answer read but not verified.
type typedLease struct {
	kidPrefix       []byte
	leaseID         string
	issuedAt        int64
	expiresAt       int64
	expBound        string
	nonce           []byte
	fingerprintHash []byte
	binding         []byte
	signed          []byte // the 51 bytes the signature covers, without the label
	signature       []byte
}

func decodeTypedLease(data []byte) (*typedLease, *CodeError) {
	m := &messageReader{data: data, what: messageName(kindLease)}
	m.header(kindLease)
	lease := &typedLease{
		kidPrefix: m.take(kidPrefixSize, "its key"),
		leaseID:   uuidText(m.take(leaseIDSize, "its lease id")),
		issuedAt:  int64(m.u32("its time")),
		expiresAt: int64(m.u32("its expiry")),
	}
	bound := m.byte("its bound")
	lease.nonce = m.take(NonceSize, "its request's nonce")
	lease.fingerprintHash = m.take(FingerprintHashSize, "the machine's fingerprint")
	lease.binding = m.take(bindingSize, "what it was asked for")
	signedLength := m.at
	lease.signature = m.take(signatureSize, "its signature")
	m.end()
	if m.err != nil {
		return nil, m.err
	}
	if int(bound) >= len(typedExpBounds) {
		return nil, codeError(0, "the activation answer names an unknown bound (%d)", bound)
	}
	lease.expBound = typedExpBounds[bound]
	lease.signed = data[:signedLength]
	return lease, nil
}

func uuidBytes(id string) ([]byte, error) {
	raw, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(raw) != leaseIDSize {
		return nil, fmt.Errorf("keyward: %q is not a lease id", id)
	}
	return raw, nil
}

func uuidText(b []byte) string {
	h := hex.EncodeToString(b)
	if len(h) != 2*leaseIDSize {
		return ""
	}
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ActivationReturnCode is the code a machine shows after deleting the lease leaseID that request
// activated: entered in Keyward's console (or sent to POST /runtime/v1/activations/return) it frees
// the seat at once where the app allows early return.
func ActivationReturnCode(request *ActivationRequest, leaseID string) (string, error) {
	if request == nil {
		return "", errors.New("keyward: ActivationReturnCode: no request")
	}
	id, err := uuidBytes(leaseID)
	if err != nil {
		return "", err
	}
	data := []byte{kindReturn, ActivationVersion}
	data = append(data, id...)
	data = append(data, request.Nonce[:]...)
	data = append(data, request.FingerprintHash[:]...)
	return EncodeTypedCode(data), nil
}
