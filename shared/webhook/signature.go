package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The Standard Webhooks headers, as every attempt carries them.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// SecretPrefix marks a symmetric signing secret, as the specification
// serializes it for users.
const SecretPrefix = "whsec_"

// SecretBytes is the size of a signing key: the specification asks for at
// least 24 random bytes; 32 is HMAC-SHA256's block-strength choice and
// what Svix issues.
const SecretBytes = 32

// NewSecret returns a fresh signing key and the secret a user is shown
// once: whsec_ and the key in standard base64. Only the key needs keeping.
func NewSecret() (key []byte, secret string) {
	key = make([]byte, SecretBytes)
	rand.Read(key) // never fails (crypto/rand's contract since Go 1.24)
	return key, FormatSecret(key)
}

// FormatSecret is the secret as a user sees it for a key.
func FormatSecret(key []byte) string {
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// NewMessageID returns a webhook-id for one event: msg_ and 16 random
// bytes in unpadded base64url, so it holds no '.', which the signed content
// uses as its separator. An event keeps its id on every retry, which is
// how receivers deduplicate.
func NewMessageID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "msg_" + base64.RawURLEncoding.EncodeToString(b)
}

// Sign returns the headers of one attempt to deliver body: the event's
// webhook-id, this attempt's Unix time and the v1 signature, HMAC-SHA256
// under key over "{id}.{timestamp}.{body}", computed by the
// specification's own Go library. Call it again for each attempt, so that
// a retry carries a fresh timestamp and receivers can refuse replays.
// Keys replaced by a rotation and still in their grace (previous, newest
// first) sign too, after key: the header then lists one "v1,..." per key,
// space-separated, as the specification allows, and a receiver that still
// holds an older secret verifies what it gets.
func Sign(key []byte, msgID string, at time.Time, body []byte, previous ...[]byte) (http.Header, error) {
	if strings.Contains(msgID, ".") || msgID == "" {
		return nil, errors.New("webhook: a message id must be non-empty and hold no '.'")
	}
	sigs := make([]string, 0, 1+len(previous))
	for _, k := range append([][]byte{key}, previous...) {
		wh, err := standardwebhooks.NewWebhookRaw(k)
		if err != nil {
			return nil, err
		}
		sig, err := wh.Sign(msgID, at, body)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, sig)
	}
	h := http.Header{}
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	h.Set("Content-Type", "application/json")
	return h, nil
}
