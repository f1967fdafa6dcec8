package ddblocal

// Meter: what a DynamoDB client's calls cost, on DynamoDB Local, as AWS
// would bill them: request units per call and HTTP round trips, with
// DynamoDB Local's known differences from AWS corrected. make bench reports
// its figures; tests can hold a request's cost with it.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"contentapi/shared/local/sam"
)

// MeteredCall is one DynamoDB operation the app made, as the meter saw it.
type MeteredCall struct {
	Op, Table, Index string
	// Key is the item's key of a call on one item (GetItem, PutItem,
	// UpdateItem, DeleteItem), nil for any other.
	Key map[string]types.AttributeValue
	// Purpose is "auth" for a key lookup, "ratelimit" for a rate-limit
	// lease, "" for the operation's own work.
	Purpose string
	// RoundTrips counts HTTP attempts (retries included), as AWS would
	// see them (see awsPage).
	RoundTrips int
	// LocalPages is how many DynamoDB Local calls made up one AWS page.
	LocalPages int
	// Eventual is set on a read that is not strongly consistent.
	Eventual bool
	Write    bool
	// Units is what AWS bills: DynamoDB Local's ConsumedCapacity, corrected
	// where DynamoDB Local is known to count differently (see Corrected).
	Units float64
	// LocalUnits is DynamoDB Local's own ConsumedCapacity figure.
	LocalUnits float64
	// Corrected says why Units differs from LocalUnits ("" when it does not).
	Corrected string
	Err       error
}

func (c MeteredCall) String() string {
	s := c.Op + " " + c.Table
	if c.Purpose != "" {
		s = "(" + c.Purpose + ") " + s
	}
	if c.Index != "" {
		s += "/" + c.Index
	}
	kind := "RRU"
	if c.Write {
		kind = "WRU"
	}
	s += fmt.Sprintf(" %g %s", c.Units, kind)
	switch {
	case c.Corrected != "" && c.Units != c.LocalUnits:
		s += fmt.Sprintf(" (DynamoDB Local: %g; %s)", c.LocalUnits, c.Corrected)
	case c.Corrected != "":
		s += " (" + c.Corrected + ")"
	}
	if c.Eventual {
		s += " eventually consistent"
	}
	if c.RoundTrips != 1 {
		s += fmt.Sprintf(" [%d round trips]", c.RoundTrips)
	}
	if c.LocalPages > 1 {
		s += fmt.Sprintf(" [one AWS page: %d DynamoDB Local pages]", c.LocalPages)
	}
	if c.Err != nil {
		s += " error: " + shortErr(c.Err)
	}
	return s
}

func shortErr(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		msg := api.ErrorMessage()
		if len(msg) > 100 {
			msg = msg[:100] + "..."
		}
		return api.ErrorCode() + ": " + msg
	}
	s := err.Error()
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return s
}

// Meter is an aws-sdk-go-v2 middleware pair on the bench's own client: it
// asks every operation for ReturnConsumedCapacity=INDEXES (the app's code
// stays as it is) and records each operation's capacity and HTTP round trips.
type Meter struct {
	// projected[table][index] is what each local secondary index holds.
	projected map[string]map[string][]string
	// The tables whose calls are counted apart: key lookups and rate-limit
	// leases.
	keysTable, rateLimitTable string
	// transactionScale turns DynamoDB Local's units for a transaction into
	// AWS's (see CalibrateTransactions); 0 until calibrated.
	transactionScale float64

	mu    sync.Mutex
	calls []MeteredCall
}

// NewMeter is a meter for the tables of tmpl, named as in names (by logical ID):
// it knows their index projections, to tell a read that stays in an index
// from one that fetches from the table.
func NewMeter(tmpl *sam.Template, names map[string]string) (*Meter, error) {
	tables, err := tmpl.Tables()
	if err != nil {
		return nil, err
	}
	m := &Meter{projected: map[string]map[string][]string{}, keysTable: names["ApiKeysTable"], rateLimitTable: names["RateLimitTable"]}
	for _, t := range tables {
		var tableKeys []string
		for _, k := range t.Input.KeySchema {
			tableKeys = append(tableKeys, aws.ToString(k.AttributeName))
		}
		byIndex := map[string][]string{}
		for _, lsi := range t.Input.LocalSecondaryIndexes {
			attrs := slices.Clone(tableKeys)
			for _, k := range lsi.KeySchema {
				attrs = append(attrs, aws.ToString(k.AttributeName))
			}
			if p := lsi.Projection; p != nil {
				if p.ProjectionType == types.ProjectionTypeAll {
					attrs = nil // everything: never a fetch
				} else {
					attrs = append(attrs, p.NonKeyAttributes...)
				}
			}
			byIndex[aws.ToString(lsi.IndexName)] = attrs
		}
		m.projected[names[t.LogicalID]] = byIndex
	}
	return m, nil
}

// Options adds the meter to a client's options.
func (m *Meter) Options(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, m.register)
}

func (m *Meter) register(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("BenchMeter", m.initialize), middleware.Before); err != nil {
		return err
	}
	// Deserialize runs once per HTTP attempt, retries included.
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("BenchRoundTrips", roundTrip), middleware.Before)
}

type callKey struct{}

func roundTrip(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	if c, ok := ctx.Value(callKey{}).(*MeteredCall); ok {
		c.RoundTrips++
	}
	return next.HandleDeserialize(ctx, in)
}

// field is the named field of the struct v points to (invalid if none):
// the inputs and outputs of every DynamoDB operation name their table,
// consistency and consumed capacity alike.
func field(v any, name string) reflect.Value {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return reflect.Value{}
	}
	return rv.Elem().FieldByName(name)
}

func (m *Meter) initialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	p := in.Parameters
	c := &MeteredCall{Op: strings.TrimSuffix(reflect.TypeOf(p).Elem().Name(), "Input")}
	c.Write = strings.Contains(c.Op, "Write") || slices.Contains([]string{"PutItem", "UpdateItem", "DeleteItem"}, c.Op)
	if f := field(p, "ReturnConsumedCapacity"); f.IsValid() {
		f.Set(reflect.ValueOf(types.ReturnConsumedCapacityIndexes))
	}
	if f := field(p, "TableName"); f.IsValid() {
		c.Table = aws.ToString(f.Interface().(*string))
	}
	if f := field(p, "Key"); f.IsValid() {
		c.Key, _ = f.Interface().(map[string]types.AttributeValue)
	}
	if f := field(p, "IndexName"); f.IsValid() {
		c.Index = aws.ToString(f.Interface().(*string))
	}
	if f := field(p, "ConsistentRead"); f.IsValid() && c.Op != "Scan" {
		c.Eventual = !aws.ToBool(f.Interface().(*bool))
	}
	var query *dynamodb.QueryInput
	switch v := p.(type) {
	case *dynamodb.BatchGetItemInput:
		c.Table = firstKey(v.RequestItems)
		for _, ka := range v.RequestItems {
			c.Eventual = c.Eventual || !aws.ToBool(ka.ConsistentRead)
		}
	case *dynamodb.BatchWriteItemInput:
		c.Table = firstKey(v.RequestItems)
	case *dynamodb.TransactWriteItemsInput:
		if len(v.TransactItems) > 0 {
			c.Table = transactTable(v.TransactItems[0])
		}
	case *dynamodb.QueryInput:
		query = v
		if m.readsOnlyIndex(v) && v.ProjectionExpression != nil {
			// DynamoDB Local fetches every entry's item from the table when
			// a local secondary index is read with a ProjectionExpression,
			// even one naming only projected attributes: it charges for
			// the fetch and ends pages at 1 MB of fetched items. AWS reads
			// only the index (Query API reference, Select). Asking for
			// ALL_PROJECTED_ATTRIBUTES instead makes DynamoDB Local read,
			// charge and page as AWS does for the store's request; the
			// store ignores the extra attributes it gets back.
			in.Parameters = allProjected(v)
			c.Corrected = "sent as Select=ALL_PROJECTED_ATTRIBUTES, see Method"
		}
	}
	switch {
	case c.Table == m.keysTable && c.Op == "GetItem":
		c.Purpose = "auth"
	case c.Table == m.rateLimitTable && c.Op == "UpdateItem":
		c.Purpose = "ratelimit"
	}
	ctx = context.WithValue(ctx, callKey{}, c)
	var out middleware.InitializeOutput
	var md middleware.Metadata
	var err error
	if query != nil {
		out, md, err = awsPage(ctx, in, next, c)
	} else {
		out, md, err = next.HandleInitialize(ctx, in)
	}
	if c.LocalPages > 1 {
		c.RoundTrips -= c.LocalPages - 1
	}
	c.Err = err
	var ccs []types.ConsumedCapacity
	if f := field(out.Result, "ConsumedCapacity"); f.IsValid() {
		switch v := f.Interface().(type) {
		case *types.ConsumedCapacity:
			if v != nil {
				ccs = []types.ConsumedCapacity{*v}
			}
		case []types.ConsumedCapacity:
			ccs = v
		}
	}
	var tableFetch float64
	for _, cc := range ccs {
		c.LocalUnits += aws.ToFloat64(cc.CapacityUnits)
		if cc.Table != nil {
			tableFetch += aws.ToFloat64(cc.Table.CapacityUnits)
		}
	}
	c.Units = c.LocalUnits
	if c.Op == "TransactWriteItems" && m.transactionScale > 0 {
		// AWS bills each write of a transaction twice, index writes
		// included; DynamoDB Local's own figure is scaled to that.
		c.Units = c.LocalUnits * m.transactionScale
		c.Corrected = "a transaction's writes priced twice, as AWS bills them"
	}
	if query != nil && m.readsOnlyIndex(query) && tableFetch > 0 {
		// Should the rewrite above not apply, still bill as AWS does.
		c.Units -= tableFetch
		c.Corrected = "table fetch DynamoDB Local charged removed"
	}
	var refused *types.ConditionalCheckFailedException
	if c.Write && c.LocalUnits == 0 && errors.As(err, &refused) {
		// AWS bills a write its condition refused as a write of the item
		// as it stands, at least one unit; DynamoDB Local's refusal
		// carries no capacity. The item's size is known when the write
		// asked for it back (ReturnValuesOnConditionCheckFailure).
		c.Units = max(1, math.Ceil(float64(itemBytes(refused.Item))/1024))
		c.Corrected = "a refused conditional write, billed as on AWS"
	}
	m.mu.Lock()
	m.calls = append(m.calls, *c)
	m.mu.Unlock()
	return out, md, err
}

// itemBytes is an item's size as DynamoDB counts it for billing: each
// attribute's name and value, numbers at about one byte per two digits,
// documents with their per-element overhead.
func itemBytes(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueBytes(v)
	}
	return n
}

func valueBytes(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)/2 + 1
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += len(s)/2 + 1
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueBytes(e)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + itemBytes(v.Value) + len(v.Value)
	}
	return 1 // BOOL, NULL
}

// readsOnlyIndex reports a Query of a local secondary index that asks only
// for attributes the index holds.
func (m *Meter) readsOnlyIndex(in *dynamodb.QueryInput) bool {
	if in.IndexName == nil {
		return false
	}
	attrs, ok := m.projected[aws.ToString(in.TableName)][aws.ToString(in.IndexName)]
	if !ok {
		return false
	}
	if attrs == nil {
		return true // ALL projection
	}
	if in.Select == types.SelectCount || in.Select == types.SelectAllProjectedAttributes {
		return true
	}
	if in.ProjectionExpression == nil {
		return false // all attributes: a fetch indeed
	}
	for _, p := range strings.Split(*in.ProjectionExpression, ",") {
		name := strings.TrimSpace(p)
		if i := strings.IndexAny(name, ".["); i >= 0 {
			name = name[:i]
		}
		if strings.HasPrefix(name, "#") {
			name = in.ExpressionAttributeNames[name]
		}
		if !slices.Contains(attrs, name) {
			return false
		}
	}
	return true
}

// awsPageBytes is where a Query page ends on AWS: 1 MB of data read.
const awsPageBytes = 1 << 20

// awsPage runs an index Query as AWS would page it. DynamoDB Local ends a
// page of a local secondary index at 1 MB of the table items of the
// entries it returns (about 190 documents of 5.5 KB, however many entries
// it read), AWS at 1 MB of index entries read, or at Limit. So this asks
// DynamoDB Local for further pages itself until AWS would have stopped, and
// where one DynamoDB Local page reads past AWS's 1 MB, asks again for just
// the entries that fit; the store gets one page per AWS round trip. Bytes
// read are estimated from the capacity charged (4 KB per strongly
// consistent read unit, rounded up per DynamoDB Local page).
func awsPage(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler, c *MeteredCall) (middleware.InitializeOutput, middleware.Metadata, error) {
	sub := *in.Parameters.(*dynamodb.QueryInput)
	limit := aws.ToInt32(sub.Limit)
	perUnit := 4096.0
	if !aws.ToBool(sub.ConsistentRead) {
		perUnit = 8192 // eventually consistent: half a unit per 4 KB
	}
	var merged *dynamodb.QueryOutput
	var read float64 // bytes of this AWS page so far
	split := false
	for pages := 1; ; pages++ {
		req := sub
		in.Parameters = &req
		out, md, err := next.HandleInitialize(ctx, in)
		if err != nil {
			return out, md, err
		}
		// The SDK decodes every attempt into one output value per
		// operation call: take this page out of it, and clear it for the
		// next, which would otherwise inherit fields it does not set.
		shared := out.Result.(*dynamodb.QueryOutput)
		page := new(dynamodb.QueryOutput)
		*page = *shared
		*shared = dynamodb.QueryOutput{}
		var bytes float64
		if page.ConsumedCapacity != nil {
			bytes = aws.ToFloat64(page.ConsumedCapacity.CapacityUnits) * perUnit
		}
		if read+bytes > awsPageBytes && page.ScannedCount > 1 && !split {
			// AWS stops inside this page: ask again for what fits.
			fit := max(1, int32(float64(page.ScannedCount)*(awsPageBytes-read)/bytes))
			if sub.Limit == nil || fit < *sub.Limit {
				sub.Limit = aws.Int32(fit)
			}
			split = true
			continue
		}
		read += bytes
		if merged == nil {
			merged = page
		} else {
			merged.Items = append(merged.Items, page.Items...)
			merged.Count += page.Count
			merged.ScannedCount += page.ScannedCount
			merged.LastEvaluatedKey = page.LastEvaluatedKey
			addCapacity(merged.ConsumedCapacity, page.ConsumedCapacity)
		}
		if split || len(page.LastEvaluatedKey) == 0 || (limit > 0 && merged.ScannedCount >= limit) || read >= awsPageBytes {
			out.Result = merged
			c.LocalPages = pages
			return out, md, nil
		}
		sub.ExclusiveStartKey = page.LastEvaluatedKey
		if limit > 0 {
			sub.Limit = aws.Int32(limit - merged.ScannedCount)
		}
	}
}

func addCapacity(into, from *types.ConsumedCapacity) {
	if into == nil || from == nil {
		return
	}
	add := func(a **float64, b *float64) {
		*a = aws.Float64(aws.ToFloat64(*a) + aws.ToFloat64(b))
	}
	add(&into.CapacityUnits, from.CapacityUnits)
	if into.Table != nil && from.Table != nil {
		add(&into.Table.CapacityUnits, from.Table.CapacityUnits)
	}
	for _, indexes := range [][2]map[string]types.Capacity{
		{into.LocalSecondaryIndexes, from.LocalSecondaryIndexes},
		{into.GlobalSecondaryIndexes, from.GlobalSecondaryIndexes},
	} {
		for name, cap := range indexes[1] {
			if have, ok := indexes[0][name]; ok {
				add(&have.CapacityUnits, cap.CapacityUnits)
				indexes[0][name] = have
			}
		}
	}
}

// CalibrateTransactions learns how DynamoDB Local prices a transaction
// against the same write made alone, so that transactions are billed as AWS
// bills them: every write twice. It writes one probe item to table twice
// (alone, then in a transaction) under partition key value account and a
// negative sort key no record uses, through db (not metered), and removes
// it. partition and sort name the table's key attributes.
func (m *Meter) CalibrateTransactions(ctx context.Context, db *dynamodb.Client, table, partition, sort, account string) error {
	probe := func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{
			partition: &types.AttributeValueMemberS{Value: account},
			sort:      &types.AttributeValueMemberN{Value: id},
			"probe":   &types.AttributeValueMemberS{Value: strings.Repeat("x", 2500)},
		}
	}
	alone, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: probe("-1"),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		return err
	}
	tx, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems:          []types.TransactWriteItem{{Put: &types.Put{TableName: &table, Item: probe("-2")}}},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		return err
	}
	for _, id := range []string{"-1", "-2"} {
		k := probe(id)
		delete(k, "probe")
		if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: k}); err != nil {
			return err
		}
	}
	one := aws.ToFloat64(alone.ConsumedCapacity.CapacityUnits)
	var both float64
	for _, cc := range tx.ConsumedCapacity {
		both += aws.ToFloat64(cc.CapacityUnits)
	}
	if one <= 0 || both <= 0 {
		return fmt.Errorf("ddblocal: DynamoDB Local reported no capacity for the probe writes")
	}
	m.transactionScale = 2 * one / both
	return nil
}

// allProjected is q reading all the index's attributes instead of a
// projection of them, without the names only the projection used.
func allProjected(q *dynamodb.QueryInput) *dynamodb.QueryInput {
	cp := *q
	cp.ProjectionExpression = nil
	cp.Select = types.SelectAllProjectedAttributes
	used := aws.ToString(q.KeyConditionExpression) + " " + aws.ToString(q.FilterExpression)
	cp.ExpressionAttributeNames = map[string]string{}
	for k, v := range q.ExpressionAttributeNames {
		if nameUsed(used, k) {
			cp.ExpressionAttributeNames[k] = v
		}
	}
	if len(cp.ExpressionAttributeNames) == 0 {
		cp.ExpressionAttributeNames = nil
	}
	return &cp
}

// nameUsed reports whether the placeholder name (#x) occurs in expr as a
// whole token.
func nameUsed(expr, name string) bool {
	for i := 0; ; {
		j := strings.Index(expr[i:], name)
		if j < 0 {
			return false
		}
		end := i + j + len(name)
		if end == len(expr) || !isNameChar(expr[end]) {
			return true
		}
		i = end
	}
}

func isNameChar(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func firstKey[V any](m map[string]V) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, "+")
}

func transactTable(t types.TransactWriteItem) string {
	switch {
	case t.Put != nil:
		return aws.ToString(t.Put.TableName)
	case t.Update != nil:
		return aws.ToString(t.Update.TableName)
	case t.Delete != nil:
		return aws.ToString(t.Delete.TableName)
	case t.ConditionCheck != nil:
		return aws.ToString(t.ConditionCheck.TableName)
	}
	return ""
}

// Measure runs f and returns the calls made meanwhile. Measurements must
// not overlap.
func (m *Meter) Measure(f func()) []MeteredCall {
	m.mu.Lock()
	m.calls = nil
	m.mu.Unlock()
	f()
	m.mu.Lock()
	defer m.mu.Unlock()
	calls := m.calls
	m.calls = nil
	return calls
}

// MeteredOps names the calls' operations, in order: "Query", "UpdateItem".
func MeteredOps(calls []MeteredCall) []string {
	ops := make([]string, len(calls))
	for i, c := range calls {
		ops[i] = c.Op
	}
	return ops
}

// MeteredTotals sums calls: round trips, and billed units (reads and writes apart).
// Rate-limit leases are counted apart: they are amortized over many
// requests (see RateLimit).
type MeteredTotals struct {
	RoundTrips   int
	Reads        float64
	Writes       float64
	Auth         int // key lookups
	RateLimit    int // rate-limit leases
	RateLimitWRU float64
}

func SumMetered(calls []MeteredCall) MeteredTotals {
	var t MeteredTotals
	for _, c := range calls {
		switch c.Purpose {
		case "ratelimit":
			t.RateLimit += c.RoundTrips
			t.RateLimitWRU += c.Units
			continue
		case "auth":
			t.Auth += c.RoundTrips
		}
		t.RoundTrips += c.RoundTrips
		if c.Write {
			t.Writes += c.Units
		} else {
			t.Reads += c.Units
		}
	}
	return t
}
