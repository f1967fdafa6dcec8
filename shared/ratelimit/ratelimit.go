// Package ratelimit limits requests per API key and minute across every
// warm instance of a function.
//
// Why leases: a DynamoDB counter written on every request would cost one
// write unit per request, five times the price of the read it guards. A
// purely in-memory counter costs nothing but limits each instance
// separately, so N warm instances would allow N times the limit. Here each
// instance leases a block of the key's budget for the current minute with
// one conditional UpdateItem and spends it from memory: the global limit is
// never exceeded, and at the default 600/min a lease of 12 costs one write
// per 12 requests. An instance that spends a whole lease within the minute
// leases twice as much the next time, up to four blocks: a busy key then
// costs one write per 48 requests, and every lease is also a DynamoDB call
// in the request that takes it. The price of leasing is that an instance
// holding unspent tokens can make a busy sibling throttle slightly early
// (at most one lease per instance, per minute: a block for an instance
// that was idle, up to four for one that was busy).
//
// Why rejected requests write nothing: once an instance learns that a key's
// minute is spent (a lease that took the last of it, or one refused), it
// remembers that until the minute ends and answers 429 from memory. A flood
// over the limit costs each warm instance at most one refused write per key
// and minute, not one per request.
//
// The counters live in a table of their own (the template's RateLimitTable),
// so the functions can write them without any write access to the keys.
package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/auth"
	"contentapi/shared/httpapi"
)

// DB is the part of the DynamoDB client the limiter uses.
type DB interface {
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

const (
	window = time.Minute
	// keep window counters a while after their minute, then TTL drops them.
	counterTTL = time.Hour
	// leasesPerWindow: a key at its full rate takes about this many leases
	// a minute (the block is limit/leasesPerWindow, at least 1) while its
	// leases are a block each.
	leasesPerWindow = 50
	// maxBlocks is how many blocks a lease grows to.
	maxBlocks = 4
	// AttrWindow is the counters table's partition key: key id and minute.
	AttrWindow = "window"
	// AttrTTL is when DynamoDB's TTL may drop a counter (Unix seconds).
	AttrTTL = "ttl"
	// maxTracked bounds the keys an instance remembers; past it, it forgets
	// them all, which costs at most one extra write per key.
	maxTracked = 10_000
)

// Schema is the counters table as DynamoDB makes it, but for its name and
// its settings (TTL on AttrTTL): a counter by its window. template.yaml's
// RateLimitTable says the same: make generate writes it from here
// (cmd/listgen).
func Schema() dynamodb.CreateTableInput {
	return dynamodb.CreateTableInput{
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(AttrWindow), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(AttrWindow), KeyType: types.KeyTypeHash}},
	}
}

// Limiter meters requests per API key.
type Limiter struct {
	db    DB
	table string
	limit int64
	block int64
	// limitText is limit as its header says it; resetText the last
	// window's reset time.
	limitText string
	resetText atomic.Pointer[windowReset]
	// Now is the clock; tests may set it.
	Now func() time.Time

	mu     sync.Mutex
	leases map[string]*lease
}

// lease is what this instance holds of a key's current window.
type lease struct {
	window int64
	tokens int64 // leased and not yet spent
	used   int64 // the window's global count after our last lease
	// spent: the window's whole budget is leased out, so once tokens are
	// gone every request is refused without asking the table again.
	spent bool
	// size is the next lease's: a block at first, twice the last after
	// each one spent in full, at most maxBlocks blocks.
	size int64
}

// New limits each key to limit requests a minute, counting in table (the
// template's RateLimitTable).
func New(db DB, table string, limit int) *Limiter {
	return &Limiter{
		db: db, table: table, limit: int64(limit), limitText: strconv.Itoa(limit),
		block:  max(1, int64(limit)/leasesPerWindow),
		Now:    time.Now,
		leases: map[string]*lease{},
	}
}

// Allow spends one request of p's key. It returns the X-RateLimit headers,
// and a 429 once the key's minute is spent.
func (l *Limiter) Allow(ctx context.Context, p auth.Principal) (http.Header, error) {
	return l.AllowKey(ctx, p.KeyID)
}

// AllowKey spends one request counted under key, whatever it names (an API
// key's id, or something a request acts on, such as a webhook endpoint's
// test events); keys of different kinds must not collide. It returns the
// X-RateLimit headers, and a 429 once the key's minute is spent.
func (l *Limiter) AllowKey(ctx context.Context, key string) (http.Header, error) {
	now := l.Now()
	w := now.Unix() / int64(window/time.Second)
	reset := (w + 1) * int64(window/time.Second)
	refuse := func() (http.Header, error) {
		return l.headers(0, reset), httpapi.Throttled(time.Unix(reset, 0).Sub(now))
	}
	remaining, ok, spent, size := l.spend(key, w)
	switch {
	case ok:
		return l.headers(remaining, reset), nil
	case spent:
		return refuse()
	}
	used, granted, err := l.lease(ctx, key, w, reset, size)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	le := l.current(key, w)
	le.used = max(le.used, used)
	le.spent = le.used >= l.limit
	if granted == 0 {
		le.spent = true
		l.mu.Unlock()
		return refuse()
	}
	le.tokens += granted - 1
	le.size = min(2*granted, maxBlocks*l.block)
	remaining = l.limit - le.used + le.tokens
	l.mu.Unlock()
	return l.headers(remaining, reset), nil
}

// spend takes a token from this instance's lease, if it has one; else it
// says whether the window is known to be spent, and how large a lease to
// ask for.
func (l *Limiter) spend(keyID string, w int64) (remaining int64, ok, spent bool, size int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	le := l.current(keyID, w)
	if le.tokens == 0 {
		return 0, false, le.spent, max(le.size, l.block)
	}
	le.tokens--
	return l.limit - le.used + le.tokens, true, false, 0
}

func (l *Limiter) current(keyID string, w int64) *lease {
	le := l.leases[keyID]
	if le == nil || le.window != w {
		if len(l.leases) >= maxTracked {
			// Old windows are worthless; dropping all keeps memory bounded.
			clear(l.leases)
		}
		le = &lease{window: w}
		l.leases[keyID] = le
	}
	return le
}

// lease takes want tokens of the window's budget (or what is left of it)
// and returns the window's count after it and how many tokens it granted.
func (l *Limiter) lease(ctx context.Context, keyID string, w, reset, want int64) (used, granted int64, err error) {
	for range 3 {
		out, err := l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &l.table,
			Key: map[string]types.AttributeValue{
				AttrWindow: &types.AttributeValueMemberS{Value: keyID + "#" + strconv.FormatInt(w, 10)},
			},
			UpdateExpression:    ptr("ADD #used :n SET #ttl = :ttl"),
			ConditionExpression: ptr("attribute_not_exists(#used) OR #used <= :max"),
			ExpressionAttributeNames: map[string]string{
				"#used": "used", "#ttl": AttrTTL,
			},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":n":   num(want),
				":max": num(l.limit - want),
				":ttl": num(reset + int64(counterTTL/time.Second)),
			},
			ReturnValues:                        types.ReturnValueUpdatedNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			used, _ := intAttr(out.Attributes["used"])
			return used, want, nil
		case errors.As(err, &ccf):
			// Not as much left: take the rest, if there is any.
			used, _ := intAttr(ccf.Item["used"])
			left := l.limit - used
			if left <= 0 {
				return used, 0, nil
			}
			want = min(want, left)
		default:
			return 0, 0, err
		}
	}
	// Others keep taking what is left before us: treat the window as spent.
	return l.limit, 0, nil
}

// headers are X-RateLimit-Limit, -Remaining and -Reset, keyed as
// http.Header.Set would key them.
// The three values share one array, each slice capped at its own value so
// an append to one cannot reach the next; the reset is written once per
// window, as every request of the window sends the same.
func (l *Limiter) headers(remaining, reset int64) http.Header {
	resetText := l.resetText.Load()
	if resetText == nil || resetText.reset != reset {
		resetText = &windowReset{reset: reset, text: strconv.FormatInt(reset, 10)}
		l.resetText.Store(resetText)
	}
	v := &[3]string{l.limitText, strconv.FormatInt(max(0, remaining), 10), resetText.text}
	return http.Header{
		"X-Ratelimit-Limit":     v[0:1:1],
		"X-Ratelimit-Remaining": v[1:2:2],
		"X-Ratelimit-Reset":     v[2:3:3],
	}
}

// windowReset is a window's reset time and its header value.
type windowReset struct {
	reset int64
	text  string
}

func num(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func intAttr(av types.AttributeValue) (int64, bool) {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	return v, err == nil
}

func ptr[T any](v T) *T { return &v }
