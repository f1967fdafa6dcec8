package quota

import (
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestCrossings(t *testing.T) {
	nov := PeriodOf(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC))
	docs := Policy{Counts: Documents, Checks: []Kind{Words}, MetersReads: true,
		Defaults: Limits{Documents: Max(10), Words: Max(1000), Reads: Max(0)}}
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	testCases := []struct {
		name string
		item map[string]types.AttributeValue
		want []string
	}{
		{"nothing used", nil, nil},
		{"under 80%", map[string]types.AttributeValue{"used_documents_2026_11": n("7"), "used_words_2026_11": n("799")}, nil},
		{"80% of the documents", map[string]types.AttributeValue{"used_documents_2026_11": n("8")}, []string{"th80_documents_2026_11"}},
		{"80% met again, its mark there", map[string]types.AttributeValue{"used_documents_2026_11": n("9"), "th80_documents_2026_11": n("8")}, nil},
		{"both at once, past the limit", map[string]types.AttributeValue{"used_words_2026_11": n("1200")},
			[]string{"th80_words_2026_11", "th100_words_2026_11"}},
		{"100% once 80% was told", map[string]types.AttributeValue{"used_documents_2026_11": n("10"), "th80_documents_2026_11": n("8")},
			[]string{"th100_documents_2026_11"}},
		{"last month's mark is not this month's", map[string]types.AttributeValue{"used_documents_2026_11": n("8"), "th80_documents_2026_10": n("8")},
			[]string{"th80_documents_2026_11"}},
		{"an own limit, over the default", map[string]types.AttributeValue{"used_documents_2026_11": n("8"), "limit_documents": n("100")}, nil},
		{"unlimited", map[string]types.AttributeValue{"used_documents_2026_11": n("800"), "limit_documents": &types.AttributeValueMemberNULL{Value: true}}, nil},
		// A limit of 0 (the reads' default here) allows nothing: nothing to warn of.
		{"a limit of 0", map[string]types.AttributeValue{"used_reads_2026_11": n("5")}, nil},
	}
	for _, tc := range testCases {
		got, err := docs.Crossings(tc.item, nov)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var marks []string
		for _, c := range got {
			marks = append(marks, c.MarkAttr())
			used, _ := number(tc.item[UsedAttr(c.Kind, nov)])
			if limit, _ := docs.Default(c.Kind).Value(); c.Used != used || c.Limit != limit || c.Period != nov {
				t.Errorf("%s: %+v, want used %d of %d in %s", tc.name, c, used, limit, nov)
			}
		}
		if !slices.Equal(marks, tc.want) {
			t.Errorf("%s: crossings %v, want %v", tc.name, marks, tc.want)
		}
	}
}

func TestThresholdShareRoundsUp(t *testing.T) {
	testCases := []struct{ limit, percent, want int64 }{
		{10, 80, 8}, {7, 80, 6}, {1, 80, 1}, {1, 100, 1}, {3, 100, 3},
		{25_000_000_000, 80, 20_000_000_000},
		{maxLimit, 80, (maxLimit*4 + 4) / 5}, {maxLimit, 100, maxLimit},
		// A spend limit of $9 billion in nano-dollars, where limit*percent
		// would overflow.
		{9_000_000_000_000_000_000, 80, 7_200_000_000_000_000_000}, {9_000_000_000_000_000_001, 100, 9_000_000_000_000_000_001},
	}
	for _, tc := range testCases {
		if got := share(tc.limit, tc.percent); got != tc.want {
			t.Errorf("%d%% of %d = %d, want %d", tc.percent, tc.limit, got, tc.want)
		}
	}
}

// A mark's write removes the marks of the same limit and share of the
// twelve months before, and only those.
func TestEarlierMarks(t *testing.T) {
	c := Crossing{Kind: Words, Threshold: 80, Period: PeriodOf(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC))}
	got := c.EarlierMarks()
	if len(got) != MarkedMonths || got[0] != "th80_words_2026_10" || got[len(got)-1] != "th80_words_2025_11" || slices.Contains(got, c.MarkAttr()) {
		t.Errorf("earlier marks of %s: %v", c.MarkAttr(), got)
	}
}
