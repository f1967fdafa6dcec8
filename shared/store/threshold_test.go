package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/generation"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/quota"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// The create whose counter write reaches 80% of a limit marks it on the
// counter item and puts it into the outbox, and so does the one reaching
// 100%; the creates between find the mark and write nothing more. A
// cleared outbox stays cleared, the marks stay for the month, and the next
// month's mark of the same share takes the last one's place.
func TestThresholdMarkedOnceAMonth(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, quota.Limits{quota.Images: quota.Max(5)}, nil)
	create := func(name string) store.Item {
		t.Helper()
		before := e.counter(t, e.img, "acme")
		if _, err := e.img.Create(ctx, "acme", image(name), nil); err != nil {
			t.Fatal(err)
		}
		after := e.counter(t, e.img, "acme")
		if _, told := store.ThresholdOf(before, after); told {
			return after
		}
		return nil
	}
	for i := range 3 {
		if told := create(fmt.Sprint("under ", i)); told != nil {
			t.Fatalf("at %d of 5, the outbox holds %v", i+1, told[store.AttrThreshold])
		}
	}
	counter := create("80%")
	th, told := store.ThresholdOf(nil, counter)
	if !told || th.Kind != quota.Images || th.Percent != 80 || th.Used != 4 || th.Limit != 5 || th.Period != "2026-11" ||
		th.Mark != "th80_images_2026_11" || !th.At.Equal(*e.now.Load()) {
		t.Fatalf("the outbox holds %+v (%v)", th, told)
	}
	if err := e.img.ClearThreshold(ctx, "acme", 0, th); err != nil {
		t.Fatal(err)
	}
	cleared := e.counter(t, e.img, "acme")
	if _, ok := cleared[store.AttrThreshold]; ok {
		t.Fatal("the outbox was not cleared")
	}
	if _, ok := store.ThresholdOf(counter, cleared); ok {
		t.Fatal("the outbox's clearing reads as a crossing")
	}
	// Cleared again (the stream record delivered twice): nothing changes.
	if err := e.img.ClearThreshold(ctx, "acme", 0, th); err != nil {
		t.Fatal(err)
	}
	counter = create("100%")
	if th, _ := store.ThresholdOf(nil, counter); th.Percent != 100 || th.Used != 5 {
		t.Fatalf("at 5 of 5, the outbox holds %+v", th)
	}
	if counter["th80_images_2026_11"] == nil || counter["th100_images_2026_11"] == nil {
		t.Fatalf("the marks are not both on the counter: %v", counter)
	}
	if n := outboxWrites(t, e, e.img); n != 2 {
		t.Fatalf("%d writes put a crossing into the outbox in November, want 2", n)
	}

	e.set(time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC))
	for i := range 4 {
		counter = create(fmt.Sprint("december ", i))
	}
	th, _ = store.ThresholdOf(nil, counter)
	if counter == nil || th.Mark != "th80_images_2026_12" {
		t.Fatalf("december's 80%%: the outbox holds %+v", th)
	}
	if counter["th80_images_2026_11"] != nil || counter["th100_images_2026_11"] == nil {
		t.Errorf("december's 80%% mark removed november's %v, and left its 100%% %v",
			counter["th80_images_2026_11"], counter["th100_images_2026_11"])
	}
}

// Creates racing past the share each find it unmarked in their counter
// writes' answers; one mark write lands, so one write of the table's
// stream puts it into the outbox (what the generator publishes).
func TestThresholdRacedMarkedOnce(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, quota.Limits{quota.Images: quota.Max(100)}, nil)
	for i := range 79 {
		if _, err := e.img.Create(ctx, "acme", image(fmt.Sprint("under ", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			_, err := e.img.Create(ctx, "acme", image(fmt.Sprint("racing ", i)), nil)
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	counter := e.counter(t, e.img, "acme")
	mark, _ := store.IntAttr(counter, "th80_images_2026_11")
	if th, told := store.ThresholdOf(nil, counter); !told || th.Mark != "th80_images_2026_11" || th.Used != mark || mark < 80 {
		t.Fatalf("the outbox holds %+v, the mark %d", th, mark)
	}
	if n := outboxWrites(t, e, e.img); n != 1 {
		t.Errorf("%d writes put a crossing into the outbox, want 1", n)
	}
}

// outboxWrites counts the records of tbl's stream, from its start, that
// put a crossing into an outbox.
func outboxWrites(t *testing.T, e *quotaEnv, tbl *store.Table) int {
	t.Helper()
	n := 0
	// Read for its visit of every record: the sequence numbers are not
	// wanted.
	_, err := lambdalocal.LastSequenceNumbers(context.Background(), e.env.Client, e.env.Endpoint, tbl.Name(),
		func(rec events.DynamoDBEventRecord) bool {
			if _, ok := store.ThresholdOf(store.StreamItem(rec.Change.OldImage), store.StreamItem(rec.Change.NewImage)); ok {
				n++
			}
			return false
		})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The spend limit's shares are found on the ledger, by the holds: what is
// committed reaching 80%, and the first hold refused (the limit reached,
// since no hold passes it), each told once, with what is committed.
func TestSpendThresholdsOnTheLedger(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, nil, nil)
	// Five holds fit (91%), not six: 100% is never committed.
	limit := int64(5*worstImage + worstImage/2)
	capped(e.img, e.doc, quota.Max(limit))
	create := func(name string) error {
		g := generation.Request("m", *e.now.Load())
		_, err := e.img.Create(ctx, "acme", image(name), &g)
		return err
	}
	for i := range 4 {
		if err := create(fmt.Sprint("under ", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, told := store.ThresholdOf(nil, e.item(t, e.img, "acme", -2)); told {
		t.Fatal("at 73% of the spend limit, the ledger's outbox is set")
	}
	if err := create("80%"); err != nil {
		t.Fatal(err)
	}
	th, told := store.ThresholdOf(nil, e.item(t, e.img, "acme", -2))
	if !told || th.Kind != quota.Spend || th.Percent != 80 || th.Used != int64(5*worstImage) || th.Limit != limit {
		t.Fatalf("at 91%%, the ledger's outbox holds %+v", th)
	}
	if err := create("refused"); !errors.As(err, new(*records.QuotaError)) {
		t.Fatalf("past the spend limit: %v", err)
	}
	th, _ = store.ThresholdOf(nil, e.item(t, e.img, "acme", -2))
	if th.Percent != 100 || th.Used != int64(5*worstImage) {
		t.Fatalf("once refused, the ledger's outbox holds %+v", th)
	}
	if err := create("refused again"); err == nil {
		t.Fatal("a create past the spend limit succeeded")
	}
	if n := outboxWrites(t, e, e.img); n != 2 {
		t.Errorf("%d writes put a spend crossing into the outbox, want 2", n)
	}
}

// Reads reaching a share are found where their batch is counted, as the
// reads limit is.
func TestReadsThresholdMarkedWhereCounted(t *testing.T) {
	ctx := context.Background()
	e := newQuotaEnv(t, quota.Limits{quota.Reads: quota.Max(10)}, nil)
	e.img.Quota.MetersReads, e.img.ReadsBatch = true, 1
	e.img.CountReads(ctx, "acme", 7)
	if _, told := store.ThresholdOf(nil, e.counter(t, e.img, "acme")); told {
		t.Fatal("at 7 of 10 reads, the outbox is set")
	}
	e.img.CountReads(ctx, "acme", 1.5)
	th, told := store.ThresholdOf(nil, e.counter(t, e.img, "acme"))
	if !told || th.Kind != quota.Reads || th.Percent != 80 || th.Used != 9 || th.Limit != 10 {
		t.Fatalf("at 9 of 10 reads, the outbox holds %+v", th)
	}
}
