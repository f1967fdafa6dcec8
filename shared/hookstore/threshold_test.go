package hookstore_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"contentapi/shared/hookstore"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/quota"
	"contentapi/shared/records"
)

// marks are the crossings' marks, in order.
func marks(cs []quota.Crossing) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.MarkAttr())
	}
	return out
}

// The admissions that reach 80% and 100% of the deliveries limit return
// those thresholds, and every admission after returns them until they are
// told (a telling that failed is taken up by the next), the refused ones
// past the limit too; once told, none does, and next month starts afresh.
// Writes whose answers are lost (the admission's, the record of what was
// found, the mark) are retried by the SDK and found applied: the crossing
// as first found stays what every finder tells, and a crossing told is not
// found again (ErrTold), so no second event is made of it.
func TestDeliveriesThresholdsFoundUntilTold(t *testing.T) {
	s, proxy, _ := faultyStore(t)
	s.Quota = quota.Policy{Counts: quota.Deliveries, Defaults: quota.Limits{quota.Deliveries: quota.Max(5)}}
	ctx := t.Context()
	nov := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	admit := func(now time.Time) ([]string, error) {
		t.Helper()
		cs, err := s.Admit(ctx, "acct", true, nil, now)
		for _, c := range cs {
			if c.Kind != quota.Deliveries || c.Limit != 5 || c.Period != quota.PeriodOf(now) {
				t.Errorf("crossing %+v", c)
			}
		}
		return marks(cs), err
	}
	for i := range 3 {
		if got, err := admit(nov); err != nil || got != nil {
			t.Fatalf("admission %d: %v %v, want no threshold", i+1, got, err)
		}
	}
	// The 4th reaches 80%, its answer lost: the SDK's retry finds it
	// applied, and the item as it left it shows the threshold.
	proxy.Inject(ddblocal.MatchOp("UpdateItem", `"admitted"`), ddblocal.LoseAnswer, 1)
	cs, err := s.Admit(ctx, "acct", true, nil, nov)
	if err != nil || !slices.Equal(marks(cs), []string{"th80_deliveries_2026_11"}) || cs[0].Used != 4 {
		t.Fatalf("the 80%% admission, its answer lost: %+v %v", cs, err)
	}
	at := nov.Add(time.Second)
	proxy.Inject(ddblocal.MatchOp("UpdateItem", `"found_th80_deliveries_2026_11"`), ddblocal.LoseAnswer, 1)
	first, when, err := s.Found(ctx, "acct", cs[0], at)
	if err != nil || first.Used != 4 || !when.Equal(at) {
		t.Fatalf("found, its answer lost: %+v at %v, %v", first, when, err)
	}
	// Not told yet: the 5th admission finds 80% again, and 100%.
	got, err := admit(nov)
	if err != nil || !slices.Equal(got, []string{"th80_deliveries_2026_11", "th100_deliveries_2026_11"}) {
		t.Fatalf("the 100%% admission: %v %v", got, err)
	}
	// Another finder of 80% (here with the usage it saw) is given the
	// crossing as first found.
	again := cs[0]
	again.Used = 5
	if other, w, err := s.Found(ctx, "acct", again, at.Add(time.Minute)); err != nil || other.Used != 4 || !w.Equal(at) {
		t.Fatalf("a second finder of 80%%: %+v at %v, %v; want used 4 at %v", other, w, err, at)
	}
	proxy.Inject(ddblocal.MatchOp("UpdateItem", `"th80_deliveries_2026_11"`, "SET "), ddblocal.LoseAnswer, 1)
	if err := s.Told(ctx, "acct", first); err != nil {
		t.Fatalf("told, its answer lost: %v", err)
	}
	if _, _, err := s.Found(ctx, "acct", again, at); !errors.Is(err, hookstore.ErrTold) {
		t.Fatalf("found once told: %v, want ErrTold", err)
	}
	// Past the limit: refused, and 100%, not told, is still found.
	var over *records.QuotaError
	if got, err := admit(nov); !errors.As(err, &over) || !slices.Equal(got, []string{"th100_deliveries_2026_11"}) {
		t.Fatalf("refused past the limit: %v %v, want the 100%% threshold and a QuotaError", got, err)
	}
	c100 := quota.Crossing{Kind: quota.Deliveries, Threshold: 100, Used: 5, Limit: 5, Period: quota.PeriodOf(nov)}
	if _, _, err := s.Found(ctx, "acct", c100, at); err != nil {
		t.Fatal(err)
	}
	if err := s.Told(ctx, "acct", c100); err != nil {
		t.Fatal(err)
	}
	if got, err := admit(nov); !errors.As(err, &over) || got != nil {
		t.Fatalf("refused once both are told: %v %v, want no threshold", got, err)
	}
	// December counts afresh; its 80% is found, and its mark replaces
	// November's.
	dec := nov.AddDate(0, 1, 0)
	for i := range 4 {
		got, err := admit(dec)
		if want := i == 3; err != nil || (got != nil) != want {
			t.Fatalf("December's admission %d: %v %v", i+1, got, err)
		}
	}
	dec80 := quota.Crossing{Kind: quota.Deliveries, Threshold: 80, Used: 4, Limit: 5, Period: quota.PeriodOf(dec)}
	if err := s.Told(ctx, "acct", dec80); err != nil {
		t.Fatal(err)
	}
	out, err := s.Client.GetItem(ctx, getInput(s.Table, "acct", "count"))
	if err != nil {
		t.Fatal(err)
	}
	item := out.Item
	for attr, want := range map[string]bool{
		"th80_deliveries_2026_12": true, "th80_deliveries_2026_11": false, "th100_deliveries_2026_11": true,
		"found_th80_deliveries_2026_11": false, "found_th100_deliveries_2026_11": false,
	} {
		if _, ok := item[attr]; ok != want {
			t.Errorf("the counter item has %s: %v, want %v", attr, ok, want)
		}
	}
}
