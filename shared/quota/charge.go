package quota

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/generation"
)

// forgottenMonths is how many months before a write's own the write of a
// policy without History removes: an account's counter item holds the
// current month's usage, and that of older months only when it made
// nothing for a year since.
const forgottenMonths = 12

// Policy is how one resource's records count against the limits: the kind
// a create or a regenerate counts, the other kinds whose limits it must be
// under too (a document's words), and the deployment's defaults. The zero
// Policy counts nothing.
type Policy struct {
	Counts Kind
	Checks []Kind
	// MetersReads counts the read units of the resource's reads as Reads:
	// a kind of its own, which no generation checks and which refuses
	// reads past its limit (shared/store's read meter).
	MetersReads bool
	// Reserve is what a generation holds of another kind until it ends (a
	// document's words): counted with the generation, under the same
	// limits, so that concurrent generations cannot all pass a limit that
	// each alone is under. The record carries the hold (Charge.Hold), and
	// the tally gives back what the generation did not use when it ends;
	// a generation counts at most its hold.
	Reserve  Reserve
	Defaults Limits
	// History keeps the months before the current one: the counter's
	// writes leave them, and its store moves each ended month to the
	// account's history item (history.go). Without it, every counting
	// write removes the twelve months before its own.
	History bool
}

// Reserve is N of Kind held by each generation; the zero Reserve holds
// nothing.
type Reserve struct {
	Kind Kind
	N    int64
}

// Counting reports whether the policy counts anything.
func (p Policy) Counting() bool { return p.Counts != "" }

// Kinds are the kinds whose usage and limits live on the resource's
// counter item: the one it counts, then the ones it checks, then reads
// where it meters them (a resource that counts nothing, as voices, may
// still meter its reads).
func (p Policy) Kinds() []Kind {
	kinds := p.generationKinds()
	if p.MetersReads {
		kinds = append(kinds, Reads)
	}
	return kinds
}

// generationKinds are the kinds whose limits a generation must be under.
func (p Policy) generationKinds() []Kind {
	if !p.Counting() {
		return nil
	}
	return append([]Kind{p.Counts}, p.Checks...)
}

// Default is the deployment's limit of k.
func (p Policy) Default(k Kind) Limit { return p.Defaults[k] }

// Generation is the charge of one create or regenerate at now: one more of
// p.Counts, allowed only while each of p's kinds is under its limit.
func (p Policy) Generation(now time.Time) Charge {
	return Charge{policy: p, period: PeriodOf(now), kind: p.Counts, n: 1, checked: p.Counting(), reserve: p.Reserve}
}

// Usage is the charge that counts n of k at now, whatever the limits: the
// words a generation wrote. k must be one of p's kinds.
func (p Policy) Usage(k Kind, n int64, now time.Time) Charge {
	if !slices.Contains(p.Kinds(), k) {
		panic(fmt.Sprintf("quota: %s is not counted with %s", k, p.Counts))
	}
	return Charge{policy: p, period: PeriodOf(now), kind: k, n: n}
}

// Charge is what one write on a counter item adds to the account's usage,
// and whether the limits must allow it.
type Charge struct {
	policy  Policy
	period  Period
	kind    Kind
	n       int64
	checked bool
	// reserve is held beside n of kind (Policy.Reserve), for each of the
	// n generations (a refund's n is -1), times (Holding) over.
	reserve Reserve
	times   int64
	// spend is the worst case of its generation's cost held on the
	// account's spend ledger, when a spend limit applies.
	spend *generation.SpendHold
}

// WithSpendHold is the charge of a generation that holds h on the
// account's spend ledger too.
func (c Charge) WithSpendHold(h *generation.SpendHold) Charge {
	c.spend = h
	return c
}

// SpendHold is what the charge's generation holds on the spend ledger
// (nil: nothing).
func (c Charge) SpendHold() *generation.SpendHold { return c.spend }

// Holding is the charge of a generation that holds n times what one holds
// of Policy.Reserve: a document of n variants, each a generation's worth
// of the models' work.
func (c Charge) Holding(n int64) Charge {
	c.times = max(n, 1)
	return c
}

// held is what each of the charge's generations holds.
func (c Charge) held() int64 { return c.reserve.N * max(c.times, 1) }

// Period is the month the charge counts in.
func (c Charge) Period() Period { return c.period }

// Refund is the charge that gives c back, in c's month, whatever the
// limits: for a create whose record was not written after all.
func (c Charge) Refund() Charge {
	c.n, c.checked = -c.n, false
	return c
}

// Build is a counter write with the charge in it, for a write built with
// the expression package (a regenerate's charge, a refund, the words of a
// generation): update plus the usage added and the older months removed,
// under conds and, for a checked charge, the limits' condition. A charge of
// a policy that counts nothing leaves the write as it is. Like the
// builder's own methods, Build extends update in place. A create's counter
// write, which the store puts together itself, takes the charge as a Part.
func (c Charge) Build(update expression.UpdateBuilder, conds ...expression.ConditionBuilder) (expression.Expression, error) {
	if adds := c.Adds(); adds != nil {
		for attr, n := range adds {
			update = update.Add(expression.Name(attr), expression.Value(n))
		}
		for _, name := range c.forgotten() {
			update = update.Remove(expression.Name(name))
		}
		if c.checked {
			conds = append(conds, c.condition())
		}
	}
	b := expression.NewBuilder().WithUpdate(update)
	switch len(conds) {
	case 0:
	case 1:
		b = b.WithCondition(conds[0])
	default:
		b = b.WithCondition(expression.And(conds[0], conds[1], conds[2:]...))
	}
	return b.Build()
}

// Adds are the usage the charge moves, by the counter item's attribute: a
// write that undoes the charge moves them back.
func (c Charge) Adds() map[string]int64 {
	// A generation of a resource that counts nothing adds nothing; its
	// reads (Usage) still count, as any resource's do.
	if c.kind == "" || c.n == 0 {
		return nil
	}
	adds := map[string]int64{UsedAttr(c.kind, c.period): c.n}
	if c.reserve.N != 0 {
		adds[UsedAttr(c.reserve.Kind, c.period)] += c.n * c.held()
	}
	return adds
}

// Hold is what one generation of the charge holds (Policy.Reserve): the
// counter item's usage attribute, in the charge's month, and how much;
// n is 0 when it holds nothing.
func (c Charge) Hold() (attr string, n int64) {
	if !c.policy.Counting() || c.reserve.N == 0 {
		return "", 0
	}
	return UsedAttr(c.reserve.Kind, c.period), c.held()
}

// Part is a charge as the parts of a counter write that its writer puts
// together with its own: the usage to add, the older months to remove, and
// the limits' condition (empty for a charge not checked), whose
// placeholders (#0, :0, ...) are in Names and Values.
type Part struct {
	Adds      map[string]int64
	Removes   []string
	Condition string
	Names     map[string]string
	Values    map[string]types.AttributeValue
}

// Part is the charge as parts of a counter write; see Build for a write
// built with the expression package.
func (c Charge) Part() (Part, error) {
	p := Part{Adds: c.Adds()}
	if p.Adds == nil {
		return p, nil
	}
	p.Removes = c.forgotten()
	if !c.checked {
		return p, nil
	}
	expr, err := expression.NewBuilder().WithCondition(c.condition()).Build()
	if err != nil {
		return Part{}, err
	}
	p.Condition, p.Names, p.Values = *expr.Condition(), expr.Names(), expr.Values()
	return p, nil
}

// forgotten are the usage attributes of the months before the charge's
// that the write removes.
func (c Charge) forgotten() []string {
	if c.policy.History {
		return nil
	}
	var names []string
	for _, k := range c.policy.Kinds() {
		for m := 1; m <= forgottenMonths; m++ {
			names = append(names, UsedAttr(k, c.period.Before(m)))
		}
	}
	return names
}

// condition holds when every kind of the policy is under its limit.
func (c Charge) condition() expression.ConditionBuilder {
	kinds := c.policy.generationKinds()
	if len(kinds) == 1 {
		return c.allows(kinds[0])
	}
	others := make([]expression.ConditionBuilder, 0, len(kinds)-2)
	for _, k := range kinds[2:] {
		others = append(others, c.allows(k))
	}
	return expression.And(c.allows(kinds[0]), c.allows(kinds[1]), others...)
}

// allows holds when the month's usage of k is under the limit that applies:
// the account's own (NULL is unlimited), or without one the default. A
// usage not written yet is 0, which DynamoDB cannot compare, hence the
// attribute_not_exists terms.
func (c Charge) allows(k Kind) expression.ConditionBuilder {
	used, limit := expression.Name(UsedAttr(k, c.period)), expression.Name(LimitAttr(k))
	own := expression.Or(
		limit.AttributeType(expression.Null),
		used.LessThan(limit),
		used.AttributeNotExists().And(expression.Value(0).LessThan(limit)),
	)
	def, limited := c.policy.Default(k).Value()
	switch {
	case !limited:
		return own.Or(limit.AttributeNotExists())
	case def > 0:
		return own.Or(limit.AttributeNotExists().And(used.AttributeNotExists().Or(used.LessThan(expression.Value(def)))))
	default:
		// A default of 0 allows nothing: only an own limit can.
		return own
	}
}

// Exceeded is the *records.QuotaError of a checked charge that item (the
// counter item as the refused write found it) no longer allows, naming the
// first kind over its limit; nil when item allows the charge, so that the
// write failed on another of its conditions.
func (c Charge) Exceeded(item map[string]types.AttributeValue, now time.Time) error {
	if !c.checked {
		return nil
	}
	meters, err := c.policy.Read(item, c.period)
	if err != nil {
		return err
	}
	for _, k := range c.policy.generationKinds() {
		if m := meters[k]; !m.Limit.Allows(m.Used) {
			return Exceeded(k, m.Limit, now)
		}
	}
	return nil
}

// Read is the usage of the policy's kinds in period, and the limits that
// apply, from the counter item (nil: an account that has none yet).
func (p Policy) Read(item map[string]types.AttributeValue, period Period) (map[Kind]Meter, error) {
	meters := map[Kind]Meter{}
	for _, k := range p.Kinds() {
		used, err := number(item[UsedAttr(k, period)])
		if err != nil {
			return nil, err
		}
		limit, own, err := OwnLimit(item, k)
		if err != nil {
			return nil, err
		}
		if !own {
			limit = p.Default(k)
		}
		meters[k] = Meter{Used: max(used, 0), Limit: limit}
	}
	return meters, nil
}

// OwnLimit is the account's own limit of k on its counter item, and false
// when it has none (the default applies).
func OwnLimit(item map[string]types.AttributeValue, k Kind) (Limit, bool, error) {
	return readLimit(item[LimitAttr(k)])
}

// readLimit reads a stored limit (LimitValue), and false when there is none
// (or a month recorded the default: history.go).
func readLimit(av types.AttributeValue) (Limit, bool, error) {
	switch av := av.(type) {
	case nil:
		return Limit{}, false, nil
	case *types.AttributeValueMemberS:
		if av.Value == defaultMark {
			return Limit{}, false, nil
		}
	case *types.AttributeValueMemberNULL:
		return Unlimited, true, nil
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseInt(av.Value, 10, 64)
		if err != nil || n < 0 {
			return Limit{}, false, ErrUnknownItem
		}
		return Max(n), true, nil
	}
	return Limit{}, false, ErrUnknownItem
}

// number reads a usage attribute; absent is 0.
func number(av types.AttributeValue) (int64, error) {
	switch av := av.(type) {
	case nil:
		return 0, nil
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseInt(av.Value, 10, 64)
		if err != nil {
			return 0, ErrUnknownItem
		}
		return n, nil
	}
	return 0, ErrUnknownItem
}

// LimitValue is how an account's own limit is stored: a number, or NULL for
// unlimited.
func LimitValue(l Limit) types.AttributeValue {
	if n, ok := l.Value(); ok {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}
