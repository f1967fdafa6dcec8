package store

// How counts stay exact without transactions.
//
// A delete is one write: the record turned into its tombstone. Its count
// comes down afterwards, from the table's stream, in the tally function's
// write on the counter item (tally.go), applied once per stream record.
//
// A create is two single-item writes: the account's counter item (allocate
// the id, count it) and then the record. Between the two anything can
// happen: an answer lost while the write landed, a write that lands seconds
// after we gave up on it, a process that dies, a database that stops
// answering for longer than the request may wait.
//
// So the counter write also records an intent, an attribute named after the
// change and the execution's token (op_c<scope>_<token> = id, or
// op_m<from>-<to>_<token> = id for a record moved between scopes, move.go).
// The count and its intent change in one write, so an intent on the counter
// item means exactly "this count change is applied, and the record write it
// stands for may or may not have landed". An intent is closed, and only
// ever by a write conditioned on it still being there, in one of two ways:
//
//   - the record write is known to have landed: the intent is removed and
//     the count kept. The execution that saw it land queues the removal for
//     its process's next counter write on the account, where it rides for
//     free. A record that landed and was deleted since counts as landed:
//     its delete's count comes down from the stream.
//   - the record write is made impossible first, then the count is reversed
//     in the same write that removes the intent: for a create, a void
//     tombstone at the id (a conditional put, which the record's own
//     conditional put can then never overwrite, however late it arrives);
//     for a move, a fence on the record naming the execution, which its
//     write's condition refuses.
//
// Whoever learns the outcome closes the intent: the execution itself when it
// can, else any later counter write of the account that finds the intent
// older than Horizon (and Settle, on demand). Closing is conditional on the
// intent, so a count is reversed at most once, and never for a record write
// that can still land. A retried counter write finds its own intent (the
// condition attribute_not_exists fails and returns it), so an SDK retry whose
// first attempt landed neither allocates nor counts twice.
//
// Earlier versions counted a delete in its request, under a delete intent
// (op_d<scope>_<token>); one left open by them is settled as they did.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/generation"
	"contentapi/shared/quota"
	"contentapi/shared/records"
)

// DefaultHorizon is Horizon unless the app sets it from its deadlines.
const DefaultHorizon = 30 * time.Second

const (
	intentPrefix = "op_"
	kindCreate   = 'c'
	// kindDelete is an earlier version's: only settled, never made.
	kindDelete = 'd'
	kindMove   = 'm'

	// maxRidingRemovals bounds the finished intents one counter write
	// removes on the way.
	maxRidingRemovals = 32
	// maxSettlePerWrite bounds the stale intents a request settles after
	// its own work, and settleReserve is the time it must have left.
	maxSettlePerWrite = 8
	settleReserve     = 2 * time.Second
	// resolveReserve is the part of a request's deadline kept back for
	// finding out what an interrupted write did.
	resolveReserve = time.Second
)

var (
	// ErrInterrupted: the write was undone under the request (another
	// execution settled it as abandoned); nothing of it remains, and the
	// same request may succeed a moment later.
	ErrInterrupted = fmt.Errorf("%w: write interrupted, nothing was changed", records.ErrUnavailable)
	// ErrRefused: the counter write of a create or a move was refused by a
	// condition that is not its own; nothing was written.
	ErrRefused = errors.New("write refused by the account's counter")
)

// intent is a count change whose record write is not known to have landed.
type intent struct {
	kind  byte   // kindCreate, kindDelete or kindMove
	scope int64  // a move's scope of origin
	to    int64  // a move's destination
	token string // the execution's
	id    int64
	// holds is how many generations' worth of the quota's reserve the
	// change holds (a document's variants; 0 and 1 are one): written in
	// the name as x<holds> after the scopes when more than one, so that
	// reversing it gives back what it held.
	holds int64
}

func (in intent) attr() string {
	scopes := strconv.FormatInt(in.scope, 10)
	if in.kind == kindMove {
		scopes += "-" + strconv.FormatInt(in.to, 10)
	}
	if in.holds > 1 {
		scopes += holdsMark + strconv.FormatInt(in.holds, 10)
	}
	return intentPrefix + string(in.kind) + scopes + "_" + in.token
}

// holdsMark precedes an intent's holds in its name.
const holdsMark = "x"

func parseIntent(name string, value types.AttributeValue) (intent, bool) {
	rest, ok := strings.CutPrefix(name, intentPrefix)
	if !ok || len(rest) < 3 {
		return intent{}, false
	}
	in := intent{kind: rest[0]}
	scope, token, ok := strings.Cut(rest[1:], "_")
	if !ok || (in.kind != kindCreate && in.kind != kindDelete && in.kind != kindMove) {
		return intent{}, false
	}
	var err error
	if scopes, holds, ok := strings.Cut(scope, holdsMark); ok {
		if in.holds, err = strconv.ParseInt(holds, 10, 64); err != nil || in.holds < 2 {
			return intent{}, false
		}
		scope = scopes
	}
	if in.kind == kindMove {
		from, to, ok := strings.Cut(scope, "-")
		if !ok {
			return intent{}, false
		}
		if in.to, err = strconv.ParseInt(to, 10, 64); err != nil {
			return intent{}, false
		}
		scope = from
	}
	if in.scope, err = strconv.ParseInt(scope, 10, 64); err != nil {
		return intent{}, false
	}
	in.token = token
	n, ok := value.(*types.AttributeValueMemberN)
	if !ok {
		return intent{}, false
	}
	in.id, err = strconv.ParseInt(n.Value, 10, 64)
	return in, err == nil
}

// finished holds, per account, the intents this process saw through: their
// removal rides on its next counter write of the account.
type finished struct {
	mu sync.Mutex
	by map[string][]string
}

// maxFinishedPerAccount bounds what waits for a ride; past it, intents are
// left to be settled as stale (which only costs a read).
const maxFinishedPerAccount = 256

func (f *finished) put(account string, names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.by == nil {
		f.by = map[string][]string{}
	}
	have := f.by[account]
	for _, n := range names {
		if len(have) < maxFinishedPerAccount && !slices.Contains(have, n) {
			have = append(have, n)
		}
	}
	f.by[account] = have
}

func (f *finished) take(account string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	have := f.by[account]
	n := min(len(have), maxRidingRemovals)
	taken := slices.Clone(have[:n])
	if n == len(have) {
		delete(f.by, account)
	} else {
		f.by[account] = have[n:]
	}
	return taken
}

func (f *finished) any(account string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.by[account]) > 0
}

func (f *finished) has(account, name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.by[account], name)
}

// finish marks an intent seen through: its record write landed.
func (t *Table) finish(account string, in intent) { t.finished.put(account, in.attr()) }

// writeCounter applies u to the account's counter item, with the removal of
// this process's finished intents riding along, and returns the counter as
// it now is.
func (t *Table) writeCounter(ctx context.Context, account string, u *update) (Item, error) {
	riding := t.finished.take(account)
	for _, name := range riding {
		u.remove(name)
	}
	in := u.input(t.name, key(account, counterID))
	in.ReturnValues = types.ReturnValueAllNew
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := t.db.UpdateItem(ctx, in)
	if err != nil {
		// Maybe not removed: removing twice is harmless.
		t.finished.put(account, riding...)
		return nil, err
	}
	return out.Attributes, nil
}

// charges is what a create or a move moves on the counter item, and what
// abandoning it moves back.
// The usage is counted in the month of the execution's token, so that
// moving it back lands in the month it was counted in.
func (t *Table) charges(in intent) (quota.Part, error) {
	p, err := t.quotaCharge(in).Part()
	if err != nil {
		return quota.Part{}, err
	}
	p.Adds = t.chargeAdds(in)
	return p, nil
}

// chargeAdds are the counts a create moves (its record's, and its usage),
// or a move (its record's from one scope to the other, and the usage of its
// regenerate).
func (t *Table) chargeAdds(in intent) map[string]int64 {
	adds := t.quotaCharge(in).Adds()
	if adds == nil {
		adds = map[string]int64{}
	}
	if in.kind == kindMove {
		adds[countAttr(in.scope)]--
		adds[countAttr(in.to)]++
		return adds
	}
	adds[countAttr(in.scope)]++
	return adds
}

// quotaCharge is what a create or a move counts against the account's
// monthly limits.
func (t *Table) quotaCharge(in intent) quota.Charge {
	at, _ := TokenTime(in.token)
	return t.Quota.Generation(at).Holding(in.holds)
}

// allocate is a create's counter write: the next id, the count, the intent.
// A retry that finds its own intent gets the id it allocated before.
func (t *Table) allocate(ctx context.Context, account string, in intent) (int64, Item, error) {
	u := newUpdate()
	next, mark := u.name(attrNextID), u.name(in.attr())
	zero, one := u.value(num(0)), u.value(num(1))
	u.set(fmt.Sprintf("%s = if_not_exists(%s, %s) + %s", next, next, zero, one))
	u.set(fmt.Sprintf("%s = if_not_exists(%s, %s) + %s", mark, next, zero, one))
	if c := t.res.Cap; c != nil {
		// At most c.Records at once, those being created included.
		count := u.name(countAttr(in.scope))
		u.cond(fmt.Sprintf("(attribute_not_exists(%s) OR %s < %s)", count, count, u.value(num(c.Records))))
	}
	counter, err := t.writeCharged(ctx, account, in, u)
	if err != nil {
		return 0, nil, err
	}
	id, ok := IntAttr(counter, in.attr())
	if !ok || id <= 0 || id >= scopeStride {
		return 0, nil, fmt.Errorf("counter of %s returned no usable id", t.name)
	}
	return id, counter, nil
}

// writeCharged is the counter write of a create or a move: u, which sets
// the intent, plus the counts and usage it moves, under the limits. A
// retry that finds its own intent returns the counter as it found it; a
// write the limits refuse is a *records.QuotaError and writes nothing.
func (t *Table) writeCharged(ctx context.Context, account string, in intent, u *update) (Item, error) {
	c, err := t.charges(in)
	if err != nil {
		return nil, err
	}
	for _, attr := range slices.Sorted(maps.Keys(c.Adds)) {
		u.add(attr, c.Adds[attr])
	}
	for _, attr := range c.Removes {
		u.remove(attr)
	}
	// The counter joins the index of unsettled ones, or stays in it
	// (sweep.go).
	at, _ := TokenTime(in.token)
	unsettled := u.name(AttrUnsettled)
	u.set(fmt.Sprintf("%s = if_not_exists(%s, %s)", unsettled, unsettled, u.value(num(at.Unix()))))
	u.set(u.name(attrLastIntent) + " = " + u.value(str(in.token)))
	u.cond("attribute_not_exists(" + u.name(in.attr()) + ")")
	if c.Condition != "" {
		maps.Copy(u.names, c.Names)
		maps.Copy(u.values, c.Values)
		u.cond("(" + c.Condition + ")")
	}
	counter, err := t.writeCounter(ctx, account, u)
	if old, failed := conditionFailed(err); failed {
		if _, ok := IntAttr(old, in.attr()); ok {
			return old, nil
		}
		// The limits refused it: a *records.QuotaError naming the kind.
		if err := t.quotaCharge(in).Exceeded(old, t.Now()); err != nil {
			return nil, err
		}
		if c := t.res.Cap; c != nil && in.kind == kindCreate {
			if n, _ := IntAttr(old, countAttr(in.scope)); n >= c.Records {
				return nil, c.Error(t.res.Object)
			}
		}
		return nil, ErrRefused
	}
	return counter, err
}

// close removes an intent and moves the counts by adds, if the intent is
// still there; when it is not, someone closed it already.
func (t *Table) close(ctx context.Context, account string, in intent, adds map[string]int64) error {
	u := newUpdate()
	for _, attr := range slices.Sorted(maps.Keys(adds)) {
		if adds[attr] != 0 {
			u.add(attr, adds[attr])
		}
	}
	u.remove(in.attr())
	u.cond("attribute_exists(" + u.name(in.attr()) + ")")
	_, err := t.writeCounter(ctx, account, u)
	if _, failed := conditionFailed(err); failed {
		return nil
	}
	return err
}

// reversal is what closing an abandoned intent moves back.
func (t *Table) reversal(in intent) map[string]int64 {
	if in.kind == kindDelete {
		return map[string]int64{countAttr(in.scope): 1}
	}
	adds := map[string]int64{}
	for attr, d := range t.chargeAdds(in) {
		adds[attr] = -d
	}
	return adds
}

// Create stores a new record and returns it: the counter write, then the
// record's conditional put. With an Attempt whose earlier execution bound an
// id, it writes that id, or finds the record there.
//
// gen, when generation is on, is the record's generation as requested.
func (t *Table) Create(ctx context.Context, account string, v records.Values, gen *generation.State) (Item, error) {
	exec := NewToken(t.Now())
	att, keyed := operation(ctx, exec)
	if keyed && att.ID > 0 {
		bound, err := t.boundHold(ctx, account, att.ID, gen)
		if err != nil {
			return nil, err
		}
		item, landed, err := t.putRecord(ctx, account, att.ID, v, att.Op, bound)
		if landed {
			return item, nil // the earlier execution's intent is open or finished: it counts the record
		}
		if !errors.Is(err, ErrInterrupted) {
			return nil, err
		}
		// The bound id was abandoned (voided): allocate another.
	}
	var counter Item
	defer func() {
		t.settleStale(ctx, account, counter)
		t.archive(ctx, account, counter)
	}()
	for try := 0; ; try++ {
		in := intent{kind: kindCreate, scope: t.scopeOf(v), token: exec, holds: t.res.VariantsOf(v)}
		id, c, err := t.allocate(ctx, account, in)
		if err != nil {
			return nil, err
		}
		in.id, counter = id, c
		var spend *generation.SpendHold
		if gen != nil {
			if spend, err = t.admitSpend(ctx, account, in, c); err != nil {
				return nil, err
			}
		}
		if keyed && att.Bind != nil {
			_, err := within(ctx, func(c context.Context) (struct{}, error) { return struct{}{}, att.Bind(c, id) })
			if err != nil {
				// The id may be bound after all: void it so no later
				// execution writes it, then uncount.
				_ = t.settle(ctx, account, in, nil, false)
				t.releaseSpend(ctx, account, spend)
				return nil, err
			}
		}
		var landed bool
		held := t.holding(gen, in)
		if held != nil {
			held.SpendHold = spend
		}
		item, err := within(ctx, func(c context.Context) (Item, error) {
			item, ok, err := t.putRecord(c, account, id, v, att.Op, held)
			landed = ok
			return item, err
		})
		switch {
		case landed:
			t.finish(account, in)
			t.noteUsage(ctx, account, counter, t.quotaCharge(in).Period())
			return item, nil
		case errors.Is(err, ErrInterrupted) && try == 0 && hasTime(ctx, 2*resolveReserve):
			// Settled as abandoned under us (we were slow): once more,
			// under a new id.
			t.releaseSpend(ctx, account, spend)
			exec = NewToken(t.Now())
			continue
		case errors.Is(err, ErrInterrupted):
			t.releaseSpend(ctx, account, spend)
			return nil, err
		}
		// The put's outcome is unknown: a timeout, a lost answer. Settle
		// it now, while we still know the id: either the record is there
		// (it landed) or the id is voided and uncounted.
		landed, serr := t.settleCreate(ctx, account, in, nil, false)
		if serr == nil && landed {
			item, _ := t.Get(ctx, account, id)
			if item != nil {
				return item, nil
			}
		}
		if serr == nil && !landed {
			// Voided: the record can never be written.
			t.releaseSpend(ctx, account, spend)
		}
		return nil, err
	}
}

// holding is gen, when the record has one, holding what the create or
// move in counted (Hold): its record then carries the hold.
func (t *Table) holding(gen *generation.State, in intent) *generation.State {
	if gen == nil {
		return nil
	}
	held := t.Hold(*gen, t.quotaCharge(in))
	return &held
}

// boundHold is holding for a create whose id an earlier execution bound:
// the hold was counted in that execution's month, which its intent, still
// open on the counter unless its record landed or the id was voided,
// names. Without the intent the record cannot be written by this
// execution, and gen is returned as it is.
func (t *Table) boundHold(ctx context.Context, account string, id int64, gen *generation.State) (*generation.State, error) {
	if gen == nil || t.Quota.Reserve.N == 0 {
		return gen, nil
	}
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.name, Key: key(account, counterID), ConsistentRead: ptr(true),
	})
	if err != nil {
		return nil, err
	}
	for name, av := range out.Item {
		if in, ok := parseIntent(name, av); ok && in.kind == kindCreate && in.id == id {
			return t.holding(gen, in), nil
		}
	}
	return gen, nil
}

// putRecord writes a record at id unless something is there already. landed
// is true when the record is there afterwards, written by this operation
// (now or before); ErrInterrupted says the id was voided.
func (t *Table) putRecord(ctx context.Context, account string, id int64, v records.Values, op string, gen *generation.State) (Item, bool, error) {
	item := t.newItem(account, id, v, op, gen)
	err := t.putNew(ctx, item)
	old, failed := conditionFailed(err)
	switch {
	case err == nil:
		return item, true, nil
	case !failed:
		return nil, false, err
	case isVoid(old):
		return nil, false, ErrInterrupted
	case isLive(old) && wroteBy(old, op):
		return old, true, nil
	case !isLive(old):
		// The record this operation made is deleted already.
		return nil, false, ErrNotFound
	}
	return nil, false, fmt.Errorf("id %d of %s is taken by another record", id, t.name)
}

// Delete removes a record in one conditional write: the record becomes its
// tombstone. Its count is not touched here: the table's stream carries the
// change to the tally function, which takes the count down once (Apply).
// A retry whose first attempt landed finds the tombstone naming its
// execution or its operation, and succeeds. A live record that does not
// meet the precondition is ErrVersionMismatch.
func (t *Table) Delete(ctx context.Context, account string, id int64, pre Precondition) error {
	exec := NewToken(t.Now())
	att, _ := operation(ctx, exec)
	_, err := t.tombstone(ctx, account, id, exec, att.Op, pre)
	old, failed := conditionFailed(err)
	switch {
	case !failed:
		// Done, or its outcome unknown (as an update's): the client's
		// retry, under the same operation, is recognised.
		return err
	case isLive(old):
		return ErrVersionMismatch
	case StrAttr(old, AttrGoneBy) == exec || StrAttr(old, AttrAttempt) == att.Op:
		return nil // this operation's own delete, landed before
	}
	return ErrNotFound
}

// tombstone turns a live record into its tombstone: content and index keys
// removed, scope and last move kept, the deleting execution and operation
// named. It returns the tombstone.
func (t *Table) tombstone(ctx context.Context, account string, id int64, exec, op string, pre Precondition) (Item, error) {
	u := newUpdate()
	for _, attr := range t.contentAttrs() {
		u.remove(attr)
	}
	u.set(u.name(AttrGoneBy) + " = " + u.value(str(exec)))
	u.set(u.name(AttrAttempt) + " = " + u.value(str(op)))
	u.cond("attribute_exists(" + u.name(AttrIDKey) + ")")
	pre.add(u)
	return t.writeRecord(ctx, account, id, u)
}

// settleDeleted finishes an earlier version's delete whose tombstone is
// written: the intent rides away, or, when the scope guess was wrong, the
// count moves to the record's real scope as the intent is closed.
func (t *Table) settleDeleted(ctx context.Context, account string, in intent, tomb Item) error {
	scope, ok := t.itemScope(tomb)
	if !ok || scope == in.scope {
		t.finish(account, in)
		return nil
	}
	return t.close(ctx, account, in, map[string]int64{countAttr(in.scope): 1, countAttr(scope): -1})
}

// settleCreate settles a create intent. cur is the item at its id when
// known; otherwise a void put finds out. landed reports that the record was
// written (it may since be deleted).
func (t *Table) settleCreate(ctx context.Context, account string, in intent, cur Item, known bool) (bool, error) {
	for range 2 {
		switch {
		case known && len(cur) > 0 && !isVoid(cur):
			// The record landed (and may since be deleted): it counts.
			return true, t.close(ctx, account, in, nil)
		case known && isVoid(cur):
			return false, t.close(ctx, account, in, t.reversal(in))
		}
		old, err := t.void(ctx, account, in)
		if err != nil {
			return false, err
		}
		if old == nil {
			return false, t.close(ctx, account, in, t.reversal(in))
		}
		cur, known = old, true
	}
	return false, fmt.Errorf("settling id %d of %s: no progress", in.id, t.name)
}

// void claims an id for no record, unless something is there: it returns
// nil when it voided the id, else what is there.
func (t *Table) void(ctx context.Context, account string, in intent) (Item, error) {
	item := key(account, in.id)
	item[AttrVoid] = str(in.token)
	err := t.putNew(ctx, item)
	if old, failed := conditionFailed(err); failed {
		return old, nil
	}
	return nil, err
}

// putNew writes item unless its id is taken; a taken id fails the
// condition, with what is there in the ConditionalCheckFailedException.
func (t *Table) putNew(ctx context.Context, item Item) error {
	_, err := t.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           &t.name,
		Item:                                item,
		ConditionExpression:                 ptr("attribute_not_exists(#id)"),
		ExpressionAttributeNames:            map[string]string{"#id": AttrID},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return err
}

// settleDelete settles an earlier version's delete intent: landed when its
// tombstone is there, else the record is fenced against the delete and the
// count put back.
func (t *Table) settleDelete(ctx context.Context, account string, in intent, cur Item, known bool) (bool, error) {
	for range 3 {
		if !known {
			out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
				TableName: &t.name, Key: key(account, in.id), ConsistentRead: ptr(true),
			})
			if err != nil {
				return false, err
			}
			cur, known = out.Item, true
		}
		switch {
		case StrAttr(cur, AttrGoneBy) == in.token:
			return true, t.settleDeleted(ctx, account, in, cur)
		case !isLive(cur):
			// Never there, or deleted by another execution.
			return false, t.close(ctx, account, in, t.reversal(in))
		}
		u := newUpdate()
		u.adds = append(u.adds, u.name(attrFences)+" "+u.value(&types.AttributeValueMemberSS{Value: []string{in.token}}))
		u.cond("attribute_exists(" + u.name(AttrIDKey) + ")")
		req := u.input(t.name, key(account, in.id))
		req.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		_, err := t.db.UpdateItem(ctx, req)
		if old, failed := conditionFailed(err); failed {
			cur = old // deleted meanwhile: look again
			continue
		}
		if err != nil {
			return false, err
		}
		return false, t.close(ctx, account, in, t.reversal(in))
	}
	return false, fmt.Errorf("settling delete of id %d of %s: no progress", in.id, t.name)
}

func (t *Table) settle(ctx context.Context, account string, in intent, cur Item, known bool) error {
	var err error
	switch in.kind {
	case kindCreate:
		_, err = t.settleCreate(ctx, account, in, cur, known)
	case kindMove:
		_, err = t.settleMove(ctx, account, in, cur, known)
	default:
		_, err = t.settleDelete(ctx, account, in, cur, known)
	}
	return err
}

// staleIntents are the counter's intents older than Horizon that this
// process is not about to remove anyway; young counts the others that are
// not this process's to remove.
func (t *Table) staleIntents(account string, counter Item) (stale []intent, young int) {
	cutoff := t.Now().Add(-t.Horizon)
	for _, name := range slices.Sorted(maps.Keys(counter)) {
		in, ok := parseIntent(name, counter[name])
		if !ok || t.finished.has(account, name) {
			continue
		}
		if at, ok := TokenTime(in.token); ok && at.After(cutoff) {
			young++
			continue
		}
		stale = append(stale, in)
	}
	return stale, young
}

// settleStale settles a few stale intents a counter write returned, when
// the request has the time; the rest wait for later writes or Settle.
func (t *Table) settleStale(ctx context.Context, account string, counter Item) {
	stale, _ := t.staleIntents(account, counter)
	if len(stale) == 0 || !hasTime(ctx, settleReserve) {
		return
	}
	_ = t.settleAll(ctx, account, stale[:min(len(stale), maxSettlePerWrite)])
}

// Settle closes every intent of the account older than Horizon and returns
// how many it closed. When it leaves none open, the counter leaves the
// index of unsettled ones (sweep.go).
func (t *Table) Settle(ctx context.Context, account string) (int, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &t.name, Key: key(account, counterID), ConsistentRead: ptr(true),
	})
	if err != nil {
		return 0, err
	}
	stale, young := t.staleIntents(account, out.Item)
	if err := t.settleAll(ctx, account, stale); err != nil {
		return 0, err
	}
	// What this process saw through needs no looking at: remove it.
	for t.finished.any(account) {
		if _, err := t.writeCounter(ctx, account, newUpdate()); err != nil {
			return 0, err
		}
	}
	if young == 0 {
		if err := t.markSettled(ctx, account, out.Item); err != nil {
			return 0, err
		}
	}
	return len(stale), nil
}

// settleAll reads the items of the intents' ids in one go, then settles each.
func (t *Table) settleAll(ctx context.Context, account string, stale []intent) error {
	for start := 0; start < len(stale); start += maxBatchKeys {
		batch := stale[start:min(start+maxBatchKeys, len(stale))]
		var ids []int64
		for _, in := range batch {
			if !slices.Contains(ids, in.id) {
				ids = append(ids, in.id)
			}
		}
		items, err := t.batchGet(ctx, account, ids, &budget{})
		if err != nil {
			return err
		}
		for _, in := range batch {
			if err := t.settle(ctx, account, in, items[in.id], true); err != nil {
				return err
			}
		}
	}
	return nil
}

// reserve is ctx with resolveReserve of its deadline held back, for what a
// caller must still do if the call's outcome is unknown.
func reserve(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok || time.Until(deadline) <= 2*resolveReserve {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline.Add(-resolveReserve))
}

// within runs f under reserve(ctx).
func within[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	sub, cancel := reserve(ctx)
	defer cancel()
	return f(sub)
}

func hasTime(ctx context.Context, need time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ctx.Err() == nil && (!ok || time.Until(deadline) > need)
}

func containsString(item Item, attr, s string) bool {
	ss, ok := item[attr].(*types.AttributeValueMemberSS)
	return ok && slices.Contains(ss.Value, s)
}

// conditionFailed reports a failed condition and the item as it was (nil
// when there was none).
func conditionFailed(err error) (Item, bool) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, false
	}
	return ccf.Item, true
}
