package quota

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestParsePeriod(t *testing.T) {
	for s, want := range map[string]string{"2026-11": "2026-11", "2025-01": "2025-01", "0001-12": "0001-12"} {
		if p, err := ParsePeriod(s); err != nil || p.String() != want {
			t.Errorf("%q: %v, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "2026-13", "2026-00", "2026-1", "2026-011", " 2026-11", "2026-11 ", "2026_11", "26-11", "2026-11-01", "+202-11"} {
		if p, err := ParsePeriod(s); err == nil {
			t.Errorf("%q read as %v", s, p)
		}
	}
}

func TestKept(t *testing.T) {
	now := PeriodOf(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	for p, want := range map[Period]bool{now: true, now.Before(1): true, now.Before(HistoryMonths): true,
		now.Before(HistoryMonths + 1): false, PeriodOf(now.End()): false} {
		if Kept(p, now) != want {
			t.Errorf("Kept(%v, %v) = %v", p, now, !want)
		}
	}
}

func num(n string) types.AttributeValue { return &types.AttributeValueMemberN{Value: n} }

// The states of a month's move, as the items hold them; each reads the
// same usage.
func TestReadEarlierInEveryStateOfAMove(t *testing.T) {
	p := Policy{Counts: Documents, Checks: []Kind{Words}, History: true, Defaults: Limits{Documents: Max(10)}}
	now := PeriodOf(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	october := now.Before(1)
	before := map[string]types.AttributeValue{
		UsedAttr(Documents, october): num("4"), UsedAttr(Words, october): num("900"),
		UsedAttr(Documents, now): num("1"), LimitAttr(Words): &types.AttributeValueMemberNULL{Value: true},
	}
	claims, err := p.Leftovers(before, now, "t1")
	if err != nil || len(claims) != 1 || claims[0].Written || claims[0].Period != october ||
		claims[0].Used[Documents] != 4 || claims[0].Used[Words] != 900 || claims[0].Limits[Words] != Unlimited || len(claims[0].Limits) != 1 {
		t.Fatalf("leftovers %+v, %v", claims, err)
	}
	c := claims[0]
	claimed := map[string]types.AttributeValue{
		ClaimAttr(october): c.claimValue(), UsedAttr(Documents, now): num("1"), LimitAttr(Words): &types.AttributeValueMemberNULL{Value: true},
	}
	applied := map[string]types.AttributeValue{
		UsedAttr(Documents, october): num("4"), UsedAttr(Words, october): num("900"),
		PeriodLimitAttr(Documents, october): defaultLimit, PeriodLimitAttr(Words, october): &types.AttributeValueMemberNULL{Value: true},
		MovesAttr(october): &types.AttributeValueMemberSS{Value: []string{c.Token}},
	}
	released := map[string]types.AttributeValue{UsedAttr(Documents, now): num("1")}
	// A late refund of one document, on the counter after the move.
	refunded := map[string]types.AttributeValue{UsedAttr(Documents, now): num("1"), UsedAttr(Documents, october): num("-1")}
	for _, state := range []struct {
		name             string
		counter, history map[string]types.AttributeValue
		documents        int64
	}{
		{"before", before, nil, 4},
		{"claimed", claimed, nil, 4},
		{"applied", claimed, applied, 4},
		{"released", released, applied, 4},
		{"refunded late", refunded, applied, 3},
	} {
		m, err := p.ReadEarlier(state.counter, state.history, october)
		if err != nil {
			t.Fatal(err)
		}
		if m[Documents].Used != state.documents || m[Documents].Limit != Max(10) {
			t.Errorf("%s: documents %+v", state.name, m[Documents])
		}
		if m[Words].Used != 900 || m[Words].Limit != Unlimited {
			t.Errorf("%s: words %+v", state.name, m[Words])
		}
	}
	// A claim on the counter is found as written, whatever else is there.
	found, err := p.Leftovers(claimed, now, "t2")
	if err != nil || len(found) != 1 || !found[0].Written || found[0].Token != c.Token || found[0].Used[Words] != 900 {
		t.Fatalf("claim found %+v, %v", found, err)
	}
	// The current month never leaves the counter.
	if left, _ := p.Leftovers(released, now, "t3"); len(left) != 0 {
		t.Errorf("the current month moves: %+v", left)
	}
	// A month that ended under the deployment's default shows the default
	// as it is when read, in every state.
	p.Defaults[Documents] = Max(20)
	for name, items := range map[string][2]map[string]types.AttributeValue{"claimed": {claimed, nil}, "applied": {released, applied}} {
		if m, err := p.ReadEarlier(items[0], items[1], october); err != nil || m[Documents].Limit != Max(20) {
			t.Errorf("%s, the default now 20: %+v, %v", name, m[Documents], err)
		}
	}
}

var defaultLimit = &types.AttributeValueMemberS{Value: defaultMark}

// KeepLimitsWrite records each kept month's limit where none is, the account's
// own or the default, and removes the records of the months past keeping.
func TestKeepLimitsWrite(t *testing.T) {
	now := PeriodOf(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	expr, err := KeepLimitsWrite([]Kind{Documents, Words}, Limits{Words: Max(500)}, now)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range expr.Names() {
		names[n] = true
	}
	for _, k := range []Kind{Documents, Words} {
		for m, want := range map[int]bool{0: false, 1: true, HistoryMonths: true, HistoryMonths + 1: true, HistoryMonths + historyDropped: true, HistoryMonths + historyDropped + 1: false} {
			if attr := PeriodLimitAttr(k, now.Before(m)); names[attr] != want {
				t.Errorf("%s named: %v, want %v", attr, names[attr], want)
			}
		}
	}
	update := *expr.Update()
	if strings.Count(update, "if_not_exists") != 2*HistoryMonths || !strings.Contains(update, "REMOVE") {
		t.Errorf("update %q", update)
	}
	values := map[string]int{}
	for _, v := range expr.Values() {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			values[v.Value]++
		case *types.AttributeValueMemberN:
			values[v.Value]++
		}
	}
	if values[defaultMark] == 0 || values["500"] == 0 {
		t.Errorf("values %v: want the default for documents, 500 for words", values)
	}
	// What it records reads back as the month's limit.
	recorded := map[string]types.AttributeValue{PeriodLimitAttr(Documents, now.Before(1)): defaultLimit, PeriodLimitAttr(Words, now.Before(1)): num("500")}
	for k, want := range map[Kind]Limit{Documents: Max(7), Words: Max(500)} {
		if l, ok, err := MonthLimit(recorded, k, now.Before(1), Max(7)); err != nil || !ok || l != want {
			t.Errorf("%s: %v %v %v, want %v", k, l, ok, err, want)
		}
	}
	if _, ok, err := MonthLimit(recorded, Words, now.Before(2), Max(7)); ok || err != nil {
		t.Errorf("a month with nothing recorded reads as recorded: %v", err)
	}
}

// Without History a counting write removes the twelve months before;
// with it, none (they move instead).
func TestHistoryKeepsEarlierMonthsOnTheCounter(t *testing.T) {
	now := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	for history, want := range map[bool]int{false: 12, true: 0} {
		part, err := Policy{Counts: Images, History: history}.Generation(now).Part()
		if err != nil || len(part.Removes) != want {
			t.Errorf("history %v: removes %v, %v", history, part.Removes, err)
		}
	}
}

// The apply is conditioned on its token and removes months past keeping.
func TestApplyWriteCountsATokenOnce(t *testing.T) {
	c := Claim{Period: PeriodOf(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)), Token: "tok", Used: map[Kind]int64{Images: 3}, Kinds: []Kind{Images}, Limits: Limits{Images: Max(5)}}
	expr, err := c.ApplyWrite()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range expr.Names() {
		names[n] = true
	}
	for _, want := range []string{"moves_2026_10", "used_images_2026_10", "limit_images_2026_10", "used_images_2025_09", "used_images_2024_10"} {
		if !names[want] {
			t.Errorf("the apply does not name %s: %v", want, expr.Names())
		}
	}
	if names["used_images_2025_10"] {
		t.Errorf("the apply removes a month kept: %v", expr.Names())
	}
	if cond := *expr.Condition(); !strings.Contains(cond, "contains") {
		t.Errorf("condition %q", cond)
	}
}
