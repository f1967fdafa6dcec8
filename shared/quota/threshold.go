package quota

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Thresholds are the shares of a limit, in percent, whose reaching the
// account is told of (the usage.threshold webhook event): once for each
// limit, share and month.
var Thresholds = []int64{80, 100}

// Crossing is the usage of a kind reaching a threshold of its limit in a
// period.
type Crossing struct {
	Kind      Kind
	Threshold int64
	// Used is the usage as the write that reached the threshold left it,
	// Limit the limit that applied.
	Used, Limit int64
	Period      Period
}

// MarkAttr is the attribute, on the item that counts the kind, that
// records the crossing once it is found, so that it is told once however
// often it is met (retries, two writers, usage going down and up again):
// th80_words_2026_11.
func (c Crossing) MarkAttr() string {
	return fmt.Sprintf("th%d_%s", c.Threshold, UsedAttr(c.Kind, c.Period)[len("used_"):])
}

// MarkedMonths are the months before a crossing's whose marks of the same
// limit and share its mark's write removes (EarlierMarks), so that an item
// keeps at most one of each.
const MarkedMonths = 12

// EarlierMarks are the marks of c's limit and share in the MarkedMonths
// before its period.
func (c Crossing) EarlierMarks() []string {
	marks := make([]string, 0, MarkedMonths)
	for m := 1; m <= MarkedMonths; m++ {
		earlier := c
		earlier.Period = c.Period.Before(m)
		marks = append(marks, earlier.MarkAttr())
	}
	return marks
}

// Crossings are the thresholds that the usage of p's kinds on item (a
// counter item as a write returned it, ALL_NEW) has reached in period and
// that item holds no mark of. A kind without a limit, or with a limit of
// 0 (which allows nothing, so there is nothing to warn of), has none.
func (p Policy) Crossings(item map[string]types.AttributeValue, period Period) ([]Crossing, error) {
	meters, err := p.Read(item, period)
	if err != nil {
		return nil, err
	}
	var out []Crossing
	for _, k := range p.Kinds() {
		out = append(out, Reached(item, k, meters[k], period)...)
	}
	return out, nil
}

// Reached are the thresholds that m, the usage of k in period and its
// limit, has reached and that item holds no mark of.
func Reached(item map[string]types.AttributeValue, k Kind, m Meter, period Period) []Crossing {
	limit, limited := m.Limit.Value()
	if !limited || limit == 0 {
		return nil
	}
	var out []Crossing
	for _, t := range Thresholds {
		c := Crossing{Kind: k, Threshold: t, Used: m.Used, Limit: limit, Period: period}
		if m.Used >= share(limit, t) && item[c.MarkAttr()] == nil {
			out = append(out, c)
		}
	}
	return out
}

// share is percent of limit, rounded up (80% of 7 is reached at 6), without
// the product overflowing for a spend limit in nano-dollars.
func share(limit, percent int64) int64 {
	return limit/100*percent + (limit%100*percent+99)/100
}
