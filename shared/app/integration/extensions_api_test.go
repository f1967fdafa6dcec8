package integration_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"contentapi/shared/app"
)

func idempotentPost(s *stack, key, body string) response {
	return s.do(request{method: "POST", path: "/api/v1/documents", key: s.writeKey,
		contentType: "application/x-www-form-urlencoded", body: body,
		header: map[string]string{"Idempotency-Key": key}})
}

func TestIdempotencyKey(t *testing.T) {
	s := newStack(t)
	first := idempotentPost(s, "order-1", "name=Once&prompt=p")
	expect(t, first, 201)
	again := idempotentPost(s, "order-1", "name=Once&prompt=p")
	expect(t, again, 201)
	if again.Raw != first.Raw || again.Header.Get("Location") != first.Header.Get("Location") ||
		again.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("replay differs:\n%s %v\n%s %v", first.Raw, first.Header, again.Raw, again.Header)
	}
	expect422(t, idempotentPost(s, "order-1", "name=Other&prompt=p"), "Idempotency-Key")
	// A refused request is an answer too: replayed, and it created nothing.
	bad := idempotentPost(s, "order-2", "name=x")
	expect422(t, bad, "prompt")
	if r := idempotentPost(s, "order-2", "name=x"); r.Raw != bad.Raw || r.Status != 422 {
		t.Fatalf("422 replay: %d %s", r.Status, r.Raw)
	}
	// Keys are per account: globex's order-1 is a new request.
	r := s.do(request{method: "POST", path: "/api/v1/documents", key: s.otherKey, contentType: "application/x-www-form-urlencoded",
		body: "name=Once&prompt=p", header: map[string]string{"Idempotency-Key": "order-1"}})
	expect(t, r, 201)
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("another account's key was replayed")
	}
	if total := num(s.get("/api/v1/documents").meta()["total"]); total != 1 {
		t.Fatalf("acme total %d, want 1", total)
	}
	expect(t, idempotentPost(s, strings.Repeat("k", 256), "name=a&prompt=p"), 400)
	// Without the header every POST creates.
	expect(t, s.form("POST", "/api/v1/documents", "name", "Once", "prompt", "p"), 201)
	if total := num(s.get("/api/v1/documents").meta()["total"]); total != 2 {
		t.Fatalf("total %d, want 2", total)
	}
}

func TestIdempotencyConcurrentRetries(t *testing.T) {
	s := newStack(t)
	var wg sync.WaitGroup
	answers := make(chan response, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- idempotentPost(s, "burst", "name=Burst&prompt=p")
		}()
	}
	wg.Wait()
	close(answers)
	var bodies []string
	for r := range answers {
		switch r.Status {
		case 201:
			bodies = append(bodies, r.Raw)
		case 409:
			if r.Header.Get("Retry-After") == "" {
				t.Error("409 without Retry-After")
			}
		default:
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
	}
	for _, b := range bodies {
		if b != bodies[0] {
			t.Fatalf("two different answers:\n%s\n%s", bodies[0], b)
		}
	}
	if total := num(s.get("/api/v1/documents").meta()["total"]); total != 1 {
		t.Fatalf("%d documents created by one key", total)
	}
}

func TestConditionalRequests(t *testing.T) {
	s := newStack(t)
	created := s.form("POST", "/api/v1/images", "name", "Tagged", "description", "d", "resolution", "256x256")
	tag := created.Header.Get("ETag")
	if tag == "" {
		t.Fatal("no ETag on create")
	}
	r := s.get("/api/v1/images/1")
	if r.Header.Get("ETag") != tag {
		t.Fatalf("ETag %q then %q", tag, r.Header.Get("ETag"))
	}
	notModified := s.do(request{method: "GET", path: "/api/v1/images/1", key: s.writeKey, header: map[string]string{"If-None-Match": tag}})
	if notModified.Status != 304 || notModified.Raw != "" {
		t.Fatalf("If-None-Match: %d %q", notModified.Status, notModified.Raw)
	}
	put := func(ifMatch string) response {
		return s.do(request{method: "PUT", path: "/api/v1/images/1", key: s.writeKey, contentType: "application/x-www-form-urlencoded",
			body: "favorite=1", header: map[string]string{"If-Match": ifMatch}})
	}
	updated := put(tag)
	expect(t, updated, 200)
	newTag := updated.Header.Get("ETag")
	if newTag == tag {
		t.Fatal("ETag did not change on update")
	}
	expect(t, put(tag), 412)
	expect(t, put(`W/`+newTag), 412)
	expect(t, put(`"garbage"`), 412)
	// Present but listing no tag is not the header's absence (RFC 9110
	// 13.1.1: no tag matches).
	expect(t, put(""), 412)
	expect(t, put(" , "), 412)
	if s.get("/api/v1/images/1").Header.Get("ETag") != newTag {
		t.Fatal("a refused If-Match write changed the record")
	}
	// Any tag of a list may match, not only the first.
	listed := put(tag + ", " + newTag)
	expect(t, listed, 200)
	newTag = listed.Header.Get("ETag")
	// If-None-Match on a write: * refuses it while the record exists, a
	// tag while the record is at that version; 404 stays 404.
	putUnless := func(ifNoneMatch string) response {
		return s.do(request{method: "PUT", path: "/api/v1/images/1", key: s.writeKey, contentType: "application/x-www-form-urlencoded",
			body: "favorite=0", header: map[string]string{"If-None-Match": ifNoneMatch}})
	}
	expect(t, putUnless("*"), 412)
	expect(t, putUnless(`"9.1", W/`+newTag), 412)
	expect(t, s.do(request{method: "DELETE", path: "/api/v1/images/1", key: s.writeKey, header: map[string]string{"If-None-Match": "*"}}), 412)
	expect(t, s.do(request{method: "PUT", path: "/api/v1/images/99", key: s.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "favorite=0", header: map[string]string{"If-None-Match": "*"}}), 404)
	if got := s.get("/api/v1/images/1"); got.Header.Get("ETag") != newTag || got.data()["favorite"] != true {
		t.Fatalf("a refused If-None-Match write changed the record: %s %s", got.Header.Get("ETag"), got.Raw)
	}
	unless := putUnless(tag) // an older version's tag: no match, so the write goes through
	expect(t, unless, 200)
	newTag = unless.Header.Get("ETag")
	expect(t, s.do(request{method: "GET", path: "/api/v1/images/1", key: s.writeKey, header: map[string]string{"If-None-Match": tag}}), 200)
	del := func(ifMatch string) response {
		return s.do(request{method: "DELETE", path: "/api/v1/images/1", key: s.writeKey, header: map[string]string{"If-Match": ifMatch}})
	}
	expect(t, del(tag), 412)
	expect(t, del(newTag), 200)
	expect(t, del(newTag), 404)
}

func TestRateLimit(t *testing.T) {
	s := newStackWith(t, func(c *app.Config) { c.RateLimitPerMinute = 3 })
	var last response
	for i := range 3 {
		last = s.get("/api/v1/images")
		expect(t, last, 200)
		if last.Header.Get("X-RateLimit-Limit") != "3" || last.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(2-i) || last.Header.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("request %d headers %v", i+1, last.Header)
		}
	}
	r := s.get("/api/v1/images")
	expect(t, r, 429)
	if r.Body["message"] != "Too Many Attempts." || r.Header.Get("Retry-After") == "" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("429: %s %v", r.Raw, r.Header)
	}
	// Limits are per key: the read key of the same account still works.
	expect(t, s.do(request{method: "GET", path: "/api/v1/images", key: s.readKey}), 200)
	// Without a limit configured no headers are sent.
	plain := newStack(t).get("/api/v1/images")
	if plain.Header.Get("X-RateLimit-Limit") != "" {
		t.Fatalf("rate limit headers with limits off: %v", plain.Header)
	}
}

func ptr[T any](v T) *T { return &v }
