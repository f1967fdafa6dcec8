package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strings"
)

// ErrUnauthenticated is the one answer for a key that must be refused:
// malformed, unknown, revoked or expired. The HTTP layer maps it, and only it,
// to 401; every other error from this package is an infrastructure failure.
// Errors that wrap it say which of the four it was, never the key itself.
var ErrUnauthenticated = errors.New("auth: unauthenticated")

const (
	// KeyPrefix starts every key, so that leaked keys are recognizable.
	KeyPrefix = "ck_"

	// bodyLen base62 characters carry 256 bits: 62^43 > 2^256.
	bodyLen = 43
	// checksumLen base62 characters hold any CRC-32: 62^6 > 2^32.
	checksumLen = 6
	// KeyLen is the length of every well-formed key.
	KeyLen = len(KeyPrefix) + bodyLen + checksumLen

	base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	// Key ids are typed and read by people: lowercase only.
	base36 = "0123456789abcdefghijklmnopqrstuvwxyz"

	keyIDPrefix = "key_"
	keyIDLen    = 12 // 62 bits: collisions only matter past ~2^31 keys
)

// DemoKey is a well-formed key for account "demo" with read and write
// scopes, for local development only: the local stack imports it so that the
// sample events and curl examples work out of the box. It is public, in this
// source file, and carries the public checksum, so a stack with a keyed
// checksum (every deployed one) refuses it without a read.
const DemoKey = "ck_0XPLCFJKmwbjf3TmpCtepd65KPXFNP2UFudh6jkBPPp0cfqHg"

// DemoAccount owns [DemoKey].
const DemoAccount = "demo"

// Checksum computes and checks the last checksumLen characters of a key
// from the rest. The zero value is the public checksum, a CRC-32 anyone can
// compute; see [NewChecksum] for the keyed one the deployed stack uses.
type Checksum struct {
	secret []byte // nil: public CRC-32; else the HMAC-SHA256 key
	// mac is an HMAC keyed with secret and never written to: each sum
	// clones it, which spares keying one per request.
	mac hash.Cloner
}

// PublicChecksum is the CRC-32 checksum: the local stack's, and DemoKey's.
var PublicChecksum = Checksum{}

// MinSecretLen is the shortest secret [NewChecksum] accepts: 256 bits, the
// strength of HMAC-SHA256 itself.
const MinSecretLen = 32

// NewChecksum returns the checksum for secret. An empty secret gives the
// public CRC-32, which catches typos but which anyone can compute, so a
// well-formed forged key costs a table read; the local stack and its
// [DemoKey] use it. A secret of at least MinSecretLen bytes gives a keyed
// checksum (HMAC-SHA256, truncated): a key that was not made with the same
// secret fails [Checksum.Parse] with odds of one in 62^6 (about 5.7e10), so
// forged keys are refused without any read. Keys made under one checksum are
// refused under another.
func NewChecksum(secret string) (Checksum, error) {
	if secret == "" {
		return Checksum{}, nil
	}
	if len(secret) < MinSecretLen {
		return Checksum{}, fmt.Errorf("auth: the key checksum secret is %d bytes, want at least %d", len(secret), MinSecretLen)
	}
	mac, ok := hmac.New(sha256.New, []byte(secret)).(hash.Cloner)
	if !ok {
		return Checksum{}, errors.New("auth: HMAC-SHA256 cannot be cloned")
	}
	return Checksum{secret: []byte(secret), mac: mac}, nil
}

// Keyed reports whether only holders of the secret can compute c.
func (c Checksum) Keyed() bool { return c.secret != nil }

// Parse checks key's format locally: prefix, length, alphabet and checksum.
// It returns the hex SHA-256 under which the key is stored, or an error
// wrapping [ErrUnauthenticated] that names the rule broken but not the key.
func (c Checksum) Parse(key string) (hash string, err error) {
	if err := checkFormat(key); err != nil {
		return "", err
	}
	if err := c.verify(key); err != nil {
		return "", err
	}
	return hashKey(key), nil
}

// checkFormat checks a key's prefix, length and alphabet: all of Parse but
// the checksum.
func checkFormat(key string) error {
	if !strings.HasPrefix(key, KeyPrefix) {
		return fmt.Errorf("%w: key lacks the %q prefix", ErrUnauthenticated, KeyPrefix)
	}
	if len(key) != KeyLen {
		return fmt.Errorf("%w: key is %d bytes long, want %d", ErrUnauthenticated, len(key), KeyLen)
	}
	for i := len(KeyPrefix); i < len(key); i++ {
		// base62's three ranges, compared rather than searched for: every
		// request's key passes here.
		if c := key[i]; !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return fmt.Errorf("%w: key has a character outside [0-9A-Za-z]", ErrUnauthenticated)
		}
	}
	return nil
}

// verify checks the checksum of a key of the right format.
func (c Checksum) verify(key string) error {
	payload, sum := key[:KeyLen-checksumLen], key[KeyLen-checksumLen:]
	// Constant time, so response timing tells nothing about how much of a
	// guessed keyed checksum was right.
	if subtle.ConstantTimeCompare([]byte(sum), []byte(c.sum(payload))) != 1 {
		return fmt.Errorf("%w: key checksum does not match", ErrUnauthenticated)
	}
	return nil
}

// sum encodes the checksum of payload as exactly checksumLen base62
// characters. A fixed width keeps the encoding one-to-one, so any change to
// the checksum characters changes the value they stand for.
func (c Checksum) sum(payload string) string {
	var n uint64
	if c.secret == nil {
		n = uint64(crc32.ChecksumIEEE([]byte(payload)))
	} else {
		var mac hash.Hash
		if clone, err := c.mac.Clone(); err == nil {
			mac = clone
		} else {
			mac = hmac.New(sha256.New, c.secret) // does not happen with SHA-256
		}
		mac.Write([]byte(payload))
		var sum [sha256.Size]byte
		// 64 bits reduced modulo 62^6: the bias is below 2^-28.
		n = binary.BigEndian.Uint64(mac.Sum(sum[:0])) % checksumSpace
	}
	var b [checksumLen]byte
	for i := checksumLen - 1; i >= 0; i-- {
		b[i] = base62[n%62]
		n /= 62
	}
	return string(b[:])
}

// checksumSpace is 62^checksumLen, the number of distinct checksums.
const checksumSpace = 62 * 62 * 62 * 62 * 62 * 62

// newKey draws a fresh key from r (crypto/rand outside tests).
func (c Checksum) newKey(r io.Reader) (string, error) {
	body, err := randomString(r, base62, bodyLen)
	if err != nil {
		return "", err
	}
	payload := KeyPrefix + body
	return payload + c.sum(payload), nil
}

func hashKey(key string) string {
	h := hexHash(key)
	return string(h[:])
}

// hexHash is hashKey without the string, for looking a key up in a map
// keyed by its hash without allocating one.
func hexHash(key string) [2 * sha256.Size]byte {
	sum := sha256.Sum256([]byte(key))
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return h
}

// newKeyID draws a public key id. It is random rather than derived from the
// hash so that it reveals nothing about the key.
func newKeyID(r io.Reader) (string, error) {
	s, err := randomString(r, base36, keyIDLen)
	if err != nil {
		return "", err
	}
	return keyIDPrefix + s, nil
}

// validKeyID reports whether id could have come from newKeyID, so that
// Revoke can refuse nonsense without scanning the table.
func validKeyID(id string) bool {
	s, ok := strings.CutPrefix(id, keyIDPrefix)
	if !ok || len(s) != keyIDLen {
		return false
	}
	for i := range len(s) {
		if strings.IndexByte(base36, s[i]) < 0 {
			return false
		}
	}
	return true
}

// randomString returns n characters drawn uniformly from alphabet. Bytes at
// or above the largest multiple of len(alphabet) are rejected rather than
// reduced, which would favour the first characters of the alphabet.
func randomString(r io.Reader, alphabet string, n int) (string, error) {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/2)
	for len(out) < n {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("auth: reading randomness: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out), nil
}
