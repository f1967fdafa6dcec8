package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"contentapi/shared/generation"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// Matchers for a move's writes.
var (
	shiftWrite  = ddblocal.MatchOp("UpdateItem", `"op_m`, `"count_`)
	moveWrite   = ddblocal.MatchOp("UpdateItem", `"moved_by"`, `"id_key"`)
	moveFence   = ddblocal.MatchOp("UpdateItem", `"moved_by"`, `"fences"`, `"SS"`)
	recordReads = ddblocal.MatchOp("BatchGetItem")
)

// move regenerates a document under template to, as the API does: read,
// then regenerate from what was read.
func move(ctx context.Context, tbl *store.Table, account string, id, to int64) (store.Item, error) {
	old, err := tbl.Get(ctx, account, id)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, store.ErrNotFound
	}
	return tbl.Regenerate(ctx, account, old, records.Values{"template_id": to}, generation.Request("m", time.Now()))
}

// templateOf is the template of the record as stored, 0 when it is gone.
func (r *rig) templateOf(account string, id int64) int64 {
	item := r.raw(r.docs, account, id)
	if item[store.AttrIDKey] == nil {
		return 0
	}
	tmpl, _ := store.IntAttr(item, "template_id")
	return tmpl
}

// failedMove creates document 1 under template 1 and moves it to template
// 4 with the move's record write failing as lost (lose > 0) or hung, and
// its fence hung: the move must report failure. The faults are then cleared.
func (r *rig) failedMove(lose int) {
	r.t.Helper()
	if _, err := r.docs.Create(request(r.t), "acme", document("Travels", 1), nil); err != nil {
		r.t.Fatal(err)
	}
	if lose > 0 {
		r.proxy.Inject(moveWrite, ddblocal.LoseAnswer, lose)
	} else {
		r.proxy.Inject(moveWrite, ddblocal.HangCall, 100)
	}
	r.proxy.Inject(moveFence, ddblocal.HangCall, 100)
	if _, err := move(request(r.t), r.docs, "acme", 1, 4); err == nil {
		r.t.Fatal("move succeeded")
	}
	r.proxy.Reset()
	r.proxy.Wait()
}

// totals holds the documents' list totals per template.
func (r *rig) totals(want map[int64]int64) {
	r.t.Helper()
	for scope, n := range want {
		if p := list(r.t, r.docs, "acme", records.ListQuery{Scope: scope}); p.Total != n {
			r.t.Fatalf("template %d: total %d, want %d", scope, p.Total, n)
		}
	}
}

func TestMoveWhoseAnswerIsLostIsRecognised(t *testing.T) {
	r := newRig(t)
	for range 2 {
		if _, err := r.docs.Create(request(t), "acme", document("Doc", 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The counter write lands and its answer is lost: the SDK's retry
	// finds its own intent and counts the move once.
	r.proxy.Inject(shiftWrite, ddblocal.LoseAnswer, 1)
	if _, err := move(request(t), r.docs, "acme", 1, 4); err != nil {
		t.Fatal(err)
	}
	// The record's write lands and its answer is lost: the retry finds the
	// move it made, not a version mismatch.
	r.proxy.Inject(moveWrite, ddblocal.LoseAnswer, 1)
	item, err := move(request(t), r.docs, "acme", 2, 9)
	if err != nil {
		t.Fatalf("move whose first write landed: %v", err)
	}
	if v, _ := store.IntAttr(item, store.AttrVersion); v != 2 {
		t.Fatalf("version %d, want 2: applied once", v)
	}
	if r.templateOf("acme", 1) != 4 || r.templateOf("acme", 2) != 9 {
		t.Fatalf("templates %d and %d", r.templateOf("acme", 1), r.templateOf("acme", 2))
	}
	r.exact(r.docs, "acme", 1, 4, 9)
	if p := list(t, r.docs, "acme", records.ListQuery{Scope: 4}); p.Total != 1 || fmt.Sprint(ids(p)) != "[1]" {
		t.Fatalf("template 4: total %d, ids %v", p.Total, ids(p))
	}
}

// The record's write is held until the request gives up: the move settles
// itself (fence, counts back), and the write, arriving late, cannot land.
func TestMoveThatFailsIsPutBack(t *testing.T) {
	r := newRig(t)
	if _, err := r.docs.Create(request(t), "acme", document("Stays", 1), nil); err != nil {
		t.Fatal(err)
	}
	held := r.proxy.Inject(moveWrite, ddblocal.HoldCall, 1)
	if _, err := move(request(t), r.docs, "acme", 1, 4); err == nil {
		t.Fatal("move succeeded with its write held")
	}
	if open := r.intents(r.docs, "acme"); len(open) != 0 {
		t.Fatalf("the move settled itself, yet intents are open: %v", open)
	}
	<-held.Held()
	held.Release()
	r.proxy.Wait()
	if tmpl := r.templateOf("acme", 1); tmpl != 1 {
		t.Fatalf("the late move landed after its count was put back: template %d", tmpl)
	}
	r.exact(r.docs, "acme", 1, 4)
	// The fence stops that execution only: a new move goes through.
	if _, err := move(request(t), r.docs, "acme", 1, 4); err != nil {
		t.Fatal(err)
	}
	r.exact(r.docs, "acme", 1, 4)
	if r.templateOf("acme", 1) != 4 {
		t.Fatal("not moved")
	}
}

// A crash between the steps: the counter write lands, then nothing more
// does. The next write of the account, once the intent is old, fences the
// record and moves the count back.
func TestCrashBetweenMoveStepsIsSettledByALaterWrite(t *testing.T) {
	r := newRig(t)
	r.failedMove(0)
	if open := r.intents(r.docs, "acme"); len(open) != 1 || !strings.HasPrefix(open[0], "op_m1-4_") {
		t.Fatalf("open intents %v, want the move's", open)
	}
	r.offset = time.Minute
	if _, err := r.docs.Create(request(t), "acme", document("Later", 1), nil); err != nil {
		t.Fatal(err)
	}
	// Settling closed the move's intent, and the create's own rode along.
	if open := r.intents(r.docs, "acme"); len(open) != 0 {
		t.Fatalf("open intents %v", open)
	}
	if tmpl := r.templateOf("acme", 1); tmpl != 1 {
		t.Fatalf("template %d after the move was settled as abandoned", tmpl)
	}
	r.totals(map[int64]int64{1: 2, 4: 0})
}

// A move that landed while its process lost every answer and could not
// look: its intent stays open, and the record's next move, which sees the
// first landed, takes it away with its own counter write; a later settling
// finds nothing to reverse.
func TestLandedMoveIsKeptByTheNextMove(t *testing.T) {
	r := newRig(t)
	r.failedMove(3)
	if r.templateOf("acme", 1) != 4 {
		t.Fatal("the first move did not land")
	}
	if open := r.intents(r.docs, "acme"); len(open) != 1 || !strings.HasPrefix(open[0], "op_m1-4_") {
		t.Fatalf("open intents %v, want the landed move's", open)
	}
	if _, err := move(request(t), r.docs, "acme", 1, 9); err != nil {
		t.Fatal(err)
	}
	if open := r.intents(r.docs, "acme"); len(open) != 1 || !strings.HasPrefix(open[0], "op_m4-9_") {
		t.Fatalf("open intents %v, want only the second move's (finished, riding on the next write)", open)
	}
	r.exact(r.docs, "acme", 1, 4, 9)
	if p := list(t, r.docs, "acme", records.ListQuery{Scope: 9}); p.Total != 1 {
		t.Fatalf("template 9: total %d", p.Total)
	}
}

// A landed move that nobody saw land, settled later from the record,
// which names it: the count stays moved.
func TestLandedMoveIsSettledByLaterWrites(t *testing.T) {
	r := newRig(t)
	r.failedMove(3)
	r.offset = time.Minute
	if _, err := r.docs.Create(request(t), "acme", document("Later", 1), nil); err != nil {
		t.Fatal(err)
	}
	r.totals(map[int64]int64{1: 1, 4: 1})
	r.exact(r.docs, "acme", 1, 4)
}

// Moves, creates and deletes on four templates, each with a fault on one
// of its writes. Whatever each call answered, once settled every total
// matches the records stored.
func TestTotalsStayExactUnderMovesWithFaults(t *testing.T) {
	r := newRig(t)
	rng := rand.New(rand.NewPCG(13, 7))
	faults := []ddblocal.Fault{ddblocal.LoseAnswer, ddblocal.FailCall, ddblocal.ThrottleCall, ddblocal.DropCall, ddblocal.PassCall}
	steps := []func(ddblocal.ProxiedCall) bool{shiftWrite, moveWrite, moveFence, recordReads, counterWrite, tombstone, tallyWrite}
	templates := []int64{1, 4, 9, 18}
	var live []int64
	for i := range 8 {
		item, err := r.docs.Create(request(t), "acme", document(fmt.Sprint("doc ", i), templates[i%len(templates)]), nil)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := store.IntAttr(item, store.AttrID)
		live = append(live, id)
	}
	answered := map[string]int{}
	for i := range 60 {
		step := steps[rng.IntN(len(steps))]
		var held *ddblocal.FaultRule
		switch {
		case i%12 == 5:
			held = r.proxy.Inject(step, ddblocal.HoldCall, 1)
		case i%12 == 11:
			// The database stalls past the request's deadline.
			r.proxy.Inject(step, ddblocal.HangCall, 100)
		default:
			r.proxy.Inject(step, faults[rng.IntN(len(faults))], 1+rng.IntN(3))
		}
		if i%20 == 19 {
			r.offset += time.Minute // older intents become others' to settle
		}
		var err error
		switch op := rng.IntN(10); {
		case op < 6 && len(live) > 0:
			_, err = move(request(t), r.docs, "acme", live[rng.IntN(len(live))], templates[rng.IntN(len(templates))])
		case op < 8 || len(live) == 0:
			var item store.Item
			item, err = r.docs.Create(request(t), "acme", document(fmt.Sprint("doc ", i), templates[rng.IntN(len(templates))]), nil)
			if err == nil {
				id, _ := store.IntAttr(item, store.AttrID)
				live = append(live, id)
			}
		default:
			k := rng.IntN(len(live))
			err = r.docs.Delete(request(t), "acme", live[k], store.Precondition{})
			if err == nil || errors.Is(err, store.ErrNotFound) {
				live = slices.Delete(live, k, k+1)
			}
		}
		answered[fmt.Sprint(err != nil)]++
		r.endStep(held)
	}
	t.Logf("answers (error?): %v", answered)
	r.exact(r.docs, "acme", templates...)
}

// Concurrent moves of one record to different templates, and a delete of
// it, race: each move either lands from the version it read or moves
// nothing; once settled, the totals of every template match the records.
func TestConcurrentMovesAndDeletesOfOneRecord(t *testing.T) {
	r := newRig(t)
	templates := []int64{1, 4, 9, 18, 33}
	for round := range 3 {
		item, err := r.docs.Create(request(t), "acme", document(fmt.Sprint("contested ", round), 1), nil)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := store.IntAttr(item, store.AttrID)
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for try := range 3 {
					_, err := move(request(t), r.docs, "acme", id, templates[(g+try)%len(templates)])
					switch {
					case err == nil, errors.Is(err, store.ErrNotFound), errors.As(err, new(*generation.InFlightError)):
						return
					case errors.Is(err, store.ErrVersionMismatch):
						continue // moved meanwhile: read again
					}
					errs <- err
					return
				}
			}()
		}
		if round > 0 {
			// The record is deleted while it is being moved.
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.docs.Delete(request(t), "acme", id, store.Precondition{}); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		r.exact(r.docs, "acme", templates...)
		if round > 0 && r.templateOf("acme", id) != 0 {
			t.Fatalf("round %d: the deleted record is live again", round)
		}
	}
}
