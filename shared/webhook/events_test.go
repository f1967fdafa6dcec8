package webhook_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"contentapi/shared/generation"
	"contentapi/shared/webhook"
)

func TestParseEvents(t *testing.T) {
	types := webhook.Types("document", "image")
	if want := []string{"document.generated", "document.failed", "image.generated", "image.failed", "usage.threshold", "webhook.test"}; !slices.Equal(types, want) {
		t.Errorf("types %v, want %v", types, want)
	}
	all, err := webhook.ParseEvents("", types)
	if err != nil || !slices.Equal(all, types) {
		t.Errorf("empty: %v %v, want every type", all, err)
	}
	got, err := webhook.ParseEvents(" image.failed,document.generated , image.failed", types)
	if err != nil || !slices.Equal(got, []string{"image.failed", "document.generated"}) {
		t.Errorf("list: %v %v", got, err)
	}
	for _, bad := range []string{"image.deleted", "note.generated", "image.failed,", "IMAGE.FAILED", "image.*"} {
		if _, err := webhook.ParseEvents(bad, types); err == nil || !strings.Contains(err.Error(), "unknown event type") {
			t.Errorf("%q: %v, want refused", bad, err)
		}
	}
}

func TestEndedIsOnceAGenerationEnds(t *testing.T) {
	state := func(s generation.Status) *generation.State { return &generation.State{Status: s} }
	for _, c := range []struct {
		object        string
		before, after *generation.State
		want          string
	}{
		{"document", state(generation.Running), state(generation.Done), "document.generated"},
		{"document", state(generation.Pending), state(generation.Done), "document.generated"},
		{"document", state(generation.Running), state(generation.Failed), "document.failed"},
		{"image", state(generation.Running), state(generation.Done), "image.generated"},
		{"image", state(generation.Pending), state(generation.Failed), "image.failed"},
		// No end: a claim, a requeue, an edit or delete of a finished record,
		// a record without generation, a resource without an object.
		{"image", state(generation.Pending), state(generation.Running), ""},
		{"image", state(generation.Running), state(generation.Pending), ""},
		{"image", state(generation.Done), state(generation.Done), ""},
		{"document", state(generation.Failed), state(generation.Pending), ""},
		{"document", nil, state(generation.Done), ""},
		{"document", state(generation.Running), nil, ""},
		{"note", state(generation.Running), state(generation.Done), "note.generated"},
		{"", state(generation.Running), state(generation.Done), ""},
	} {
		got, ok := webhook.Ended(c.object, c.before, c.after)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s %v -> %v: %q %v, want %q", c.object, c.before, c.after, got, ok, c.want)
		}
	}
}

// The same event met twice has one id; another endpoint, record or
// attempt has another, and the parts cannot be shifted into each other.
func TestEventIDIsTheEvents(t *testing.T) {
	id := webhook.EventID("wh_1", "DocumentsTable", "acct", "7", "attempt-a")
	if again := webhook.EventID("wh_1", "DocumentsTable", "acct", "7", "attempt-a"); again != id {
		t.Error("the same event got two ids")
	}
	if !strings.HasPrefix(id, "msg_") || strings.Contains(id, ".") {
		t.Errorf("id %q", id)
	}
	for _, other := range []string{
		webhook.EventID("wh_2", "DocumentsTable", "acct", "7", "attempt-a"),
		webhook.EventID("wh_1", "DocumentsTable", "acct", "7", "attempt-b"),
		webhook.EventID("wh_1", "DocumentsTable", "acct", "8", "attempt-a"),
		webhook.EventID("wh_1", "DocumentsTable", "acct7", "", "attempt-a"),
	} {
		if other == id {
			t.Errorf("a different event shares id %s", id)
		}
	}
}

func TestBody(t *testing.T) {
	at := time.Date(2026, 11, 25, 21, 0, 0, 500_000_000, time.FixedZone("CET", 3600))
	b, err := webhook.Body("document.generated", at, json.RawMessage(`{"id":7,"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"document.generated","timestamp":"2026-11-25T20:00:00.5Z","data":{"id":7,"name":"x"}}`; string(b) != want {
		t.Errorf("%s\nwant %s", b, want)
	}
}

// The warnings of usage near a limit are not counted against the
// deliveries limit, or its own warning could not be sent; every other event
// is.
func TestThresholdEventsAreUnmetered(t *testing.T) {
	if webhook.Metered(webhook.Threshold) {
		t.Errorf("%s is metered", webhook.Threshold)
	}
	for _, typ := range []string{webhook.Generated("image"), webhook.Failed("document"), webhook.Test} {
		if !webhook.Metered(typ) {
			t.Errorf("%s is not metered", typ)
		}
	}
}
