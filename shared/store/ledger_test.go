package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"contentapi/shared/generation"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// worstImage and worstDocument are what the tests' generations may cost
// at worst, per variant.
const worstImage, worstDocument generation.USD = 120, 30

// capped puts an env's two tables under a spend limit of def (the
// deployment's default), on the images' spend item as the ledger.
func capped(img, doc *store.Table, def quota.Limit) {
	img.Cap = store.SpendCap{Default: def, Worst: func(n int64) generation.USD { return worstImage * generation.USD(n) }}
	doc.Cap = store.SpendCap{Default: def, Worst: func(n int64) generation.USD { return worstDocument * generation.USD(n) }}
	doc.Ledger = img
}

// ledger is the account's ledger as stored: what it committed this month,
// and the marks of its holds.
func ledger(t *testing.T, e *quotaEnv, account string) (committed int64, marks map[string]string) {
	t.Helper()
	item := e.item(t, e.img, account, -2)
	committed, _ = store.IntAttr(item, quota.CommittedAttr(quota.PeriodOf(*e.now.Load())))
	marks = map[string]string{}
	for name, av := range item {
		if strings.HasPrefix(name, "hd_") {
			marks[name] = fmt.Sprint(av)
		}
	}
	return committed, marks
}

// A create holds its generation's worst case on the ledger, every
// generated resource against the same limit; one whose worst case no
// longer fits is 429 naming the spend limit, and leaves nothing: no
// record, no count, no usage, no hold. An account's own limit comes with
// its counter item, unlimited included; without a limit nothing is held.
func TestSpendLimitHoldsTheWorstCase(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, nil, nil)
	capped(e.img, e.doc, quota.Max(300))
	gen := func() *generation.State { g := generation.Request("m", *e.now.Load()); return &g }

	for i := range 2 {
		item, err := e.img.Create(ctx, "acme", image(fmt.Sprint("img ", i)), gen())
		if err != nil {
			t.Fatal(err)
		}
		s, _ := store.StateOf(item)
		if s.SpendHold == nil || s.SpendHold.Held != worstImage {
			t.Fatalf("the record carries %+v, want the hold of %d", s.SpendHold, worstImage)
		}
	}
	// 240 committed: a third image (120) no longer fits, a document of
	// two variants (60) does, and then nothing more.
	_, err := e.img.Create(ctx, "acme", image("one too many"), gen())
	qe := quotaError(t, err, "spend", 300)
	if qe.Error() != "the monthly spend limit of $0.0000003 is reached" {
		t.Errorf("the refusal says %q", qe.Error())
	}
	if _, err := e.doc.Create(ctx, "acme", records.Values{"name": "d", "prompt": "p", "creativity": 0.5, "template_id": int64(1), "words": int64(0), "variants": int64(2)}, gen()); err != nil {
		t.Fatal(err)
	}
	_, err = e.doc.Create(ctx, "acme", document("too many", 1), gen())
	quotaError(t, err, "spend", 300)
	if committed, marks := ledger(t, e, "acme"); committed != 300 || len(marks) != 3 {
		t.Fatalf("ledger: %d committed, marks %v; want 300 and three holds", committed, marks)
	}
	if n, u := total(t, e.img, "acme", 0), e.usage(t, e.img, "acme")[quota.Images].Used; n != 2 || u != 2 {
		t.Errorf("images: %d stored, %d counted after a refusal, want 2", n, u)
	}
	if u := e.usage(t, e.doc, "acme")[quota.Documents].Used; u != 1 {
		t.Errorf("documents: %d counted after a refusal, want 1", u)
	}

	// Its own limit, unlimited, holds nothing; nor does a create without
	// a generation.
	if _, _, err := e.img.SetSpendLimit(ctx, "acme", &quota.Unlimited, true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.img.Create(ctx, "acme", image("free"), gen()); err != nil {
		t.Fatal(err)
	}
	// An own limit that fits one more image.
	limit := quota.Max(420)
	if _, _, err := e.img.SetSpendLimit(ctx, "acme", &limit, true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.img.Create(ctx, "acme", image("own"), gen()); err != nil {
		t.Fatal(err)
	}
	_, err = e.img.Create(ctx, "acme", image("past own"), gen())
	quotaError(t, err, "spend", 420)
	if committed, marks := ledger(t, e, "acme"); committed != 420 || len(marks) != 4 {
		t.Fatalf("ledger: %d committed, %d marks; want 420 and 4", committed, len(marks))
	}

	// Without any limit, nothing is held, and no ledger is written.
	free := newQuotaEnv(t, nil, nil)
	capped(free.img, free.doc, quota.Unlimited)
	if _, err := free.doc.Create(ctx, "acme", document("d", 1), gen()); err != nil {
		t.Fatal(err)
	}
	if item := free.item(t, free.img, "acme", -2); item != nil {
		t.Errorf("an account without a limit has a ledger: %v", item)
	}
}

// Concurrent creates cannot pass the limit together: the hold is one
// conditional write on one item.
func TestSpendLimitExactUnderConcurrency(t *testing.T) {
	const clients, fit = 24, 7
	ctx := context.Background()
	e := newQuotaEnv(t, nil, nil)
	capped(e.img, e.doc, quota.Max(int64(fit*worstImage+worstImage/2)))
	created, refused := race(t, clients, "spend", func(i int) error {
		g := generation.Request("m", *e.now.Load())
		tbl, v := e.img, image(fmt.Sprint("img ", i))
		if i%2 == 1 {
			// A document of four variants costs as much as an image.
			tbl, v = e.doc, records.Values{"name": "d", "prompt": "p", "creativity": 0.5, "template_id": int64(1), "words": int64(0), "variants": int64(4)}
		}
		_, err := tbl.Create(ctx, "acme", v, &g)
		return err
	})
	if created != fit || refused != clients-fit {
		t.Fatalf("%d created, %d refused; want %d and %d", created, refused, fit, clients-fit)
	}
	stored := total(t, e.img, "acme", 0)
	for scope := int64(1); scope <= 3; scope++ {
		stored += total(t, e.doc, "acme", scope)
	}
	if committed, marks := ledger(t, e, "acme"); committed != fit*int64(worstImage) || len(marks) != fit || stored != fit {
		t.Errorf("%d committed, %d holds, %d records; want %d, %d, %d", committed, len(marks), stored, fit*worstImage, fit, fit)
	}
}

// A regenerate holds its worst case as a create does, in Spend, and gives
// it back with the charge (Refund) when its record's write did not land.
func TestSpendLimitRegenerate(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, nil, nil)
	capped(e.img, e.doc, quota.Max(int64(2*worstImage)))
	g := generation.Request("m", *e.now.Load())
	if _, err := e.img.Create(ctx, "acme", image("one"), &g); err != nil {
		t.Fatal(err)
	}
	charge, err := e.img.Spend(ctx, "acme", 1)
	if err != nil {
		t.Fatal(err)
	}
	if h := charge.SpendHold(); h == nil || h.Held != worstImage {
		t.Fatalf("the regenerate holds %+v", h)
	}
	if s := e.img.Hold(generation.Request("m", *e.now.Load()), charge); s.SpendHold != charge.SpendHold() {
		t.Error("the regenerate's record does not carry its hold")
	}
	_, err = e.img.Spend(ctx, "acme", 1)
	quotaError(t, err, "spend", int64(2*worstImage))
	if u := e.usage(t, e.img, "acme")[quota.Images].Used; u != 2 {
		t.Errorf("%d images counted after a regenerate refused for spend, want 2", u)
	}
	e.img.RefundRegenerate(ctx, "acme", 1, "other", charge, store.ErrVersionMismatch)
	if committed, marks := ledger(t, e, "acme"); committed != int64(worstImage) || len(marks) != 2 {
		t.Fatalf("after the refund: %d committed, marks %v", committed, marks)
	}
	// Given back once, however often asked.
	e.img.RefundRegenerate(ctx, "acme", 1, "other", charge, store.ErrVersionMismatch)
	if committed, _ := ledger(t, e, "acme"); committed != int64(worstImage) {
		t.Fatalf("a second refund: %d committed", committed)
	}
	if _, err := e.img.Spend(ctx, "acme", 1); err != nil {
		t.Errorf("a regenerate after the refund: %v", err)
	}
}

// Every write of the hold and its release, through the service's own
// client: an answer lost (the SDK's retry finds its mark, and holds once),
// the ledger throttled (the SDK retries), the database stalled past the
// request (the create fails and nothing stays held or counted, even when
// the stalled hold lands later), and a record write that fails after the
// hold (the hold is given back).
func TestSpendHoldThroughFaults(t *testing.T) {
	r := newRig(t)
	capped(r.imgs, r.docs, quota.Max(int64(10*worstImage)))
	// The hold's write (not its release's, which says "released").
	hold := func(c ddblocal.ProxiedCall) bool {
		return c.Op == "UpdateItem" && c.Has(`"hd_`) && !c.Has("released")
	}
	create := func(name string) error {
		g := generation.Request("m", time.Now())
		_, err := r.imgs.Create(request(t), "acme", image(name), &g)
		return err
	}
	committed := func() (int64, int) {
		item := r.raw(r.imgs, "acme", -2)
		n, _ := store.IntAttr(item, quota.CommittedAttr(quota.PeriodOf(time.Now())))
		held := 0
		for name, av := range item {
			if strings.HasPrefix(name, "hd_") && !strings.Contains(fmt.Sprint(av), "released") {
				held++
			}
		}
		return n, held
	}
	want := func(step string, records int64, n int64, holds int) {
		t.Helper()
		r.endStep(nil)
		if got := r.records(r.imgs, "acme", "")[0]; got != records {
			t.Fatalf("%s: %d records, want %d", step, got, records)
		}
		if c, h := committed(); c != n || h != holds {
			t.Fatalf("%s: %d committed in %d holds, want %d in %d", step, c, h, n, holds)
		}
	}

	r.proxy.Inject(hold, ddblocal.LoseAnswer, 1)
	if err := create("answer lost"); err != nil {
		t.Fatal(err)
	}
	want("answer lost", 1, int64(worstImage), 1)

	r.proxy.Inject(hold, ddblocal.ThrottleCall, 2)
	if err := create("throttled"); err != nil {
		t.Fatal(err)
	}
	want("throttled", 2, 2*int64(worstImage), 2)

	// Held past the request: the create fails, its count is taken back,
	// and its hold, landing afterwards, finds the fence.
	held := r.proxy.Inject(hold, ddblocal.HoldCall, 1)
	r.proxy.Inject(hold, ddblocal.HangCall, 100)
	if err := create("stalled"); err == nil {
		t.Fatal("a create whose hold stalled past its deadline succeeded")
	}
	<-held.Held()
	held.Release()
	want("stalled", 2, 2*int64(worstImage), 2)

	// The record's write fails for good: the id is voided and the hold
	// given back.
	r.proxy.Inject(recordPut, ddblocal.FailCall, 100)
	if err := create("put failed"); err == nil {
		t.Fatal("a create whose put failed succeeded")
	}
	want("put failed", 2, 2*int64(worstImage), 2)
	r.exact(r.imgs, "acme")
}
