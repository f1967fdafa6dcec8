package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// countingDB is a fake of the DB interface for the pure cache logic: it
// serves GetItem from a map and counts the calls. It is no DynamoDB
// emulation; the integration tests run against DynamoDB Local.
type countingDB struct {
	t     *testing.T
	gets  atomic.Int64
	mu    sync.Mutex
	items map[string]map[string]types.AttributeValue // by key_hash
	err   error
	// hook, if set, runs inside GetItem before it answers.
	hook func(ctx context.Context) error
}

func newCountingDB(t *testing.T) *countingDB {
	return &countingDB{t: t, items: map[string]map[string]types.AttributeValue{}}
}

func (db *countingDB) put(key string, k KeyInfo) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.items[hashKey(key)] = encodeKey(hashKey(key), k)
}

func (db *countingDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	db.gets.Add(1)
	if *in.TableName != "keys" || in.ConsistentRead == nil || !*in.ConsistentRead {
		db.t.Errorf("GetItem(table %q, consistent %v), want a strongly consistent read of keys", *in.TableName, in.ConsistentRead)
	}
	if db.hook != nil {
		if err := db.hook(ctx); err != nil {
			return nil, err
		}
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.err != nil {
		return nil, db.err
	}
	hash := in.Key[attrHash].(*types.AttributeValueMemberS).Value
	return &dynamodb.GetItemOutput{Item: db.items[hash]}, nil
}

func (db *countingDB) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, errors.New("countingDB: Authenticator must not write")
}

func (db *countingDB) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, errors.New("countingDB: Authenticator must not write")
}

func (db *countingDB) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return nil, errors.New("countingDB: Authenticator must not query")
}

func (db *countingDB) Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return nil, errors.New("countingDB: Authenticator must not scan")
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func newTestAuthenticator(t *testing.T, ttl time.Duration) (*Authenticator, *countingDB, *clock) {
	db := newCountingDB(t)
	c := &clock{now: t0}
	a := NewAuthenticator(db, "keys", ttl, PublicChecksum)
	a.now = c.Now
	return a, db, c
}

func TestAuthenticate(t *testing.T) {
	const ttl = time.Minute
	type step struct {
		after    time.Duration // clock advance before this call
		revoke   bool          // mark the key revoked in the table first
		wantErr  error         // nil, ErrUnauthenticated, or errDB
		wantGets int64         // GetItem calls this step may make
	}
	errDB := errors.New("throttled")
	tests := []struct {
		name   string
		stored *KeyInfo // nil: key not in the table
		failDB bool
		key    string // default: a fresh well-formed key
		steps  []step
	}{
		{
			name:   "known key: cached within the TTL, read again after it",
			stored: &KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeWrite}},
			steps: []step{
				{wantGets: 1},
				{wantGets: 0},
				{after: ttl - time.Nanosecond, wantGets: 0},
				{after: time.Nanosecond, wantGets: 1},
				{after: time.Second, wantGets: 0},
			},
		},
		{
			name: "unknown key: refused, and the refusal is cached",
			steps: []step{
				{wantErr: ErrUnauthenticated, wantGets: 1},
				{wantErr: ErrUnauthenticated, wantGets: 0},
				{after: ttl, wantErr: ErrUnauthenticated, wantGets: 1},
			},
		},
		{
			name:   "malformed key: refused without a DynamoDB call",
			key:    "ck_not-a-key",
			stored: &KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}},
			steps: []step{
				{wantErr: ErrUnauthenticated, wantGets: 0},
				{after: ttl, wantErr: ErrUnauthenticated, wantGets: 0},
			},
		},
		{
			name:   "revoked key: refused",
			stored: &KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}, RevokedAt: t0.Add(-time.Hour)},
			steps: []step{
				{wantErr: ErrUnauthenticated, wantGets: 1},
				{wantErr: ErrUnauthenticated, wantGets: 0},
			},
		},
		{
			name:   "revocation takes effect when the TTL runs out, not before",
			stored: &KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}},
			steps: []step{
				{wantGets: 1},
				{after: time.Second, revoke: true, wantGets: 0},
				{after: ttl - time.Second - time.Nanosecond, wantGets: 0},
				{after: time.Nanosecond, wantErr: ErrUnauthenticated, wantGets: 1},
			},
		},
		{
			name:   "expired key: refused",
			stored: &KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}, ExpiresAt: t0},
			steps:  []step{{wantErr: ErrUnauthenticated, wantGets: 1}},
		},
		{
			name:   "expiry is checked on every request, even from the cache",
			stored: &KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}, ExpiresAt: t0.Add(10 * time.Second)},
			steps: []step{
				{wantGets: 1},
				{after: 10*time.Second - time.Nanosecond, wantGets: 0},
				{after: time.Nanosecond, wantErr: ErrUnauthenticated, wantGets: 0},
			},
		},
		{
			name:   "DynamoDB failure: not a refusal, and not cached",
			stored: &KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}},
			failDB: true,
			steps: []step{
				{wantErr: errDB, wantGets: 1},
				{wantErr: errDB, wantGets: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, db, c := newTestAuthenticator(t, ttl)
			key := tt.key
			if key == "" {
				key = mustNewKey(t, PublicChecksum)
			}
			if tt.stored != nil {
				db.put(key, *tt.stored)
			}
			if tt.failDB {
				db.err = errDB
			}
			for i, s := range tt.steps {
				c.Advance(s.after)
				if s.revoke {
					k := *tt.stored
					k.RevokedAt = c.Now()
					db.put(key, k)
				}
				before := db.gets.Load()
				p, err := a.Authenticate(context.Background(), key)
				if got := db.gets.Load() - before; got != s.wantGets {
					t.Errorf("step %d: %d GetItem calls, want %d", i, got, s.wantGets)
				}
				switch {
				case s.wantErr == nil && err != nil:
					t.Fatalf("step %d: Authenticate: %v", i, err)
				case s.wantErr != nil && !errors.Is(err, s.wantErr):
					t.Fatalf("step %d: Authenticate error = %v, want %v", i, err, s.wantErr)
				case s.wantErr == errDB && errors.Is(err, ErrUnauthenticated):
					t.Fatalf("step %d: a DynamoDB failure became a refusal: %v", i, err)
				}
				if err != nil {
					assertNoSecret(t, err.Error(), key)
					if p.Account != "" || p.Scopes != nil {
						t.Errorf("step %d: principal %+v returned with an error", i, p)
					}
					continue
				}
				want := Principal{Account: tt.stored.Account, KeyID: tt.stored.KeyID, Scopes: tt.stored.Scopes}
				if p.Account != want.Account || p.KeyID != want.KeyID || !slices.Equal(p.Scopes, want.Scopes) {
					t.Errorf("step %d: principal = %+v, want %+v", i, p, want)
				}
			}
		})
	}
}

func TestAuthenticateDamagedItemIsNotARefusal(t *testing.T) {
	a, db, _ := newTestAuthenticator(t, time.Minute)
	key := mustNewKey(t, PublicChecksum)
	db.put(key, KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{"root"}})
	for range 2 {
		_, err := a.Authenticate(context.Background(), key)
		if err == nil || errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("Authenticate of a damaged item = %v, want an infrastructure error", err)
		}
	}
	if n := db.gets.Load(); n != 2 {
		t.Errorf("%d GetItem calls, want 2: a damaged item must not be cached", n)
	}
}

func TestAuthenticatePrincipalIsACopy(t *testing.T) {
	a, db, _ := newTestAuthenticator(t, time.Minute)
	key := mustNewKey(t, PublicChecksum)
	db.put(key, KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}})
	p, err := a.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	p.Scopes[0] = ScopeWrite
	p, err = a.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if p.Allows(ScopeWrite) {
		t.Error("a caller changing its Principal changed the cached one")
	}
}

func TestAuthenticateWithoutCache(t *testing.T) {
	for _, ttl := range []time.Duration{0, -time.Second} {
		a, db, _ := newTestAuthenticator(t, ttl)
		key := mustNewKey(t, PublicChecksum)
		k := KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}}
		db.put(key, k)
		if _, err := a.Authenticate(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		k.RevokedAt = t0
		db.put(key, k)
		if _, err := a.Authenticate(context.Background(), key); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("ttl %v: revoked key accepted: %v", ttl, err)
		}
		if n := db.gets.Load(); n != 2 {
			t.Errorf("ttl %v: %d GetItem calls for 2 requests, want 2", ttl, n)
		}
		if n := len(a.entries); n != 0 {
			t.Errorf("ttl %v: %d entries cached with the cache off", ttl, n)
		}
	}
}

// The flood: well-formed keys with a valid public checksum, each
// one new, so no cache can help. Under a keyed checksum not one reaches the
// table, while a key made with the secret still does, once.
func TestForgedKeysCostNoRead(t *testing.T) {
	for _, ttl := range []time.Duration{time.Minute, 0} {
		a, db, _ := newTestAuthenticator(t, ttl)
		a.checksum = mustChecksum(t, strings.Repeat("k", MinSecretLen))
		ctx := context.Background()
		for range 500 {
			if _, err := a.Authenticate(ctx, mustNewKey(t, PublicChecksum)); !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("ttl %v: forged key: %v", ttl, err)
			}
		}
		if n := db.gets.Load(); n != 0 {
			t.Errorf("ttl %v: 500 forged keys cost %d GetItem calls, want 0", ttl, n)
		}
		if _, err := a.Authenticate(ctx, DemoKey); !errors.Is(err, ErrUnauthenticated) || db.gets.Load() != 0 {
			t.Errorf("ttl %v: the demo key under a keyed checksum: %v after %d reads", ttl, err, db.gets.Load())
		}
		real := mustNewKey(t, a.checksum)
		db.put(real, KeyInfo{KeyID: "key_000000000001", Account: "acme", Scopes: []Scope{ScopeRead}})
		if p, err := a.Authenticate(ctx, real); err != nil || p.Account != "acme" {
			t.Fatalf("ttl %v: a key made with the secret: %+v, %v", ttl, p, err)
		}
		if n := db.gets.Load(); n != 1 {
			t.Errorf("ttl %v: %d GetItem calls for one real key, want 1", ttl, n)
		}
	}
}

// The cache is asked before the checksum: a key that differs from a cached
// one only in its checksum must still be checked, and refused unread.
func TestCachedKeyVouchesForNoOtherChecksum(t *testing.T) {
	a, db, _ := newTestAuthenticator(t, time.Minute)
	a.checksum = mustChecksum(t, strings.Repeat("k", MinSecretLen))
	ctx := context.Background()
	real := mustNewKey(t, a.checksum)
	db.put(real, KeyInfo{KeyID: "key_000000000001", Account: "acme", Scopes: []Scope{ScopeRead}})
	if _, err := a.Authenticate(ctx, real); err != nil {
		t.Fatal(err)
	}
	payload, sum := real[:KeyLen-checksumLen], real[KeyLen-checksumLen:]
	for i := range checksumLen {
		for _, c := range []byte("0aZ") {
			if sum[i] == c {
				continue
			}
			forged := payload + sum[:i] + string(c) + sum[i+1:]
			if _, err := a.Authenticate(ctx, forged); !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("%s, the cached key with another checksum: %v", forged, err)
			}
		}
	}
	if p, err := a.Authenticate(ctx, real); err != nil || p.Account != "acme" {
		t.Fatalf("the cached key: %+v, %v", p, err)
	}
	if n := db.gets.Load(); n != 1 {
		t.Errorf("%d GetItem calls, want the one that cached the key", n)
	}
}

func TestAuthenticateCacheIsBounded(t *testing.T) {
	a, db, c := newTestAuthenticator(t, time.Minute)
	a.maxEntries = 4
	ctx := context.Background()
	good := make([]string, 3)
	for i := range good {
		good[i] = mustNewKey(t, PublicChecksum)
		db.put(good[i], KeyInfo{KeyID: fmt.Sprintf("key_%012d", i), Account: "acme", Scopes: []Scope{ScopeRead}})
		if _, err := a.Authenticate(ctx, good[i]); err != nil {
			t.Fatal(err)
		}
	}
	// A flood of made-up keys evicts made-up keys, not the real ones.
	for range 100 {
		c.Advance(time.Millisecond)
		if _, err := a.Authenticate(ctx, mustNewKey(t, PublicChecksum)); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("made-up key: %v", err)
		}
		if n := len(a.entries); n > a.maxEntries {
			t.Fatalf("%d cache entries, cap %d", n, a.maxEntries)
		}
	}
	before := db.gets.Load()
	for _, k := range good {
		if _, err := a.Authenticate(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if n := db.gets.Load() - before; n != 0 {
		t.Errorf("%d GetItem calls for real keys after a flood of made-up ones, want 0", n)
	}

	// With only real keys, the oldest goes first.
	more := make([]string, 2)
	for i := range more {
		c.Advance(time.Millisecond)
		more[i] = mustNewKey(t, PublicChecksum)
		db.put(more[i], KeyInfo{KeyID: fmt.Sprintf("key_%012d", 10+i), Account: "acme", Scopes: []Scope{ScopeRead}})
		if _, err := a.Authenticate(ctx, more[i]); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(a.entries); n != a.maxEntries || a.refused.Len() != 0 {
		t.Fatalf("%d entries (%d refused), want %d real ones", n, a.refused.Len(), a.maxEntries)
	}
	if _, ok := a.entries[hashKey(good[0])]; ok {
		t.Error("oldest key still cached after eviction")
	}
	for _, k := range append(good[1:], more...) {
		if _, ok := a.entries[hashKey(k)]; !ok {
			t.Error("a newer key was evicted before the oldest")
		}
	}

	// Entries past their TTL are dropped as new ones come in.
	c.Advance(2 * time.Minute)
	if _, err := a.Authenticate(ctx, good[0]); err != nil {
		t.Fatal(err)
	}
	if n := len(a.entries); n != 1 {
		t.Errorf("%d entries after all but one went stale, want 1", n)
	}
}

// Concurrent misses for one key share a single GetItem.
func TestAuthenticateSingleFlight(t *testing.T) {
	a, db, _ := newTestAuthenticator(t, time.Minute)
	key := mustNewKey(t, PublicChecksum)
	db.put(key, KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}})
	release := make(chan struct{})
	started := make(chan struct{}, 100)
	db.hook = func(context.Context) error {
		started <- struct{}{}
		<-release
		return nil
	}
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			p, err := a.Authenticate(context.Background(), key)
			if err == nil && p.Account != "acme" {
				err = fmt.Errorf("principal %+v", p)
			}
			errs <- err
		})
	}
	<-started
	time.Sleep(20 * time.Millisecond) // let the others queue behind the first
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := db.gets.Load(); got != 1 {
		t.Errorf("%d GetItem calls for %d concurrent requests, want 1", got, n)
	}
}

// A request waiting on another's lookup is not failed by the other request
// giving up; it is failed by its own context.
func TestAuthenticateSingleFlightContexts(t *testing.T) {
	t.Run("the leader gives up", func(t *testing.T) {
		a, db, _ := newTestAuthenticator(t, time.Minute)
		key := mustNewKey(t, PublicChecksum)
		db.put(key, KeyInfo{KeyID: "key_aaaaaaaaaaaa", Account: "acme", Scopes: []Scope{ScopeRead}})
		started := make(chan struct{}, 2)
		db.hook = func(ctx context.Context) error {
			if db.gets.Load() > 1 {
				return nil // the follower's own lookup answers at once
			}
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		leaderCtx, cancel := context.WithCancel(context.Background())
		leaderErr := make(chan error, 1)
		go func() {
			_, err := a.Authenticate(leaderCtx, key)
			leaderErr <- err
		}()
		<-started
		followerErr := make(chan error, 1)
		go func() {
			_, err := a.Authenticate(context.Background(), key)
			followerErr <- err
		}()
		time.Sleep(20 * time.Millisecond)
		cancel()
		if err := <-leaderErr; !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnauthenticated) {
			t.Errorf("leader: %v, want context.Canceled", err)
		}
		if err := <-followerErr; err != nil {
			t.Errorf("follower: %v, want success", err)
		}
	})
	t.Run("the follower gives up", func(t *testing.T) {
		a, db, _ := newTestAuthenticator(t, time.Minute)
		key := mustNewKey(t, PublicChecksum)
		release := make(chan struct{})
		started := make(chan struct{}, 1)
		db.hook = func(context.Context) error {
			started <- struct{}{}
			<-release
			return nil
		}
		defer close(release)
		go func() { _, _ = a.Authenticate(context.Background(), key) }() // only holds the lookup open
		<-started
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := a.Authenticate(ctx, key); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("follower: %v, want its own deadline", err)
		}
	})
	t.Run("a panicking lookup releases its followers", func(t *testing.T) {
		a, db, _ := newTestAuthenticator(t, time.Minute)
		key := mustNewKey(t, PublicChecksum)
		release := make(chan struct{})
		started := make(chan struct{}, 1)
		db.hook = func(context.Context) error {
			started <- struct{}{}
			<-release
			panic("boom")
		}
		go func() {
			defer func() { _ = recover() }()
			_, _ = a.Authenticate(context.Background(), key)
		}()
		<-started
		followerErr := make(chan error, 1)
		go func() {
			_, err := a.Authenticate(context.Background(), key)
			followerErr <- err
		}()
		time.Sleep(20 * time.Millisecond)
		close(release)
		select {
		case err := <-followerErr:
			if err == nil || errors.Is(err, ErrUnauthenticated) {
				t.Errorf("follower: %v, want an infrastructure error", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("follower still waiting on a lookup that panicked")
		}
	})
}

// Many goroutines, many keys, a moving clock and a small cache: run with
// -race. Every answer must be right whatever the interleaving.
func TestAuthenticateConcurrent(t *testing.T) {
	a, db, c := newTestAuthenticator(t, 50*time.Millisecond)
	a.maxEntries = 8
	type k struct {
		key     string
		account string // empty: unknown key
	}
	var keys []k
	for i := range 20 {
		key := mustNewKey(t, PublicChecksum)
		acct := ""
		if i%3 != 0 {
			acct = fmt.Sprintf("acct%d", i)
			db.put(key, KeyInfo{KeyID: fmt.Sprintf("key_%012d", i), Account: acct, Scopes: []Scope{ScopeRead}})
		}
		keys = append(keys, k{key, acct})
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 500 {
				kk := keys[(g*7+i)%len(keys)]
				if i%50 == 0 {
					c.Advance(10 * time.Millisecond)
				}
				p, err := a.Authenticate(context.Background(), kk.key)
				switch {
				case kk.account == "" && !errors.Is(err, ErrUnauthenticated):
					t.Errorf("unknown key: %v", err)
					return
				case kk.account != "" && (err != nil || p.Account != kk.account):
					t.Errorf("key of %s: %+v, %v", kk.account, p, err)
					return
				}
			}
		})
	}
	wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.entries); n > a.maxEntries || n != a.known.Len()+a.refused.Len() {
		t.Errorf("%d entries, %d+%d queued, cap %d", n, a.known.Len(), a.refused.Len(), a.maxEntries)
	}
	if len(a.inflight) != 0 {
		t.Errorf("%d lookups left in flight", len(a.inflight))
	}
}
