package webhook

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"contentapi/shared/generation"
)

// The event types an endpoint can subscribe to.
const (
	DocumentGenerated = "document.generated"
	DocumentFailed    = "document.failed"
	ImageGenerated    = "image.generated"
	ImageFailed       = "image.failed"
	// Test is what POST /webhooks/{id}/test sends, whatever the endpoint
	// subscribed to.
	Test = "webhook.test"
)

// EventTypes lists every event type, in the order the API shows them.
var EventTypes = []string{DocumentGenerated, DocumentFailed, ImageGenerated, ImageFailed, Test}

// ParseEvents reads the events field of a registration: comma-separated
// types, spaces around them ignored; empty means every type. An unknown
// type is an error naming it, for the field's 422.
func ParseEvents(field string) ([]string, error) {
	if strings.TrimSpace(field) == "" {
		return slices.Clone(EventTypes), nil
	}
	var out []string
	for t := range strings.SplitSeq(field, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(EventTypes, t) {
			return nil, fmt.Errorf("unknown event type %q: the types are %s", t, strings.Join(EventTypes, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Ended is the event of a generation that ended with the write from
// before to after, which a stream record carries: a state that was
// pending or running and is now done or failed. The resource is the
// record table's ("documents", "images"). False for any other change,
// such as a write that left a finished state finished (a delete, an edit)
// or a record without generation.
func Ended(resource string, before, after *generation.State) (string, bool) {
	if before == nil || after == nil {
		return "", false
	}
	if before.Status != generation.Pending && before.Status != generation.Running {
		return "", false
	}
	kind := map[string]string{"documents": "document", "images": "image"}[resource]
	switch {
	case kind == "":
		return "", false
	case after.Status == generation.Done:
		return kind + ".generated", true
	case after.Status == generation.Failed:
		return kind + ".failed", true
	}
	return "", false
}

// EventID is the webhook-id of an event for one endpoint, derived from
// what identifies the event (for a generation: the table, account, record
// and the attempt that wrote it), so that the same event met twice (a
// stream record delivered again, a batch retried) has the same id and is
// recorded once. Parts are joined with their lengths, so no two lists of
// parts give the same input.
func EventID(endpoint string, parts ...string) string {
	h := sha256.New()
	for _, p := range append([]string{endpoint}, parts...) {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return "msg_" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// Body is a delivery's payload: {"type", "timestamp", "data"}, data being
// the record as GET answers it. The timestamp is when the event happened
// (the generation's end), the same on every attempt; the attempt's own
// time is in its webhook-timestamp header.
func Body(eventType string, at time.Time, data json.RawMessage) ([]byte, error) {
	return json.Marshal(struct {
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{eventType, at.UTC().Format(time.RFC3339Nano), data})
}
