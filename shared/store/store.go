// Package store keeps records in DynamoDB, one table per resource.
//
// The tables' layout, their indexes and the account's counter item (id 0)
// are docs/architecture.md's Data model. Every write is a single-item
// conditional write, never a transaction; counter.go says how the counts
// stay exact without one, tally.go how a delete's count comes down, and
// sweep.go how an account that writes no more is settled. stream.go reads
// the tables' stream records, as Lambda delivers them, as items.
package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/fold"
	"contentapi/shared/generation"
	"contentapi/shared/quota"
	"contentapi/shared/records"
)

// Attribute and index names; template.yaml's resource tables use them (Schema).
const (
	AttrAccount  = "account"
	AttrID       = "id"
	AttrIDKey    = "id_key"
	AttrNameKey  = "name_key"
	AttrNameFold = "name_fold"
	AttrFavorite = "favorite"
	AttrVersion  = "version"
	AttrCreated  = "created_at"
	AttrUpdated  = "updated_at"
	// AttrAttempt is the operation that last wrote a record (create or
	// update) or deleted it: a retry of that operation recognises it.
	AttrAttempt = "attempt"
	// AttrGoneBy marks a deleted record's tombstone with the execution
	// that deleted it.
	AttrGoneBy = "gone_by"
	// AttrVoid marks an id whose create was abandoned: no record will
	// ever be written there.
	AttrVoid = "void"
	// attrFences lists executions whose delete must no longer land: their
	// count change was reversed.
	attrFences = "fences"
	// AttrUnsettled, on a counter item, is when (Unix seconds) its oldest
	// intent may have been opened; it is there only while one may be open,
	// so the index IndexUnsettled holds only those counters (sweep.go).
	AttrUnsettled = "unsettled"
	// attrLastIntent is the token of the counter's latest intent.
	attrLastIntent = "last_intent"

	attrNextID  = "next_id"
	countPrefix = "count_"

	IndexByID   = "by_id"
	IndexByName = "by_name"
	// IndexUnsettled is sparse: the counters that may have an intent open.
	IndexUnsettled = "by_unsettled"

	// scopeStride separates scopes in id_key: ids stay below it.
	scopeStride = 1_000_000_000_000
	counterID   = 0
	// maxNameKeyBytes keeps name_key under the 1,024-byte limit of an index
	// sort key; names that fold longer sort by their first 900 bytes, then id.
	maxNameKeyBytes = 900
)

// TimeLayout is the contract's timestamp: ISO-8601 UTC with microseconds.
const TimeLayout = generation.TimeLayout

// DB is the part of the DynamoDB client the store uses.
type DB interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Item is a stored record.
type Item = map[string]types.AttributeValue

// Stored is a stored item as a resource's records.Render decodes it: by
// attributevalue, into the resource's type by its `dynamodbav` names.
type Stored Item

// Decode decodes the item into out, a pointer to a struct.
func (s Stored) Decode(out any) error { return attributevalue.UnmarshalMap(s, out) }

// Table is one resource's table.
type Table struct {
	db   DB
	name string
	res  *records.Resource
	// Now is the clock; tests may set it.
	Now func() time.Time
	// Horizon is how old an unfinished count change must be before any
	// write of the account settles it (counter.go). It only has to outlast
	// the requests that may still be finishing it themselves.
	Horizon time.Duration
	// Quota is what the table's creates count against the account's
	// monthly limits, in the create's counter write (usage, and the limits
	// as its condition); the zero Policy counts nothing.
	Quota quota.Policy
	// ReadBudget is what one list may read, in read units (0:
	// DefaultReadBudget).
	ReadBudget float64
	// ReadsBatch is how many read units an account's reads gather before
	// they are counted (0: DefaultReadsBatch); tests count every read.
	ReadsBatch float64
	// Ledger is the table whose spend item is the account's spend ledger
	// (ledger.go): nil for the table itself. Cap is how its generations
	// are held to the monthly spend limit there.
	Ledger *Table
	Cap    SpendCap

	// maxItem bounds a record's stored size (maxItemBytes), which the
	// read budget plans with.
	maxItem int

	finished finished
	reads    readMeter
}

// New returns the store of res in the named table.
func New(db DB, table string, res *records.Resource) *Table {
	return &Table{db: db, name: table, res: res, Now: time.Now, Horizon: DefaultHorizon, maxItem: maxItemBytes(res)}
}

// Name is the table's name.
func (t *Table) Name() string { return t.name }

// Resource is the name of the resource the table keeps ("images").
func (t *Table) Resource() string { return t.res.Name }

func key(account string, id int64) Item {
	return Item{
		AttrAccount: &types.AttributeValueMemberS{Value: account},
		AttrID:      num(id),
	}
}

func num(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

func countAttr(scope int64) string { return countPrefix + strconv.FormatInt(scope, 10) }

func idKey(scope, id int64) int64 { return scope*scopeStride + id }

func nameKey(name string, id int64) string {
	f := fold.String(name)
	if len(f) > maxNameKeyBytes {
		cut := maxNameKeyBytes
		for cut > 0 && !isRuneStart(f[cut]) {
			cut--
		}
		f = f[:cut]
	}
	// \x01 sorts below every character a folded name can hold, so "ab"
	// comes before "abc" whatever their ids.
	return fmt.Sprintf("%s\x01%012d", f, id)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// scopeOf is the scope of a record's values (0 for unscoped resources).
func (t *Table) scopeOf(v records.Values) int64 {
	if t.res.Scope == nil {
		return 0
	}
	return v[t.res.Scope.Field].(int64)
}

// itemScope is the scope a stored item (record or tombstone) carries.
func (t *Table) itemScope(item Item) (int64, bool) {
	if t.res.Scope == nil {
		return 0, true
	}
	return IntAttr(item, t.res.Scope.Field)
}

func (t *Table) timestamp() string { return t.Now().UTC().Format(TimeLayout) }

// IntAttr reads a number attribute of an item.
func IntAttr(item Item, name string) (int64, bool) {
	n, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	return v, err == nil
}

// StrAttr reads a string attribute of an item, "" when it has none.
func StrAttr(item Item, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// isLive reports a record: what lists show and GET finds. Tombstones and
// voided ids lack the index keys.
func isLive(item Item) bool {
	_, ok := item[AttrIDKey]
	return ok
}

func isVoid(item Item) bool {
	_, ok := item[AttrVoid]
	return ok
}

func marshalValues(v records.Values, into Item) {
	for name, val := range v {
		into[name] = marshalValue(val)
	}
}

// newItem is the item Create writes for a record with the given id.
func (t *Table) newItem(account string, id int64, v records.Values, op string, gen *generation.State) Item {
	now := t.timestamp()
	item := key(account, id)
	marshalValues(v, item)
	if gen != nil {
		item[AttrGeneration] = marshalState(*gen)
	}
	name, _ := v["name"].(string)
	item[AttrIDKey] = num(idKey(t.scopeOf(v), id))
	item[AttrNameKey] = str(nameKey(name, id))
	item[AttrNameFold] = str(fold.String(name))
	if _, ok := item[AttrFavorite]; !ok {
		item[AttrFavorite] = &types.AttributeValueMemberBOOL{Value: false}
	}
	item[AttrVersion] = num(1)
	item[AttrCreated] = str(now)
	item[AttrUpdated] = str(now)
	if op != "" {
		item[AttrAttempt] = str(op)
	}
	return item
}

// operation is the client operation of a call: its Attempt when the
// request carries one, else the fresh token of this execution.
func operation(ctx context.Context, exec string) (Attempt, bool) {
	if a, ok := attemptFrom(ctx); ok {
		return a, true
	}
	return Attempt{Op: exec}, false
}

// Get reads one record, strongly consistent; nil when there is none.
func (t *Table) Get(ctx context.Context, account string, id int64) (Item, error) {
	item, _, err := t.get(ctx, account, id)
	return item, err
}

// Read is Get for a client: its read units count against the account's
// monthly reads, and once they have reached its limit Read is a
// *records.QuotaError and reads nothing.
func (t *Table) Read(ctx context.Context, account string, id int64) (Item, error) {
	if err := t.CheckReads(ctx, account); err != nil {
		return nil, err
	}
	item, units, err := t.get(ctx, account, id)
	if err == nil {
		t.CountReads(ctx, account, units)
	}
	return item, err
}

// get reads a record strongly consistent, nil when there is none, with the
// read units it cost.
func (t *Table) get(ctx context.Context, account string, id int64) (Item, float64, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:              &t.name,
		Key:                    key(account, id),
		ConsistentRead:         ptr(true),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		return nil, 0, err
	}
	var units float64
	if cc := out.ConsumedCapacity; cc != nil && cc.CapacityUnits != nil {
		units = *cc.CapacityUnits
	}
	if !isLive(out.Item) {
		return nil, units, nil
	}
	return out.Item, units, nil
}

// earlierAttempts hold, newest first, the operations that wrote a record
// before the one in AttrAttempt: each update shifts them on. An update
// whose answer was lost, and which other updates overtook before the
// SDK's retry, is still recognised as landed while its token is among
// them (len(earlierAttempts) updates in between), rather than applied a
// second time or answered 412 for the version it bumped itself.
var earlierAttempts = []string{"attempt_1", "attempt_2", "attempt_3"}

// wroteBy reports whether op is among the last operations that wrote item.
func wroteBy(item Item, op string) bool {
	if StrAttr(item, AttrAttempt) == op {
		return true
	}
	return slices.ContainsFunc(earlierAttempts, func(attr string) bool { return StrAttr(item, attr) == op })
}

// Precondition is what an update or a delete requires of the record's
// version beyond its existing, from the request's If-Match and
// If-None-Match (RFC 9110 13.1): part of the write's own condition, so no
// other write slips in between. The zero value requires nothing more.
type Precondition struct {
	// Match: the version must be one of these (If-Match's tags of the
	// record); empty, any version.
	Match []int64
	// NoneMatch: the version must be none of these (If-None-Match's).
	NoneMatch []int64
}

// MaxPreconditionVersions is the most versions a Precondition may name in
// each list: DynamoDB's IN takes at most 100 values.
const MaxPreconditionVersions = 100

// add puts the precondition into u's condition.
func (p Precondition) add(u *update) {
	in := func(versions []int64) string {
		values := make([]string, len(versions))
		for i, v := range versions {
			values[i] = u.value(num(v))
		}
		return u.name(AttrVersion) + " IN (" + strings.Join(values, ", ") + ")"
	}
	if len(p.Match) > 0 {
		u.cond(in(p.Match))
	}
	if len(p.NoneMatch) > 0 {
		u.cond("NOT " + in(p.NoneMatch))
	}
}

// Update changes the given fields of a record in one conditional write and
// returns the record as stored, if the record meets the precondition.
// The write carries its operation's token: when a retry finds the token
// among the record's last writers (wroteBy), the update it is retrying
// landed, and the record as it is is the answer (not a second application,
// nor a 412 for the version it bumped itself).
//
// An update of a field whose generated value the resource keeps
// (records.Resource.Originals) is made on the condition that the record
// keeps none; on a record that does (a document of several variants), it
// is made again, copying the generated value first: two calls there, one
// everywhere else.
func (t *Table) Update(ctx context.Context, account string, id int64, v records.Values, pre Precondition) (Item, error) {
	att, _ := operation(ctx, NewToken(t.Now()))
	keep := t.keepsOriginals(v)
	mode := keepNothing
	if keep {
		mode = keepNoneHeld
	}
	item, err := t.update(ctx, account, id, v, pre, att, mode)
	old, failed := conditionFailed(err)
	if failed && keep && isLive(old) && !wroteBy(old, att.Op) && old[t.res.Originals.When] != nil {
		item, err = t.update(ctx, account, id, v, pre, att, keepCopy)
		old, failed = conditionFailed(err)
	}
	if failed {
		return t.refusal(old, wroteBy(old, att.Op))
	}
	if err != nil {
		return nil, err
	}
	return item, nil
}

// keeping is what an update does of the originals (records.Originals).
type keeping int

const (
	keepNothing  keeping = iota // it writes none of their fields
	keepNoneHeld                // only where the record keeps none
	keepCopy                    // copy the stored values, once
)

// keepsOriginals reports whether an update of v writes a field whose
// generated value the resource keeps.
func (t *Table) keepsOriginals(v records.Values) bool {
	if t.res.Originals == nil {
		return false
	}
	for field := range t.res.Originals.Fields {
		if _, writes := v[field]; writes {
			return true
		}
	}
	return false
}

func (t *Table) update(ctx context.Context, account string, id int64, v records.Values, pre Precondition,
	att Attempt, keep keeping) (Item, error) {
	u := newUpdate()
	u.set(u.name(AttrUpdated) + " = " + u.value(str(t.timestamp())))
	u.set(u.name(AttrAttempt) + " = " + u.value(str(att.Op)))
	// The writers before shift on by one: every right-hand side reads the
	// record as it was.
	newer, none := AttrAttempt, u.value(str("-"))
	for _, attr := range earlierAttempts {
		u.set(u.name(attr) + " = if_not_exists(" + u.name(newer) + ", " + none + ")")
		newer = attr
	}
	fields := Item{}
	marshalValues(v, fields)
	if name, ok := v["name"].(string); ok {
		fields[AttrNameFold] = str(fold.String(name))
		fields[AttrNameKey] = str(nameKey(name, id))
	}
	switch keep {
	case keepNoneHeld:
		u.cond("attribute_not_exists(" + u.name(t.res.Originals.When) + ")")
	case keepCopy:
		for field, original := range t.res.Originals.Fields {
			u.set(u.name(original) + " = if_not_exists(" + u.name(original) + ", " + u.name(field) + ")")
		}
	}
	for attr, av := range fields {
		u.set(u.name(attr) + " = " + u.value(av))
	}
	u.add(AttrVersion, 1)
	op := u.value(str(att.Op))
	u.cond("attribute_exists(" + u.name(AttrIDKey) + ")")
	for _, attr := range append([]string{AttrAttempt}, earlierAttempts...) {
		u.cond("(attribute_not_exists(" + u.name(attr) + ") OR " + u.name(attr) + " <> " + op + ")")
	}
	pre.add(u)
	t.guardGenerated(v, u)
	return t.writeRecord(ctx, account, id, u)
}

// contentAttrs are the attributes a delete clears: everything a record
// holds but its key, its scope and the intent of its last move (move.go),
// which a late settling of that move reads.
func (t *Table) contentAttrs() []string {
	seen := map[string]bool{AttrAccount: true, AttrID: true}
	if t.res.Scope != nil {
		seen[t.res.Scope.Field] = true
	}
	var out []string
	add := func(names ...string) {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, f := range t.res.Fields {
		add(f.Name)
	}
	add(t.res.Stored...)
	if o := t.res.Originals; o != nil {
		add(slices.Sorted(maps.Values(o.Fields))...)
	}
	add(AttrIDKey, AttrNameKey, AttrNameFold, AttrFavorite, AttrVersion, AttrCreated, AttrUpdated, attrFences)
	add(earlierAttempts...)
	// Generation's state is the store's own attribute, on every resource
	// that generates.
	if t.res.Generated != "" {
		add(AttrGeneration)
	}
	return out
}

// update builds an UpdateItem's expressions with placeholders for every
// name and value, so no client data ever becomes expression text.
type update struct {
	names                      map[string]string
	values                     Item
	sets, adds, removes, conds []string
}

func newUpdate() *update {
	return &update{names: map[string]string{}, values: Item{}}
}

// name returns the placeholder of an attribute name.
func (u *update) name(attr string) string {
	for p, a := range u.names {
		if a == attr {
			return p
		}
	}
	p := fmt.Sprintf("#n%d", len(u.names))
	u.names[p] = attr
	return p
}

func (u *update) value(av types.AttributeValue) string {
	p := fmt.Sprintf(":v%d", len(u.values))
	u.values[p] = av
	return p
}

func (u *update) set(expr string)  { u.sets = append(u.sets, expr) }
func (u *update) cond(expr string) { u.conds = append(u.conds, expr) }
func (u *update) remove(attr string) {
	// Once: DynamoDB refuses an expression naming a path twice.
	if p := u.name(attr); !slices.Contains(u.removes, p) {
		u.removes = append(u.removes, p)
	}
}
func (u *update) add(attr string, delta int64) {
	u.adds = append(u.adds, u.name(attr)+" "+u.value(num(delta)))
}

func (u *update) input(table string, k Item) *dynamodb.UpdateItemInput {
	var expr []string
	if len(u.sets) > 0 {
		expr = append(expr, "SET "+strings.Join(u.sets, ", "))
	}
	if len(u.adds) > 0 {
		expr = append(expr, "ADD "+strings.Join(u.adds, ", "))
	}
	if len(u.removes) > 0 {
		expr = append(expr, "REMOVE "+strings.Join(u.removes, ", "))
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                &table,
		Key:                      k,
		UpdateExpression:         ptr(strings.Join(expr, " ")),
		ExpressionAttributeNames: u.names,
	}
	if len(u.values) > 0 {
		in.ExpressionAttributeValues = u.values
	}
	if len(u.conds) > 0 {
		in.ConditionExpression = ptr(strings.Join(u.conds, " AND "))
	}
	return in
}

func ptr[T any](v T) *T { return &v }
