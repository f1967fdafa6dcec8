package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
)

// Sealer encrypts endpoints' signing keys for storage: a key is stored
// only sealed, under AES-256-GCM with a key derived (HKDF) from the
// deployment's secret, and bound to its account and endpoint, so that a
// sealed key copied to another endpoint's item does not open there. The
// table's own encryption at rest covers the disk; this covers a leaked
// item, backup or export.
type Sealer struct {
	aead cipher.AEAD
}

// sealKeyInfo separates this key from anything else derived from the same
// secret.
const sealKeyInfo = "contentapi webhook signing key seal v1"

// ErrSealed is a sealed key that does not open: altered, or another
// endpoint's, or sealed under another secret.
var ErrSealed = errors.New("webhook: sealed signing key does not open")

// NewSealer derives the sealing key from secret. The local stack's secret
// is empty, which derives a key anyone can compute: there the seal only
// binds keys to their endpoints.
func NewSealer(secret []byte) (*Sealer, error) {
	key, err := hkdf.Key(sha256.New, secret, nil, sealKeyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("webhook: deriving the seal key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// binding is the additional data a key is sealed under: its account and
// endpoint, unambiguously joined.
func binding(account, endpoint string) []byte {
	return fmt.Appendf(nil, "%d:%s\x00%s", len(account), account, endpoint)
}

// Seal encrypts an endpoint's signing key (a fresh random nonce each time).
func (s *Sealer) Seal(account, endpoint string, key []byte) []byte {
	return s.aead.Seal(nil, nil, key, binding(account, endpoint))
}

// Open returns the signing key Seal sealed for this account and endpoint.
func (s *Sealer) Open(account, endpoint string, sealed []byte) ([]byte, error) {
	key, err := s.aead.Open(nil, nil, sealed, binding(account, endpoint))
	if err != nil {
		return nil, ErrSealed
	}
	return key, nil
}
