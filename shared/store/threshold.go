package store

// The usage.threshold events: an account's usage reaching 80% and 100% of
// a monthly limit, told once for each limit, share and month.
//
// A crossing is found where a write returns the usage with its limit
// (ALL_NEW): the counter write that admits a create or a regenerate, the
// write that counts reads, and the spend ledger's writes. Whoever finds one
// marks it on the same item, in one write conditional on its mark not being
// there (quota.Crossing.MarkAttr), which also sets the item's outbox,
// AttrThreshold, to the event. Only that write's stream record carries a new
// outbox, and the generator, a reader the tables' streams already have,
// publishes the event from it and clears the outbox (ThresholdOf,
// ClearThreshold). So however often a crossing is met (an SDK retry whose
// answer was lost, two requests at once, usage going down and up again)
// one write lands and one event is published; the event's id is derived
// from the crossing, so a stream record delivered twice publishes it once.
//
// The mark is best effort in its request: a mark write that fails is
// written by the next write that finds the crossing still unmarked, so a
// crossing is told late rather than never while the account keeps using
// the kind. A mark write removes the marks of the same limit and share of
// the twelve months before, so an item keeps at most one of each.

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/quota"
)

// AttrThreshold is the outbox attribute of a counter item or a spend
// ledger: the last crossing marked on it, until the generator publishes it.
// template.yaml's generator filters pass the writes that set it.
const AttrThreshold = "usage_threshold"

// noteCrossings marks each crossing on the account's item id (the counter
// item, or the spend ledger), which a write just returned. It is best
// effort: an error is left to the next write that finds the crossing.
func (t *Table) noteCrossings(ctx context.Context, account string, id int64, crossings []quota.Crossing) {
	for _, c := range crossings {
		_ = t.markCrossing(ctx, account, id, c)
	}
}

// markCrossing is the conditional write of a crossing's mark and the
// outbox. A mark already there (another writer's, or this one's landed
// before an SDK retry) is success: its write set the outbox.
func (t *Table) markCrossing(ctx context.Context, account string, id int64, c quota.Crossing) error {
	u := newUpdate()
	mark := u.name(c.MarkAttr())
	u.set(mark + " = " + u.value(num(c.Used)))
	u.set(u.name(AttrThreshold) + " = " + u.value(thresholdValue(c, t.Now())))
	for _, earlier := range c.EarlierMarks() {
		u.remove(earlier)
	}
	u.cond("attribute_not_exists(" + mark + ")")
	_, err := t.writeAt(ctx, account, id, u)
	if _, failed := conditionFailed(err); failed {
		return nil
	}
	return err
}

// Threshold is a crossing as the outbox holds it and the event tells it:
// Used and Limit in the kind's unit (nano-dollars for spend).
type Threshold struct {
	Kind    quota.Kind
	Percent int64
	Used    int64
	Limit   int64
	Period  string
	// Mark is the crossing's mark attribute, which names it.
	Mark string
	// At is when it was marked (to the millisecond): the event's time.
	At time.Time
}

// ThresholdFrom is crossing c as the event tells it, found at at.
func ThresholdFrom(c quota.Crossing, at time.Time) Threshold {
	return Threshold{Kind: c.Kind, Percent: c.Threshold, Used: c.Used, Limit: c.Limit, Period: c.Period.String(),
		Mark: c.MarkAttr(), At: at.UTC().Truncate(time.Millisecond)}
}

// thresholdValue is the outbox's value of c, marked at now.
func thresholdValue(c quota.Crossing, now time.Time) types.AttributeValue {
	return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"kind":      str(string(c.Kind)),
		"threshold": num(c.Threshold),
		"used":      num(c.Used),
		"limit":     num(c.Limit),
		"period":    str(c.Period.String()),
		"mark":      str(c.MarkAttr()),
		"at":        num(now.UnixMilli()),
	}}
}

// ThresholdOf is the crossing a change of an item, from old to new, put
// into its outbox, and false when the change put none there (the outbox
// unchanged, cleared, or never set).
func ThresholdOf(old, new Item) (Threshold, bool) {
	th, ok := readThreshold(new)
	if !ok {
		return Threshold{}, false
	}
	if before, was := readThreshold(old); was && before.Mark == th.Mark {
		return Threshold{}, false
	}
	return th, true
}

func readThreshold(item Item) (Threshold, bool) {
	m, ok := item[AttrThreshold].(*types.AttributeValueMemberM)
	if !ok {
		return Threshold{}, false
	}
	v := Item(m.Value)
	th := Threshold{Kind: quota.Kind(StrAttr(v, "kind")), Period: StrAttr(v, "period"), Mark: StrAttr(v, "mark")}
	var at int64
	for _, f := range []struct {
		attr string
		to   *int64
	}{{"threshold", &th.Percent}, {"used", &th.Used}, {"limit", &th.Limit}, {"at", &at}} {
		n, ok := IntAttr(v, f.attr)
		if !ok {
			return Threshold{}, false
		}
		*f.to = n
	}
	th.At = time.UnixMilli(at).UTC()
	if th.Kind == "" || th.Period == "" || th.Mark == "" {
		return Threshold{}, false
	}
	return th, true
}

// ClearThreshold empties the outbox of the account's item id once the
// event of th is published, unless another crossing replaced it since
// (whose own stream record publishes it).
func (t *Table) ClearThreshold(ctx context.Context, account string, id int64, th Threshold) error {
	u := newUpdate()
	u.remove(AttrThreshold)
	u.cond(u.name(AttrThreshold) + "." + u.name("mark") + " = " + u.value(str(th.Mark)))
	_, err := t.writeRecord(ctx, account, id, u)
	if _, failed := conditionFailed(err); failed {
		return nil
	}
	return err
}

// ThresholdID is what identifies the event of th, marked on the account's
// item in table, for its deliveries' ids: the same however often the
// crossing is met. The table is part of it: each resource counts its own
// reads, under marks of the same name.
func ThresholdID(table, account string, th Threshold) []string {
	return []string{AttrThreshold, table, account, th.Mark}
}

// noteUsage marks the crossings that the account's counter item, as a
// write in period returned it, shows of the table's limits. Only the
// tables whose records are generated have the generator reading their
// streams, so only theirs publish (a voice's reads are not told).
func (t *Table) noteUsage(ctx context.Context, account string, counter Item, period quota.Period) {
	if !t.Generates() {
		return
	}
	crossings, err := t.Quota.Crossings(counter, period)
	if err != nil {
		return // an item that does not read: the limits' own checks say so
	}
	t.noteCrossings(ctx, account, counterID, crossings)
}
