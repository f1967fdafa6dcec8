package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/fold"
	"contentapi/shared/records"
)

// Page is one page of a list and the number of records that match.
type Page struct {
	Items []Item
	// Total counts the records that match: exact unless TotalEstimated.
	Total int64
	// Start is how many matching records come before Items[0]: the page's
	// offset, or further on where a cursor resumed it.
	Start int64
	// TotalEstimated is set when the read budget ended the counting; Total
	// is then estimated from the share of matches among the entries read.
	TotalEstimated bool
	// Partial is set when the read budget ended the page before it was
	// full; Next resumes it.
	Partial bool
	// Before[i] resumes the list at Items[i], for an answer cut short
	// after the reading (its size).
	Before []records.Cursor
	// Next resumes the reading where a bound stopped it: the rest of a
	// partial page, or the next page of a list whose total is estimated.
	Next *records.Cursor
}

// maxQueryLimit caps how many index entries one Query asks for when a list
// needs a fixed number: large enough to keep round trips few, small enough
// that a first page does not read far past what it shows.
const maxQueryLimit = 1000

// List returns one page of the account's records matching q, reading at
// most the table's read budget: the page's records first, then the
// counting of the matches after them.
//
// The reads count against the account's monthly reads (CountReads); once
// they have reached its limit, List is a *records.QuotaError and reads
// nothing.
func (t *Table) List(ctx context.Context, account string, q records.ListQuery) (Page, error) {
	if err := t.CheckReads(ctx, account); err != nil {
		return Page{}, err
	}
	w := t.newWalk(account, q)
	p, err := t.list(ctx, w)
	t.CountReads(ctx, account, t.readBudget().left-w.budget.left)
	if q.Cursor != nil && isValidation(err) {
		// The query holds but for its start key, which the cursor made.
		return Page{}, records.InvalidCursor()
	}
	return p, err
}

func (t *Table) list(ctx context.Context, w *walk) (Page, error) {
	account, q := w.account, w.q
	withCount := w.counted && q.Page == 1 && q.Cursor == nil
	if w.counted && !withCount {
		// Learn the total first: a page past the end then costs one small
		// read instead of a walk through the index.
		total, err := t.scopeCount(ctx, account, q, &w.budget)
		if err != nil {
			return Page{}, err
		}
		if q.Offset() >= total {
			return Page{Total: total, Start: q.Offset()}, nil
		}
		w.total = &total
	}
	if err := w.run(ctx, func() bool { return w.matches >= w.end }); err != nil {
		return Page{}, err
	}
	if err := w.fetchPage(ctx, withCount); err != nil {
		return Page{}, err
	}
	if w.total == nil {
		if err := w.run(ctx, func() bool { return false }); err != nil {
			return Page{}, err
		}
	}
	return w.result(ctx)
}

// walk reads a list's index in list order within a read budget, keeping
// the page's entries and counting every match it passes.
type walk struct {
	t       *Table
	account string
	q       records.ListQuery
	in      *dynamodb.QueryInput
	budget  budget
	// verify is set when matching needs the whole record (a search by
	// result): candidates from the index are fetched and tested.
	verify func(Item) bool
	// whole: the list reads the table itself, whose entries are the
	// records (every scope in id order, wholeTable), so none is fetched.
	whole bool
	// counted lists are unfiltered: their total is the counter's count
	// (total, once read).
	counted bool
	total   *int64

	offset, end int64
	// matches and read count the matches and index entries passed, from the
	// start of the index; first are their values where this request began.
	matches, read          int64
	firstMatch, firstRead  int64
	at                     records.Cursor // just after the last entry passed
	page                   []pageEntry
	pageEnd                *records.Cursor // just after the page's last entry
	ended, stopped, cutOff bool
	items                  []Item
	before                 []records.Cursor
}

type pageEntry struct {
	id     int64
	before records.Cursor
	item   Item // already fetched when verified
}

func (t *Table) newWalk(account string, q records.ListQuery) *walk {
	w := &walk{t: t, account: account, q: q, in: t.indexQuery(account, q), budget: t.readBudget(), whole: wholeTable(q),
		offset: q.Offset(), end: q.Offset() + int64(q.PerPage), counted: len(q.Filters) == 0 && q.Search == "",
		page: make([]pageEntry, 0, min(max(q.PerPage, 0), maxQueryLimit))}
	onRecord := t.recordFilters(q)
	if q.Search != "" && q.SearchBy == "result" {
		// The index filters the scope and the equality filters; the text
		// is only in the records.
		w.in = t.indexQuery(account, records.ListQuery{Scope: q.Scope, AllScopes: q.AllScopes, Filters: q.Filters, SortBy: q.SortBy, Desc: q.Desc})
		w.verify = func(item Item) bool {
			text, _ := item["result"].(*types.AttributeValueMemberS)
			return text != nil && strings.Contains(fold.String(text.Value), q.Search) &&
				(onRecord == nil || onRecord(item))
		}
	} else if onRecord != nil {
		// The index filters what it projects (and searches the name); the
		// rest only the records hold.
		w.verify = onRecord
	}
	if c := q.Cursor; c != nil {
		w.matches, w.read = c.Matches, c.Read
		if c.Key != "" {
			w.in.ExclusiveStartKey = t.startKey(account, q, *c)
		}
	}
	w.firstMatch, w.firstRead = w.matches, w.read
	w.at = records.Cursor{Matches: w.matches, Read: w.read}
	if c := q.Cursor; c != nil {
		w.at.Key, w.at.ID = c.Key, c.ID
	}
	return w
}

// sortAttr is the sort key of the list's order: of its index, or the
// table's own.
func sortAttr(q records.ListQuery) string {
	switch {
	case q.SortBy == "name":
		return AttrNameKey
	case wholeTable(q):
		return AttrID
	}
	return AttrIDKey
}

// wholeTable reports a list read from the table itself rather than an
// index: every scope in id order. by_id orders scope by scope (id_key is
// scope and id), so the order of ids across scopes is the table's key.
// Its entries are the records, which the page would fetch anyway: the
// common first page costs one Query of its records and the counter, where
// merging the scopes' index ranges would add a Query for each non-empty
// scope; a page further on reads every record before it (docs/api.md).
func wholeTable(q records.ListQuery) bool { return q.AllScopes && q.SortBy != "name" }

// startKey is the ExclusiveStartKey that resumes the index after c.
func (t *Table) startKey(account string, q records.ListQuery, c records.Cursor) Item {
	k := key(account, c.ID)
	switch sortAttr(q) {
	case AttrNameKey:
		k[AttrNameKey] = str(c.Key)
	case AttrIDKey:
		n, _ := strconv.ParseInt(c.Key, 10, 64)
		k[AttrIDKey] = num(n)
	}
	return k
}

// position is the cursor just after an index entry (or a LastEvaluatedKey).
func (w *walk) position(entry Item) records.Cursor {
	c := records.Cursor{Matches: w.matches, Read: max(w.read, w.matches)}
	c.ID, _ = IntAttr(entry, AttrID)
	switch v := entry[sortAttr(w.q)].(type) {
	case *types.AttributeValueMemberN:
		c.Key = v.Value
	case *types.AttributeValueMemberS:
		c.Key = v.Value
	}
	return c
}

// reserve is what the reading must leave for what follows it: the
// page's fetch while the page is not complete, and the counter read of
// an estimate.
func (w *walk) reserve() float64 {
	r := counterWorst
	if w.verify == nil && !w.whole && w.matches < w.end {
		pending := len(w.page) + int(w.end-max(w.matches, w.offset))
		// At most half of what the budget leaves beside one index page, so
		// that every request reads some of the index and a cursor moves on.
		room := w.t.readBudget().left - w.t.indexPageWorst() - counterWorst
		r += min(float64(pending)*w.t.itemWorst(), max(0, room/2))
	}
	return r
}

// run reads on until done, the index ends or the budget does.
func (w *walk) run(ctx context.Context, done func() bool) error {
	for !done() && !w.ended && !w.stopped {
		spare := w.budget.left - w.reserve()
		if !w.whole {
			spare -= w.t.indexPageWorst()
		}
		if spare < 0 {
			w.stopped = true
			break
		}
		w.in.Limit = nil
		switch {
		case w.verify != nil || w.whole:
			// Each entry may cost a whole record, read or fetched.
			n := int32(min(spare/w.t.itemWorst(), maxQueryLimit))
			if w.whole && w.counted && w.matches < w.end {
				n = min(n, int32(w.end-w.matches))
			}
			if n < 1 {
				w.stopped = true
				return nil
			}
			w.in.Limit = ptr(n)
		case w.counted && w.matches < w.end:
			// Only an unfiltered list stops reading at its page; a
			// filtered one counts on past it anyway, so a Limit would
			// only cut its reading into more, smaller calls.
			w.in.Limit = ptr(int32(min(w.end-w.matches, maxQueryLimit)))
		}
		w.in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
		out, err := w.t.db.Query(ctx, w.in)
		if err != nil {
			return err
		}
		w.budget.spend(out.ConsumedCapacity)
		if err := w.pass(ctx, out); err != nil {
			return err
		}
	}
	return nil
}

// pass counts the entries of one Query page, fetching and testing them
// first when matching needs the records.
func (w *walk) pass(ctx context.Context, out *dynamodb.QueryOutput) error {
	readBefore := w.read
	entries := out.Items
	for len(entries) > 0 {
		var fetched map[int64]Item
		n := len(entries)
		if w.verify != nil && !w.whole {
			n = min(n, maxBatchKeys, max(0, int((w.budget.left-counterWorst)/w.t.itemWorst())))
			if n < 1 {
				// The budget ends inside this page: resume at its first
				// entry not tested.
				w.stopped = true
				w.at.Read = readBefore + int64(out.ScannedCount)*int64(len(out.Items)-len(entries))/int64(len(out.Items))
				return nil
			}
			ids := make([]int64, n)
			for i, e := range entries[:n] {
				ids[i], _ = IntAttr(e, AttrID)
			}
			var err error
			if fetched, err = w.t.batchGet(ctx, w.account, ids, &w.budget); err != nil {
				return err
			}
		}
		for _, e := range entries[:n] {
			var item Item
			switch {
			case w.whole:
				if item = e; !isLive(item) || (w.verify != nil && !w.verify(item)) {
					w.at = w.position(e)
					continue
				}
			case w.verify != nil:
				id, _ := IntAttr(e, AttrID)
				if item = fetched[id]; item == nil || !isLive(item) || !w.verify(item) {
					w.at = w.position(e)
					continue
				}
			}
			if w.matches >= w.offset && w.matches < w.end {
				id, _ := IntAttr(e, AttrID)
				w.page = append(w.page, pageEntry{id: id, before: w.at, item: item})
			}
			w.matches++
			w.at = w.position(e)
			if w.matches == w.end {
				end := w.at
				w.pageEnd = &end
			}
		}
		entries = entries[n:]
	}
	w.read = readBefore + int64(out.ScannedCount)
	w.at.Read = w.read
	if len(out.LastEvaluatedKey) == 0 {
		w.ended = true
	} else {
		w.in.ExclusiveStartKey = out.LastEvaluatedKey
		w.at = w.position(out.LastEvaluatedKey)
	}
	return nil
}

// fetchPage reads the page's records (a search by result has them
// already), as many as the budget allows; withCount reads the counter in
// the same call, for the total of an unfiltered list.
func (w *walk) fetchPage(ctx context.Context, withCount bool) error {
	var pending []pageEntry
	for _, e := range w.page {
		if e.item != nil {
			w.keep(e, e.item)
		} else {
			pending = append(pending, e)
		}
	}
	for first := true; first || len(pending) > 0; first = false {
		// Kept back: the counter, read in this call or for an estimate.
		left := w.budget.left - counterWorst
		n := min(len(pending), maxBatchKeys, max(0, int(left/w.t.itemWorst())))
		if n < 1 && len(pending) > 0 {
			w.cutOff = true
			next := pending[0].before
			w.pageEnd, w.stopped = &next, true
			return nil
		}
		ids := make([]int64, 0, n+1)
		for _, e := range pending[:n] {
			ids = append(ids, e.id)
		}
		if withCount && first {
			ids = append(ids, counterID)
		}
		if len(ids) == 0 {
			return nil
		}
		byID, err := w.t.batchGet(ctx, w.account, ids, &w.budget)
		if err != nil {
			return err
		}
		for _, e := range pending[:n] {
			// An index entry whose record is gone (deleted since the index
			// read, or the index still trailing the delete) is left out
			// rather than shown as a hole.
			if item, ok := byID[e.id]; ok && isLive(item) {
				w.keep(e, item)
			}
		}
		if withCount && first {
			total := countOf(byID[counterID], w.q)
			w.total = &total
		}
		pending = pending[n:]
	}
	return nil
}

func (w *walk) keep(e pageEntry, item Item) {
	if w.items == nil {
		w.items = make([]Item, 0, len(w.page))
		w.before = make([]records.Cursor, 0, len(w.page))
	}
	w.items = append(w.items, item)
	w.before = append(w.before, e.before)
}

// result is the page, with its total exact or estimated, and where to
// resume when a bound was hit.
func (w *walk) result(ctx context.Context) (Page, error) {
	p := Page{Items: w.items, Before: w.before, Start: max(w.offset, w.firstMatch)}
	if len(w.page) > 0 {
		p.Start = w.page[0].before.Matches
	}
	p.Partial = w.cutOff || (w.stopped && w.matches < w.end)
	if w.counted && w.total == nil {
		// The budget ended the page before the counter was read with it.
		total, err := w.t.scopeCount(ctx, w.account, w.q, &w.budget)
		if err != nil {
			return Page{}, err
		}
		w.total = &total
	}
	switch {
	case w.total != nil:
		p.Total = *w.total
	case w.ended:
		p.Total = w.matches
	default:
		total, err := w.estimate(ctx)
		if err != nil {
			return Page{}, err
		}
		p.Total, p.TotalEstimated = total, true
	}
	switch {
	case w.cutOff:
		p.Next = w.pageEnd
	case p.Partial:
		next := w.at
		p.Next = &next
	case w.stopped && w.pageEnd != nil && !w.ended:
		// The page is whole but the counting stopped: the next page
		// starts where this one ended.
		p.Next = w.pageEnd
	}
	return p, nil
}

// estimate is the matches counted plus the unread part of the index times
// the share of matches among the entries this request read.
func (w *walk) estimate(ctx context.Context) (int64, error) {
	entries, err := w.t.indexEntries(ctx, w.account, w.q, &w.budget)
	if err != nil {
		return 0, err
	}
	read, matched := w.read-w.firstRead, w.matches-w.firstMatch
	if read <= 0 {
		read, matched = w.read, w.matches
	}
	total := w.matches
	if unread := entries - w.read; unread > 0 && read > 0 {
		total += int64(math.Round(float64(unread) * float64(matched) / float64(read)))
	}
	return max(total, w.matches), nil
}

// indexEntries is how many entries the list's index range holds: the
// records of the scope in id order, of the account in name order (where
// the scope is a filter).
func (t *Table) indexEntries(ctx context.Context, account string, q records.ListQuery, b *budget) (int64, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:              &t.name,
		Key:                    key(account, counterID),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		return 0, err
	}
	b.spend(out.ConsumedCapacity)
	if q.SortBy == "name" {
		// The name index holds every scope.
		q.AllScopes = true
	}
	return countOf(out.Item, q), nil
}

// countOf is how many records of the list's scope the counter item counts:
// of every scope, for a list of them all.
func countOf(counter Item, q records.ListQuery) int64 {
	if !q.AllScopes {
		n, _ := IntAttr(counter, countAttr(q.Scope))
		return n
	}
	var n int64
	for name := range counter {
		if strings.HasPrefix(name, countPrefix) {
			c, _ := IntAttr(counter, name)
			n += c
		}
	}
	return n
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
	if t.res.Scope != nil && !scopeInKey && !q.AllScopes {
		e.equal(t.res.Scope.Field, q.Scope)
	}
	for _, f := range q.Filters {
		if !t.onRecord(f.Attr) {
			e.equal(f.Attr, f.Value)
		}
	}
}

// onRecord reports whether the filter on attr matches the records, which
// the indexes do not project it into (records.Filter.OnRecord).
func (t *Table) onRecord(attr string) bool { return t.filter(attr).OnRecord }

// filter is the resource's filter on attr.
func (t *Table) filter(attr string) records.Filter {
	for _, f := range t.res.Filters {
		if f.Param == attr {
			return f
		}
	}
	return records.Filter{}
}

// recordFilters are the list's filters that match the records, as a test
// of a fetched record; nil when there are none.
func (t *Table) recordFilters(q records.ListQuery) func(Item) bool {
	var on []records.Equal
	for _, f := range q.Filters {
		if t.onRecord(f.Attr) {
			on = append(on, f)
		}
	}
	if len(on) == 0 {
		return nil
	}
	return func(item Item) bool {
		for _, f := range on {
			v := item[f.Attr]
			if _, null := v.(*types.AttributeValueMemberNULL); v == nil || null {
				v = item[t.filter(f.Attr).Else]
			}
			if !equalAttr(v, marshalValue(f.Value)) {
				return false
			}
		}
		return true
	}
}

// equalAttr compares two scalar attribute values as DynamoDB's = does.
func equalAttr(a, b types.AttributeValue) bool {
	switch a := a.(type) {
	case *types.AttributeValueMemberS:
		b, ok := b.(*types.AttributeValueMemberS)
		return ok && a.Value == b.Value
	case *types.AttributeValueMemberN:
		b, ok := b.(*types.AttributeValueMemberN)
		if !ok {
			return false
		}
		x, errA := strconv.ParseFloat(a.Value, 64)
		y, errB := strconv.ParseFloat(b.Value, 64)
		return errA == nil && errB == nil && x == y
	case *types.AttributeValueMemberBOOL:
		b, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && a.Value == b.Value
	}
	return false
}

// IndexAttributes are the attributes res's list indexes (IndexByID and
// IndexByName) carry beside their keys: what a list's filter expression
// reads, the folded name a search looks in, favorite, each filter and the
// scope. Nothing larger: a list reads the index entry of every record it
// passes over. template.yaml projects these (make generate writes them).
func IndexAttributes(res *records.Resource) []string {
	attrs := []string{AttrNameFold, AttrFavorite}
	for _, f := range res.Filters {
		if !f.OnRecord && !slices.Contains(attrs, f.Param) {
			attrs = append(attrs, f.Param)
		}
	}
	if res.Scope != nil && !slices.Contains(attrs, res.Scope.Field) {
		attrs = append(attrs, res.Scope.Field)
	}
	return attrs
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
		ScanIndexForward: ptr(!q.Desc),
		// The sort key too, so that a cursor can resume after any entry.
		ProjectionExpression: ptr("#id, #sortkey"),
	}
	switch {
	case wholeTable(q):
		// The records, ids 1 and up: not the counter (0) nor the
		// account's other items below it; tombstones filtered out.
		in.ProjectionExpression = nil
		in.ConsistentRead = ptr(true)
		in.KeyConditionExpression = ptr("#account = :account AND #id BETWEEN :lo AND :hi")
		e.values[":lo"] = num(1)
		e.values[":hi"] = num(scopeStride - 1)
		e.names["#idkey"] = AttrIDKey
		e.filters = append(e.filters, "attribute_exists(#idkey)")
	case byID:
		in.IndexName = ptr(IndexByID)
		in.KeyConditionExpression = ptr("#account = :account AND #idkey BETWEEN :lo AND :hi")
		e.names["#idkey"] = AttrIDKey
		e.values[":lo"] = num(idKey(q.Scope, 1))
		e.values[":hi"] = num(idKey(q.Scope, scopeStride-1))
	default:
		in.IndexName = ptr(IndexByName)
		in.KeyConditionExpression = ptr("#account = :account")
	}
	if in.ProjectionExpression != nil {
		e.names["#sortkey"] = sortAttr(q)
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

// scopeCount is how many records the list's scope holds (every scope's,
// for a list of them all), read strongly consistent.
func (t *Table) scopeCount(ctx context.Context, account string, q records.ListQuery, b *budget) (int64, error) {
	in := &dynamodb.GetItemInput{
		TableName:              &t.name,
		Key:                    key(account, counterID),
		ConsistentRead:         ptr(true),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	}
	if !q.AllScopes {
		in.ProjectionExpression = ptr("#count")
		in.ExpressionAttributeNames = map[string]string{"#count": countAttr(q.Scope)}
	}
	out, err := t.db.GetItem(ctx, in)
	if err != nil {
		return 0, err
	}
	b.spend(out.ConsumedCapacity)
	return countOf(out.Item, q), nil
}

// maxBatchKeys is BatchGetItem's limit of keys per call.
const maxBatchKeys = 100

// batchGet reads the items of ids, strongly consistent, by id; ids with no
// item are absent.
// The budget is charged what they cost; the caller makes sure it can.
func (t *Table) batchGet(ctx context.Context, account string, ids []int64, b *budget) (map[int64]Item, error) {
	byID := make(map[int64]Item, len(ids))
	for start := 0; start < len(ids); start += maxBatchKeys {
		batch := ids[start:min(start+maxBatchKeys, len(ids))]
		keys := make([]Item, len(batch))
		for i, id := range batch {
			keys[i] = key(account, id)
		}
		pending := map[string]types.KeysAndAttributes{t.name: {Keys: keys, ConsistentRead: ptr(true)}}
		for attempt := 0; len(pending) > 0; attempt++ {
			if attempt > maxUnprocessedRetries {
				return nil, fmt.Errorf("batch get on %s: keys still unprocessed", t.name)
			}
			out, err := t.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending,
				ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			if err != nil {
				return nil, err
			}
			b.spendAll(out.ConsumedCapacity)
			for _, item := range out.Responses[t.name] {
				id, _ := IntAttr(item, AttrID)
				byID[id] = item
			}
			pending = out.UnprocessedKeys
		}
	}
	return byID, nil
}

// marshalValue stores a validated value: string, bool, int64, float64 or
// nil (null), or the lists and maps of them a generation writes (a
// document's texts), each of which attributevalue writes.
func marshalValue(v any) types.AttributeValue {
	av, err := attributevalue.Marshal(v)
	if err != nil {
		panic("store: a validated value that does not marshal: " + err.Error())
	}
	return av
}
