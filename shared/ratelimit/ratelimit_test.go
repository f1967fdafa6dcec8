package ratelimit_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"contentapi/shared/auth"
	"contentapi/shared/ddblocal"
	"contentapi/shared/httpapi"
	"contentapi/shared/ratelimit"
)

func limiter(env *ddblocal.Env, limit int, now time.Time) *ratelimit.Limiter {
	return limiterOn(env.Client, env, limit, now)
}

func limiterOn(db ratelimit.DB, env *ddblocal.Env, limit int, now time.Time) *ratelimit.Limiter {
	l := ratelimit.New(db, env.Tables["RateLimitTable"], limit)
	l.Now = func() time.Time { return now }
	return l
}

func TestLimitWithinOneInstance(t *testing.T) {
	env := ddblocal.ForTest(t)
	start := time.Unix(1_800_000_000, 0) // on a minute boundary
	l := limiter(env, 5, start)
	p := auth.Principal{Account: "acme", KeyID: "key_one"}
	for i := range 5 {
		h, err := l.Allow(context.Background(), p)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		if h.Get("X-RateLimit-Limit") != "5" || h.Get("X-RateLimit-Remaining") != strconv.Itoa(4-i) ||
			h.Get("X-RateLimit-Reset") != strconv.FormatInt(start.Unix()+60, 10) {
			t.Fatalf("request %d headers %v", i+1, h)
		}
	}
	h, err := l.Allow(context.Background(), p)
	var e *httpapi.Error
	if !errors.As(err, &e) || e.Status != 429 || e.Header.Get("Retry-After") != "60" || h.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("sixth request: %v %v", err, h)
	}
	// Another key has its own budget; the next minute starts afresh.
	if _, err := l.Allow(context.Background(), auth.Principal{KeyID: "key_two"}); err != nil {
		t.Fatal(err)
	}
	l.Now = func() time.Time { return start.Add(time.Minute) }
	if _, err := l.Allow(context.Background(), p); err != nil {
		t.Fatalf("next minute: %v", err)
	}
}

func TestLimitIsGlobalAcrossInstances(t *testing.T) {
	env := ddblocal.ForTest(t)
	now := time.Unix(1_800_000_030, 0)
	const limit = 120 // leases of 2
	instances := []*ratelimit.Limiter{limiter(env, limit, now), limiter(env, limit, now), limiter(env, limit, now)}
	p := auth.Principal{Account: "acme", KeyID: "key_busy"}
	var granted, refused atomic.Int64
	var wg sync.WaitGroup
	for g := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := instances[g%len(instances)]
			for range 20 {
				_, err := l.Allow(context.Background(), p)
				switch {
				case err == nil:
					granted.Add(1)
				case isStatus(err, 429):
					refused.Add(1)
				default:
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if granted.Load() > limit {
		t.Fatalf("granted %d over the limit %d", granted.Load(), limit)
	}
	// Unspent leases may cost at most one block per instance.
	if granted.Load() < limit-int64(len(instances))*2 {
		t.Fatalf("granted only %d of %d", granted.Load(), limit)
	}
	if granted.Load()+refused.Load() != 240 {
		t.Fatalf("%d granted + %d refused", granted.Load(), refused.Load())
	}
}

func isStatus(err error, status int) bool {
	var e *httpapi.Error
	return errors.As(err, &e) && e.Status == status
}

// A request over the limit writes nothing: an instance that took the last
// of a key's minute, or was refused once, answers 429 from memory until the
// minute ends. Each further instance pays one refused write, then nothing.
func TestRequestsOverTheLimitWriteNothing(t *testing.T) {
	env := ddblocal.ForTest(t)
	start := time.Unix(1_800_000_000, 0)
	const limit = 5 // leases of one: every granted request is a write
	db, calls := ddblocal.Counting(env.Client)
	first := limiterOn(db, env, limit, start)
	p := auth.Principal{Account: "acme", KeyID: "key_flood"}
	for i := range limit {
		if _, err := first.Allow(context.Background(), p); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	if n := calls.Count("UpdateItem"); n != limit {
		t.Fatalf("%d writes for %d granted requests, want one lease each", n, limit)
	}
	calls.Reset()
	for range 1000 {
		if _, err := first.Allow(context.Background(), p); !isStatus(err, 429) {
			t.Fatalf("over the limit: %v, want 429", err)
		}
	}
	if n := calls.Total(); n != 0 {
		t.Errorf("1000 requests over the limit made %d DynamoDB calls, want 0", n)
	}

	second := limiterOn(db, env, limit, start.Add(30*time.Second))
	for range 1000 {
		h, err := second.Allow(context.Background(), p)
		if !isStatus(err, 429) || h.Get("X-RateLimit-Remaining") != "0" {
			t.Fatalf("another instance over the limit: %v %v, want 429", err, h)
		}
	}
	if n, w := calls.Total(), calls.Count("UpdateItem"); n != 1 || w != 1 {
		t.Errorf("another instance made %d calls (%d UpdateItem) for 1000 requests over the limit, want the one refused lease", n, w)
	}

	// The memory lasts only to the end of the minute.
	calls.Reset()
	first.Now = func() time.Time { return start.Add(time.Minute) }
	if _, err := first.Allow(context.Background(), p); err != nil {
		t.Fatalf("next minute: %v", err)
	}
	if n := calls.Count("UpdateItem"); n != 1 {
		t.Errorf("next minute: %d writes, want a new lease", n)
	}
}
