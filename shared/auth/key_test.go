package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParse(t *testing.T) {
	good := mustNewKey(t, PublicChecksum)
	tests := []struct {
		name string
		key  string
		ok   bool
	}{
		{"generated key", good, true},
		{"demo key", DemoKey, true},
		{"empty", "", false},
		{"prefix only", KeyPrefix, false},
		{"other prefix", "gh_" + good[3:], false},
		{"prefix in capitals", "CK_" + good[3:], false},
		{"Bearer left in", "Bearer " + good, false},
		{"surrounding space", " " + good, false},
		{"trailing newline", good + "\n", false},
		{"one character short", good[:len(good)-1], false},
		{"one character long", good + "0", false},
		{"body character outside base62", good[:10] + "-" + good[11:], false},
		{"non-ASCII in body", good[:10] + "é" + good[12:], false},
		{"checksum of another key", good[:KeyLen-checksumLen] + DemoKey[KeyLen-checksumLen:], false},
		{"body and checksum swapped halves", KeyPrefix + good[KeyLen-checksumLen:] + good[3:KeyLen-checksumLen], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hash, err := PublicChecksum.Parse(tt.key)
			if tt.ok {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				sum := sha256.Sum256([]byte(tt.key))
				if want := hex.EncodeToString(sum[:]); hash != want {
					t.Errorf("hash = %s, want hex SHA-256 %s", hash, want)
				}
				return
			}
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("Parse error = %v, want ErrUnauthenticated", err)
			}
			if hash != "" {
				t.Errorf("hash %q returned with an error", hash)
			}
			assertNoSecret(t, err.Error(), tt.key)
		})
	}
}

// assertNoSecret fails if msg holds any long stretch of key: a message may
// say a key was refused, never repeat it.
func assertNoSecret(t *testing.T, msg, key string) {
	t.Helper()
	const stretch = 12
	for i := 0; i+stretch <= len(key); i++ {
		if strings.Contains(msg, key[i:i+stretch]) {
			t.Fatalf("message %q repeats part of the key", msg)
		}
	}
}

// Every single-character substitution, deletion, insertion and swap of
// neighbours must be refused: the prefix check, the length check, the
// alphabet check or the CRC-32 (which catches every error burst up to 32 bits)
// must catch it.
func TestParseCatchesEverySmallTypo(t *testing.T) {
	keys := []string{DemoKey}
	for range 20 {
		keys = append(keys, mustNewKey(t, PublicChecksum))
	}
	alphabet := base62 + "_-+/= .\x00\xff"
	for _, key := range keys {
		checked := 0
		refuse := func(changed, what string) {
			t.Helper()
			checked++
			if _, err := PublicChecksum.Parse(changed); !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("%s of %s accepted: %v", what, key, err)
			}
		}
		for i := range len(key) {
			for j := range len(alphabet) {
				if alphabet[j] != key[i] {
					refuse(key[:i]+alphabet[j:j+1]+key[i+1:], "substitution")
				}
			}
			refuse(key[:i]+key[i+1:], "deletion")
			refuse(key[:i]+"a"+key[i:], "insertion")
			if i+1 < len(key) && key[i] != key[i+1] {
				refuse(key[:i]+key[i+1:i+2]+key[i:i+1]+key[i+2:], "swap")
			}
		}
		if checked < len(key)*len(base62) {
			t.Fatalf("only %d variants checked", checked)
		}
	}
}

func TestChecksumRoundTrips(t *testing.T) {
	payloads := []string{"", "ck_", DemoKey[:KeyLen-checksumLen], strings.Repeat("z", 100)}
	for _, p := range payloads {
		sum := PublicChecksum.sum(p)
		if len(sum) != checksumLen {
			t.Fatalf("checksum(%q) = %q, want %d characters", p, sum, checksumLen)
		}
		var n uint64
		for i := range len(sum) {
			n = n*62 + uint64(strings.IndexByte(base62, sum[i]))
		}
		if want := crc32.ChecksumIEEE([]byte(p)); n != uint64(want) {
			t.Errorf("checksum(%q) = %q = %d, want CRC-32 %d", p, sum, n, want)
		}
	}
	if got := PublicChecksum.sum(""); got != "000000" {
		t.Errorf("checksum of empty payload (CRC 0) = %q, want zero-padded 000000", got)
	}
}

// A keyed checksum refuses, without any read, every key not made with its
// secret: the public checksum's keys (DemoKey among them), another secret's,
// and well-formed keys with any checksum a forger might try.
func TestKeyedChecksum(t *testing.T) {
	ours := mustChecksum(t, strings.Repeat("s", MinSecretLen))
	theirs := mustChecksum(t, strings.Repeat("t", MinSecretLen))
	if !ours.Keyed() || PublicChecksum.Keyed() {
		t.Fatal("Keyed() is wrong")
	}
	for range 100 {
		key := mustNewKey(t, ours)
		if _, err := ours.Parse(key); err != nil {
			t.Fatalf("a key made with the secret is refused: %v", err)
		}
		if _, err := theirs.Parse(key); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("another secret accepts the key: %v", err)
		}
		if _, err := PublicChecksum.Parse(key); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("the public checksum accepts a keyed key: %v", err)
		}
	}
	if _, err := ours.Parse(DemoKey); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("a keyed checksum accepts the demo key: %v", err)
	}
	// All 62 values of the last character: at most the one right one passes.
	key := mustNewKey(t, ours)
	passed := 0
	for i := range len(base62) {
		if _, err := ours.Parse(key[:KeyLen-1] + base62[i:i+1]); err == nil {
			passed++
		}
	}
	if passed != 1 {
		t.Errorf("%d of 62 last characters pass, want exactly the one made", passed)
	}
	if _, err := NewChecksum(strings.Repeat("s", MinSecretLen-1)); err == nil {
		t.Error("a secret shorter than MinSecretLen was accepted")
	}
	if c, err := NewChecksum(""); err != nil || c.Keyed() {
		t.Errorf("an empty secret gives %+v, %v; want the public checksum", c, err)
	}
}

func mustChecksum(t testing.TB, secret string) Checksum {
	t.Helper()
	c, err := NewChecksum(secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewKey(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		k := mustNewKey(t, PublicChecksum)
		if len(k) != KeyLen || !strings.HasPrefix(k, KeyPrefix) {
			t.Fatalf("key %q: want %d characters starting %q", k, KeyLen, KeyPrefix)
		}
		if seen[k] {
			t.Fatalf("key %q drawn twice", k)
		}
		seen[k] = true
	}
}

func TestRandomString(t *testing.T) {
	t.Run("rejects biased bytes", func(t *testing.T) {
		// 248..255 lie past the last whole multiple of 62 and must be
		// skipped, not folded onto the first characters of the alphabet.
		src := append(bytes.Repeat([]byte{255, 248}, 10), 0, 61, 62, 123, 247)
		src = append(src, make([]byte, 100)...)
		got, err := randomString(bytes.NewReader(src), base62, 5)
		if err != nil {
			t.Fatal(err)
		}
		if want := "0z0zz"; got != want {
			t.Errorf("randomString = %q, want %q", got, want)
		}
	})
	t.Run("uses the whole alphabet", func(t *testing.T) {
		s, err := randomString(rand.Reader, base62, 20_000)
		if err != nil {
			t.Fatal(err)
		}
		for i := range len(base62) {
			n := strings.Count(s, base62[i:i+1])
			// Expected 322 each; 200 is more than 6 standard deviations off.
			if n < 200 || n > 450 {
				t.Errorf("character %q drawn %d times in 20000, want about 322", base62[i], n)
			}
		}
	})
	t.Run("reports a failing source", func(t *testing.T) {
		boom := errors.New("boom")
		if _, err := randomString(iotest.ErrReader(boom), base62, 5); !errors.Is(err, boom) {
			t.Errorf("err = %v, want boom", err)
		}
		if _, err := PublicChecksum.newKey(io.LimitReader(rand.Reader, 10)); err == nil {
			t.Error("newKey from a short source succeeded")
		}
	})
}

func TestKeyID(t *testing.T) {
	id, err := newKeyID(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id   string
		want bool
	}{
		{id, true},
		{"key_0123456789az", true},
		{"key_0123456789a", false},
		{"key_0123456789azz", false},
		{"key_0123456789aZ", false},
		{"KEY_0123456789az", false},
		{"0123456789azwxyz", false},
		{"", false},
		{DemoKey, false},
	}
	for _, tt := range tests {
		if got := validKeyID(tt.id); got != tt.want {
			t.Errorf("validKeyID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func mustNewKey(t testing.TB, c Checksum) string {
	t.Helper()
	k, err := c.newKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// checkFormat takes exactly base62's characters in a key's body: each of
// the 256 byte values, put at every body position, passes the format
// check if and only if base62 holds it.
func TestCheckFormatAlphabet(t *testing.T) {
	good := mustNewKey(t, PublicChecksum)
	for i := len(KeyPrefix); i < KeyLen; i++ {
		for c := range 256 {
			key := good[:i] + string([]byte{byte(c)}) + good[i+1:]
			if err, want := checkFormat(key), strings.IndexByte(base62, byte(c)) >= 0; (err == nil) != want {
				t.Fatalf("byte %#x at %d: checkFormat says %v", c, i, err)
			}
		}
	}
}
