package quota

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/records"
)

func TestPeriods(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	testCases := []struct {
		at         time.Time
		period     string
		attr       string
		retryAfter time.Duration
	}{
		{time.Date(2026, 11, 14, 9, 30, 0, 0, time.UTC), "2026-11", "used_images_2026_11", 16*24*time.Hour + 14*time.Hour + 30*time.Minute},
		{time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC), "2026-11", "used_images_2026_11", time.Second},
		// In UTC, whatever zone the clock is in.
		{time.Date(2026, 12, 1, 8, 0, 0, 0, tokyo), "2026-11", "used_images_2026_11", time.Hour},
		{time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), "2026-12", "used_images_2026_12", time.Hour},
		{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), "2027-01", "used_images_2027_01", 31 * 24 * time.Hour},
		{time.Date(2028, 2, 1, 0, 0, 0, 0, time.UTC), "2028-02", "used_images_2028_02", 29 * 24 * time.Hour},
	}
	for _, tc := range testCases {
		p := PeriodOf(tc.at)
		if p.String() != tc.period || UsedAttr(Images, p) != tc.attr || RetryAfter(tc.at) != tc.retryAfter {
			t.Errorf("%v: %s %s %v, want %s %s %v", tc.at, p, UsedAttr(Images, p), RetryAfter(tc.at), tc.period, tc.attr, tc.retryAfter)
		}
	}
	if got := PeriodOf(time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)).Before(1); got.String() != "2025-12" {
		t.Errorf("the month before January 2026: %s", got)
	}
}

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]Limit{"0": Max(0), "100": Max(100), "unlimited": Unlimited, "9007199254740991": Max(1<<53 - 1)} {
		got, err := ParseLimit(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("ParseLimit(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-1", "1.5", "1e3", "Unlimited", "none", " 5", "9007199254740992", "default"} {
		if _, err := ParseLimit(in); err == nil {
			t.Errorf("ParseLimit(%q) took it", in)
		}
	}
	b, _ := json.Marshal(map[string]Meter{"a": {Used: 3, Limit: Max(5)}, "b": {Used: 7, Limit: Unlimited}})
	if string(b) != `{"a":{"used":3,"limit":5},"b":{"used":7,"limit":null}}` {
		t.Errorf("JSON %s", b)
	}
	if !Unlimited.Allows(1<<62) || Max(0).Allows(0) || !Max(2).Allows(1) || Max(2).Allows(2) {
		t.Error("Allows")
	}
}

func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

var null types.AttributeValue = &types.AttributeValueMemberNULL{Value: true}

// Exceeded reads a refused write's counter item as the write's condition
// does: it names the first kind over the limit that applies.
func TestExceeded(t *testing.T) {
	now := time.Date(2026, 11, 14, 0, 0, 0, 0, time.UTC)
	docs := Policy{Counts: Documents, Checks: []Kind{Words}, Defaults: Limits{Documents: Max(10), Words: Max(0)}}
	testCases := []struct {
		name string
		item map[string]types.AttributeValue
		want string // the kind refused, "" for none
	}{
		{"no item, words default 0", nil, "words"},
		{"own words limit", map[string]types.AttributeValue{"limit_words": n("5")}, ""},
		{"own words limit reached", map[string]types.AttributeValue{"limit_words": n("5"), "used_words_2026_11": n("5")}, "words"},
		{"words unlimited", map[string]types.AttributeValue{"limit_words": null, "used_words_2026_11": n("99999")}, ""},
		{"documents default reached", map[string]types.AttributeValue{"limit_words": null, "used_documents_2026_11": n("10")}, "documents"},
		{"last month does not count", map[string]types.AttributeValue{"limit_words": null, "used_documents_2026_10": n("10")}, ""},
		{"own documents limit 0", map[string]types.AttributeValue{"limit_words": null, "limit_documents": n("0")}, "documents"},
	}
	for _, tc := range testCases {
		err := docs.Generation(now).Exceeded(tc.item, now)
		var qe *records.QuotaError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &qe) || qe.Kind != tc.want || qe.RetryAfter != 17*24*time.Hour):
			t.Errorf("%s: %v, want %s refused", tc.name, err, tc.want)
		}
	}
	// A charge that is not checked is never refused; a malformed item is
	// an error, not a quota.
	if err := docs.Usage(Words, 10, now).Exceeded(nil, now); err != nil {
		t.Errorf("words counted after a generation: %v", err)
	}
	if err := docs.Generation(now).Exceeded(map[string]types.AttributeValue{"limit_words": &types.AttributeValueMemberS{Value: "5"}}, now); !errors.Is(err, ErrUnknownItem) {
		t.Errorf("malformed limit: %v", err)
	}
}

// Build adds the charge to the caller's update and conditions, and leaves
// them alone for a policy that counts nothing.
func TestBuild(t *testing.T) {
	now := time.Date(2026, 11, 14, 0, 0, 0, 0, time.UTC)
	// An UpdateBuilder's methods extend it in place: a fresh one per write.
	next := func() expression.UpdateBuilder {
		return expression.Add(expression.Name("next_id"), expression.Value(1))
	}
	docs := Policy{Counts: Documents, Checks: []Kind{Words}, Defaults: Limits{Documents: Max(10)}}

	expr, err := docs.Generation(now).Build(next(), expression.Name("x").AttributeExists())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, name := range expr.Names() {
		names[name] = true
	}
	for _, want := range []string{"next_id", "x", "used_documents_2026_11", "used_words_2026_11", "limit_documents", "limit_words",
		"used_documents_2026_10", "used_words_2025_11"} {
		if !names[want] {
			t.Errorf("the write does not name %s: %v", want, expr.Names())
		}
	}
	if names["used_documents_2025_10"] || names["used_words_2026_12"] {
		t.Errorf("the write names months it should not touch: %v", expr.Names())
	}
	if u := *expr.Update(); !strings.HasPrefix(u, "ADD ") || !strings.Contains(u, "REMOVE ") {
		t.Errorf("update %s", u)
	}
	// The default of 10 documents is a value, the words' (unlimited) none.
	if c := *expr.Condition(); strings.Count(c, "attribute_type") != 2 || !strings.Contains(c, "attribute_exists") {
		t.Errorf("condition %s", c)
	}
	var ten bool
	for _, v := range expr.Values() {
		if v, ok := v.(*types.AttributeValueMemberN); ok && v.Value == "10" {
			ten = true
		}
	}
	if !ten {
		t.Errorf("the default 10 is not among the values %v", expr.Values())
	}

	part, err := docs.Generation(now).Part()
	if err != nil || len(part.Adds) != 1 || part.Adds["used_documents_2026_11"] != 1 || len(part.Removes) != 24 ||
		part.Condition == "" || len(part.Names) == 0 || len(part.Values) == 0 {
		t.Errorf("part %+v, %v", part, err)
	}
	if back, _ := docs.Generation(now).Refund().Part(); back.Adds["used_documents_2026_11"] != -1 || back.Condition != "" {
		t.Errorf("the refund's part %+v", back)
	}
	refund, err := docs.Generation(now).Refund().Build(next())
	if err != nil || refund.Condition() != nil {
		t.Errorf("a refund is conditional: %v %v", refund.Condition(), err)
	}
	plain, err := Policy{}.Generation(now).Build(next())
	if err != nil || plain.Condition() != nil || len(plain.Names()) != 1 {
		t.Errorf("a policy counting nothing changed the write: %v %v", plain.Names(), err)
	}
	// A resource that counts nothing (voices) still counts its reads.
	reads, err := Policy{MetersReads: true}.Usage(Reads, 3, now).Build(expression.UpdateBuilder{})
	if err != nil || reads.Update() == nil || !strings.HasPrefix(*reads.Update(), "ADD ") || !slices.Contains(slices.Collect(maps.Values(reads.Names())), "used_reads_2026_11") {
		t.Errorf("the reads of a resource counting nothing: %v %v", reads.Names(), err)
	}
}

// A generation's charge holds its reservation beside its count, a refund
// gives both back.
func TestReserveAndSettle(t *testing.T) {
	p := Policy{Counts: Documents, Checks: []Kind{Words}, Reserve: Reserve{Kind: Words, N: 4096}}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	docs, words := UsedAttr(Documents, PeriodOf(now)), UsedAttr(Words, PeriodOf(now))
	c := p.Generation(now)
	if got := c.Adds(); !maps.Equal(got, map[string]int64{docs: 1, words: 4096}) {
		t.Errorf("generation adds %v", got)
	}
	if got := c.Refund().Adds(); !maps.Equal(got, map[string]int64{docs: -1, words: -4096}) {
		t.Errorf("refund adds %v", got)
	}
	if attr, n := c.Hold(); attr != words || n != 4096 {
		t.Errorf("hold %s %d", attr, n)
	}
	if attr, n := (Policy{Counts: Images}).Generation(now).Hold(); attr != "" || n != 0 {
		t.Errorf("a policy without a reserve holds %s %d", attr, n)
	}
}

// A policy's kinds are those on its counter item: what it counts and
// checks, then reads where it meters them, also for a policy that counts
// nothing (voices), so that the usage shows those reads and their limit.
func TestPolicyKinds(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want []Kind
	}{
		{Policy{}, nil},
		{Policy{MetersReads: true}, []Kind{Reads}},
		{Policy{Counts: Images}, []Kind{Images}},
		{Policy{Counts: Documents, Checks: []Kind{Words}, MetersReads: true}, []Kind{Documents, Words, Reads}},
	} {
		if got := tc.p.Kinds(); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: kinds %v, want %v", tc.p, got, tc.want)
		}
	}
}
