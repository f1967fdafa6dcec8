package webhook_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"contentapi/shared/webhook"
)

// The test vector the Standard Webhooks project publishes with its
// libraries: this secret, id, time and body sign to exactly this.
func TestSignMatchesTheSpecificationsTestVector(t *testing.T) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", webhook.SecretPrefix))
	if err != nil {
		t.Fatal(err)
	}
	h, err := webhook.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.Get("webhook-signature"), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("signature %q, want the specification's %q", got, want)
	}
	if got := h.Get("webhook-timestamp"); got != "1614265330" {
		t.Errorf("timestamp %q", got)
	}
	if got := h.Get("webhook-id"); got != "msg_p5jXN8AQM9LWM0D4loKWxJek" {
		t.Errorf("id %q", got)
	}
	if got := h.Get("content-type"); got != "application/json" {
		t.Errorf("content-type %q", got)
	}
}

// A secret we issue is verified by the specification's reference verifier
// as a receiver would use it (the string the user was shown, whsec_
// included), and a changed body, id or timestamp is not.
func TestOurSecretVerifiesWithTheReferenceLibrary(t *testing.T) {
	key, secret := webhook.NewSecret()
	if !strings.HasPrefix(secret, "whsec_") || len(key) != 32 {
		t.Fatalf("secret %q, key of %d bytes", secret, len(key))
	}
	if decoded, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_")); err != nil || !bytes.Equal(decoded, key) {
		t.Fatalf("the secret does not carry the key: %v", err)
	}
	body := []byte(`{"type":"document.generated","timestamp":"2026-11-25T21:00:00Z","data":{"id":7}}`)
	id := webhook.NewMessageID()
	now := time.Now()
	h, err := webhook.Sign(key, id, now, body)
	if err != nil {
		t.Fatal(err)
	}
	receiver, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := receiver.Verify(body, h); err != nil {
		t.Fatalf("the reference verifier refuses our delivery: %v", err)
	}
	tampered := append(bytes.Clone(body[:len(body)-2]), []byte(`8}}`)...)
	if err := receiver.Verify(tampered, h); err == nil {
		t.Error("a changed body verifies")
	}
	other := h.Clone()
	other.Set("webhook-id", webhook.NewMessageID())
	if err := receiver.Verify(body, other); err == nil {
		t.Error("a changed webhook-id verifies")
	}
	replay := h.Clone()
	replay.Set("webhook-timestamp", "1614265330")
	if err := receiver.Verify(body, replay); err == nil {
		t.Error("a changed timestamp verifies")
	}
	_, otherSecret := webhook.NewSecret()
	if otherSecret == secret {
		t.Fatal("two secrets are equal")
	}
	wrong, _ := standardwebhooks.NewWebhook(otherSecret)
	if err := wrong.Verify(body, h); err == nil {
		t.Error("another endpoint's secret verifies")
	}
}

// A retry keeps the event's webhook-id and signs its own time: the two
// attempts differ only in timestamp and signature, and both verify.
func TestRetryKeepsIDAndSignsItsOwnTime(t *testing.T) {
	key, secret := webhook.NewSecret()
	body := []byte(`{"type":"webhook.test"}`)
	id := webhook.NewMessageID()
	first := time.Now().Add(-5 * time.Second)
	second := first.Add(5 * time.Second)
	a, err := webhook.Sign(key, id, first, body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := webhook.Sign(key, id, second, body)
	if err != nil {
		t.Fatal(err)
	}
	if a.Get("webhook-id") != b.Get("webhook-id") {
		t.Error("a retry changed the webhook-id")
	}
	if a.Get("webhook-timestamp") == b.Get("webhook-timestamp") || a.Get("webhook-signature") == b.Get("webhook-signature") {
		t.Error("a retry reused the first attempt's timestamp or signature")
	}
	receiver, _ := standardwebhooks.NewWebhook(secret)
	for _, h := range []http.Header{a, b} {
		if err := receiver.Verify(body, h); err != nil {
			t.Errorf("attempt does not verify: %v", err)
		}
	}
}

func TestMessageIDs(t *testing.T) {
	a, b := webhook.NewMessageID(), webhook.NewMessageID()
	if a == b {
		t.Error("two events share an id")
	}
	for _, id := range []string{a, b} {
		if !strings.HasPrefix(id, "msg_") || strings.Contains(id, ".") {
			t.Errorf("id %q: want msg_ and no '.'", id)
		}
	}
	if _, err := webhook.Sign(make([]byte, 32), "msg_a.b", time.Now(), nil); err == nil {
		t.Error("an id with '.' was signed: it would make the signed content ambiguous")
	}
}

// During a rotation's grace an attempt is signed by the new key and the
// keys it replaced: the header lists "v1,<new> v1,<old>", the new first,
// so a receiver holding either secret verifies it with the
// specification's library, and one holding neither does not.
func TestRotatedKeysSignTogetherNewestFirst(t *testing.T) {
	newKey, newSecret := webhook.NewSecret()
	oldKey, oldSecret := webhook.NewSecret()
	_, otherSecret := webhook.NewSecret()
	body := []byte(`{"type":"webhook.test"}`)
	at := time.Now()
	h, err := webhook.Sign(newKey, "msg_rotated", at, body, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := webhook.Sign(newKey, "msg_rotated", at, body)
	old, _ := webhook.Sign(oldKey, "msg_rotated", at, body)
	want := alone.Get("webhook-signature") + " " + old.Get("webhook-signature")
	if got := h.Get("webhook-signature"); got != want || !strings.HasPrefix(got, "v1,") {
		t.Errorf("webhook-signature %q, want %q", got, want)
	}
	for _, secret := range []string{newSecret, oldSecret} {
		receiver, _ := standardwebhooks.NewWebhook(secret)
		if err := receiver.Verify(body, h); err != nil {
			t.Errorf("a receiver with one of the two secrets: %v", err)
		}
	}
	stranger, _ := standardwebhooks.NewWebhook(otherSecret)
	if err := stranger.Verify(body, h); err == nil {
		t.Error("a third secret verifies")
	}
}
