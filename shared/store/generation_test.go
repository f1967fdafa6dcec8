package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/generation"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

func stateOf(t *testing.T, item store.Item) generation.State {
	t.Helper()
	s, err := store.StateOf(item)
	if err != nil || s == nil {
		t.Fatalf("no generation state: %v", err)
	}
	return *s
}

// A write-back lands once: only the attempt that holds the record in the
// named status may write, a retried write of its own is recognised, and
// nobody writes after the 15-minute deadline.
func TestTransition(t *testing.T) {
	_, doc := tables(t)
	ctx := context.Background()
	running := generation.Request("m", time.Now()).Start(time.Now())
	item, err := doc.Create(ctx, "acme", document("Doc", 1), &running)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := store.IntAttr(item, store.AttrID)

	// Another attempt may not write.
	other := running
	other.Attempt = generation.NewAttempt()
	if _, err := doc.Transition(ctx, "acme", id, other.Attempt, generation.Running, other.Finish("m", generation.Usage{}, time.Now()), nil); !errors.Is(err, generation.ErrSuperseded) {
		t.Fatalf("another attempt's write-back: %v", err)
	}
	done := running.Finish("m", generation.Tokens(3, 4), time.Now())
	written, err := doc.Transition(ctx, "acme", id, running.Attempt, generation.Running, done, records.Values{"result": "Text", "words": int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, written); s.Status != generation.Done || *s.OutputTokens != 4 {
		t.Fatalf("written: %+v", s)
	}
	if v, _ := store.IntAttr(written, store.AttrVersion); v != 2 {
		t.Fatalf("version %d after the write-back", v)
	}
	// The same write again, as the SDK retries one whose answer was lost:
	// recognised, not refused, and not applied twice.
	again, err := doc.Transition(ctx, "acme", id, running.Attempt, generation.Running, done, records.Values{"result": "Text", "words": int64(1)})
	if err != nil {
		t.Fatalf("a retried write-back: %v", err)
	}
	if v, _ := store.IntAttr(again, store.AttrVersion); v != 2 {
		t.Fatalf("version %d: the retry wrote again", v)
	}
	// A record gone is superseded, and not found.
	if _, err := doc.Transition(ctx, "acme", 999, running.Attempt, generation.Running, done, nil); !errors.Is(err, generation.ErrSuperseded) || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a record that is gone: %v", err)
	}

	// Past the deadline nobody writes, the holder included.
	late := generation.Request("m", time.Now().Add(-16*time.Minute)).Start(time.Now())
	item, _ = doc.Create(ctx, "acme", document("Late", 1), &late)
	lateID, _ := store.IntAttr(item, store.AttrID)
	if _, err := doc.Transition(ctx, "acme", lateID, late.Attempt, generation.Running, late.Finish("m", generation.Usage{}, time.Now()), nil); !errors.Is(err, generation.ErrSuperseded) {
		t.Fatalf("a write-back past the deadline: %v", err)
	}
}

// Regenerate starts anew only from the version read; a generation under
// way is a conflict.
func TestRegenerate(t *testing.T) {
	_, doc := tables(t)
	ctx := context.Background()
	item, _ := doc.Create(ctx, "acme", document("Doc", 1), nil)
	id, _ := store.IntAttr(item, store.AttrID)
	first := generation.Request("m", time.Now())
	regenerated, err := doc.Regenerate(ctx, "acme", item, records.Values{"template_id": int64(1), "prompt": "New"}, first)
	if err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, regenerated); s.Attempt != first.Attempt || s.Status != generation.Pending {
		t.Fatalf("regenerated: %+v", s)
	}
	// From the stale version read before: the record is being generated now.
	second := generation.Request("m", time.Now())
	var inFlight *generation.InFlightError
	if _, err := doc.Regenerate(ctx, "acme", item, records.Values{}, second); !errors.As(err, &inFlight) || inFlight.RetryAfter <= 0 {
		t.Fatalf("a regenerate during a generation: %v", err)
	}
	// An edit of the result waits for the generation too; other fields do not.
	if _, err := doc.Update(ctx, "acme", id, records.Values{"result": "Mine", "words": int64(1)}, store.Precondition{}); !errors.As(err, &inFlight) {
		t.Fatalf("an edit of the result during a generation: %v", err)
	}
	if _, err := doc.Update(ctx, "acme", id, records.Values{"name": "Renamed"}, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	// Once it has ended, a regenerate from an outdated read is a version
	// mismatch, for the caller to read again.
	claimed := first.Claim(time.Now())
	if _, err := doc.Transition(ctx, "acme", id, first.Attempt, generation.Pending, claimed, nil); err != nil {
		t.Fatal(err)
	}
	done := claimed.Finish("m", generation.Usage{}, time.Now())
	if _, err := doc.Transition(ctx, "acme", id, claimed.Attempt, generation.Running, done, records.Values{"result": "Text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := doc.Regenerate(ctx, "acme", regenerated, records.Values{}, second); !errors.Is(err, store.ErrVersionMismatch) {
		t.Fatalf("a regenerate from an outdated read: %v", err)
	}
}

// A regenerate under another template moves the record there, lists and
// totals with it; one from a stale read moves nothing.
func TestRegenerateMovesToAnotherTemplate(t *testing.T) {
	_, doc, tally := tallied(t)
	ctx := context.Background()
	item, _ := doc.Create(ctx, "acme", document("Doc", 1), nil)
	id, _ := store.IntAttr(item, store.AttrID)
	if doc.Moves(item, records.Values{"template_id": int64(1), "prompt": "Same"}) || doc.Moves(item, records.Values{"prompt": "Same"}) {
		t.Fatal("the record's own template counts as a move")
	}
	moved, err := doc.Regenerate(ctx, "acme", item, records.Values{"template_id": int64(9), "prompt": "Moved"}, generation.Request("m", time.Now()))
	if err != nil {
		t.Fatalf("a regenerate under another template: %v", err)
	}
	if tmpl, _ := store.IntAttr(moved, "template_id"); tmpl != 9 {
		t.Fatalf("moved to template %d", tmpl)
	}
	if got, _ := doc.Get(ctx, "acme", id); got["prompt"].(*types.AttributeValueMemberS).Value != "Moved" {
		t.Fatalf("stored: %v", got)
	}
	if p := list(t, doc, "acme", records.ListQuery{Scope: 9}); p.Total != 1 || fmt.Sprint(ids(p)) != fmt.Sprint([]int64{id}) {
		t.Fatalf("template 9 after the move: total %d, ids %v", p.Total, ids(p))
	}
	if p := list(t, doc, "acme", records.ListQuery{Scope: 1}); p.Total != 0 || len(p.Items) != 0 {
		t.Fatalf("template 1 after the move: total %d, ids %v", p.Total, ids(p))
	}
	// From the stale read (version 1) it moves nothing and counts nothing.
	done := generation.Request("m", time.Now())
	if _, err := doc.Regenerate(ctx, "acme", item, records.Values{"template_id": int64(4)}, done); !errors.Is(err, store.ErrVersionMismatch) && !errors.As(err, new(*generation.InFlightError)) {
		t.Fatalf("a move from a stale read: %v", err)
	}
	for scope, want := range map[int64]int64{1: 0, 4: 0, 9: 1} {
		if p := list(t, doc, "acme", records.ListQuery{Scope: scope}); p.Total != want {
			t.Fatalf("template %d counts %d after a refused move, want %d", scope, p.Total, want)
		}
	}
	// A deleted record cannot move.
	if err := doc.Delete(ctx, "acme", id, store.Precondition{}); err != nil {
		t.Fatal(err)
	}
	tally.Drain()
	if _, err := doc.Regenerate(ctx, "acme", moved, records.Values{"template_id": int64(4)}, done); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a move of a deleted record: %v", err)
	}
	for _, scope := range []int64{1, 4, 9} {
		if p := list(t, doc, "acme", records.ListQuery{Scope: scope}); p.Total != 0 {
			t.Fatalf("template %d counts %d once the record is deleted", scope, p.Total)
		}
	}
}
