package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/documents"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/store"
)

// markSettledWrite is Settle's last write, which takes unsettled away (a
// create's counter write, which sets it, names next_id too).
func markSettledWrite(rq ddblocal.ProxiedCall) bool {
	return rq.Op == "UpdateItem" && rq.Has(`"`+store.AttrUnsettled+`"`) && !rq.Has(`"next_id"`)
}

// sweeper is the documents table as the tally function has it: another
// process, which never saw the creates through, on the rig's clock.
func (r *rig) sweeper() *store.Table {
	s := store.New(r.db, r.docs.Name(), documents.Resource)
	s.Now = func() time.Time { return time.Now().Add(r.offset) }
	return s
}

// sweep runs one sweep of tbl, as the schedule does.
func (r *rig) sweep(tbl *store.Table) store.Swept {
	r.t.Helper()
	swept, err := tbl.Sweep(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return swept
}

// sweepHeldAt starts a sweep and returns once the proxy holds its first
// call that match takes, with the sweep's outcome to come on done.
func (r *rig) sweepHeldAt(match func(ddblocal.ProxiedCall) bool) (held *ddblocal.FaultRule, done <-chan error) {
	held = r.proxy.Inject(match, ddblocal.HoldCall, 1)
	out := make(chan error, 1)
	go func() { _, err := r.sweeper().Sweep(context.Background()); out <- err }()
	<-held.Held()
	return held, out
}

// unsettled reports whether the account's counter is in the index of
// unsettled ones.
func (r *rig) unsettled(tbl *store.Table, account string) bool {
	_, ok := r.raw(tbl, account, 0)[store.AttrUnsettled]
	return ok
}

// An outage leaves intents open on accounts that never write again: a
// stall whose queued counter writes land after their requests gave up, a
// crash between a create's steps, a counter write whose every answer is
// lost. Nothing is written afterwards; once they are older than the
// horizon, one sweep settles them all, and every total is exact.
func TestSweepSettlesWhatAnOutageLeftWithoutWrites(t *testing.T) {
	r := newRig(t)
	for _, name := range []string{"kept", "deleted in the stall"} {
		if _, err := r.docs.Create(request(t), "stalled", document(name, 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The stall: every call is held in the database, then applied late.
	r.proxy.Down(ddblocal.HoldCall)
	for _, account := range []string{"stalled", "stalled too"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if _, err := r.docs.Create(ctx, account, document("in the stall", 4), nil); err == nil {
			t.Fatalf("%s: a create succeeded in the stall", account)
		}
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	if err := r.docs.Delete(ctx, "stalled", 2, store.Precondition{}); err == nil {
		t.Fatal("a delete succeeded in the stall")
	}
	cancel()
	r.proxy.Up()
	r.proxy.Wait()
	// The crash: the counter write lands, then nothing more does.
	r.crash(r.docs, "crashed", document("crashed", 9))
	// Lost answers: the counter write lands each time, no answer comes
	// back.
	r.proxy.Inject(counterWrite, ddblocal.LoseAnswer, 100)
	if _, err := r.docs.Create(request(t), "unanswered", document("unanswered", 1), nil); err == nil {
		t.Fatal("create succeeded")
	}
	r.proxy.Reset()
	r.proxy.Wait()
	r.tally.Drain()

	accounts := map[string][]int64{"stalled": {1, 4}, "stalled too": {4}, "crashed": {9}, "unanswered": {1}}
	for account := range accounts {
		if len(r.intents(r.docs, account)) == 0 || !r.unsettled(r.docs, account) {
			t.Fatalf("%s: intents %v, unsettled %v: the outage left nothing to settle", account, r.intents(r.docs, account), r.unsettled(r.docs, account))
		}
	}
	sweeper := r.sweeper()
	// Before the horizon the sweep leaves them alone: the requests that
	// opened them might still be finishing.
	if swept := r.sweep(sweeper); swept.Counters != 0 {
		t.Fatalf("a sweep before the horizon read %d counters", swept.Counters)
	}
	// No write since; time passes.
	r.offset = sweeper.Horizon + time.Second
	swept := r.sweep(sweeper)
	if swept.Counters != len(accounts) || swept.Left != 0 {
		t.Fatalf("swept %+v, want the %d accounts' counters", swept, len(accounts))
	}
	for account, scopes := range accounts {
		if open := r.intents(r.docs, account); len(open) > 0 || r.unsettled(r.docs, account) {
			t.Fatalf("%s: intents %v open, unsettled %v after the sweep", account, open, r.unsettled(r.docs, account))
		}
		r.totalsAgree(r.docs, account, scopes...)
	}
}

// The index holds only counters that may have an intent open: once
// settled, a sweep reads no counter at all, whatever the number of
// accounts; a young intent costs no read either, and an old one the read
// of its own counter only.
func TestSweepReadsOnlyUnsettledCounters(t *testing.T) {
	r := newRig(t)
	const accounts = 20
	for i := range accounts {
		if _, err := r.docs.Create(request(t), fmt.Sprint("idle ", i), document("one", 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	sweeper := r.sweeper()
	r.offset = time.Hour
	if swept := r.sweep(sweeper); swept.Counters != accounts || swept.Settled != accounts {
		t.Fatalf("swept %+v: want each create's intent kept, once", swept)
	}
	index, err := r.env.Client.Scan(context.Background(), &dynamodb.ScanInput{
		TableName: aws.String(r.docs.Name()), IndexName: aws.String(store.IndexUnsettled),
	})
	if err != nil {
		t.Fatal(err)
	}
	if index.ScannedCount != 0 {
		t.Fatalf("the index holds %d settled counters: %v", index.ScannedCount, index.Items)
	}
	calls := func(f func()) []ddblocal.ProxiedCall {
		before := len(r.proxy.Calls())
		f()
		return r.proxy.Calls()[before:]
	}
	if got := calls(func() { r.sweep(sweeper) }); len(got) != 1 || got[0].Op != "Scan" {
		t.Fatalf("a sweep with nothing open made %v, want one Scan", got)
	}
	if _, err := r.docs.Create(request(t), "idle 7", document("two", 1), nil); err != nil {
		t.Fatal(err)
	}
	if got := calls(func() { r.sweep(sweeper) }); len(got) != 1 || got[0].Op != "Scan" {
		t.Fatalf("a sweep with a young intent open made %v, want one Scan", got)
	}
	r.offset += time.Hour
	var gets []ddblocal.ProxiedCall
	for _, c := range calls(func() { r.sweep(sweeper) }) {
		if c.Op == "GetItem" {
			gets = append(gets, c)
		}
	}
	if len(gets) != 1 || !gets[0].Has(`"idle 7"`) {
		t.Fatalf("the sweep read %d counters, want idle 7's only: %v", len(gets), gets)
	}
	for i := range accounts {
		r.totalsAgree(r.docs, fmt.Sprint("idle ", i), 1)
	}
}

// A sweep and a later write of the account settle the same intent at once:
// the conditions let one of them reverse its count, not both.
func TestSweepRacingAWriteCountsOnce(t *testing.T) {
	r := newRig(t)
	r.crash(r.docs, "acme", document("crashed", 4))
	r.offset = time.Hour
	// The sweep reads the counter and the item, and is held at the void.
	held, done := r.sweepHeldAt(voidPut)
	// Meanwhile a create of the account settles the stale intent itself
	// (and its own intent rides away on that write).
	if _, err := r.docs.Create(request(t), "acme", document("next", 4), nil); err != nil {
		t.Fatal(err)
	}
	if open := r.intents(r.docs, "acme"); len(open) != 0 {
		t.Fatalf("open intents %v: the create did not settle the stale one", open)
	}
	held.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.proxy.Reset()
	r.proxy.Wait()
	r.totalsAgree(r.docs, "acme", 4)
	// The create's intent, opened after the sweep read the counter, kept it
	// in the index (the sweep cannot know it is closed already); the next
	// sweep takes it out.
	if !r.unsettled(r.docs, "acme") {
		t.Fatal("the sweep took the counter out of the index with the create's intent open")
	}
	r.offset += time.Hour
	r.sweep(r.sweeper())
	if open := r.intents(r.docs, "acme"); len(open) > 0 || r.unsettled(r.docs, "acme") {
		t.Fatalf("intents %v, unsettled %v", open, r.unsettled(r.docs, "acme"))
	}
	r.totalsAgree(r.docs, "acme", 4)
}

// An intent opened between the sweep's read and its last write keeps the
// counter in the index: a create that crashes then is found by the next
// sweep, though nothing of the account is written after it.
func TestIntentOpenedDuringASweepIsSweptLater(t *testing.T) {
	r := newRig(t)
	r.crash(r.docs, "acme", document("crashed", 4))
	r.offset = time.Hour
	_, done := r.sweepHeldAt(markSettledWrite)
	r.crash(r.docs, "acme", document("crashed too", 4)) // which lets the held write go, too
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if open := r.intents(r.docs, "acme"); len(open) != 1 || !r.unsettled(r.docs, "acme") {
		t.Fatalf("intents %v, unsettled %v: want the second crash's, in the index", open, r.unsettled(r.docs, "acme"))
	}
	r.offset += time.Hour
	r.sweep(r.sweeper())
	if open := r.intents(r.docs, "acme"); len(open) > 0 || r.unsettled(r.docs, "acme") {
		t.Fatalf("intents %v, unsettled %v after the next sweep", open, r.unsettled(r.docs, "acme"))
	}
	r.totalsAgree(r.docs, "acme", 4)
}

// What a sweep costs, as AWS bills it: with nothing open, one Scan of an
// empty index (AWS bills a call at least 0.5 RRU; DynamoDB Local bills it
// nothing); for an account that wrote once and went quiet, the read of its
// counter and record, the intent kept, and the counter out of the index.
func TestSweepCost(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	db, meter := env.Metered(t)
	writer := store.New(env.Client, env.Tables["DocumentsTable"], documents.Resource)
	sweeper := store.New(db, env.Tables["DocumentsTable"], documents.Resource)
	later := time.Now().Add(time.Hour)
	sweeper.Now = func() time.Time { return later }
	sweep := func() ddblocal.MeteredTotals {
		t.Helper()
		calls := meter.Measure(func() {
			if _, err := sweeper.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%v", calls)
		return ddblocal.SumMetered(calls)
	}
	idle := func(got ddblocal.MeteredTotals) bool {
		return got.RoundTrips == 1 && got.Reads <= 0.5 && got.Writes == 0
	}
	if got := sweep(); !idle(got) {
		t.Errorf("an idle sweep cost %+v, want one Scan of at most 0.5 RRU", got)
	}
	if _, err := writer.Create(context.Background(), "quiet", document("one", 1), nil); err != nil {
		t.Fatal(err)
	}
	// GetItem of the counter, BatchGetItem of the record, the intent's
	// close, the counter out of the index (and its index entry).
	if got := sweep(); got.RoundTrips != 5 || got.Reads > 2.5 || got.Writes > 3 {
		t.Errorf("settling a quiet account cost %+v, want 5 calls, at most 2.5 RRU and 3 WRU", got)
	}
	if got := sweep(); !idle(got) {
		t.Errorf("the next sweep cost %+v, want one Scan of at most 0.5 RRU", got)
	}
}
