package ratelimit_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"contentapi/shared/auth"
	"contentapi/shared/httpapi"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/ratelimit"
)

func limiter(env *ddblocal.TestEnv, limit int, now time.Time) *ratelimit.Limiter {
	return limiterOn(env.Client, env, limit, now)
}

func limiterOn(db ratelimit.DB, env *ddblocal.TestEnv, limit int, now time.Time) *ratelimit.Limiter {
	l := ratelimit.New(db, env.Tables["RateLimitTable"], limit)
	l.Now = func() time.Time { return now }
	return l
}

func TestLimitWithinOneInstance(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
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
	env := ddblocal.NewTestEnv(t)
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
	// Unspent leases may cost at most one lease per instance, and a busy
	// instance's leases grow to four blocks.
	if granted.Load() < limit-int64(len(instances))*4*2 {
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
	env := ddblocal.NewTestEnv(t)
	start := time.Unix(1_800_000_000, 0)
	const limit = 5 // blocks of one
	db, meter := env.Metered(t)
	first := limiterOn(db, env, limit, start)
	p := auth.Principal{Account: "acme", KeyID: "key_flood"}
	calls := meter.Measure(func() {
		for i := range limit {
			if _, err := first.Allow(context.Background(), p); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
		}
	})
	// Leases of one, then two, then four: refused, and the two left taken.
	if ops := strings.Join(ddblocal.MeteredOps(calls), ","); ops != "UpdateItem,UpdateItem,UpdateItem,UpdateItem" {
		t.Fatalf("%d granted requests made %s, want leases of 1, 2 and the 2 left", limit, ops)
	}
	calls = meter.Measure(func() {
		for range 1000 {
			if _, err := first.Allow(context.Background(), p); !isStatus(err, 429) {
				t.Fatalf("over the limit: %v, want 429", err)
			}
		}
	})
	if len(calls) != 0 {
		t.Errorf("1000 requests over the limit made %d DynamoDB calls, want 0", len(calls))
	}

	second := limiterOn(db, env, limit, start.Add(30*time.Second))
	calls = meter.Measure(func() {
		for range 1000 {
			h, err := second.Allow(context.Background(), p)
			if !isStatus(err, 429) || h.Get("X-RateLimit-Remaining") != "0" {
				t.Fatalf("another instance over the limit: %v %v, want 429", err, h)
			}
		}
	})
	if ops := strings.Join(ddblocal.MeteredOps(calls), ","); ops != "UpdateItem" {
		t.Errorf("another instance made %s for 1000 requests over the limit, want the one refused lease", ops)
	}

	// The memory lasts only to the end of the minute.
	first.Now = func() time.Time { return start.Add(time.Minute) }
	calls = meter.Measure(func() {
		if _, err := first.Allow(context.Background(), p); err != nil {
			t.Fatalf("next minute: %v", err)
		}
	})
	if ops := strings.Join(ddblocal.MeteredOps(calls), ","); ops != "UpdateItem" {
		t.Errorf("next minute: %s, want a new lease", ops)
	}
}

// A key that keeps spending its leases leases more at a time, up to four
// blocks, so a busy key costs fewer writes; a new minute starts again at
// one block.
func TestBusyKeysLeaseMore(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	start := time.Unix(1_800_000_000, 0)
	const limit = 600 // blocks of 12
	db, meter := env.Metered(t)
	l := limiterOn(db, env, limit, start)
	p := auth.Principal{Account: "acme", KeyID: "key_busy"}
	allow := func(n int) int {
		calls := meter.Measure(func() {
			for i := range n {
				if _, err := l.Allow(context.Background(), p); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
			}
		})
		return len(calls)
	}
	// 12 + 24 + 48 + 48 + 48 + 48 covers 228 requests; the 240th needs a
	// seventh lease.
	if leases := allow(240); leases != 7 {
		t.Errorf("240 requests took %d leases, want 7", leases)
	}
	l.Now = func() time.Time { return start.Add(time.Minute) }
	if leases := allow(12); leases != 1 {
		t.Errorf("a new minute's first 12 requests took %d leases, want 1 block", leases)
	}
	if leases := allow(1); leases != 1 {
		t.Errorf("the 13th request of the minute took %d leases, want a new one", leases)
	}
}
