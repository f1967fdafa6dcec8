package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"contentapi/shared/documents"
	"contentapi/shared/images"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
	"contentapi/shared/store"
)

// The writes of a month's move, by what their bodies name: the claim and
// the release on the counter, the apply on the history item.
var (
	claimWrite = func(c ddblocal.ProxiedCall) bool {
		return c.Op == "UpdateItem" && c.Has(`"moving_`) && c.Has(`"used_`)
	}
	applyWrite   = ddblocal.MatchOp("UpdateItem", `"moves_`)
	releaseWrite = func(c ddblocal.ProxiedCall) bool {
		return c.Op == "UpdateItem" && c.Has(`"moving_`) && !c.Has(`"used_`)
	}
)

// historyRig is the fault rig with the images counting against a limit of
// 100 a month, keeping their history, and a clock set by month.
func historyRig(t *testing.T) *rig {
	r := newRig(t)
	r.imgs.Quota = quota.Policy{Counts: quota.Images, History: true, Defaults: quota.Limits{quota.Images: quota.Max(100)}}
	return r
}

// month sets the tables' clock to the middle of the month n months after
// November 2026.
func (r *rig) month(n int) quota.Period {
	at := time.Date(2026, time.November+time.Month(n), 15, 12, 0, 0, 0, time.UTC)
	r.offset = time.Until(at)
	return quota.PeriodOf(at)
}

func (r *rig) createImages(n int) {
	r.t.Helper()
	for range n {
		if _, err := r.imgs.Create(request(r.t), "acme", image("x"), nil); err != nil {
			r.t.Fatal(err)
		}
	}
}

// used is the images used in period, as the usage of an earlier month
// reads them (the current one's as Usage does).
func (r *rig) used(period quota.Period) quota.Meter {
	r.t.Helper()
	read := r.imgs.UsageIn
	if period == quota.PeriodOf(r.imgs.Now()) {
		read = r.imgs.Usage
	}
	meters, err := read(context.Background(), "acme", period)
	if err != nil {
		r.t.Fatal(err)
	}
	return meters[quota.Images]
}

// earlierOnCounter are the counter's attributes of months before the
// current one: usage not moved yet, and claims.
func (r *rig) earlierOnCounter() []string {
	var names []string
	current := quota.UsedAttr(quota.Images, quota.PeriodOf(r.imgs.Now()))
	for name := range r.raw(r.imgs, "acme", 0) {
		if strings.HasPrefix(name, "moving_") || strings.HasPrefix(name, "used_") && name != current {
			names = append(names, name)
		}
	}
	return names
}

// setLimit gives the account its own limit of images as cmd/apikey does:
// from a table whose policy knows no deployment default.
func (r *rig) setLimit(l quota.Limit) {
	r.t.Helper()
	tool := store.New(r.db, r.imgs.Name(), images.Resource)
	tool.Quota = quota.Policy{Counts: quota.Images, History: true}
	tool.Now = r.imgs.Now
	if _, err := tool.SetLimits(context.Background(), "acme", quota.Limits{quota.Images: l}, nil); err != nil {
		r.t.Fatal(err)
	}
}

func TestEarlierMonthsAreKeptWithTheirLimits(t *testing.T) {
	r := historyRig(t)
	// Sixteen months, the n-th with n+1 creates; the limit is the default
	// 100 until month 8, then the account's own 50.
	var periods []quota.Period
	for n := range 16 {
		periods = append(periods, r.month(n))
		if n == 8 {
			// Before the first create of month 8: month 7 has not moved
			// yet, and keeps the limit it ended with, the default, which
			// the tool setting the limit does not know.
			r.setLimit(quota.Max(50))
		}
		r.createImages(n + 1)
		if left := r.earlierOnCounter(); len(left) > 0 {
			t.Fatalf("month %d: the counter still holds %v after a create", n, left)
		}
	}
	current := periods[15]
	for n, p := range periods[:15] {
		m := r.used(p)
		if !quota.Kept(p, current) {
			if m.Used != 0 {
				t.Errorf("%s, past keeping: %d used still read", p, m.Used)
			}
			continue
		}
		want := quota.Max(100)
		if n >= 8 {
			want = quota.Max(50)
		}
		if m.Used != int64(n+1) || m.Limit != want {
			t.Errorf("%s: %+v, want %d used under %v", p, m, n+1, want)
		}
	}
	// A month with no use: zero, under the limit in force as it ended,
	// before and after a change of the limit.
	now := r.month(17)
	unused := now.Before(1)
	if m := r.used(unused); m.Used != 0 || m.Limit != quota.Max(50) {
		t.Errorf("a month without use: %+v", m)
	}
	r.setLimit(quota.Max(30))
	for p, want := range map[quota.Period]quota.Meter{unused: {Limit: quota.Max(50)}, unused.Before(1): {Used: 16, Limit: quota.Max(50)}, now: {Limit: quota.Max(30)}} {
		if m := r.used(p); m != want {
			t.Errorf("%s, after the limit changed: %+v, want %+v", p, m, want)
		}
	}
	// The history keeps its months and drops the older ones.
	for name := range r.raw(r.imgs, "acme", -3) {
		if strings.HasPrefix(name, "used_images_2026") {
			t.Errorf("the history still holds %s, 17 months on", name)
		}
	}
}

// Each write of the move fails or loses its answer in turn; in every state
// the month reads the same, and the next create finishes the move, counting
// the month once.
func TestMoveSurvivesEachWriteFailing(t *testing.T) {
	for _, step := range []struct {
		name  string
		write func(ddblocal.ProxiedCall) bool
	}{{"claim", claimWrite}, {"apply", applyWrite}, {"release", releaseWrite}} {
		for _, fault := range []ddblocal.Fault{ddblocal.LoseAnswer, ddblocal.FailCall, ddblocal.ThrottleCall, ddblocal.HangCall} {
			t.Run(step.name+"/"+fault.String(), func(t *testing.T) {
				r := historyRig(t)
				october := r.month(-1)
				r.createImages(3)
				r.month(0)
				r.proxy.Inject(step.write, fault, 100)
				r.createImages(1)
				r.proxy.Reset()
				r.proxy.Wait()
				if m := r.used(october); m.Used != 3 || m.Limit != quota.Max(100) {
					t.Fatalf("October with the move stopped: %+v, want 3 of 100", m)
				}
				r.createImages(1)
				if left := r.earlierOnCounter(); len(left) > 0 {
					t.Fatalf("the next create left %v on the counter", left)
				}
				if m := r.used(october); m.Used != 3 {
					t.Fatalf("October after the move: %d used, want 3", m.Used)
				}
				if m := r.used(quota.PeriodOf(r.imgs.Now())); m.Used != 2 {
					t.Fatalf("November: %d used, want 2", m.Used)
				}
			})
		}
	}
}

// The write recording the limits of the months kept before a change fails,
// loses its answer, is throttled or hangs, on every try: the change is
// refused or made, never half made, and once it is made every month shows
// the limit it ended with, the month without use among them.
func TestKeepLimitsSurvivesItsWriteFailing(t *testing.T) {
	keepWrite := func(c ddblocal.ProxiedCall) bool {
		return c.Op == "UpdateItem" && c.Has(`"limit_images_`) && !c.Has(`"moves_`)
	}
	for _, fault := range []ddblocal.Fault{ddblocal.LoseAnswer, ddblocal.FailCall, ddblocal.ThrottleCall, ddblocal.HangCall} {
		t.Run(fault.String(), func(t *testing.T) {
			r := historyRig(t)
			used := r.month(-2)
			r.createImages(2)
			now := r.month(0)
			tool := store.New(r.db, r.imgs.Name(), images.Resource)
			tool.Quota, tool.Now = quota.Policy{Counts: quota.Images, History: true}, r.imgs.Now
			r.proxy.Inject(keepWrite, fault, 100)
			_, err := tool.SetLimits(request(t), "acme", quota.Limits{quota.Images: quota.Max(50)}, nil)
			r.proxy.Reset()
			r.proxy.Wait()
			if err == nil {
				t.Fatalf("the limits changed though their months' limits were not recorded")
			}
			if m := r.used(now); m.Limit != quota.Max(100) {
				t.Fatalf("the refused change left %v", m.Limit)
			}
			if _, err := tool.SetLimits(request(t), "acme", quota.Limits{quota.Images: quota.Max(50)}, nil); err != nil {
				t.Fatal(err)
			}
			for p, want := range map[quota.Period]quota.Meter{used: {Used: 2, Limit: quota.Max(100)}, now.Before(1): {Limit: quota.Max(100)}, now: {Limit: quota.Max(50)}} {
				if m := r.used(p); m != want {
					t.Errorf("%s: %+v, want %+v", p, m, want)
				}
			}
		})
	}
}

// The same of the spend limit's: the write recording it for the months
// kept, on the spend item, fails on every try.
func TestKeepSpendLimitSurvivesItsWriteFailing(t *testing.T) {
	for _, fault := range []ddblocal.Fault{ddblocal.LoseAnswer, ddblocal.FailCall, ddblocal.ThrottleCall, ddblocal.HangCall} {
		t.Run(fault.String(), func(t *testing.T) {
			r := historyRig(t)
			r.imgs.Cap.Default = quota.Max(25_000_000_000)
			now := r.month(0)
			tool := store.New(r.db, r.imgs.Name(), images.Resource)
			tool.Now = r.imgs.Now
			ten := quota.Max(10_000_000_000)
			r.proxy.Inject(ddblocal.MatchOp("UpdateItem", `"limit_spend_`), fault, 100)
			_, _, err := tool.SetSpendLimit(request(t), "acme", &ten, true)
			r.proxy.Reset()
			r.proxy.Wait()
			if err == nil {
				t.Fatalf("the spend limit changed though its months' limits were not recorded")
			}
			if l, own, err := tool.OwnSpendLimit(request(t), "acme"); own || err != nil {
				t.Fatalf("the refused change left %v (%v)", l, err)
			}
			if _, _, err := tool.SetSpendLimit(request(t), "acme", &ten, true); err != nil {
				t.Fatal(err)
			}
			for p, want := range map[quota.Period]quota.Limit{now.Before(1): r.imgs.Cap.Default, now: ten} {
				if s, err := r.imgs.Spent(request(t), "acme", p); err != nil || s.Limit != want {
					t.Errorf("%s: %v (%v), want %v", p, s.Limit, err, want)
				}
			}
		})
	}
}

// Movers at once: many creates of the new month, from two instances of the
// store, race to move the last one; it is counted once.
func TestConcurrentMoversCountTheMonthOnce(t *testing.T) {
	r := historyRig(t)
	october := r.month(-1)
	r.createImages(5)
	r.month(0)
	other := store.New(r.db, r.imgs.Name(), images.Resource)
	other.Quota, other.Now = r.imgs.Quota, r.imgs.Now
	// One mover is held after its claim; the others find the claim and
	// finish the move without it.
	held := r.proxy.Inject(applyWrite, ddblocal.HoldCall, 1)
	var wg sync.WaitGroup
	for i := range 8 {
		tbl := r.imgs
		if i%2 == 1 {
			tbl = other
		}
		wg.Go(func() {
			if _, err := tbl.Create(request(t), "acme", image("y"), nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	r.endStep(held)
	r.createImages(1)
	if m := r.used(october); m.Used != 5 {
		t.Fatalf("October: %d used, want 5", m.Used)
	}
	if m := r.used(quota.PeriodOf(r.imgs.Now())); m.Used != 9 {
		t.Fatalf("November: %d used, want 9", m.Used)
	}
	if left := r.earlierOnCounter(); len(left) > 0 {
		t.Fatalf("left on the counter: %v", left)
	}
}

// A refund of a month already moved lands on the counter and moves with
// the next create: the month ends counted as it should.
func TestLateRefundOfAMovedMonth(t *testing.T) {
	r := historyRig(t)
	october := r.month(-1)
	r.createImages(2)
	charge, err := r.imgs.Spend(request(t), "acme", 1)
	if err != nil {
		t.Fatal(err)
	}
	r.month(0)
	r.createImages(1)
	if m := r.used(october); m.Used != 3 {
		t.Fatalf("October before the refund: %d", m.Used)
	}
	if err := r.imgs.Refund(request(t), "acme", charge); err != nil {
		t.Fatal(err)
	}
	if m := r.used(october); m.Used != 2 {
		t.Fatalf("October after the refund: %d, want 2", m.Used)
	}
	r.createImages(1)
	if left := r.earlierOnCounter(); len(left) > 0 {
		t.Fatalf("left on the counter: %v", left)
	}
	if m := r.used(october); m.Used != 2 {
		t.Fatalf("October once the refund moved: %d, want 2", m.Used)
	}
}

// The spend item keeps a month's spend as long as the usage endpoint
// answers for it: 13 months after it, a month is still there.
func TestSpendIsKeptAsLongAsTheHistory(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	doc := store.New(env.Client, env.Tables["DocumentsTable"], documents.Resource)
	at := time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	doc.Now = func() time.Time { return at }
	first := quota.PeriodOf(at)
	for i, months := range []int{0, 12, 1} {
		at = at.AddDate(0, months, 0)
		if err := doc.Apply(t.Context(), "shard-1", "acme", []store.Change{{Spent: 1000, Seq: fmt.Sprint(i + 1), At: at}}); err != nil {
			t.Fatal(err)
		}
	}
	if !quota.Kept(first, quota.PeriodOf(at)) {
		t.Fatalf("%s is not kept at %s", first, at)
	}
	s, err := doc.Spent(t.Context(), "acme", first)
	if err != nil || s.Used != 1000 {
		t.Fatalf("%s, 13 months on: %v spent (%v), want 1000", first, s.Used, err)
	}
}

// An earlier month shows the spend limit in force as it ended: the
// deployment's default, then the account's own, whatever changed since.
func TestSpendLimitOfEarlierMonths(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	img := store.New(env.Client, env.Tables["ImagesTable"], images.Resource)
	img.Cap.Default = quota.Max(25_000_000_000)
	at := time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	img.Now = func() time.Time { return at }
	november := quota.PeriodOf(at)
	// Set by a tool that knows no default, as cmd/apikey does.
	set := func(l quota.Limit) {
		tool := store.New(env.Client, img.Name(), images.Resource)
		tool.Now = img.Now
		if _, _, err := tool.SetSpendLimit(t.Context(), "acme", &l, true); err != nil {
			t.Fatal(err)
		}
	}
	at = at.AddDate(0, 1, 0) // December: November ended under the default.
	set(quota.Max(10_000_000_000))
	at = at.AddDate(0, 2, 0) // February: December and January under $10.
	set(quota.Max(5_000_000_000))
	set(quota.Unlimited)
	for p, want := range map[quota.Period]quota.Limit{november: img.Cap.Default, november.Before(-1): quota.Max(10_000_000_000),
		november.Before(-2): quota.Max(10_000_000_000), quota.PeriodOf(at): quota.Unlimited} {
		if s, err := img.Spent(t.Context(), "acme", p); err != nil || s.Limit != want {
			t.Errorf("%s: limit %v (%v), want %v", p, s.Limit, err, want)
		}
	}
}
