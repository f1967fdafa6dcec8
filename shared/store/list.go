package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/fold"
	"contentapi/shared/records"
)

// Page is one page of a list and the number of records that match.
type Page struct {
	Items []Item
	Total int64
	// Partial is set when a search stopped at its budget before it had seen
	// every record: Total then counts the matches among those it saw.
	Partial bool
}

// ResultSearchBudget bounds a search by result, which must read whole
// items: it looks at the most recent this many records of the account (in
// id order) and no more.
const ResultSearchBudget = 1000

// maxQueryLimit caps how many index entries one Query asks for when a list
// needs a fixed number: large enough to keep round trips few, small enough
// that a first page does not read far past what it shows.
const maxQueryLimit = 1000

// List returns one page of the account's records matching q.
func (t *Table) List(ctx context.Context, account string, q records.ListQuery) (Page, error) {
	if q.Search != "" && q.SearchBy == "result" {
		return t.searchResults(ctx, account, q)
	}
	counted := len(q.Filters) == 0 && q.Search == ""
	if counted && q.Page > 1 {
		// Past page one, learn the total first: a page past the end then
		// costs one small read instead of a walk through the index.
		total, err := t.scopeCount(ctx, account, q.Scope)
		if err != nil {
			return Page{}, err
		}
		if q.Offset() >= total {
			return Page{Total: total}, nil
		}
		ids, _, err := t.queryIDs(ctx, account, q, false)
		if err != nil {
			return Page{}, err
		}
		items, _, err := t.fetch(ctx, account, ids, false, q.Scope)
		return Page{Items: items, Total: total}, err
	}
	ids, matched, err := t.queryIDs(ctx, account, q, !counted)
	if err != nil {
		return Page{}, err
	}
	items, count, err := t.fetch(ctx, account, ids, counted, q.Scope)
	if err != nil {
		return Page{}, err
	}
	if !counted {
		count = matched
	}
	return Page{Items: items, Total: count}, nil
}

// queryIDs walks the slim index in the list's order and returns the ids of
// the requested page; with countAll it walks every match and counts them.
func (t *Table) queryIDs(ctx context.Context, account string, q records.ListQuery, countAll bool) ([]int64, int64, error) {
	in := t.indexQuery(account, q)
	offset, end := q.Offset(), q.Offset()+int64(q.PerPage)
	var ids []int64
	var seen int64
	for {
		if !countAll {
			want := end - seen
			if in.FilterExpression != nil {
				want *= 2 // some of what is read will be filtered out
			}
			in.Limit = ptr(int32(min(want, maxQueryLimit)))
		}
		out, err := t.db.Query(ctx, in)
		if err != nil {
			return nil, 0, err
		}
		for _, item := range out.Items {
			if seen >= offset && seen < end {
				id, _ := IntAttr(item, AttrID)
				ids = append(ids, id)
			}
			seen++
		}
		if len(out.LastEvaluatedKey) == 0 || (!countAll && seen >= end) {
			return ids, seen, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// expression collects the names, values and filter terms of a Query.
type expression struct {
	names   map[string]string
	values  Item
	filters []string
}

func newExpression(account string) *expression {
	return &expression{
		names:  map[string]string{"#account": AttrAccount, "#id": AttrID},
		values: Item{":account": str(account)},
	}
}

func (e *expression) equal(attr string, v any) {
	n := fmt.Sprintf("#f%d", len(e.filters))
	e.names[n] = attr
	e.values[":"+n[1:]] = marshalValue(v)
	e.filters = append(e.filters, n+" = :"+n[1:])
}

func (e *expression) apply(in *dynamodb.QueryInput) {
	if len(e.filters) > 0 {
		in.FilterExpression = ptr(strings.Join(e.filters, " AND "))
	}
	in.ExpressionAttributeNames = e.names
	in.ExpressionAttributeValues = e.values
}

// scopeAndFilters adds the list's equality filters, and its scope unless
// the key condition already limits it.
func (t *Table) scopeAndFilters(e *expression, q records.ListQuery, scopeInKey bool) {
	if t.res.Scope != nil && !scopeInKey {
		e.equal(t.res.Scope.Field, q.Scope)
	}
	for _, f := range q.Filters {
		e.equal(f.Attr, f.Value)
	}
}

// indexQuery builds the Query of a list on the slim index its sort needs.
func (t *Table) indexQuery(account string, q records.ListQuery) *dynamodb.QueryInput {
	e := newExpression(account)
	byID := q.SortBy != "name"
	in := &dynamodb.QueryInput{
		TableName: &t.name,
		// Global indexes are read eventually consistent (they can be read
		// no other way): a list may trail a write by the index's lag. The
		// page's records themselves are read strongly consistent (fetch).
		ScanIndexForward:     ptr(!q.Desc),
		ProjectionExpression: ptr("#id"),
	}
	if byID {
		in.IndexName = ptr(IndexByID)
		in.KeyConditionExpression = ptr("#account = :account AND #idkey BETWEEN :lo AND :hi")
		e.names["#idkey"] = AttrIDKey
		e.values[":lo"] = num(idKey(q.Scope, 1))
		e.values[":hi"] = num(idKey(q.Scope, scopeStride-1))
	} else {
		in.IndexName = ptr(IndexByName)
		in.KeyConditionExpression = ptr("#account = :account")
	}
	t.scopeAndFilters(e, q, byID)
	if q.Search != "" {
		e.names["#fold"] = AttrNameFold
		e.values[":search"] = str(q.Search)
		e.filters = append(e.filters, "contains(#fold, :search)")
	}
	e.apply(in)
	return in
}

func (t *Table) scopeCount(ctx context.Context, account string, scope int64) (int64, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                &t.name,
		Key:                      key(account, counterID),
		ConsistentRead:           ptr(true),
		ProjectionExpression:     ptr("#count"),
		ExpressionAttributeNames: map[string]string{"#count": countAttr(scope)},
	})
	if err != nil {
		return 0, err
	}
	n, _ := IntAttr(out.Item, countAttr(scope))
	return n, nil
}

// maxBatchKeys is BatchGetItem's limit of keys per call.
const maxBatchKeys = 100

// fetch reads the full items of ids with BatchGetItem (strongly consistent,
// so the page shows every write already answered), keeping their order.
// withCount adds the counter item to the same call and returns the scope's
// record count.
func (t *Table) fetch(ctx context.Context, account string, ids []int64, withCount bool, scope int64) ([]Item, int64, error) {
	keys := ids
	if withCount {
		keys = append(slices.Clone(ids), counterID)
	}
	byID, err := t.batchGet(ctx, account, keys)
	if err != nil {
		return nil, 0, err
	}
	items := make([]Item, 0, len(ids))
	for _, id := range ids {
		// An index entry whose record is gone (deleted since the index
		// read, or the index still trailing the delete) is left out
		// rather than shown as a hole.
		if item, ok := byID[id]; ok && isLive(item) {
			t.remember(account, item)
			items = append(items, item)
		}
	}
	var count int64
	if withCount {
		count, _ = IntAttr(byID[counterID], countAttr(scope))
	}
	return items, count, nil
}

// batchGet reads the items of ids, strongly consistent, by id; ids with no
// item are absent.
func (t *Table) batchGet(ctx context.Context, account string, ids []int64) (map[int64]Item, error) {
	byID := make(map[int64]Item, len(ids))
	for start := 0; start < len(ids); start += maxBatchKeys {
		var keys []Item
		for _, id := range ids[start:min(start+maxBatchKeys, len(ids))] {
			keys = append(keys, key(account, id))
		}
		pending := map[string]types.KeysAndAttributes{t.name: {Keys: keys, ConsistentRead: ptr(true)}}
		for attempt := 0; len(pending) > 0; attempt++ {
			if attempt > maxUnprocessedRetries {
				return nil, fmt.Errorf("batch get on %s: keys still unprocessed", t.name)
			}
			out, err := t.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
			if err != nil {
				return nil, err
			}
			for _, item := range out.Responses[t.name] {
				id, _ := IntAttr(item, AttrID)
				byID[id] = item
			}
			pending = out.UnprocessedKeys
		}
	}
	return byID, nil
}

// searchResults serves search_by=result: the text is only in the full
// items, so it reads them newest first, folds and matches each, and stops
// after ResultSearchBudget records (the page is then marked partial).
func (t *Table) searchResults(ctx context.Context, account string, q records.ListQuery) (Page, error) {
	e := newExpression(account)
	e.names["#result"] = "result"
	e.values[":zero"] = num(counterID)
	t.scopeAndFilters(e, q, false)
	in := &dynamodb.QueryInput{
		TableName:              &t.name,
		KeyConditionExpression: ptr("#account = :account AND #id > :zero"),
		ProjectionExpression:   ptr("#id, #result, " + AttrNameKey + ", " + AttrIDKey),
		ConsistentRead:         ptr(true),
		// The budget keeps the newest records; name order sorts below.
		ScanIndexForward: ptr(false),
	}
	e.apply(in)
	type match struct {
		id      int64
		nameKey string
	}
	var matches []match
	scanned, partial := 0, false
	for {
		in.Limit = ptr(int32(ResultSearchBudget - scanned))
		out, err := t.db.Query(ctx, in)
		if err != nil {
			return Page{}, err
		}
		scanned += int(out.ScannedCount)
		for _, item := range out.Items {
			text, _ := item["result"].(*types.AttributeValueMemberS)
			if !isLive(item) || text == nil || !strings.Contains(fold.String(text.Value), q.Search) {
				continue
			}
			m := match{}
			m.id, _ = IntAttr(item, AttrID)
			if nk, ok := item[AttrNameKey].(*types.AttributeValueMemberS); ok {
				m.nameKey = nk.Value
			}
			matches = append(matches, m)
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		if scanned >= ResultSearchBudget {
			partial = true
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if q.SortBy == "name" {
		sortMatches(matches, func(a, b match) int { return strings.Compare(a.nameKey, b.nameKey) }, q.Desc)
	} else if !q.Desc {
		sortMatches(matches, func(a, b match) int { return int(a.id - b.id) }, false)
	}
	total := int64(len(matches))
	var ids []int64
	for i := q.Offset(); i < total && i < q.Offset()+int64(q.PerPage); i++ {
		ids = append(ids, matches[i].id)
	}
	items, _, err := t.fetch(ctx, account, ids, false, q.Scope)
	if err != nil {
		return Page{}, err
	}
	return Page{Items: items, Total: total, Partial: partial}, nil
}

// marshalValue stores a validated value: string, bool, int64, float64 or
// nil (null); validation produces no other type.
func marshalValue(v any) types.AttributeValue {
	switch x := v.(type) {
	case string:
		return str(x)
	case bool:
		return &types.AttributeValueMemberBOOL{Value: x}
	case int64:
		return num(x)
	case float64:
		return &types.AttributeValueMemberN{Value: strconv.FormatFloat(x, 'f', -1, 64)}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}
