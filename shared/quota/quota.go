// Package quota is the accounts' monthly limits: what each kind of record
// counts, the periods (calendar months in UTC), the limits, and the part of
// a DynamoDB write that counts and checks usage.
//
// Where usage lives. Each resource's table keeps, on the account's counter
// item (the record id 0 that hands out ids, see shared/store), the usage of
// its kinds per month (used_images_2026_11) and the account's own limits
// (limit_images). A create's one counter write, which allocates the id
// anyway, also adds the usage, conditional on the month's usage being under
// the limit: the check costs no extra call, a refused create writes nothing,
// and concurrent creates cannot overshoot, because DynamoDB applies the
// writes to one item one at a time.
//
// Limits. An account's own limit of a kind is a number (0 allows none) or
// NULL (unlimited); without one, the deployment's default applies, which
// the write passes as an expression value, so changing a default needs no
// migration. The counter item stays small (a write is billed by the
// item's size): where the policy keeps History, each month moves to the
// account's history item once it has ended (history.go); otherwise every
// write that counts removes the usage of the twelve months before.
package quota

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"contentapi/shared/records"
)

// Kind is what a limit counts.
type Kind string

// The kinds of the two resources (a resource may count a kind of its own:
// app.Kinds lists every kind the resources count).
const (
	Images    Kind = "images"    // images created or regenerated
	Words     Kind = "words"     // words generated into documents
	Documents Kind = "documents" // documents created or regenerated
	// Reads are the read units (RRU, as DynamoDB bills them) that reading a
	// resource's records costs: lists, and gets of one record. Each
	// resource counts its own against the limit.
	Reads Kind = "reads"
	// Deliveries are webhook delivery attempts, each counted when it is
	// made: first attempts, retries and test events alike. The webhooks
	// count them, on the account's counter item in their own table.
	Deliveries Kind = "deliveries"
	// Spend is what the account's generations cost at the models' prices,
	// in nano-dollars (generation.USD). The tally counts it from each
	// generation's write-backs, on an item of each resource's table beside
	// the counter item (shared/store, spend.go), by month and by day.
	// Its limit, checked on the account's spend ledger, is in
	// nano-dollars too (spend.go).
	Spend Kind = records.SpendKind
)

// Period is a calendar month in UTC: usage counts from its first instant
// to the next month's.
type Period struct {
	year  int
	month time.Month
}

// PeriodOf is the month t falls in, in UTC.
func PeriodOf(t time.Time) Period {
	t = t.UTC()
	return Period{t.Year(), t.Month()}
}

// Start is the period's first instant.
func (p Period) Start() time.Time { return time.Date(p.year, p.month, 1, 0, 0, 0, 0, time.UTC) }

// End is the first instant of the next period.
func (p Period) End() time.Time { return p.Start().AddDate(0, 1, 0) }

// Before is the period n months earlier.
func (p Period) Before(n int) Period { return PeriodOf(p.Start().AddDate(0, -n, 0)) }

// String is the period as the API shows it: "2026-11".
func (p Period) String() string { return fmt.Sprintf("%04d-%02d", p.year, p.month) }

// RetryAfter is how long from now until the period after now's begins.
func RetryAfter(now time.Time) time.Duration { return PeriodOf(now).End().Sub(now) }

// UsedAttr is the counter item's attribute holding a kind's usage in a
// period: used_images_2026_11.
func UsedAttr(k Kind, p Period) string {
	return fmt.Sprintf("used_%s_%04d_%02d", k, p.year, p.month)
}

// DayAttr is the attribute holding a kind's usage on the day t falls in,
// in UTC: used_spend_2026_11_28.
func DayAttr(k Kind, t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("used_%s_%04d_%02d_%02d", k, t.Year(), t.Month(), t.Day())
}

// Days are the days of the period, in order.
func (p Period) Days() []time.Time {
	var days []time.Time
	for d := p.Start(); d.Before(p.End()); d = d.AddDate(0, 0, 1) {
		days = append(days, d)
	}
	return days
}

// LimitAttr is the counter item's attribute holding the account's own limit
// of a kind: a number, or NULL for unlimited.
func LimitAttr(k Kind) string { return "limit_" + string(k) }

// Limit is a monthly limit. The zero value is unlimited.
type Limit struct {
	max     int64
	limited bool
}

// Unlimited is no limit.
var Unlimited = Limit{}

// Max is a limit of n a month; 0 allows none.
func Max(n int64) Limit {
	if n < 0 {
		panic("quota: negative limit")
	}
	return Limit{max: n, limited: true}
}

// Value is the limit's number, and false when it is unlimited.
func (l Limit) Value() (int64, bool) { return l.max, l.limited }

// Allows reports whether usage of used leaves room under the limit.
func (l Limit) Allows(used int64) bool { return !l.limited || used < l.max }

// String is the limit as ParseLimit reads it.
func (l Limit) String() string {
	if !l.limited {
		return unlimitedWord
	}
	return strconv.FormatInt(l.max, 10)
}

// MarshalJSON is the limit as the usage endpoint shows it: a number, or
// null when unlimited.
func (l Limit) MarshalJSON() ([]byte, error) {
	if !l.limited {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, l.max, 10), nil
}

const unlimitedWord = "unlimited"

// maxLimit keeps limits where DynamoDB's numbers and JSON clients are exact.
const maxLimit = 1<<53 - 1

// ParseLimit reads a limit: a whole number from 0, or "unlimited".
func ParseLimit(s string) (Limit, error) {
	if s == unlimitedWord {
		return Unlimited, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxLimit {
		return Limit{}, fmt.Errorf("%q is not a limit: want a whole number from 0 to %d, or %s", s, int64(maxLimit), unlimitedWord)
	}
	return Max(n), nil
}

// Limits are limits by kind. As the deployment's defaults, a kind not in
// the map is unlimited; as an account's own, a kind not in the map has the
// default.
type Limits map[Kind]Limit

// Meter is a kind's usage in a period and the limit that applies to it.
type Meter struct {
	Used  int64 `json:"used"`
	Limit Limit `json:"limit"`
}

// Exceeded is the domain error of what the limit of k refused at now.
func Exceeded(k Kind, l Limit, now time.Time) error {
	n, _ := l.Value()
	return &records.QuotaError{Kind: string(k), Limit: n, RetryAfter: RetryAfter(now)}
}

// ErrUnknownItem: a counter item that does not read as one.
var ErrUnknownItem = errors.New("quota: the counter item holds an attribute of the wrong type")
