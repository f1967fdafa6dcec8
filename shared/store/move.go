package store

// How a record moves between scopes (a document regenerated under another
// template), with its count.
//
// A move is, like a create, a counter write and then the record's write.
// The counter write takes the count from the old scope to the new one,
// counts the regenerate's usage (under the limits, as a create's does) and
// records a move intent, op_m<from>-<to>_<token> = id (counter.go). The
// record's write is the regenerate's, conditional on the version read,
// which also moves the record's index key and names the intent in
// moved_by, unless the record is fenced against the execution.
//
// The intent is closed as counter.go says: kept when the record write is
// known to have landed (the record's moved_by names it), reversed (counts
// and usage) when it was refused, or, when its outcome is unknown, after a
// fence on the record makes it impossible. moved_by stays on the record
// until the next move and on its tombstone, so a late settling still sees
// that a move landed. The next move overwrites it, so that move's counter
// write removes the intent it names first: the record shows that move
// landed, so the intent is kept, and it is gone before any settling could
// see the record without it.

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/generation"
	"contentapi/shared/records"
)

// AttrMovedBy names, on a record and its tombstone, the intent of the last
// move whose write landed.
const AttrMovedBy = "moved_by"

// Moves reports whether regenerating the stored record old with the new
// inputs v moves it to another scope.
func (t *Table) Moves(old Item, v records.Values) bool {
	return t.res.Scope != nil && t.scopeOfItem(old) != t.scopeOf(merge(v, t.res, old))
}

// move is a regenerate that moves the record to the scope v names.
func (t *Table) move(ctx context.Context, account string, old Item, v records.Values, gen generation.State) (Item, error) {
	id, _ := IntAttr(old, AttrID)
	in := intent{kind: kindMove, scope: t.scopeOfItem(old), to: t.scopeOf(v), token: NewToken(t.Now()), id: id,
		holds: t.Variants(old, v)}
	counter, err := t.shift(ctx, account, in, StrAttr(old, AttrMovedBy))
	if err != nil {
		return nil, err
	}
	defer func() { t.settleStale(ctx, account, counter) }()
	spend, err := t.admitSpend(ctx, account, in, counter)
	if err != nil {
		return nil, err
	}
	held := t.holding(&gen, in)
	held.SpendHold = spend

	u := t.regenerateWrite(old, v, *held)
	u.set(u.name(AttrIDKey) + " = " + u.value(num(idKey(in.to, id))))
	u.set(u.name(AttrMovedBy) + " = " + u.value(str(in.attr())))
	u.cond("NOT contains(" + u.name(attrFences) + ", " + u.value(str(in.token)) + ")")
	item, err := within(ctx, func(c context.Context) (Item, error) { return t.writeRecord(c, account, id, u) })
	now, failed := conditionFailed(err)
	switch {
	case err == nil:
	case failed && StrAttr(now, AttrMovedBy) == in.attr():
		item = now // an SDK retry of the write, whose first try landed
	case failed && containsString(now, attrFences, in.token):
		// Settled as abandoned under us: the counts are back already.
		t.releaseSpend(ctx, account, spend)
		return nil, ErrInterrupted
	case failed:
		// Refused: nothing was written, the counts go back. Should that
		// fail, the intent stays for settling, which fences and reverses.
		_ = t.close(ctx, account, in, t.reversal(in))
		t.releaseSpend(ctx, account, spend)
		return t.refusal(now, own(now, gen))
	default:
		// The write's outcome is unknown: find out, and settle.
		landed, serr := t.settleMove(ctx, account, in, nil, false)
		if serr == nil && landed {
			if item, _ := t.Get(ctx, account, id); item != nil {
				return item, nil
			}
		}
		if serr == nil && !landed {
			t.releaseSpend(ctx, account, spend) // fenced: it can never land
		}
		return nil, err
	}
	t.finish(account, in)
	t.noteUsage(ctx, account, counter, t.quotaCharge(in).Period())
	return item, nil
}

// shift is a move's counter write: the count from one scope to the other,
// the usage, the intent; and the removal of the intent of the record's
// previous move (prev, "" if none), whose write the record shows landed.
func (t *Table) shift(ctx context.Context, account string, in intent, prev string) (Item, error) {
	u := newUpdate()
	u.set(u.name(in.attr()) + " = " + u.value(num(in.id)))
	if prev != "" {
		u.remove(prev)
	}
	return t.writeCharged(ctx, account, in, u)
}

// settleMove settles a move intent: landed when the record names it in
// moved_by (cur, when known, is the record as read), else the record is
// fenced against the move and the counts and usage go back. The fence's
// condition decides, so a write landing meanwhile is never reversed.
func (t *Table) settleMove(ctx context.Context, account string, in intent, cur Item, known bool) (bool, error) {
	if known && StrAttr(cur, AttrMovedBy) == in.attr() {
		return true, t.close(ctx, account, in, nil)
	}
	u := newUpdate()
	u.adds = append(u.adds, u.name(attrFences)+" "+u.value(&types.AttributeValueMemberSS{Value: []string{in.token}}))
	movedBy := u.name(AttrMovedBy)
	u.cond("attribute_exists(" + u.name(AttrID) + ")")
	u.cond("(attribute_not_exists(" + movedBy + ") OR " + movedBy + " <> " + u.value(str(in.attr())) + ")")
	req := u.input(t.name, key(account, in.id))
	req.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	_, err := t.db.UpdateItem(ctx, req)
	old, failed := conditionFailed(err)
	switch {
	case failed && StrAttr(old, AttrMovedBy) == in.attr():
		return true, t.close(ctx, account, in, nil)
	case err != nil && !failed:
		return false, err
	}
	// Fenced, or nothing at the id: the move can never land.
	return false, t.close(ctx, account, in, t.reversal(in))
}
