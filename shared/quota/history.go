package quota

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Earlier months. A counter item holds the months' usage while they are
// counted; once a month has ended, its usage moves, once, to the account's
// history item in the same table, with the limits in force when it ended,
// and the history keeps HistoryMonths months. A create's counter write
// stays the size it was: the counter holds the current month, and an
// earlier one only until the first counter write after it ended moves it.
//
// The move is three conditional writes and no transaction, so that it
// never holds up the creates that write the counter at the same time:
//
//  1. claim, on the counter: the month's usage leaves its used_ attributes
//     for a claim (moving_2026_10: a token, the usage and the limits),
//     under the condition that the usage is what the mover read and that
//     no claim is there. Of two movers, one claims; the other's write
//     fails and it stops.
//  2. apply, on the history: the claim's usage is added and its token
//     recorded, under the condition that the token is not there yet, so a
//     retry (the SDK's, or a later writer that finds the claim) adds it
//     once.
//  3. release, on the counter: the claim is removed if its token is still
//     the one.
//
// In every state between, the month's usage is counter used_ + the claim
// (unless the history has its token) + history used_, which is what
// ReadEarlier sums: nothing is lost or counted twice wherever a mover
// stops, and whoever writes the counter next finishes the move. Usage that
// arrives for a month after it moved (a late refund) lands on the counter
// and moves later by the same steps.

// HistoryMonths is how many months before the current one the usage
// endpoint answers for.
const HistoryMonths = 13

// historyDropped is how many months before the oldest kept one every write
// of the history removes, so that an account idle for a while leaves
// nothing behind either.
const historyDropped = 12

// periodLayout is a period as attribute names carry it: 2026_11.
const periodLayout = "2006_01"

// ParsePeriod reads a period as the API shows it, exactly: "2026-11".
func ParsePeriod(s string) (Period, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil || len(s) != len("2006-01") {
		return Period{}, fmt.Errorf("%q is not a month: want YYYY-MM, as 2026-11", s)
	}
	return PeriodOf(t), nil
}

// Kept reports whether the history answers for p when the current period
// is now: p is now or one of the HistoryMonths before it.
func Kept(p, now Period) bool {
	return !p.Start().After(now.Start()) && !p.Start().Before(now.Before(HistoryMonths).Start())
}

// ClaimAttr is the counter item's attribute holding the claim of period's
// usage while it moves to the history: moving_2026_10.
func ClaimAttr(p Period) string { return "moving_" + p.Start().Format(periodLayout) }

// MovesAttr is the history item's attribute holding the tokens of the
// claims it has applied for period: a string set, moves_2026_10.
func MovesAttr(p Period) string { return "moves_" + p.Start().Format(periodLayout) }

// PeriodLimitAttr is the history item's attribute holding the limit of k
// in force when period ended: limit_images_2026_10 (a number, or NULL for
// unlimited).
func PeriodLimitAttr(k Kind, p Period) string {
	return LimitAttr(k) + "_" + p.Start().Format(periodLayout)
}

// The claim's own fields, beside each kind's usage (by the kind's name)
// and limit (by LimitAttr).
const claimToken = "token"

// defaultMark is the limit a month records for a kind the account had no
// limit of its own of: the deployment's default applied. The default is
// not the account's to record (a tool that sets limits runs without the
// functions' configuration), so such a month shows the default as it is
// when read.
const defaultMark = "default"

// monthLimitValue is the limit of k a month records: the account's own in
// own (LimitValue), else defaultMark.
func monthLimitValue(own Limits, k Kind) types.AttributeValue {
	if l, ok := own[k]; ok {
		return LimitValue(l)
	}
	return &types.AttributeValueMemberS{Value: defaultMark}
}

// readMonthLimit reads a limit a month recorded, with def for the
// deployment's default, and false when it recorded none.
func readMonthLimit(av types.AttributeValue, def Limit) (Limit, bool, error) {
	if s, ok := av.(*types.AttributeValueMemberS); ok && s.Value == defaultMark {
		return def, true, nil
	}
	return readLimit(av)
}

// MonthLimit is the limit of k in force as period ended, as item records
// it (PeriodLimitAttr), with def for the deployment's default, and false
// when item records none for period.
func MonthLimit(item map[string]types.AttributeValue, k Kind, period Period, def Limit) (Limit, bool, error) {
	return readMonthLimit(item[PeriodLimitAttr(k, period)], def)
}

// KeepLimits records on the history item the limits counter says are in
// force as those of each month kept before now that has none recorded yet
// (KeepLimitsWrite), where the policy keeps History: a change of limits
// makes it first.
func (p Policy) KeepLimits(ctx context.Context, counter map[string]types.AttributeValue, now Period, history Write) error {
	if !p.History {
		return nil
	}
	own, err := p.OwnLimits(counter)
	if err != nil {
		return err
	}
	return write(ctx, history, func() (expression.Expression, error) { return KeepLimitsWrite(p.Kinds(), own, now) })
}

// KeepLimitsWrite is the write that records, on the item keeping the
// months' limits (a history item, the spend item), the limits in force now
// as those of each month kept before now that has none recorded yet: own,
// the account's own, and the default for the other kinds. Made before a
// change of limits, it leaves every month kept with the limits it ended
// with, whether anything was used in it or not. It removes the records of
// the months before those kept.
func KeepLimitsWrite(kinds []Kind, own Limits, now Period) (expression.Expression, error) {
	var update expression.UpdateBuilder
	for _, k := range kinds {
		for m := 1; m <= HistoryMonths; m++ {
			limit := expression.Name(PeriodLimitAttr(k, now.Before(m)))
			update = update.Set(limit, expression.IfNotExists(limit, expression.Value(monthLimitValue(own, k))))
		}
		for m := HistoryMonths + 1; m <= HistoryMonths+historyDropped; m++ {
			update = update.Remove(expression.Name(PeriodLimitAttr(k, now.Before(m))))
		}
	}
	return expression.NewBuilder().WithUpdate(update).Build()
}

// Claim is an earlier month's usage on its way from the counter item to
// the history item.
type Claim struct {
	Period Period
	Token  string
	Used   map[Kind]int64
	// Kinds are the policy's kinds, whose limits the claim records: the
	// account's own in Limits, the default for the others.
	Kinds  []Kind
	Limits Limits
	// Written says the counter item holds the claim already: a mover
	// stopped after step 1.
	Written bool
}

// Leftovers are the months before now whose usage of the policy's kinds the
// counter item still holds: a claim found there (a mover stopped after
// claiming), or the usage, as a claim yet to be written with token and the
// account's own limits the counter holds (in force as the month ended).
// The oldest month comes first.
func (p Policy) Leftovers(counter map[string]types.AttributeValue, now Period, token string) ([]Claim, error) {
	byPeriod := map[Period]*Claim{}
	claimed := map[Period]bool{}
	for name, av := range counter {
		if rest, ok := strings.CutPrefix(name, "moving_"); ok {
			period, ok := parsePeriodAttr(rest)
			if !ok || !period.Start().Before(now.Start()) {
				continue
			}
			c, err := p.readClaim(period, av)
			if err != nil {
				return nil, err
			}
			byPeriod[period], claimed[period] = c, true
			continue
		}
		for _, k := range p.Kinds() {
			rest, ok := strings.CutPrefix(name, "used_"+string(k)+"_")
			if !ok {
				continue
			}
			period, ok := parsePeriodAttr(rest)
			if !ok || !period.Start().Before(now.Start()) || claimed[period] {
				continue
			}
			c := byPeriod[period]
			if c == nil {
				c = &Claim{Period: period, Token: token + "-" + period.Start().Format(periodLayout), Used: map[Kind]int64{}, Kinds: p.Kinds()}
				byPeriod[period] = c
			}
			n, err := number(av)
			if err != nil {
				return nil, err
			}
			c.Used[k] = n
		}
	}
	own, err := p.OwnLimits(counter)
	if err != nil {
		return nil, err
	}
	periods := slices.SortedFunc(maps.Keys(byPeriod), func(a, b Period) int { return a.Start().Compare(b.Start()) })
	claims := make([]Claim, 0, len(periods))
	for _, period := range periods {
		c := byPeriod[period]
		if !claimed[period] {
			c.Limits = own
		}
		c.Written = claimed[period]
		claims = append(claims, *c)
	}
	return claims, nil
}

func parsePeriodAttr(s string) (Period, bool) {
	t, err := time.Parse(periodLayout, s)
	if err != nil || len(s) != len(periodLayout) {
		return Period{}, false
	}
	return PeriodOf(t), true
}

// claimValue is the claim as the counter item holds it: a map.
func (c Claim) claimValue() types.AttributeValue {
	m := map[string]types.AttributeValue{claimToken: &types.AttributeValueMemberS{Value: c.Token}}
	for k, n := range c.Used {
		m[string(k)] = &types.AttributeValueMemberN{Value: fmt.Sprint(n)}
	}
	for _, k := range c.Kinds {
		m[LimitAttr(k)] = monthLimitValue(c.Limits, k)
	}
	return &types.AttributeValueMemberM{Value: m}
}

// readClaim reads a claim the counter item holds.
func (p Policy) readClaim(period Period, av types.AttributeValue) (*Claim, error) {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, ErrUnknownItem
	}
	token, ok := m.Value[claimToken].(*types.AttributeValueMemberS)
	if !ok {
		return nil, ErrUnknownItem
	}
	c := &Claim{Period: period, Token: token.Value, Used: map[Kind]int64{}, Kinds: p.Kinds(), Limits: Limits{}}
	for _, k := range p.Kinds() {
		n, err := number(m.Value[string(k)])
		if err != nil {
			return nil, err
		}
		if n != 0 {
			c.Used[k] = n
		}
		if l, ok, err := OwnLimit(m.Value, k); err != nil {
			return nil, err
		} else if ok {
			c.Limits[k] = l
		}
	}
	return c, nil
}

// ClaimWrite is step 1 on the counter item: the month's usage becomes the
// claim, if the usage is still what was read and nobody claimed it first.
func (c Claim) ClaimWrite() (expression.Expression, error) {
	claim := expression.Name(ClaimAttr(c.Period))
	update := expression.Set(claim, expression.Value(c.claimValue()))
	cond := claim.AttributeNotExists()
	for _, k := range slices.Sorted(maps.Keys(c.Used)) {
		used := expression.Name(UsedAttr(k, c.Period))
		update = update.Remove(used)
		cond = cond.And(used.Equal(expression.Value(c.Used[k])))
	}
	return expression.NewBuilder().WithUpdate(update).WithCondition(cond).Build()
}

// ApplyWrite is step 2 on the history item: the claim's usage added and its
// limits recorded (the first recorded for a month stands: KeepLimits's, or
// an earlier claim's), once per token, and the months past keeping removed.
func (c Claim) ApplyWrite() (expression.Expression, error) {
	moves := expression.Name(MovesAttr(c.Period))
	token := &types.AttributeValueMemberSS{Value: []string{c.Token}}
	update := expression.Add(moves, expression.Value(token))
	for _, k := range slices.Sorted(maps.Keys(c.Used)) {
		update = update.Add(expression.Name(UsedAttr(k, c.Period)), expression.Value(c.Used[k]))
	}
	for _, k := range c.Kinds {
		limit := expression.Name(PeriodLimitAttr(k, c.Period))
		update = update.Set(limit, expression.IfNotExists(limit, expression.Value(monthLimitValue(c.Limits, k))))
	}
	// The months before those kept as of the claim's, whose usage and
	// limits are the claim's kinds'.
	for m := HistoryMonths; m < HistoryMonths+historyDropped; m++ {
		old := c.Period.Before(m)
		update = update.Remove(expression.Name(MovesAttr(old)))
		for _, k := range c.Kinds {
			update = update.Remove(expression.Name(UsedAttr(k, old))).Remove(expression.Name(PeriodLimitAttr(k, old)))
		}
	}
	cond := expression.Not(expression.Contains(moves, c.Token))
	return expression.NewBuilder().WithUpdate(update).WithCondition(cond).Build()
}

// ReleaseWrite is step 3 on the counter item: the claim removed, if it is
// still this one.
func (c Claim) ReleaseWrite() (expression.Expression, error) {
	claim := ClaimAttr(c.Period)
	update := expression.Remove(expression.Name(claim))
	cond := expression.Name(claim + "." + claimToken).Equal(expression.Value(c.Token))
	return expression.NewBuilder().WithUpdate(update).WithCondition(cond).Build()
}

// Write makes one conditional write of an expression on one item: the
// counter item or the history item, in whichever table keeps them.
type Write func(ctx context.Context, expr expression.Expression) error

// Move makes the claim's three writes, the first unless Written. A failed
// condition in the claim is another mover's claim or a count that changed
// since it was read: the month waits for the next counter write, and Move
// returns the error. In the apply it is this claim's token, applied
// already; in the release, another mover's release: both are done.
func (c Claim) Move(ctx context.Context, counter, history Write) error {
	if !c.Written {
		if err := write(ctx, counter, c.ClaimWrite); err != nil {
			return err
		}
	}
	if err := write(ctx, history, c.ApplyWrite); err != nil && !conditionFailed(err) {
		return err
	}
	if err := write(ctx, counter, c.ReleaseWrite); err != nil && !conditionFailed(err) {
		return err
	}
	return nil
}

func write(ctx context.Context, w Write, build func() (expression.Expression, error)) error {
	expr, err := build()
	if err != nil {
		return err
	}
	return w(ctx, expr)
}

func conditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// ReadEarlier is the usage of the policy's kinds in period, a month before
// the current one, and the limits in force as it ended, from the counter
// item and the history item (nil: none yet), whatever the state of a move.
// A month whose limits the history did not record (nothing was used in it,
// and the limits have not changed since) has the limits that apply now.
func (p Policy) ReadEarlier(counter, history map[string]types.AttributeValue, period Period) (map[Kind]Meter, error) {
	meters, err := p.Read(counter, period)
	if err != nil {
		return nil, err
	}
	var pending *Claim
	if av, ok := counter[ClaimAttr(period)]; ok {
		c, err := p.readClaim(period, av)
		if err != nil {
			return nil, err
		}
		if !historyHas(history, period, c.Token) {
			pending = c
		}
	}
	for k, m := range meters {
		moved, err := number(history[UsedAttr(k, period)])
		if err != nil {
			return nil, err
		}
		m.Used = moved + counterUsed(counter, k, period)
		if pending != nil {
			m.Used += pending.Used[k]
			m.Limit = p.Default(k)
			if l, ok := pending.Limits[k]; ok {
				m.Limit = l
			}
		}
		if l, ok, err := MonthLimit(history, k, period, p.Default(k)); err != nil {
			return nil, err
		} else if ok {
			m.Limit = l
		}
		m.Used = max(m.Used, 0)
		meters[k] = m
	}
	return meters, nil
}

// counterUsed is the usage of k in period the counter item still holds,
// negative when a late refund has landed there after the month moved.
func counterUsed(counter map[string]types.AttributeValue, k Kind, period Period) int64 {
	n, _ := number(counter[UsedAttr(k, period)])
	return n
}

func historyHas(history map[string]types.AttributeValue, period Period, token string) bool {
	ss, ok := history[MovesAttr(period)].(*types.AttributeValueMemberSS)
	return ok && slices.Contains(ss.Value, token)
}
