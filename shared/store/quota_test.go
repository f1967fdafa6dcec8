package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/documents"
	"contentapi/shared/generation"
	"contentapi/shared/images"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// quotaEnv is the two record tables with the service's quota policies, the
// given defaults and a clock the test moves.
type quotaEnv struct {
	env      *ddblocal.TestEnv
	img, doc *store.Table
	now      atomic.Pointer[time.Time]
}

func newQuotaEnv(t *testing.T, defaults quota.Limits, db store.DB) *quotaEnv {
	e := &quotaEnv{env: ddblocal.NewTestEnv(t)}
	if db == nil {
		db = e.env.Client
	}
	e.img = store.New(db, e.env.Tables["ImagesTable"], images.Resource)
	e.doc = store.New(db, e.env.Tables["DocumentsTable"], documents.Resource)
	e.img.Quota = quota.Policy{Counts: quota.Images, Defaults: defaults}
	e.doc.Quota = quota.Policy{Counts: quota.Documents, Checks: []quota.Kind{quota.Words}, Defaults: defaults}
	e.set(time.Date(2026, 11, 14, 9, 30, 0, 0, time.UTC))
	clock := func() time.Time { return *e.now.Load() }
	e.img.Now, e.doc.Now = clock, clock
	return e
}

func (e *quotaEnv) set(t time.Time) { e.now.Store(&t) }

func (e *quotaEnv) usage(t *testing.T, tbl *store.Table, account string) map[quota.Kind]quota.Meter {
	t.Helper()
	m, err := tbl.Usage(context.Background(), account, quota.PeriodOf(*e.now.Load()))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// counter is the account's counter item as stored.
func (e *quotaEnv) counter(t *testing.T, tbl *store.Table, account string) store.Item {
	t.Helper()
	return e.item(t, tbl, account, 0)
}

// item is the account's item id as stored.
func (e *quotaEnv) item(t *testing.T, tbl *store.Table, account string, id int64) store.Item {
	t.Helper()
	out, err := e.env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(tbl.Name()), ConsistentRead: aws.Bool(true),
		Key: store.Item{store.AttrAccount: &types.AttributeValueMemberS{Value: account}, store.AttrID: &types.AttributeValueMemberN{Value: fmt.Sprint(id)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

func setLimits(t *testing.T, tbl *store.Table, account string, set quota.Limits, reset ...quota.Kind) quota.Limits {
	t.Helper()
	own, err := tbl.SetLimits(context.Background(), account, set, reset)
	if err != nil {
		t.Fatal(err)
	}
	return own
}

func total(t *testing.T, tbl *store.Table, account string, scope int64) int64 {
	t.Helper()
	return list(t, tbl, account, records.ListQuery{Scope: scope}).Total
}

// quotaError is err as a *records.QuotaError, or a test failure.
func quotaError(t *testing.T, err error, kind string, limit int64) *records.QuotaError {
	t.Helper()
	var qe *records.QuotaError
	if !errors.As(err, &qe) {
		t.Fatalf("got %v, want the %s quota's error", err, kind)
	}
	if qe.Kind != kind || qe.Limit != limit {
		t.Fatalf("refused for %s (limit %d), want %s (limit %d)", qe.Kind, qe.Limit, kind, limit)
	}
	return qe
}

// A create the month's limit no longer allows writes nothing: no record,
// no count, no id used up; the usage counts exactly the creates made.
func TestQuotaRefusesPastTheLimit(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, nil, nil)
	setLimits(t, e.img, "acme", quota.Limits{quota.Images: quota.Max(3)})
	for i := range 3 {
		if _, err := e.img.Create(ctx, "acme", image(fmt.Sprint("pic ", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.img.Create(ctx, "acme", image("one too many"), nil)
	qe := quotaError(t, err, "images", 3)
	// 2026-11-14 09:30 to 2026-12-01 00:00.
	if want := 16*24*time.Hour + 14*time.Hour + 30*time.Minute; qe.RetryAfter != want {
		t.Errorf("RetryAfter %v, want %v", qe.RetryAfter, want)
	}
	if got := e.usage(t, e.img, "acme")[quota.Images]; got.Used != 3 || got.Limit != quota.Max(3) {
		t.Errorf("usage %+v, want 3 of 3", got)
	}
	if n := total(t, e.img, "acme", 0); n != 3 {
		t.Errorf("%d images stored, want 3", n)
	}
	// Another account is not limited by acme's limit.
	if _, err := e.img.Create(ctx, "globex", image("elsewhere"), nil); err != nil {
		t.Fatal(err)
	}
	// Raised, the limit allows again, and the refused create used no id.
	setLimits(t, e.img, "acme", quota.Limits{quota.Images: quota.Max(4)})
	item, err := e.img.Create(ctx, "acme", image("allowed now"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := store.IntAttr(item, store.AttrID); id != 4 {
		t.Errorf("id %d after a refused create, want 4", id)
	}
}

// Every way a limit can be set, against each kind of default.
func TestQuotaLimitsAndDefaults(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, quota.Limits{quota.Images: quota.Max(1), quota.Documents: quota.Max(0)}, nil)
	try := func(tbl *store.Table, account string) error {
		if tbl == e.img {
			_, err := tbl.Create(ctx, account, image("x"), nil)
			return err
		}
		_, err := tbl.Create(ctx, account, document("x", 1), nil)
		return err
	}

	// The defaults: 1 image, no documents, words unlimited.
	if err := try(e.img, "a"); err != nil {
		t.Fatal(err)
	}
	quotaError(t, try(e.img, "a"), "images", 1)
	quotaError(t, try(e.doc, "a"), "documents", 0)
	m := e.usage(t, e.doc, "a")
	if m[quota.Documents] != (quota.Meter{Used: 0, Limit: quota.Max(0)}) || m[quota.Words] != (quota.Meter{Used: 0, Limit: quota.Unlimited}) {
		t.Errorf("usage %+v", m)
	}

	// Own limits beat the defaults: unlimited, a number, 0.
	own := setLimits(t, e.img, "a", quota.Limits{quota.Images: quota.Unlimited})
	if l, ok := own[quota.Images]; !ok || l != quota.Unlimited {
		t.Errorf("own limits %v", own)
	}
	for range 3 {
		if err := try(e.img, "a"); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.usage(t, e.img, "a")[quota.Images]; got != (quota.Meter{Used: 4, Limit: quota.Unlimited}) {
		t.Errorf("usage %+v, want 4 of unlimited", got)
	}
	setLimits(t, e.doc, "a", quota.Limits{quota.Documents: quota.Max(2)})
	for range 2 {
		if err := try(e.doc, "a"); err != nil {
			t.Fatal(err)
		}
	}
	quotaError(t, try(e.doc, "a"), "documents", 2)
	setLimits(t, e.img, "a", quota.Limits{quota.Images: quota.Max(0)})
	quotaError(t, try(e.img, "a"), "images", 0)

	// Back to the default, which 4 images are over.
	own = setLimits(t, e.img, "a", nil, quota.Images)
	if _, ok := own[quota.Images]; ok {
		t.Errorf("own limits %v after the reset", own)
	}
	quotaError(t, try(e.img, "a"), "images", 1)

	// Omitted kinds keep their limit; a kind of another table is refused.
	own = setLimits(t, e.doc, "a", quota.Limits{quota.Words: quota.Max(100)})
	if own[quota.Documents] != quota.Max(2) || own[quota.Words] != quota.Max(100) {
		t.Errorf("own limits %v", own)
	}
	if _, err := e.img.SetLimits(ctx, "a", quota.Limits{quota.Words: quota.Max(1)}, nil); err == nil {
		t.Error("the images table took a words limit")
	}
	if got, err := e.doc.SetLimits(ctx, "a", nil, nil); err != nil || len(got) != 2 {
		t.Errorf("reading the limits: %v %v", got, err)
	}
}

// Documents are refused once the words generated this month reach the
// limit; words are counted whatever the limit, so a generation that ends
// past it is kept.
func TestQuotaWords(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, quota.Limits{quota.Words: quota.Max(1000)}, nil)
	if _, err := e.doc.Create(ctx, "acme", document("first", 1), nil); err != nil {
		t.Fatal(err)
	}
	if err := e.doc.CountUsage(ctx, "acme", quota.Words, 999); err != nil {
		t.Fatal(err)
	}
	if _, err := e.doc.Create(ctx, "acme", document("second", 1), nil); err != nil {
		t.Fatalf("999 of 1000 words: %v", err)
	}
	if err := e.doc.CountUsage(ctx, "acme", quota.Words, 700); err != nil {
		t.Fatalf("a generation past the limit: %v", err)
	}
	_, err := e.doc.Create(ctx, "acme", document("third", 4), nil)
	quotaError(t, err, "words", 1000)
	if m := e.usage(t, e.doc, "acme"); m[quota.Words].Used != 1699 || m[quota.Documents].Used != 2 {
		t.Errorf("usage %+v", m)
	}
	if err := e.img.CountUsage(ctx, "acme", quota.Words, 1); err == nil {
		t.Error("the images table counted words")
	}
}

// Usage counts per calendar month in UTC: the month's last instant still
// counts in it, the next month starts from nothing, and a write in the new
// month removes the old month's usage from the counter item.
func TestQuotaMonthBoundary(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, quota.Limits{quota.Images: quota.Max(2)}, nil)
	// 23:59:59.5 UTC on Nov 30 is already December in Tokyo.
	e.set(time.Date(2026, 11, 30, 23, 59, 59, 500_000_000, time.UTC).In(time.FixedZone("JST", 9*3600)))
	for range 2 {
		if _, err := e.img.Create(ctx, "acme", image("november"), nil); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.img.Create(ctx, "acme", image("too many"), nil)
	if qe := quotaError(t, err, "images", 2); qe.RetryAfter != 500*time.Millisecond {
		t.Errorf("RetryAfter %v at the month's last second", qe.RetryAfter)
	}
	nov := quota.UsedAttr(quota.Images, quota.PeriodOf(*e.now.Load()))
	if nov != "used_images_2026_11" {
		t.Fatalf("attribute %s", nov)
	}

	e.set(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if got := e.usage(t, e.img, "acme")[quota.Images]; got.Used != 0 {
		t.Errorf("December starts with %d used", got.Used)
	}
	if _, err := e.img.Create(ctx, "acme", image("december"), nil); err != nil {
		t.Fatalf("first of the month: %v", err)
	}
	item := e.counter(t, e.img, "acme")
	if _, ok := item[nov]; ok {
		t.Errorf("November's usage is still on the counter item: %v", item)
	}
	if n, _ := store.IntAttr(item, "used_images_2026_12"); n != 1 {
		t.Errorf("December's usage %d", n)
	}
	// December 31 into January, across the year.
	e.set(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if got := e.usage(t, e.img, "acme")[quota.Images]; got.Used != 0 {
		t.Errorf("January starts with %d used", got.Used)
	}
	if n := total(t, e.img, "acme", 0); n != 3 {
		t.Errorf("%d images stored, want 3", n)
	}
}

// Concurrent creates against one limit create exactly the limit: the check
// and the count are one conditional write.
func TestQuotaExactUnderConcurrency(t *testing.T) {
	const clients, limit = 48, 10
	ctx := context.Background()
	e := newQuotaEnv(t, nil, nil)
	setLimits(t, e.doc, "acme", quota.Limits{quota.Documents: quota.Max(limit)})
	created, refused := race(t, clients, "", func(i int) error {
		_, err := e.doc.Create(ctx, "acme", document(fmt.Sprint("doc ", i), int64(1+i%3)), nil)
		return err
	})
	if created != limit || refused != clients-limit {
		t.Fatalf("%d created, %d refused; want %d and %d", created, refused, limit, clients-limit)
	}
	var stored int64
	for scope := int64(1); scope <= 3; scope++ {
		stored += total(t, e.doc, "acme", scope)
	}
	if used := e.usage(t, e.doc, "acme")[quota.Documents].Used; stored != limit || used != limit {
		t.Errorf("%d stored, %d counted; want %d", stored, used, limit)
	}
}

// race runs create for clients at once: how many succeeded, and how many
// a quota refused (of kind, or any kind for ""); any other error fails t.
func race(t *testing.T, clients int, kind string, create func(i int) error) (created, refused int64) {
	t.Helper()
	var ok, no atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Go(func() {
			err := create(i)
			var qe *records.QuotaError
			switch {
			case err == nil:
				ok.Add(1)
			case errors.As(err, &qe) && (kind == "" || qe.Kind == kind):
				no.Add(1)
			default:
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return ok.Load(), no.Load()
}

// errLost is a write's error that says nothing of whether it landed.
var errLost = errors.New("injected: connection reset")

// The usage moves with the record count, so it stays as exact as the
// counts under every fault between a create's steps: answers lost, puts
// that fail, land late or never, a crash settled by a later write.
func TestQuotaUsageStaysExactUnderFaults(t *testing.T) {
	r := newRig(t)
	r.imgs.Quota = quota.Policy{Counts: quota.Images}
	create := func(name string) {
		_, _ = r.imgs.Create(request(t), "acme", image(name), nil)
	}
	create("plain")
	r.proxy.Inject(counterWrite, ddblocal.LoseAnswer, 1)
	create("counter answer lost")
	r.proxy.Inject(recordPut, ddblocal.LoseAnswer, 1)
	create("put answer lost")
	r.proxy.Inject(recordPut, ddblocal.FailCall, 3)
	create("put failed")
	held := r.proxy.Inject(recordPut, ddblocal.HoldCall, 1)
	create("put late")
	<-held.Held()
	held.Release()
	r.proxy.Wait()
	r.proxy.Inject(recordPut, ddblocal.HangCall, 100)
	r.proxy.Inject(voidPut, ddblocal.HangCall, 100)
	create("crashed")
	r.exact(r.imgs, "acme")

	stored := r.records(r.imgs, "acme", "")[0]
	m, err := r.imgs.Usage(context.Background(), "acme", quota.PeriodOf(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if m[quota.Images].Used != stored || stored != 3 {
		t.Fatalf("%d counted, %d stored; want 3 and 3", m[quota.Images].Used, stored)
	}
}

// Spend is the check and count of a regenerate, Refund gives it back.
func TestQuotaSpendAndRefund(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, nil, nil)
	setLimits(t, e.img, "acme", quota.Limits{quota.Images: quota.Max(2)})
	if _, err := e.img.Create(ctx, "acme", image("one"), nil); err != nil {
		t.Fatal(err)
	}
	charge, err := e.img.Spend(ctx, "acme", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.img.Spend(ctx, "acme", 1)
	quotaError(t, err, "images", 2)
	// Given back in the month it was spent, even once the next has begun.
	e.set(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
	if err := e.img.Refund(ctx, "acme", charge); err != nil {
		t.Fatal(err)
	}
	e.set(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	if used := e.usage(t, e.img, "acme")[quota.Images].Used; used != 1 {
		t.Errorf("%d used after the refund, want 1", used)
	}
	if _, err := e.img.Spend(ctx, "acme", 1); err != nil {
		t.Errorf("spend after the refund: %v", err)
	}
	if n := total(t, e.img, "acme", 0); n != 1 {
		t.Errorf("spending created records: %d", n)
	}
}

// A regenerate's charge is given back when its write did not land: for
// sure after DynamoDB refused it, else when the record does not carry its
// attempt.
func TestQuotaRefundRegenerate(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, nil, nil)
	created := generation.Request("model", *e.now.Load())
	if _, err := e.img.Create(ctx, "acme", image("one"), &created); err != nil {
		t.Fatal(err)
	}
	used := func() int64 { return e.usage(t, e.img, "acme")[quota.Images].Used }
	for _, tc := range []struct {
		name    string
		attempt string
		cause   error
		refund  bool
	}{
		{"refused", "other", store.ErrVersionMismatch, true},
		{"in flight", "other", &generation.InFlightError{}, true},
		{"lost, and written", created.Attempt, errLost, false},
		{"lost, not written", "other", errLost, true},
	} {
		charge, err := e.img.Spend(ctx, "acme", 1)
		if err != nil {
			t.Fatal(err)
		}
		before := used()
		e.img.RefundRegenerate(ctx, "acme", 1, tc.attempt, charge, tc.cause)
		if given := before - used(); given != map[bool]int64{true: 1, false: 0}[tc.refund] {
			t.Errorf("%s: %d given back", tc.name, given)
		}
	}
}

// A move counts its regenerate in its own counter write, under the limits:
// refused past them (nothing moves), and given back with the count when
// the record's write is refused.
func TestQuotaMove(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, nil, nil)
	setLimits(t, e.doc, "acme", quota.Limits{quota.Documents: quota.Max(2)})
	item, err := e.doc.Create(ctx, "acme", document("Doc", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	used := func() int64 { return e.usage(t, e.doc, "acme")[quota.Documents].Used }
	moved, err := e.doc.Regenerate(ctx, "acme", item, records.Values{"template_id": int64(4)}, generation.Request("m", *e.now.Load()))
	if err != nil {
		t.Fatal(err)
	}
	if used() != 2 {
		t.Fatalf("%d used after a create and a move, want 2", used())
	}
	// From a stale read: refused by the record, the usage goes back.
	setLimits(t, e.doc, "acme", quota.Limits{quota.Documents: quota.Max(3)})
	if _, err := e.doc.Regenerate(ctx, "acme", item, records.Values{"template_id": int64(9)}, generation.Request("m", *e.now.Load())); err == nil {
		t.Fatal("a move from a stale read landed")
	}
	if used() != 2 {
		t.Fatalf("%d used after a refused move, want 2", used())
	}
	// Past the limit: nothing moves, nothing counts.
	setLimits(t, e.doc, "acme", quota.Limits{quota.Documents: quota.Max(2)})
	_, err = e.doc.Regenerate(ctx, "acme", moved, records.Values{"template_id": int64(9)}, generation.Request("m", *e.now.Load()))
	quotaError(t, err, "documents", 2)
	if used() != 2 || total(t, e.doc, "acme", 4) != 1 || total(t, e.doc, "acme", 9) != 0 {
		t.Fatalf("after a move past the limit: %d used, totals %d and %d", used(), total(t, e.doc, "acme", 4), total(t, e.doc, "acme", 9))
	}
}
