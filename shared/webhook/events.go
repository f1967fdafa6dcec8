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

// Test is what POST /webhooks/{id}/test sends, whatever the endpoint
// subscribed to.
const Test = "webhook.test"

// Generated and Failed are the event types of a generation's end for a
// resource whose records are objects of this name ("document"): each
// generating resource brings its two with its declaration, so this package
// names none.
func Generated(object string) string { return object + ".generated" }

// Failed: see Generated.
func Failed(object string) string { return object + ".failed" }

// Threshold is the event of an account's usage reaching a share (80%,
// 100%) of one of its monthly limits: once per limit, share and month.
const Threshold = "usage.threshold"

// Types lists every event type of the generating resources whose objects
// are given, in the order the API shows them: each object's generated and
// failed, then Threshold, then Test.
func Types(objects ...string) []string {
	var types []string
	for _, o := range objects {
		types = append(types, Generated(o), Failed(o))
	}
	return append(types, Threshold, Test)
}

// Unmetered are the event types whose attempts do not count against an
// account's monthly limit of deliveries: the warnings about the account's
// usage itself, or the deliveries limit would silence the warning of its
// own approach (the 100% one above all).
var Unmetered = []string{Threshold}

// Metered says whether the attempts of an event of type t count against
// the account's monthly limit of deliveries.
func Metered(t string) bool { return !slices.Contains(Unmetered, t) }

// ParseEvents reads the events field of a registration against the event
// types there are (Types): comma-separated types, spaces around them
// ignored; empty means every type. An unknown type is an error naming it,
// for the field's 422.
func ParseEvents(field string, types []string) ([]string, error) {
	if strings.TrimSpace(field) == "" {
		return slices.Clone(types), nil
	}
	var out []string
	for t := range strings.SplitSeq(field, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(types, t) {
			return nil, fmt.Errorf("unknown event type %q: the types are %s", t, strings.Join(types, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Ended is the event of a generation that ended with the write from
// before to after, which a stream record carries: a state that was
// pending or running and is now done or failed. The object is the record
// table's resource's ("document"). False for any other change, such as a
// write that left a finished state finished (a delete, an edit), a record
// without generation or a resource without an object.
func Ended(object string, before, after *generation.State) (string, bool) {
	if object == "" || before == nil || after == nil {
		return "", false
	}
	if before.Status != generation.Pending && before.Status != generation.Running {
		return "", false
	}
	switch after.Status {
	case generation.Done:
		return Generated(object), true
	case generation.Failed:
		return Failed(object), true
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
	return json.Marshal(Envelope{eventType, at.UTC().Format(time.RFC3339Nano), data})
}

// Envelope is a delivery's payload as Body writes it, its keys in that
// order for every event type: what changes a body on its way (an image's
// url made for each attempt) decodes it into an Envelope and encodes that
// again, never into a map, whose keys encoding/json sorts.
type Envelope struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}
