package auth

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DB is the part of *dynamodb.Client this package uses, so callers pass the
// real client and pure-logic tests can count calls.
type DB interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// DefaultCacheTTL is how long an Authenticator trusts what it read about a
// key, and so the longest a revoked key keeps working on a warm function.
const DefaultCacheTTL = 60 * time.Second

// defaultCacheEntries bounds the cache at a few megabytes: far more keys than
// one function instance sees within a TTL in normal use.
const defaultCacheEntries = 10_000

// Authenticator checks bearer tokens against the keys table, with a cache in
// front of it. It is safe for concurrent use; build one per process.
type Authenticator struct {
	db         DB
	table      string
	checksum   Checksum
	ttl        time.Duration
	maxEntries int
	now        func() time.Time

	mu      sync.Mutex
	entries map[string]*list.Element // key hash -> element of known or refused
	// Two queues in insertion order, which with one TTL for all is also
	// expiry order. When the cache is full the oldest refused entry goes
	// first, so a flood of made-up (well-formed, checksummed) keys cannot
	// push out the keys of real clients.
	known    list.List
	refused  list.List
	inflight map[string]*lookup
}

// entry is what the cache knows about one key hash.
type entry struct {
	hash      string
	principal Principal // Account empty: key unknown or revoked
	refusal   string    // why the key is refused, when it is
	expiresAt time.Time // the key's own expiry; zero: never
	freshTill time.Time // when the cache must read the table again
}

// lookup is one GetItem in flight, shared by every request that wants the
// same key meanwhile.
type lookup struct {
	done chan struct{}
	e    *entry
	err  error
}

// NewAuthenticator returns an Authenticator reading the keys table through
// db, for keys made with checksum. ttl is the cache lifetime and so the
// revocation delay, normally DefaultCacheTTL; zero (or less) turns the cache
// off, so that every request reads the table and a revocation takes effect at
// once, as the template's AuthCacheSeconds=0 promises.
func NewAuthenticator(db DB, table string, ttl time.Duration, checksum Checksum) *Authenticator {
	return &Authenticator{
		db:         db,
		table:      table,
		checksum:   checksum,
		ttl:        ttl,
		maxEntries: defaultCacheEntries,
		now:        time.Now,
		entries:    make(map[string]*list.Element),
		inflight:   make(map[string]*lookup),
	}
}

// Authenticate returns the principal of key, the token that follows
// "Bearer " in the Authorization header. A malformed, unknown, revoked or
// expired key gives an error wrapping ErrUnauthenticated; any other error
// means the table could not be read, and the key may well be good.
//
// A malformed key costs no DynamoDB call, nor does a forged one when the
// checksum is keyed, nor any key looked up within the cache TTL; concurrent
// lookups of the same key share one GetItem.
func (a *Authenticator) Authenticate(ctx context.Context, key string) (Principal, error) {
	if err := checkFormat(key); err != nil {
		return Principal{}, err
	}
	// The cache is asked before the checksum is computed: only keys that
	// passed it are ever cached, so a key found there needs no HMAC again.
	// A forged key is never found (its hash is of the whole key, checksum
	// included), so it always pays for the check, and its timing says
	// nothing of how close it came.
	h := hexHash(key)
	a.mu.Lock()
	e := a.fresh(a.entries[string(h[:])])
	a.mu.Unlock()
	if e != nil {
		return e.verdict(a.now())
	}
	if err := a.checksum.verify(key); err != nil {
		return Principal{}, err
	}
	hash := string(h[:])
	for {
		a.mu.Lock()
		if e := a.cached(hash); e != nil {
			a.mu.Unlock()
			return e.verdict(a.now())
		}
		if l, ok := a.inflight[hash]; ok {
			a.mu.Unlock()
			select {
			case <-l.done:
			case <-ctx.Done():
				return Principal{}, fmt.Errorf("auth: waiting for key lookup: %w", context.Cause(ctx))
			}
			if l.err != nil {
				// The request that did the lookup gave up or timed out; that
				// says nothing about this one, which tries for itself.
				if isContextErr(l.err) && ctx.Err() == nil {
					continue
				}
				return Principal{}, l.err
			}
			return l.e.verdict(a.now())
		}
		l := &lookup{done: make(chan struct{})}
		a.inflight[hash] = l
		a.mu.Unlock()

		a.load(ctx, hash, l)
		if l.err != nil {
			return Principal{}, l.err
		}
		return l.e.verdict(a.now())
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// cached returns the fresh entry for hash, or nil. a.mu must be held.
func (a *Authenticator) cached(hash string) *entry {
	return a.fresh(a.entries[hash])
}

// fresh returns the entry of el, a cache element or nil, while it is
// fresh. a.mu must be held.
func (a *Authenticator) fresh(el *list.Element) *entry {
	if el == nil {
		return nil
	}
	e := el.Value.(*entry)
	if !a.now().Before(e.freshTill) {
		return nil
	}
	return e
}

// load reads hash from the table into l, caches the result unless it is an
// error, and releases whoever waits on l, even if the DB panics.
func (a *Authenticator) load(ctx context.Context, hash string, l *lookup) {
	defer func() {
		a.mu.Lock()
		delete(a.inflight, hash)
		if l.e == nil && l.err == nil {
			l.err = errors.New("auth: key lookup panicked")
		}
		if l.err == nil && a.ttl > 0 {
			a.store(l.e)
		}
		a.mu.Unlock()
		close(l.done)
	}()
	l.e, l.err = a.fetch(ctx, hash)
}

// fetch reads one key item.
//
// The read is strongly consistent although an eventually consistent one
// costs half (0.5 RRU instead of 1). With the cache in front, a warm function
// reads each key about once per TTL, so the saving is a fraction of a cent
// per million requests; what consistency buys is a clean contract: a key works
// the moment Create returns (an eventually consistent miss would be cached as
// "unknown" for a whole TTL), and a revocation takes effect within the TTL,
// not the TTL plus replication lag.
func (a *Authenticator) fetch(ctx context.Context, hash string) (*entry, error) {
	// Start the TTL before the read, so that the cache never trusts data
	// older than the TTL.
	e := &entry{hash: hash, freshTill: a.now().Add(a.ttl)}
	out, err := a.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(a.table),
		Key:            map[string]types.AttributeValue{attrHash: &types.AttributeValueMemberS{Value: hash}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("auth: reading key: %w", err)
	}
	if len(out.Item) == 0 {
		e.refusal = "unknown key"
		return e, nil
	}
	k, err := decodeKey(out.Item)
	if err != nil {
		return nil, err
	}
	if !k.RevokedAt.IsZero() {
		e.refusal = "key revoked"
		return e, nil
	}
	e.principal = Principal{Account: k.Account, KeyID: k.KeyID, Scopes: k.Scopes}
	e.expiresAt = k.ExpiresAt
	return e, nil
}

// verdict judges a cached entry at now. Expiry is checked here, on every
// request, rather than when caching, so the cache never lets an expired key
// through.
func (e *entry) verdict(now time.Time) (Principal, error) {
	if e.refusal != "" {
		return Principal{}, fmt.Errorf("%w: %s", ErrUnauthenticated, e.refusal)
	}
	if !e.expiresAt.IsZero() && !now.Before(e.expiresAt) {
		return Principal{}, fmt.Errorf("%w: key %s expired", ErrUnauthenticated, e.principal.KeyID)
	}
	p := e.principal
	p.Scopes = slices.Clone(p.Scopes) // the caller must not alter the cache
	return p, nil
}

// store caches e, replacing any older entry for the same hash. a.mu must be
// held.
func (a *Authenticator) store(e *entry) {
	if el, ok := a.entries[e.hash]; ok {
		a.queue(el.Value.(*entry)).Remove(el)
		delete(a.entries, e.hash)
	}
	now := a.now()
	for _, q := range []*list.List{&a.refused, &a.known} {
		for el := q.Front(); el != nil && !now.Before(el.Value.(*entry).freshTill); el = q.Front() {
			a.drop(q, el)
		}
	}
	for len(a.entries) >= a.maxEntries {
		q := &a.refused
		if q.Len() == 0 {
			q = &a.known
		}
		a.drop(q, q.Front())
	}
	a.entries[e.hash] = a.queue(e).PushBack(e)
}

func (a *Authenticator) queue(e *entry) *list.List {
	if e.refusal != "" {
		return &a.refused
	}
	return &a.known
}

func (a *Authenticator) drop(q *list.List, el *list.Element) {
	delete(a.entries, el.Value.(*entry).hash)
	q.Remove(el)
}
