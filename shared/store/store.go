// Package store keeps records in DynamoDB, one table per resource.
//
// Layout (see README "Data model"): partition key `account`, sort key `id`.
// Two local secondary indexes hold slim copies of each record (name_fold,
// favorite and the filter attributes) so lists, filters and counts read
// ~100-byte entries, strongly consistent, then fetch the page's full items
// in one BatchGetItem. `by_id` sorts on id_key = scope*1e12 + id, so a
// scope (a document template) is one contiguous key range; `by_name` sorts
// on the folded name, ties broken by id. Item id 0 of each account is its
// counter: the next id and a record count per scope, changed in the same
// transaction as every create and delete, and the account's monthly usage
// and limits (shared/quota), counted in the write that hands out the id.
package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	ddbexpr "github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/fold"
	"contentapi/shared/generation"
	"contentapi/shared/quota"
	"contentapi/shared/records"
)

// Attribute and index names; template.yaml must agree (a test holds it).
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

	attrNextID  = "next_id"
	countPrefix = "count_"

	IndexByID   = "by_id"
	IndexByName = "by_name"

	// scopeStride separates scopes in id_key: ids stay below it.
	scopeStride = 1_000_000_000_000
	counterID   = 0
	// maxNameKeyBytes keeps name_key under the 1,024-byte limit of an index
	// sort key; names that fold longer sort by their first 900 bytes, then id.
	maxNameKeyBytes = 900
)

// TimeLayout is the contract's timestamp: ISO-8601 UTC with microseconds.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// DB is the part of the DynamoDB client the store uses.
type DB interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Item is a stored record.
type Item = map[string]types.AttributeValue

// Table is one resource's table.
type Table struct {
	db   DB
	name string
	res  *records.Resource
	// Now is the clock; tests may set it.
	Now func() time.Time
	// Quota is what the table's creates count against the account's
	// monthly limits; the zero Policy counts nothing.
	Quota quota.Policy
}

// New returns the store of res in the named table.
func New(db DB, table string, res *records.Resource) *Table {
	return &Table{db: db, name: table, res: res, Now: time.Now}
}

// Name is the table's name.
func (t *Table) Name() string { return t.name }

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

func (t *Table) defaultScope() int64 {
	if t.res.Scope == nil {
		return 0
	}
	return t.res.Scope.Default
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

func marshalValues(v records.Values, into Item) {
	for name, val := range v {
		into[name] = marshalValue(val)
	}
}

// newItem is the item Create writes for a record with the given id.
func (t *Table) newItem(account string, id int64, v records.Values, gen *generation.State) Item {
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
	return item
}

// Create stores a new record and returns it. Two round trips: the counter
// hands out the id and counts the month's usage (refused with a
// *records.QuotaError when the account's limits allow no more), then one
// transaction writes the record and counts it. gen, when generation is on,
// is the record's generation as requested.
func (t *Table) Create(ctx context.Context, account string, v records.Values, gen *generation.State) (Item, error) {
	charge := t.Quota.Generation(t.Now())
	id, err := t.allocateID(ctx, account, charge)
	if err != nil {
		return nil, err
	}
	item := t.newItem(account, id, v, gen)
	err = t.transact(ctx, []types.TransactWriteItem{
		{Put: &types.Put{
			TableName:           &t.name,
			Item:                item,
			ConditionExpression: ptr("attribute_not_exists(#id)"),
			ExpressionAttributeNames: map[string]string{
				"#id": AttrID,
			},
		}},
		t.count(account, t.scopeOf(v), 1),
	})
	if err != nil {
		t.uncharge(ctx, account, id, charge, err)
		return nil, err
	}
	return item, nil
}

// allocateID is the counter write of a create: the next id, and charge.
func (t *Table) allocateID(ctx context.Context, account string, charge quota.Charge) (int64, error) {
	out, err := t.counterWrite(ctx, account, charge, ddbexpr.Add(ddbexpr.Name(attrNextID), ddbexpr.Value(1)))
	if err != nil {
		return 0, err
	}
	id, ok := IntAttr(out.Attributes, attrNextID)
	if !ok || id <= 0 || id >= scopeStride {
		return 0, fmt.Errorf("counter of %s returned no usable id", t.name)
	}
	return id, nil
}

// count is the transaction step that moves a scope's record count.
func (t *Table) count(account string, scope, delta int64) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 &t.name,
		Key:                       key(account, counterID),
		UpdateExpression:          ptr("ADD #count :delta"),
		ExpressionAttributeNames:  map[string]string{"#count": countAttr(scope)},
		ExpressionAttributeValues: Item{":delta": num(delta)},
	}}
}

// Get reads one record, strongly consistent; nil when there is none.
func (t *Table) Get(ctx context.Context, account string, id int64) (Item, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &t.name,
		Key:            key(account, id),
		ConsistentRead: ptr(true),
	})
	if err != nil {
		return nil, err
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}

// Update changes the given fields of a record in one conditional write and
// returns the record as stored. ifVersion > 0 also requires that version.
func (t *Table) Update(ctx context.Context, account string, id int64, v records.Values, ifVersion int64) (Item, error) {
	names := map[string]string{"#id": AttrID, "#version": AttrVersion, "#updated": AttrUpdated}
	values := Item{":one": num(1), ":updated": str(t.timestamp())}
	sets := []string{"#updated = :updated"}
	set := func(attr string, av types.AttributeValue) {
		n := fmt.Sprintf("#f%d", len(sets))
		names[n] = attr
		values[":"+n[1:]] = av
		sets = append(sets, n+" = :"+n[1:])
	}
	fields := Item{}
	marshalValues(v, fields)
	if name, ok := v["name"].(string); ok {
		fields[AttrNameFold] = str(fold.String(name))
		fields[AttrNameKey] = str(nameKey(name, id))
	}
	for attr, av := range fields {
		set(attr, av)
	}
	cond := "attribute_exists(#id)"
	if ifVersion > 0 {
		cond += " AND #version = :expected"
		values[":expected"] = num(ifVersion)
	}
	cond = t.guardGenerated(v, cond, names, values)
	out, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &t.name,
		Key:                                 key(account, id),
		UpdateExpression:                    ptr("SET " + strings.Join(sets, ", ") + " ADD #version :one"),
		ConditionExpression:                 &cond,
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		return nil, t.updateFailure(err)
	}
	return out.Attributes, nil
}

// Delete removes a record and uncounts it in one transaction. The count to
// move is per scope, which a delete by id does not know: it assumes the
// default scope, and a miss returns the record's real scope (no extra
// read), which the one retry uses. ifVersion > 0 also requires that version.
func (t *Table) Delete(ctx context.Context, account string, id int64, ifVersion int64) error {
	scope := t.defaultScope()
	for attempt := 0; ; attempt++ {
		names := map[string]string{"#id": AttrID}
		values := Item{}
		cond := "attribute_exists(#id)"
		if t.res.Scope != nil {
			cond += " AND #scope = :scope"
			names["#scope"] = t.res.Scope.Field
			values[":scope"] = num(scope)
		}
		if ifVersion > 0 {
			cond += " AND #version = :expected"
			names["#version"] = AttrVersion
			values[":expected"] = num(ifVersion)
		}
		del := &types.Delete{
			TableName:                           &t.name,
			Key:                                 key(account, id),
			ConditionExpression:                 &cond,
			ExpressionAttributeNames:            names,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}
		if len(values) > 0 {
			del.ExpressionAttributeValues = values
		}
		err := t.transact(ctx, []types.TransactWriteItem{{Delete: del}, t.count(account, scope, -1)})
		old, failed := conditionFailedItem(err, 0)
		if !failed {
			return err
		}
		if len(old) == 0 {
			return ErrNotFound
		}
		if t.res.Scope != nil {
			if actual, ok := IntAttr(old, t.res.Scope.Field); ok && actual != scope && attempt == 0 {
				scope = actual
				continue
			}
		}
		return ErrVersionMismatch
	}
}

func ptr[T any](v T) *T { return &v }
