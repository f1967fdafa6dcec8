package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/generation"
	"contentapi/shared/records"
)

// AttrGeneration holds a record's generation state: a map of
// generation.State's stored fields. Its status is what the stream's
// filter reads (template.yaml): a record whose status is pending is
// waiting for a generator.
const AttrGeneration = "generation"

// Names of the state's fields that conditions read.
const (
	attrGenStatus    = "status"
	attrGenAttempt   = "attempt"
	attrGenRequested = "requested_at"
)

// StateOf is the generation state stored on an item; nil when it has none
// (a record written while generation was off).
func StateOf(item Item) (*generation.State, error) {
	av, ok := item[AttrGeneration]
	if !ok {
		return nil, nil
	}
	if _, null := av.(*types.AttributeValueMemberNULL); null {
		return nil, nil
	}
	var s generation.State
	if err := attributevalue.Unmarshal(av, &s); err != nil {
		return nil, fmt.Errorf("store: generation state: %w", err)
	}
	return &s, nil
}

func marshalState(s generation.State) types.AttributeValue {
	av, err := attributevalue.Marshal(s)
	if err != nil {
		// A State holds strings, numbers and pointers to them: it always
		// marshals.
		panic("store: generation state: " + err.Error())
	}
	return av
}

// Transition moves a record's generation on, in one conditional write:
// only while the attempt from holds the record in status, and within the
// 15-minute deadline, does it set the state to, together with fields (the
// generated content). It is every step of a generation after the request:
// a generator claiming a pending attempt, a write-back of content or
// failure, a hand-over back to the queue. It returns the record as
// written.
//
// A write that the attempt no longer may make is generation.ErrSuperseded
// (wrapping ErrNotFound when the record is gone). A retried write whose
// first try landed is recognised by its attempt and status, and succeeds.
//
// A field of fields whose value is nil is removed. Writing content also
// removes what the record kept of the content before it (the
// resource's Originals): what was generated is now this.
func (t *Table) Transition(ctx context.Context, account string, id int64, from string, status generation.Status,
	to generation.State, fields records.Values) (Item, error) {
	u := newUpdate()
	g := u.name(AttrGeneration)
	u.set(u.name(AttrUpdated) + " = " + u.value(str(t.timestamp())))
	u.set(g + " = " + u.value(marshalState(to)))
	for attr, val := range fields {
		if val == nil {
			u.remove(attr)
		} else {
			u.set(u.name(attr) + " = " + u.value(marshalValue(val)))
		}
	}
	if len(fields) > 0 {
		if o := t.res.Originals; o != nil {
			for _, original := range o.Fields {
				u.remove(original)
			}
		}
	}
	u.add(AttrVersion, 1)
	u.cond(g + "." + u.name(attrGenAttempt) + " = " + u.value(str(from)))
	u.cond(g + "." + u.name(attrGenStatus) + " = " + u.value(str(string(status))))
	u.cond(g + "." + u.name(attrGenRequested) + " > " +
		u.value(str(generation.FormatTime(t.Now().Add(-generation.MaxDuration)))))
	item, err := t.writeRecord(ctx, account, id, u)
	old, failed := conditionFailed(err)
	switch {
	case err == nil:
		return item, nil
	case !failed:
		return nil, err
	case !isLive(old):
		return nil, fmt.Errorf("%w: %w", generation.ErrSuperseded, ErrNotFound)
	case own(old, to):
		return old, nil
	}
	return nil, generation.ErrSuperseded
}

// Expire writes a generation that is past its deadline as what it reads
// as: failed with Timeout, its hold given back (generation.State.Expired).
// It is conditional on the attempt and status as read (from), so it
// changes nothing once anyone else has written the generation; a write it
// no longer may make is generation.ErrSuperseded, as for Transition.
func (t *Table) Expire(ctx context.Context, account string, id int64, from generation.State) error {
	u := newUpdate()
	g := u.name(AttrGeneration)
	u.set(g + " = " + u.value(marshalState(from.Expired(t.Now()))))
	u.add(AttrVersion, 1)
	u.cond(g + "." + u.name(attrGenAttempt) + " = " + u.value(str(from.Attempt)))
	u.cond(g + "." + u.name(attrGenStatus) + " = " + u.value(str(string(from.Status))))
	u.cond(g + "." + u.name(attrGenRequested) + " <= " +
		u.value(str(generation.FormatTime(t.Now().Add(-generation.MaxDuration)))))
	_, err := t.writeRecord(ctx, account, id, u)
	if old, failed := conditionFailed(err); failed {
		if s, _ := StateOf(old); isLive(old) && s != nil && s.Attempt == from.Attempt && s.Status.Ended() {
			return nil // a retry of this write, whose first try landed
		}
		return generation.ErrSuperseded
	}
	return err
}

// own reports whether item holds the state a write of ours put there: the
// write was retried after its first try had landed.
func own(item Item, to generation.State) bool {
	s, err := StateOf(item)
	return err == nil && s != nil && s.Attempt == to.Attempt && s.Status == to.Status
}

// Regenerate starts a new generation of a record, as read (old), with the
// new inputs v, in one write conditional on the version read: a record
// changed since (another regenerate among them) is ErrVersionMismatch, or
// a generation.InFlightError when it is now being generated, and the
// caller reads it again.
//
// When v names another scope (a document's template), the record moves
// there, and its count with it (move.go): that regenerate's counter write
// also counts its usage, so the caller does not Spend for it.
func (t *Table) Regenerate(ctx context.Context, account string, old Item, v records.Values, gen generation.State) (Item, error) {
	if t.Moves(old, v) {
		return t.move(ctx, account, old, v, gen)
	}
	id, _ := IntAttr(old, AttrID)
	item, err := t.writeRecord(ctx, account, id, t.regenerateWrite(old, v, gen))
	if err == nil {
		return item, nil
	}
	if now, failed := conditionFailed(err); failed {
		return t.refusal(now, own(now, gen))
	}
	return nil, err
}

// regenerateWrite is the record's write of a regenerate: the new inputs and
// generation, if the record is still at the version read.
func (t *Table) regenerateWrite(old Item, v records.Values, gen generation.State) *update {
	version, _ := IntAttr(old, AttrVersion)
	u := newUpdate()
	u.set(u.name(AttrUpdated) + " = " + u.value(str(t.timestamp())))
	u.set(u.name(AttrGeneration) + " = " + u.value(marshalState(gen)))
	vals := Item{}
	marshalValues(v, vals)
	for attr, av := range vals {
		u.set(u.name(attr) + " = " + u.value(av))
	}
	u.add(AttrVersion, 1)
	u.cond("attribute_exists(" + u.name(AttrIDKey) + ")")
	u.cond(u.name(AttrVersion) + " = " + u.value(num(version)))
	return u
}

// writeRecord applies u to the record at id and returns it as written; a
// failed condition returns the record as it was, in the
// ConditionalCheckFailedException.
func (t *Table) writeRecord(ctx context.Context, account string, id int64, u *update) (Item, error) {
	in := u.input(t.name, key(account, id))
	in.ReturnValues = types.ReturnValueAllNew
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := t.db.UpdateItem(ctx, in)
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}

// refusal is the answer to a record write whose condition failed, old being
// the record as it is: ours says the write is this operation's own, landed
// by an earlier try, so the record as it is is the answer.
func (t *Table) refusal(old Item, ours bool) (Item, error) {
	switch {
	case !isLive(old):
		return nil, ErrNotFound
	case ours:
		return old, nil
	}
	if err := t.inFlight(old); err != nil {
		return nil, err
	}
	return nil, ErrVersionMismatch
}

// inFlight is a generation.InFlightError when the item's generation is
// under way now, nil otherwise.
func (t *Table) inFlight(item Item) error {
	s, err := StateOf(item)
	if err != nil {
		return err
	}
	if now := t.Now(); s != nil && s.InFlight(now) {
		return &generation.InFlightError{RetryAfter: s.RetryAfter(now)}
	}
	return nil
}

// InFlight is inFlight for callers that read the record themselves.
func (t *Table) InFlight(item Item) error { return t.inFlight(item) }

// guardGenerated adds to an update's condition that the record is not
// being generated, when the update writes the field generation writes:
// nothing a user wrote is overwritten by a generation they did not ask
// for, nor the other way round.
func (t *Table) guardGenerated(v records.Values, u *update) {
	if _, writes := v[t.res.Generated]; t.res.Generated == "" || !writes {
		return
	}
	g := u.name(AttrGeneration)
	status, requested := g+"."+u.name(attrGenStatus), g+"."+u.name(attrGenRequested)
	u.cond("(attribute_not_exists(" + g + ") OR " + status + " IN (" + u.value(str(string(generation.Done))) + ", " +
		u.value(str(string(generation.Failed))) + ") OR " + requested + " <= " +
		u.value(str(generation.FormatTime(t.Now().Add(-generation.MaxDuration)))) + ")")
}

// scopeOfItem is the scope a stored record is counted under.
func (t *Table) scopeOfItem(item Item) int64 {
	if t.res.Scope == nil {
		return 0
	}
	s, _ := IntAttr(item, t.res.Scope.Field)
	return s
}

// merge is the scope field of v, or the stored one where v does not change
// it, as values scopeOf reads.
// Variants is how many variants a regenerate of the stored record old
// with the new inputs v writes (records.Resource.VariantsOf): v's, else
// the record's.
func (t *Table) Variants(old Item, v records.Values) int64 {
	if _, given := v[t.res.Variants]; given || t.res.Variants == "" {
		return t.res.VariantsOf(v)
	}
	n, _ := IntAttr(old, t.res.Variants)
	return t.res.VariantsOf(records.Values{t.res.Variants: n})
}

func merge(v records.Values, res *records.Resource, old Item) records.Values {
	if res.Scope == nil {
		return v
	}
	if _, ok := v[res.Scope.Field]; ok {
		return v
	}
	s, _ := IntAttr(old, res.Scope.Field)
	return records.Values{res.Scope.Field: s}
}
