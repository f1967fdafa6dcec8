package store

// The account's spend ledger: how the monthly spend limit is held.
//
// Every generated resource spends against one limit, so the check must be
// on one item, and a resource's counter item is its own table's. The
// ledger is an item of the account in the first generated resource's
// table (Table.Ledger), the record id -2, with no index keys. It keeps
// what the account has committed to spend in the month
// (committed_spend_2026_11): what its ended generations cost, plus the
// worst case of those under way, each held under a mark of its request
// (hd_<token> = the worst case). It is kept apart from the spend item (-1),
// whose days make it grow past 1 KB in a month: the ledger stays a few
// hundred bytes, so each of its writes is 1 WRU.
//
// A create or a regenerate under a spend limit holds its generation's
// worst case (SpendCap.Worst) in one conditional write of the ledger,
// right after the counter write that admits it: committed plus the worst
// case must stay within the limit, so concurrent creates cannot pass it,
// and a create it refuses is a *records.QuotaError whose admission is
// taken back (the intent closed with its counts reversed; no record was
// written). The mark makes an SDK retry whose first attempt landed
// recognised, not held twice. The record carries the hold
// (generation.State.SpendHold).
//
// When the generation ends, or its record is deleted or regenerated, the
// tally function settles the hold to what the generation cost: committed
// moves by the cost less the worst case, and the mark goes, in one write
// conditional on the mark still holding, so exactly once however often the
// stream delivers the change (settleSpend). A request whose record was not
// written gives the hold back itself (releaseSpend), and leaves the mark as
// a fence that a late hold write cannot pass. A generation counts against
// the limit in the month it was requested.
//
// Where no limit applies (none of the account's own on the counter item
// the admitting write returns, and no deployment default), nothing is
// held: an account without a limit pays no call for it. Generations
// started before an account had a limit are not on its ledger: a limit set
// in the middle of a month counts what they cost from the next month on.

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/generation"
	"contentapi/shared/quota"
)

// SpendCap is how a table's generations are held to the monthly spend
// limit; the zero SpendCap holds nothing.
type SpendCap struct {
	// Default is the deployment's limit, for accounts without their own
	// (quota.Unlimited: none).
	Default quota.Limit
	// Worst is the most a generation of n variants may cost, every try
	// included; nil when the table's records are not generated.
	Worst func(n int64) generation.USD
}

// ledgerID is the id of the account's spend ledger in the ledger table.
const ledgerID int64 = -2

// holdMarkPrefix starts the ledger's mark of a request's hold.
const holdMarkPrefix = "hd_"

func holdMark(id string) string { return holdMarkPrefix + id }

// ledger is the table whose spend item is the account's ledger.
func (t *Table) ledger() *Table {
	if t.Ledger != nil {
		return t.Ledger
	}
	return t
}

// holdSpend holds the worst case of a generation of n variants on the
// ledger, for the request token whose admitting write left counter (the
// counter item, which carries the account's own limit): nil when no limit
// applies, a *records.QuotaError when the worst case no longer fits.
func (t *Table) holdSpend(ctx context.Context, account, token string, n int64, counter Item) (*generation.SpendHold, error) {
	if t.Cap.Worst == nil {
		return nil, nil
	}
	limit, err := quota.SpendLimit(counter, t.Cap.Default)
	if err != nil {
		return nil, err
	}
	capUSD, limited := limit.Value()
	if !limited {
		return nil, nil
	}
	at, _ := TokenTime(token)
	hold := &generation.SpendHold{ID: token, Committed: quota.CommittedAttr(quota.PeriodOf(at)), Held: t.Cap.Worst(n)}
	room := capUSD - int64(hold.Held)
	if room < 0 {
		return nil, quota.Exceeded(quota.Spend, limit, t.Now())
	}
	u := newUpdate()
	committed, mark := u.name(hold.Committed), u.name(holdMark(token))
	u.add(hold.Committed, int64(hold.Held))
	u.remove(quota.CommittedAttr(quota.PeriodOf(at).Before(2))) // no hold of it is left
	u.set(mark + " = " + u.value(num(int64(hold.Held))))
	u.cond("attribute_not_exists(" + mark + ")")
	u.cond(fmt.Sprintf("(attribute_not_exists(%s) OR %s <= %s)", committed, committed, u.value(num(room))))
	ledger, err := t.ledger().writeRecord(ctx, account, ledgerID, u)
	if old, failed := conditionFailed(err); failed {
		switch old[holdMark(token)].(type) {
		case *types.AttributeValueMemberN:
			return hold, nil // an SDK retry whose first attempt landed
		case *types.AttributeValueMemberS:
			return nil, ErrInterrupted // given back already
		}
		t.noteSpend(ctx, account, old, quota.PeriodOf(at), limit, hold.Held)
		return nil, quota.Exceeded(quota.Spend, limit, t.Now())
	}
	if err != nil {
		// It may have landed: give it back, or leave it to be given.
		t.releaseSpend(ctx, account, hold)
		return nil, err
	}
	t.noteSpend(ctx, account, ledger, quota.PeriodOf(at), limit, 0)
	return hold, nil
}

// noteSpend marks the spend limit's crossings that the ledger, as a hold
// in period left it or found it, shows. refused is the worst case of a
// hold that no longer fit: the limit is then reached (100%), whatever is
// committed, since no hold passes it; the event tells what is committed.
// What an account has spent only settles down from what it committed (a
// generation costs at most its worst case), so the holds are where its
// spend crosses.
func (t *Table) noteSpend(ctx context.Context, account string, ledger Item, period quota.Period, limit quota.Limit, refused generation.USD) {
	committed, _ := IntAttr(ledger, quota.CommittedAttr(period))
	crossings := quota.Reached(ledger, quota.Spend, quota.Meter{Used: committed + int64(refused), Limit: limit}, period)
	for i := range crossings {
		crossings[i].Used = committed
	}
	t.ledger().noteCrossings(ctx, account, ledgerID, crossings)
}

// releaseSpend gives back the hold of a request whose record was not
// written, once: it takes the worst case off committed where the hold's
// mark says it is held, and leaves the mark as a fence ("released"), so
// that a hold write still under way (a stalled write, an SDK retry) can
// never land after it. It runs even when the request's own deadline has
// passed. Should it fail, the hold stays committed for the month: over
// the limit's count, never under.
func (t *Table) releaseSpend(ctx context.Context, account string, hold *generation.SpendHold) {
	if hold == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
	defer cancel()
	ledger := t.ledger()
	for range 2 {
		u := newUpdate()
		mark := u.name(holdMark(hold.ID))
		u.add(hold.Committed, -int64(hold.Held))
		u.set(mark + " = " + u.value(str(releasedMark)))
		u.cond(mark + " = " + u.value(num(int64(hold.Held))))
		_, err := ledger.writeRecord(ctx, account, ledgerID, u)
		old, failed := conditionFailed(err)
		if !failed || old[holdMark(hold.ID)] != nil {
			return // given back, given back before, or failed
		}
		// Not held (yet): fence it, unless it lands meanwhile.
		f := newUpdate()
		mark = f.name(holdMark(hold.ID))
		f.set(mark + " = " + f.value(str(releasedMark)))
		f.cond("attribute_not_exists(" + mark + ")")
		_, err = ledger.writeRecord(ctx, account, ledgerID, f)
		if _, failed := conditionFailed(err); !failed {
			return
		}
	}
}

// releasedMark is a hold's mark once given back by its request.
const releasedMark = "released"

// admitSpend is holdSpend after the counter write of in: when the hold is
// refused or fails, the admission is taken back (no record was written
// for it), and the error returned.
func (t *Table) admitSpend(ctx context.Context, account string, in intent, counter Item) (*generation.SpendHold, error) {
	hold, err := t.holdSpend(ctx, account, in.token, in.holds, counter)
	if err != nil {
		undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
		defer cancel()
		// Should this fail, the intent stays open, and settling it
		// reverses the counts (sweep.go).
		_ = t.close(undo, account, in, t.reversal(in))
	}
	return hold, err
}

// spendReleased is the spend hold a change of a record, from old to new
// (gone: deleted), ends, and what its generation cost in all: old's hold,
// when new no longer carries it.
func spendReleased(old, new Item, gone bool) (*generation.SpendHold, generation.USD) {
	before, err := StateOf(old)
	if err != nil || before == nil || before.SpendHold == nil {
		return nil, 0
	}
	after, err := StateOf(new)
	if gone || err != nil || after == nil || after.RequestedAt != before.RequestedAt {
		return before.SpendHold, before.CostUSD // taken away: what it spent so far
	}
	if after.SpendHold != nil && after.SpendHold.ID == before.SpendHold.ID {
		return nil, 0 // claimed, handed over, or edited meanwhile
	}
	return before.SpendHold, after.CostUSD
}

// settleSpend settles a generation's hold on the ledger to what it cost:
// once, while its mark holds it (a release by its request, or an earlier
// delivery of the change, took the mark away or fenced it).
func (t *Table) settleSpend(ctx context.Context, account string, hold *generation.SpendHold, cost generation.USD) error {
	u := newUpdate()
	mark := u.name(holdMark(hold.ID))
	if d := int64(cost - hold.Held); d != 0 {
		u.add(hold.Committed, d)
	}
	u.remove(holdMark(hold.ID))
	u.cond(mark + " = " + u.value(num(int64(hold.Held))))
	_, err := t.ledger().writeRecord(ctx, account, ledgerID, u)
	if _, failed := conditionFailed(err); failed {
		return nil
	}
	return err
}

// SpendLimit is the account's monthly spend limit as the counter item of
// its first generated resource says (its own, else the deployment's).
func (t *Table) SpendLimit(counter Item) (quota.Limit, error) {
	return quota.SpendLimit(counter, t.Cap.Default)
}

// SetSpendLimit gives the account its own spend limit (l, unlimited
// included), or with nil takes it away (the deployment's applies), on the
// counter item, where the admitting writes return it, and with ledger on
// the spend item too, where the usage reads it. It returns the own limit
// after the change, and false for none.
func (t *Table) SetSpendLimit(ctx context.Context, account string, l *quota.Limit, ledger bool) (quota.Limit, bool, error) {
	ids := []int64{counterID}
	if ledger {
		if err := t.keepSpendLimit(ctx, account); err != nil {
			return quota.Limit{}, false, err
		}
		ids = append(ids, spendID)
	}
	var item Item
	for _, id := range ids {
		u := newUpdate()
		if l != nil {
			u.set(u.name(quota.LimitAttr(quota.Spend)) + " = " + u.value(quota.LimitValue(*l)))
		} else {
			u.remove(quota.LimitAttr(quota.Spend))
		}
		got, err := t.writeRecord(ctx, account, id, u)
		if err != nil {
			return quota.Limit{}, false, err
		}
		item = got
	}
	return quota.OwnLimit(item, quota.Spend)
}

// keepSpendLimit records the spend limit in force, as the spend item says,
// as that of each month kept before the current one that has none recorded
// yet (quota.KeepLimitsWrite), so that the usage of an earlier month shows the
// spend limit it ended with: a change of the limit makes it first.
func (t *Table) keepSpendLimit(ctx context.Context, account string) error {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.name, Key: key(account, spendID), ConsistentRead: ptr(true),
		ProjectionExpression: ptr("#l"), ExpressionAttributeNames: map[string]string{"#l": quota.LimitAttr(quota.Spend)},
	})
	if err != nil {
		return err
	}
	own := quota.Limits{}
	if l, ok, err := quota.OwnLimit(out.Item, quota.Spend); err != nil {
		return err
	} else if ok {
		own[quota.Spend] = l
	}
	expr, err := quota.KeepLimitsWrite([]quota.Kind{quota.Spend}, own, quota.PeriodOf(t.Now()))
	if err != nil {
		return err
	}
	return t.itemWrite(account, spendID)(ctx, expr)
}

// OwnSpendLimit is the account's own spend limit on the counter item, and
// false for none: one strongly consistent read.
func (t *Table) OwnSpendLimit(ctx context.Context, account string) (quota.Limit, bool, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.name, Key: key(account, counterID), ConsistentRead: ptr(true),
		ProjectionExpression: ptr("#l"), ExpressionAttributeNames: map[string]string{"#l": quota.LimitAttr(quota.Spend)},
	})
	if err != nil {
		return quota.Limit{}, false, err
	}
	return quota.OwnLimit(out.Item, quota.Spend)
}
