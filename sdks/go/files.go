package keyward

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SaveJWKS writes the key set to path (JSON, mode 0644: public keys), whole or not at all, so a
// program that runs offline can verify its lease with LoadJWKS.
func SaveJWKS(path string, jwks *JWKS) error {
	if jwks == nil {
		return errors.New("keyward: SaveJWKS: no key set")
	}
	set := *jwks
	if set.Keys == nil {
		set.Keys = []JWK{} // "keys": [], never null
	}
	data, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		return fmt.Errorf("keyward: SaveJWKS: %w", err)
	}
	return writeWhole(path, append(data, '\n'), 0o644)
}

// LoadJWKS reads a key set SaveJWKS wrote (or the server's /.well-known/jwks.json saved as is).
func LoadJWKS(path string) (*JWKS, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keyward: LoadJWKS: %w", err)
	}
	jwks, err := ParseJWKS(data)
	if err != nil {
		return nil, fmt.Errorf("keyward: LoadJWKS %s: %w", path, err)
	}
	return jwks, nil
}

// SaveLease writes a signed offline lease (Lease.OfflineLease, a compact JWS) to path, mode 0600,
// whole or not at all. The file holds the token as text, one line.
func SaveLease(path, token string) error {
	token = strings.TrimSpace(token)
	if token == "" {
		return errors.New("keyward: SaveLease: no offline lease (check out with OfflineDays)")
	}
	return writeWhole(path, []byte(token+"\n"), 0o600)
}

// LoadLease reads an offline lease SaveLease wrote; verify it with VerifyLease before use.
func LoadLease(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("keyward: LoadLease: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}

// writeWhole writes data to a file beside path and renames it over path: a reader sees the old
// file or the new one, never a part.
func writeWhole(path string, data []byte, mode os.FileMode) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	file, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("keyward: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			file.Close()
			os.Remove(file.Name())
			err = fmt.Errorf("keyward: write %s: %w", path, err)
		}
	}()
	if err = file.Chmod(mode); err != nil {
		return err
	}
	if _, err = file.Write(data); err != nil {
		return err
	}
	if err = file.Sync(); err != nil {
		return err
	}
	if err = file.Close(); err != nil {
		return err
	}
	return os.Rename(file.Name(), path)
}
