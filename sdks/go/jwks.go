package keyward

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// JWK is one public key of a JWKS (RFC 7517). Keyward publishes Ed25519 keys: kty "OKP", crv
// "Ed25519", x the public key in base64url, kid its RFC 7638 thumbprint.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Kid string `json:"kid,omitempty"`
	Alg string `json:"alg,omitempty"`
	Use string `json:"use,omitempty"`
}

// JWKS is a key set: the server's /.well-known/jwks.json, fetched with Session.FetchJWKS or read
// from a file with LoadJWKS. A key retired by a rotation stays in it while leases it signed live.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// ParseJWKS reads a key set from its JSON.
func ParseJWKS(data []byte) (*JWKS, error) {
	var set struct {
		Keys *[]JWK `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("keyward: not a JWKS: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New("keyward: not a JWKS: no keys array")
	}
	return &JWKS{Keys: *set.Keys}, nil
}

// ed25519Key is the key's public Ed25519 key, when it is a usable signing key.
func (k JWK) ed25519Key() (ed25519.PublicKey, bool) {
	if k.Kty != "OKP" || k.Crv != "Ed25519" {
		return nil, false
	}
	if k.Use != "" && k.Use != "sig" || k.Alg != "" && k.Alg != "EdDSA" {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(k.X)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, false
	}
	return ed25519.PublicKey(raw), true
}

// keysFor answers the set's usable Ed25519 keys whose kid is kid: a key is chosen by kid alone.
func (s *JWKS) keysFor(kid string) []ed25519.PublicKey {
	var keys []ed25519.PublicKey
	if s == nil {
		return nil
	}
	for _, k := range s.Keys {
		if k.Kid != kid {
			continue
		}
		if key, ok := k.ed25519Key(); ok {
			keys = append(keys, key)
		}
	}
	return keys
}
