package auth

import (
	"errors"
	"testing"
)

// Any string is a well-formed key (then its hash is stable and its checksum
// holds) or an ErrUnauthenticated: never a panic, never another error.
func FuzzParse(f *testing.F) {
	f.Add(DemoKey)
	f.Add(DemoKey[:len(DemoKey)-1] + "A")
	f.Add("ck_")
	f.Add("Bearer " + DemoKey)
	f.Add("ck_\x00\xff")
	f.Fuzz(func(t *testing.T, key string) {
		hash, err := PublicChecksum.Parse(key)
		if err != nil {
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("Parse(%q): %v", key, err)
			}
			return
		}
		if len(key) != KeyLen || key[:len(KeyPrefix)] != KeyPrefix || PublicChecksum.sum(key[:KeyLen-checksumLen]) != key[KeyLen-checksumLen:] {
			t.Fatalf("accepted malformed key %q", key)
		}
		if again, _ := PublicChecksum.Parse(key); again != hash || len(hash) != 64 {
			t.Fatalf("hash %q then %q", hash, again)
		}
	})
}
