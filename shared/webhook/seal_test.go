package webhook_test

import (
	"bytes"
	"errors"
	"testing"

	"contentapi/shared/webhook"
)

func TestSealedKeysOpenOnlyForTheirEndpoint(t *testing.T) {
	s, err := webhook.NewSealer([]byte("deployment secret"))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := webhook.NewSecret()
	sealed := s.Seal("acct-1", "wh_1", key)
	if bytes.Contains(sealed, key) {
		t.Fatal("the sealed form holds the key in clear")
	}
	if again := s.Seal("acct-1", "wh_1", key); bytes.Equal(again, sealed) {
		t.Error("two seals of one key are equal: the nonce is not fresh")
	}
	got, err := s.Open("acct-1", "wh_1", sealed)
	if err != nil || !bytes.Equal(got, key) {
		t.Fatalf("open: %v", err)
	}
	other, _ := webhook.NewSealer([]byte("another secret"))
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"another endpoint":          func() ([]byte, error) { return s.Open("acct-1", "wh_2", sealed) },
		"another account":           func() ([]byte, error) { return s.Open("acct-2", "wh_1", sealed) },
		"a shifted account/id join": func() ([]byte, error) { return s.Open("acct-1wh", "_1", sealed) },
		"another secret":            func() ([]byte, error) { return other.Open("acct-1", "wh_1", sealed) },
		"an altered seal":           func() ([]byte, error) { return s.Open("acct-1", "wh_1", flipped) },
		"a truncated seal":          func() ([]byte, error) { return s.Open("acct-1", "wh_1", sealed[:10]) },
	} {
		if _, err := open(); !errors.Is(err, webhook.ErrSealed) {
			t.Errorf("%s: %v, want ErrSealed", name, err)
		}
	}
}
