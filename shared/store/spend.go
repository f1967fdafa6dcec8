package store

// What the account's generations cost, summed by month and by day.
//
// Each generation's record carries its cost (generation.State.CostUSD),
// which grows in the generator's write-backs: each try's calls of the
// models are added in the write that ends the try (done, failed, or
// handed back to the queue). The tally function reads those writes from
// the table's stream (template.yaml lets through every write-back of a
// running generation that has a cost) and adds what each added to the
// account's spend item, under the shard's watermark as Apply counts
// deletes (tally.go), so exactly once however often a write is delivered.
//
// The spend item is the record id -1 of the account, beside the counter
// item (0): it has no index keys, so no list shows it, and only the tally
// writes it. It holds the month's spend (used_spend_2026_11, 12 months
// kept) and each day's (used_spend_2026_11_28, this month's and the one
// before's), in nano-dollars. Kept apart from the counter item, the days
// do not make every create's counter write bill more write units; the
// tally's write of it is its only cost, shared by a batch's records.
// Spend is counted in the month and on the day the tally counts it: within
// about a second of its write-back, as the stream's lag goes, and later
// only when the tally was kept from counting (an outage of DynamoDB).

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/generation"
	"contentapi/shared/quota"
)

// spendID is the id of the account's spend item.
const spendID int64 = -1

// CostItem says whether id is one of the account's items the cost
// bookkeeping writes, the spend item or the ledger (ledger.go), for the
// bench to tell their writes from the others.
func CostItem(id int64) bool { return id == spendID || id == ledgerID }

// spendMonths is how many months' spend the spend item keeps, the current
// one included (the usage endpoint answers for quota.HistoryMonths before
// it); spendDayMonths how many months' days.
const (
	spendMonths    = quota.HistoryMonths + 1
	spendDayMonths = 2
)

// spent is what a change of a record, from old to new, adds to what the
// account spent: what a write-back of the running generation added to its
// cost. A write of any other kind (a claim, an edit, a regenerate, a
// delete) spends nothing.
func spent(old, new Item) generation.USD {
	before, err := StateOf(old)
	if err != nil || before == nil || before.Status != generation.Running {
		return 0
	}
	after, err := StateOf(new)
	if err != nil || after == nil || after.RequestedAt != before.RequestedAt {
		return 0
	}
	return max(after.CostUSD-before.CostUSD, 0)
}

// spendUpdate adds what changes spent to the spend item, in the month and
// on the day of now, and removes what the item keeps no more.
func spendUpdate(cs []Change, now time.Time) (map[string]int64, []string) {
	var sum int64
	for _, c := range cs {
		sum += int64(c.Spent)
	}
	period := quota.PeriodOf(now)
	adds := map[string]int64{quota.UsedAttr(quota.Spend, period): sum, quota.DayAttr(quota.Spend, now): sum}
	removes := []string{quota.UsedAttr(quota.Spend, period.Before(spendMonths))}
	for m := spendDayMonths; m <= spendDayMonths+1; m++ {
		for _, d := range period.Before(m).Days() {
			removes = append(removes, quota.DayAttr(quota.Spend, d))
		}
	}
	return adds, removes
}

// Spending is what an account spent in a period: in all, and by day (the
// days with spend, in order; none for a period whose days are no longer
// kept).
type Spending struct {
	Used generation.USD
	Days []DaySpend
	// Limit is the monthly spend limit that applies, as the spend item
	// of the ledger's table says (ledger.go); for an earlier month, the
	// one in force as it ended.
	Limit quota.Limit
}

// DaySpend is what was spent on one day.
type DaySpend struct {
	Date string // 2026-11-28
	Used generation.USD
}

// Generates reports whether the table's records are generated, so that
// they may spend.
func (t *Table) Generates() bool { return t.res.Content != nil }

// Spent is what the account's generations of the table cost in period:
// one strongly consistent read of its spend item.
func (t *Table) Spent(ctx context.Context, account string, period quota.Period) (Spending, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.name, Key: key(account, spendID), ConsistentRead: ptr(true),
	})
	if err != nil {
		return Spending{}, err
	}
	var s Spending
	if s.Limit, err = quota.SpendLimit(out.Item, t.Cap.Default); err != nil {
		return Spending{}, err
	}
	// An earlier month's limit, where a change of it since recorded it.
	if l, ok, err := quota.MonthLimit(out.Item, quota.Spend, period, t.Cap.Default); err != nil {
		return Spending{}, err
	} else if ok {
		s.Limit = l
	}
	s.Used = generation.USD(intOr0(out.Item, quota.UsedAttr(quota.Spend, period)))
	for _, d := range period.Days() {
		if n := intOr0(out.Item, quota.DayAttr(quota.Spend, d)); n != 0 {
			s.Days = append(s.Days, DaySpend{Date: d.Format(time.DateOnly), Used: generation.USD(n)})
		}
	}
	return s, nil
}

func intOr0(item Item, attr string) int64 {
	n, _ := IntAttr(item, attr)
	return n
}
