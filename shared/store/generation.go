package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
func (t *Table) Transition(ctx context.Context, account string, id int64, from string, status generation.Status,
	to generation.State, fields records.Values) (Item, error) {
	u := t.newUpdate()
	u.names["#g"] = AttrGeneration
	u.names["#attempt"] = attrGenAttempt
	u.names["#status"] = attrGenStatus
	u.names["#requested"] = attrGenRequested
	u.values[":from"] = str(from)
	u.values[":status"] = str(string(status))
	u.values[":cutoff"] = str(generation.FormatTime(t.Now().Add(-generation.MaxDuration)))
	u.set("#g", marshalState(to))
	vals := Item{}
	marshalValues(fields, vals)
	for attr, av := range vals {
		u.set(u.name(attr), av)
	}
	out, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &t.name,
		Key:                                 key(account, id),
		UpdateExpression:                    u.expression(),
		ConditionExpression:                 ptr("#g.#attempt = :from AND #g.#status = :status AND #g.#requested > :cutoff"),
		ExpressionAttributeNames:            u.names,
		ExpressionAttributeValues:           u.values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return out.Attributes, nil
	}
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, err
	}
	if len(ccf.Item) == 0 {
		return nil, fmt.Errorf("%w: %w", generation.ErrSuperseded, ErrNotFound)
	}
	if own(ccf.Item, to) {
		return ccf.Item, nil
	}
	return nil, generation.ErrSuperseded
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
// caller reads it again. A document moved to another template is counted
// under it, in one transaction with the write.
func (t *Table) Regenerate(ctx context.Context, account string, old Item, v records.Values, gen generation.State) (Item, error) {
	id, _ := IntAttr(old, AttrID)
	version, _ := IntAttr(old, AttrVersion)
	u := t.newUpdate()
	u.values[":expected"] = num(version)
	u.set(u.name(AttrGeneration), marshalState(gen))
	vals := Item{}
	marshalValues(v, vals)
	for attr, av := range vals {
		u.set(u.name(attr), av)
	}
	cond := "#version = :expected"
	from, to := t.scopeOfItem(old), t.scopeOf(merge(v, t.res, old))
	if from == to {
		out, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                           &t.name,
			Key:                                 key(account, id),
			UpdateExpression:                    u.expression(),
			ConditionExpression:                 &cond,
			ExpressionAttributeNames:            u.names,
			ExpressionAttributeValues:           u.values,
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err == nil {
			return out.Attributes, nil
		}
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			return nil, err
		}
		return t.regenerateFailure(ccf.Item, gen)
	}
	// Another scope: the record moves to its key range and is counted
	// there. A transaction returns no item, so the record is read after.
	u.set(u.name(AttrIDKey), num(idKey(to, id)))
	err := t.transact(ctx, []types.TransactWriteItem{
		{Update: &types.Update{
			TableName:                           &t.name,
			Key:                                 key(account, id),
			UpdateExpression:                    u.expression(),
			ConditionExpression:                 &cond,
			ExpressionAttributeNames:            u.names,
			ExpressionAttributeValues:           u.values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		t.moveCount(account, from, to),
	})
	if item, failed := conditionFailedItem(err, 0); failed {
		return t.regenerateFailure(item, gen)
	}
	if err != nil {
		return nil, err
	}
	item, err := t.Get(ctx, account, id)
	if err == nil && item == nil {
		err = ErrNotFound
	}
	return item, err
}

func (t *Table) regenerateFailure(old Item, gen generation.State) (Item, error) {
	switch {
	case len(old) == 0:
		return nil, ErrNotFound
	case own(old, gen):
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
func (t *Table) guardGenerated(v records.Values, cond string, names map[string]string, values Item) string {
	if _, writes := v[t.res.Generated]; t.res.Generated == "" || !writes {
		return cond
	}
	names["#g"] = AttrGeneration
	names["#gstatus"] = attrGenStatus
	names["#grequested"] = attrGenRequested
	values[":gdone"] = str(string(generation.Done))
	values[":gfailed"] = str(string(generation.Failed))
	values[":gcutoff"] = str(generation.FormatTime(t.Now().Add(-generation.MaxDuration)))
	return cond + " AND (attribute_not_exists(#g) OR #g.#gstatus IN (:gdone, :gfailed) OR #g.#grequested <= :gcutoff)"
}

// updateFailure is an update's failed condition in the domain's terms:
// the record is gone, being generated, or at another version.
func (t *Table) updateFailure(err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && len(ccf.Item) > 0 {
		if e := t.inFlight(ccf.Item); e != nil {
			return e
		}
	}
	return conditionFailure(err)
}

// moveCount is the transaction step that counts a record under another
// scope: one update of the counter item (a transaction may touch an item
// once).
func (t *Table) moveCount(account string, from, to int64) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 &t.name,
		Key:                       key(account, counterID),
		UpdateExpression:          ptr("ADD #from :minus, #to :plus"),
		ExpressionAttributeNames:  map[string]string{"#from": countAttr(from), "#to": countAttr(to)},
		ExpressionAttributeValues: Item{":minus": num(-1), ":plus": num(1)},
	}}
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

// update builds an UpdateItem's SET clause over the attributes every write
// of a record moves: its update time and its version.
type update struct {
	names  map[string]string
	values Item
	sets   []string
}

func (t *Table) newUpdate() *update {
	return &update{
		names:  map[string]string{"#version": AttrVersion, "#updated": AttrUpdated},
		values: Item{":one": num(1), ":updated": str(t.timestamp())},
		sets:   []string{"#updated = :updated"},
	}
}

// name is a placeholder for attr.
func (u *update) name(attr string) string {
	n := fmt.Sprintf("#a%d", len(u.names))
	u.names[n] = attr
	return n
}

func (u *update) set(name string, av types.AttributeValue) {
	v := fmt.Sprintf(":v%d", len(u.sets))
	u.values[v] = av
	u.sets = append(u.sets, name+" = "+v)
}

func (u *update) expression() *string {
	return ptr("SET " + strings.Join(u.sets, ", ") + " ADD #version :one")
}
