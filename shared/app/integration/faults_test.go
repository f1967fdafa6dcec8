package integration_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/documents"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/metrics/metricstest"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

// faultyStack is a stack whose DynamoDB traffic goes through a fault proxy.
func faultyStack(t *testing.T, configure func(*app.Config)) (*stack, *ddblocal.FaultProxy) {
	env := ddblocal.NewTestEnv(t)
	proxy := ddblocal.NewFaultProxy(env.Endpoint)
	t.Cleanup(proxy.Close)
	s := newStackWith(t, func(c *app.Config) {
		c.DynamoDBEndpoint = proxy.URL
		if configure != nil {
			configure(c)
		}
	})
	return s, proxy
}

func expectUnavailable(t *testing.T, r response) {
	t.Helper()
	expect(t, r, 503)
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	if r.Raw != `{"message":"Service temporarily unavailable, please retry.","status":503}`+"\n" {
		t.Errorf("503 body %q", r.Raw)
	}
}

func TestDynamoDBFaults(t *testing.T) {
	logs := &lambdalocal.LogBuffer{}
	s, proxy := faultyStack(t, func(c *app.Config) { c.RequestTimeout, c.LogOutput = 2*time.Second, logs })
	createImage(t, s, "Before the storm")
	for mode, fault := range map[string]ddblocal.Fault{"throttle": ddblocal.ThrottleCall, "error": ddblocal.FailCall, "drop": ddblocal.DropCall} {
		t.Run(mode, func(t *testing.T) {
			proxy.Down(fault)
			defer proxy.Up()
			before := len(proxy.Calls())
			expectUnavailable(t, s.get("/api/v1/images/1"))
			// The retry budget is bounded: three attempts, no more.
			if n := len(proxy.Calls()) - before; n < 1 || n > 3 {
				t.Errorf("%d DynamoDB attempts for one read", n)
			}
			expectUnavailable(t, s.form("POST", "/api/v1/images", "name", "x", "description", "d", "resolution", "256x256"))
			expectUnavailable(t, s.get("/api/v1/images"))
		})
	}
	t.Run("slow", func(t *testing.T) {
		proxy.Down(ddblocal.HangCall)
		defer proxy.Up()
		start := time.Now()
		expectUnavailable(t, s.get("/api/v1/images/1"))
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("a hanging DynamoDB held the request %v", took)
		}
	})
	// Nothing the failed writes attempted is half done.
	r := s.get("/api/v1/images")
	if num(r.meta()["total"]) != 1 || len(r.list()) != 1 {
		t.Fatalf("after faults: %s", r.Raw)
	}
	// Every 503 was counted, as the images function's.
	if got := metricstest.Sum(metricLines(t, logs), "DynamoDBUnavailable", "Function=images"); got != 3*3+1 {
		t.Errorf("DynamoDBUnavailable = %v, want 10", got)
	}
}

func TestKeyStoreFaultIsNotUnauthenticated(t *testing.T) {
	s, proxy := faultyStack(t, nil)
	proxy.Down(ddblocal.ThrottleCall)
	expectUnavailable(t, s.get("/api/v1/images"))
	proxy.Up()
	expect(t, s.get("/api/v1/images"), 200)
}

// Every operation makes the fewest DynamoDB calls it can: reads, updates,
// deletes and misses of them one; a create two (the counter, then the
// record). A delete's count comes down in the tally's one write, whatever
// the record's template, and once the tally has them the totals are right.
func TestCallsPerOperation(t *testing.T) {
	s, proxy := faultyStack(t, nil)
	expect(t, s.get("/api/v1/documents"), 200) // the key is now cached
	createDocument(t, s, "Freestyle")
	createDocument(t, s, "Article", "template_id", "4")
	// Made by another process: this one has never seen its template.
	other := store.New(s.env.Client, s.env.Tables["DocumentsTable"], documents.Resource)
	if _, err := other.Create(context.Background(), "acme", records.Values{"name": "Elsewhere", "prompt": "p",
		"creativity": 0.5, "template_id": int64(9), "words": int64(0)}, nil); err != nil {
		t.Fatal(err)
	}
	form := "application/x-www-form-urlencoded"
	testCases := []struct {
		rq     request
		status int
		calls  int
	}{
		{request{method: "GET", path: "/api/v1/documents/99"}, 404, 1},
		{request{method: "PUT", path: "/api/v1/documents/99", contentType: form, body: "name=x"}, 404, 1},
		{request{method: "DELETE", path: "/api/v1/documents/99"}, 404, 1},
		// HEAD of a list reads nothing: it sends no body.
		{request{method: "HEAD", path: "/api/v1/documents?per_page=100"}, 200, 0},
		{request{method: "HEAD", path: "/api/v1/documents?per_page=7"}, 422, 0},
		{request{method: "POST", path: "/api/v1/documents", contentType: form, body: "name=n&prompt=p"}, 201, 2},
		{request{method: "GET", path: "/api/v1/documents/2"}, 200, 1},
		{request{method: "PUT", path: "/api/v1/documents/2", contentType: form, body: "favorite=1"}, 200, 1},
		{request{method: "DELETE", path: "/api/v1/documents/1"}, 200, 1},
		{request{method: "DELETE", path: "/api/v1/documents/2"}, 200, 1},
		{request{method: "DELETE", path: "/api/v1/documents/3"}, 200, 1},
	}
	// The tally's writes, from the stream, are not the request's.
	tally := ddblocal.MatchOp("UpdateItem", `"sq_`)
	for _, tc := range testCases {
		tc.rq.key = s.writeKey
		before := len(proxy.Calls())
		r := s.do(tc.rq)
		expect(t, r, tc.status)
		if n := len(slices.DeleteFunc(proxy.Calls()[before:], tally)); n != tc.calls {
			t.Errorf("%s %s (%d) took %d DynamoDB calls, want %d", tc.rq.method, tc.rq.path, r.Status, n, tc.calls)
		}
	}
	s.tally.Drain()
	for _, template := range []string{"1", "4", "9"} {
		if total := num(s.get("/api/v1/documents?template_id=" + template).meta()["total"]); total != map[string]int64{"1": 1}[template] {
			t.Errorf("template %s total %d", template, total)
		}
	}
	// A tampered key is refused before any DynamoDB call.
	tampered := []byte(s.writeKey)
	tampered[10] ^= 1
	before := len(proxy.Calls())
	expect(t, s.do(request{method: "GET", path: "/api/v1/documents", key: string(tampered)}), 401)
	if n := len(proxy.Calls()) - before; n != 0 {
		t.Errorf("a tampered key cost %d DynamoDB calls", n)
	}
}

// With the deployed stack's keyed checksum, a flood of forged keys, each
// well-formed and each new, reaches DynamoDB not once, even with the key
// cache off; the stack's own keys work as before.
func TestForgedKeysCostNoCall(t *testing.T) {
	secret, err := auth.NewChecksum(strings.Repeat("f", auth.MinSecretLen))
	if err != nil {
		t.Fatal(err)
	}
	s, proxy := faultyStack(t, func(c *app.Config) {
		c.KeyChecksum = secret
		c.AuthCacheTTL = 0
	})
	forger := auth.NewKeys(s.env.Client, s.env.Tables["ApiKeysTable"], auth.PublicChecksum)
	forged := []string{auth.DemoKey}
	for range 200 {
		// Stored even, with the public checksum anyone can compute.
		key, _, err := forger.Create(context.Background(), "acme", []auth.Scope{auth.ScopeRead}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		forged = append(forged, key)
	}
	before := len(proxy.Calls())
	for _, key := range forged {
		expect(t, s.do(request{method: "GET", path: "/api/v1/images", key: key}), 401)
	}
	if n := len(proxy.Calls()) - before; n != 0 {
		t.Errorf("%d forged keys cost %d DynamoDB calls, want 0", len(forged), n)
	}
	expect(t, s.get("/api/v1/images"), 200)
}

func TestConcurrentWritesLoseNothing(t *testing.T) {
	s := newStack(t)
	createImage(t, s, "Contended")
	var wg sync.WaitGroup
	const updates = 20
	for i := range updates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fav := []string{"0", "1"}[i%2]
			if r := s.form("PUT", "/api/v1/images/1", "favorite", fav, "name", "n"+fav); r.Status != 200 {
				t.Errorf("update %d: %d %s", i, r.Status, r.Raw)
			}
		}()
	}
	// Meanwhile others create and delete around it.
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.form("POST", "/api/v1/images", "name", "tmp", "description", "d", "resolution", "256x256")
			if r.Status != 201 {
				t.Errorf("create %d: %d", i, r.Status)
				return
			}
			if i%2 == 0 {
				id := strings.TrimSuffix(strings.TrimPrefix(r.Header.Get("Location"), s.url+"/api/v1/images/"), "/")
				if d := s.do(request{method: "DELETE", path: "/api/v1/images/" + id, key: s.writeKey}); d.Status != 200 {
					t.Errorf("delete %s: %d", id, d.Status)
				}
			}
		}()
	}
	wg.Wait()
	// Every update was applied: the version counts all of them.
	if tag := s.get("/api/v1/images/1").Header.Get("ETag"); tag != `"1.21"` {
		t.Fatalf("ETag %s after %d updates, want version 21", tag, updates)
	}
	s.tally.Drain()
	r := s.get("/api/v1/images?per_page=100")
	if num(r.meta()["total"]) != 7 || len(r.list()) != 7 {
		t.Fatalf("total %v, %d listed; want 7", r.meta()["total"], len(r.list()))
	}
	fav := num(s.get("/api/v1/images?favorite=1").meta()["total"]) + num(s.get("/api/v1/images?favorite=0").meta()["total"])
	if fav != 7 {
		t.Fatalf("favorite filters count %d of 7", fav)
	}
}

func TestSecretsStayOut(t *testing.T) {
	logs := &lambdalocal.LogBuffer{}
	s, proxy := faultyStack(t, func(c *app.Config) {
		c.LogOutput = logs
		c.LogLevel = -4 // debug: everything that is ever logged
		c.AuthCacheTTL = time.Second
	})
	keys := auth.NewKeys(s.env.Client, s.env.Tables["ApiKeysTable"], auth.PublicChecksum)
	revoked, info, err := keys.Create(context.Background(), "acme", []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	expiring, _, err := keys.Create(context.Background(), "acme", []auth.Scope{auth.ScopeRead}, time.Now().Add(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var answers []response
	call := func(rq request) response {
		r := s.do(rq)
		answers = append(answers, r)
		return r
	}
	expect(t, call(request{method: "GET", path: "/api/v1/images", key: revoked}), 200)
	expect(t, call(request{method: "GET", path: "/api/v1/images", key: expiring}), 200)
	if err := keys.Revoke(context.Background(), info.KeyID); err != nil {
		t.Fatal(err)
	}
	expect(t, call(request{method: "GET", path: "/api/v1/images", key: s.writeKey + "x"}), 401)
	call(request{method: "POST", path: "/api/v1/images", key: s.writeKey, contentType: "application/json", body: `{"name":`})
	proxy.Down(ddblocal.FailCall)
	call(request{method: "GET", path: "/api/v1/images/1", key: s.writeKey})
	proxy.Up()
	// Within the cache time a revoked key may still pass; after it, never.
	time.Sleep(1600 * time.Millisecond)
	expect(t, call(request{method: "GET", path: "/api/v1/images", key: revoked}), 401)
	expect(t, call(request{method: "GET", path: "/api/v1/images", key: expiring}), 401)

	secrets := []string{s.writeKey, s.readKey, s.otherKey, revoked, expiring}
	for _, k := range secrets[:len(secrets):len(secrets)] {
		sum := sha256.Sum256([]byte(k))
		secrets = append(secrets, hex.EncodeToString(sum[:]))
	}
	for _, secret := range secrets {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("logs hold a key or its hash")
		}
		for _, r := range answers {
			if strings.Contains(r.Raw, secret) {
				t.Errorf("a response holds a key or its hash: %s", r.Raw)
			}
		}
	}
	for _, r := range answers {
		for _, detail := range []string{"dynamodb", "DynamoDB", "Exception", "ImagesTable", "ApiKeysTable", "amz"} {
			if strings.Contains(r.Raw, detail) {
				t.Errorf("response leaks %q: %s", detail, r.Raw)
			}
		}
	}
	if !strings.Contains(logs.String(), `"status":401`) || !strings.Contains(logs.String(), "request_id") {
		t.Fatalf("logs are missing the access lines: %s", logs.String())
	}
}
