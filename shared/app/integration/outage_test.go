package integration_test

import (
	"io"
	"log/slog"
	"mime/multipart"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
)

// What the proxy matches: the service's writes, by what their bodies name.
var (
	claimWrite    = ddblocal.MatchOp("UpdateItem", `"running"`)
	answerWrite   = ddblocal.MatchOp("UpdateItem", `"done"`)
	recordPutCall = ddblocal.MatchOp("PutItem", `"id_key"`)
	tombstoneCall = ddblocal.MatchOp("UpdateItem", `"gone_by"`)
	updateCall    = ddblocal.MatchOp("UpdateItem", `"updated_at"`)
)

// clock is a time.Now that a test moves forward, to let leases and
// unfinished writes age without waiting.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time            { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) advance(d time.Duration)   { c.offset.Add(int64(d)) }
func (c *clock) configure(cfg *app.Config) { cfg.Clock = c.now }

// outageStack is a stack through a fault proxy, with a short request
// deadline and the template's own function timeouts in its gateway, so a
// request that outlived its function would get the platform's 500.
func outageStack(t *testing.T, deadline time.Duration) (*stack, *ddblocal.FaultProxy, *clock) {
	c := &clock{}
	s, proxy := faultyStack(t, func(cfg *app.Config) {
		cfg.RequestTimeout = deadline
		c.configure(cfg)
	})
	fns, err := s.app.APIEntries()
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdalocal.NewGateway(loadTemplate(t), fns, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s, proxy, c
}

func keyed(s *stack, method, path, key, body string) response {
	rq := request{method: method, path: path, key: s.writeKey, header: map[string]string{"Idempotency-Key": key}}
	if body != "" {
		rq.contentType, rq.body = "application/x-www-form-urlencoded", body
	}
	return s.do(rq)
}

// total is the list's total and the records it holds, read page by page,
// once the tally has counted every delete made so far (a delete that lands
// late is counted from the stream after it lands).
func totals(t *testing.T, s *stack, path string) (int64, int) {
	t.Helper()
	s.tally.Drain()
	r := s.get(path + "?per_page=100")
	expect(t, r, 200)
	return num(r.meta()["total"]), len(r.list())
}

// A write that lands while its answer is lost: the record is there, every
// answer about it is lost. The create finds its own record: one record, 201.
func TestKeyedCreateWhoseAnswersAreAllLost(t *testing.T) {
	s, proxy, _ := outageStack(t, 20*time.Second)
	proxy.Inject(recordPutCall, ddblocal.LoseAnswer, 3)
	first := keyed(s, "POST", "/api/v1/images", "lost-1", "name=Lost&description=d&resolution=256x256")
	expect(t, first, 201)
	again := keyed(s, "POST", "/api/v1/images", "lost-1", "name=Lost&description=d&resolution=256x256")
	expect(t, again, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || again.data()["id"] != first.data()["id"] {
		t.Fatalf("retry: %v %s", again.Header, again.Raw)
	}
	if total, n := totals(t, s, "/api/v1/images"); total != 1 || n != 1 {
		t.Fatalf("total %d, %d listed", total, n)
	}
}

// A stall while the answer is stored: the client has its 201; the retry
// waits out the lease (409, Retry-After) and then finds the same record.
func TestStallWhileTheAnswerIsStored(t *testing.T) {
	s, proxy, clk := outageStack(t, 8*time.Second)
	proxy.Inject(answerWrite, ddblocal.HangCall, 1)
	body := "name=Stored&prompt=p"
	first := keyed(s, "POST", "/api/v1/documents", "stall-1", body)
	expect(t, first, 201)
	busy := keyed(s, "POST", "/api/v1/documents", "stall-1", body)
	expect(t, busy, 409)
	wait, err := strconv.Atoi(busy.Header.Get("Retry-After"))
	if err != nil || wait < 1 || wait > 9 {
		t.Fatalf("Retry-After %q: the lease is the request's 8 s deadline and a second", busy.Header.Get("Retry-After"))
	}
	clk.advance(time.Duration(wait) * time.Second)
	again := keyed(s, "POST", "/api/v1/documents", "stall-1", body)
	expect(t, again, 201)
	if again.data()["id"] != first.data()["id"] {
		t.Fatalf("first made %v, the retry %v", first.data()["id"], again.data()["id"])
	}
	if total, n := totals(t, s, "/api/v1/documents"); total != 1 || n != 1 {
		t.Fatalf("total %d, %d listed", total, n)
	}
}

// Retried conditional writes know themselves: the SDK retries a write whose
// first attempt landed, and the retry is recognised, never a 409, 404 or 412.
func TestRetriedWritesKnowThemselves(t *testing.T) {
	s, proxy, _ := outageStack(t, 20*time.Second)
	proxy.Inject(claimWrite, ddblocal.LoseAnswer, 1)
	created := keyed(s, "POST", "/api/v1/images", "own-claim", "name=Mine&description=d&resolution=256x256")
	expect(t, created, 201)

	proxy.Inject(updateCall, ddblocal.LoseAnswer, 1)
	updated := s.do(request{method: "PUT", path: "/api/v1/images/1", key: s.writeKey, contentType: "application/x-www-form-urlencoded",
		body: "name=Renamed", header: map[string]string{"If-Match": created.Header.Get("ETag")}})
	expect(t, updated, 200)
	if updated.data()["name"] != "Renamed" || updated.Header.Get("ETag") != `"1.2"` {
		t.Fatalf("update: %s %s", updated.Header.Get("ETag"), updated.Raw)
	}

	proxy.Inject(tombstoneCall, ddblocal.LoseAnswer, 1)
	expect(t, s.do(request{method: "DELETE", path: "/api/v1/images/1", key: s.writeKey}), 200)
	if total, n := totals(t, s, "/api/v1/images"); total != 0 || n != 0 {
		t.Fatalf("total %d, %d listed", total, n)
	}
}

// A stall longer than the deadline: DynamoDB stops answering (calls queue
// and are applied when it resumes). Every request is our JSON 503 within its
// deadline, never the platform's 500; the retries then finish the work
// exactly once, and the totals agree.
func TestStallLongerThanTheDeadline(t *testing.T) {
	s, proxy, clk := outageStack(t, 3*time.Second)
	expect(t, s.get("/api/v1/images"), 200) // the key is cached
	createImage(t, s, "Doomed")
	proxy.Down(ddblocal.HoldCall)
	for _, r := range []response{
		keyed(s, "POST", "/api/v1/images", "outage-create", "name=Outage&description=d&resolution=256x256"),
		keyed(s, "DELETE", "/api/v1/images/1", "outage-delete", ""),
		s.get("/api/v1/images/1"),
	} {
		expectUnavailable(t, r)
		if r.Header.Get("X-Request-Id") == "" {
			t.Error("503 without X-Request-Id")
		}
	}
	proxy.Up() // what was held lands now, after its requests gave up
	proxy.Wait()
	clk.advance(time.Minute)
	created := keyed(s, "POST", "/api/v1/images", "outage-create", "name=Outage&description=d&resolution=256x256")
	expect(t, created, 201)
	// The delete landed when the database resumed: its retry says so, not
	// 404.
	expect(t, keyed(s, "DELETE", "/api/v1/images/1", "outage-delete", ""), 200)
	// The next write settles whatever the outage left half done.
	createImage(t, s, "After")
	total, n := totals(t, s, "/api/v1/images")
	if total != 2 || n != 2 {
		t.Fatalf("total %d, %d listed, want 2 and 2", total, n)
	}
	if found := s.get("/api/v1/images?search=outage"); num(found.meta()["total"]) != 1 {
		t.Fatalf("one key, records: %s", found.Raw)
	}
}

// The same key with the same request is the same request, however its body
// was encoded: never a 422.
func TestSameRequestInAnotherEncodingIsReplayed(t *testing.T) {
	s := newStack(t)
	multipartBody := func(boundary string) (string, string) {
		var b strings.Builder
		w := multipart.NewWriter(&b)
		_ = w.SetBoundary(boundary)
		_ = w.WriteField("name", "Café")
		_ = w.WriteField("prompt", "p")
		_ = w.Close()
		return w.FormDataContentType(), b.String()
	}
	send := func(contentType, body string) response {
		return s.do(request{method: "POST", path: "/api/v1/documents", key: s.writeKey, contentType: contentType, body: body,
			header: map[string]string{"Idempotency-Key": "encodings"}})
	}
	ct, body := multipartBody("first-boundary")
	first := send(ct, body)
	expect(t, first, 201)
	ct, body = multipartBody("second-boundary")
	for _, r := range []response{
		send(ct, body),
		send("application/json", `{ "prompt": "p",  "name": "Café" }`),
		send("application/x-www-form-urlencoded", "prompt=p&name=Caf%C3%A9"),
	} {
		expect(t, r, 201)
		if r.Header.Get("Idempotent-Replayed") != "true" || r.Raw != first.Raw {
			t.Fatalf("not a replay: %s", r.Raw)
		}
	}
	expect422(t, send("application/json", `{"prompt": "p", "name": "Cafe"}`), "Idempotency-Key")
}

// A request still running holds its key: a retry is told to come back when
// its lease ends, which is the running request's deadline.
func TestConflictSaysWhenTheLeaseEnds(t *testing.T) {
	s, proxy, _ := outageStack(t, 10*time.Second)
	held := proxy.Inject(recordPutCall, ddblocal.HoldCall, 1)
	done := make(chan response, 1)
	go func() { done <- keyed(s, "POST", "/api/v1/documents", "running", "name=Slow&prompt=p") }()
	<-held.Held()
	busy := keyed(s, "POST", "/api/v1/documents", "running", "name=Slow&prompt=p")
	expect(t, busy, 409)
	if wait, err := strconv.Atoi(busy.Header.Get("Retry-After")); err != nil || wait < 2 || wait > 11 {
		t.Fatalf("Retry-After %q, want the rest of a 10 s deadline and a second", busy.Header.Get("Retry-After"))
	}
	held.Release()
	expect(t, <-done, 201)
}

// Keys work on PUT, PATCH and DELETE too: the replay says what the first
// request did.
func TestKeysOnUpdatesAndDeletes(t *testing.T) {
	s := newStack(t)
	createImage(t, s, "Keyed")
	put := keyed(s, "PUT", "/api/v1/images/1", "put-1", "favorite=1")
	expect(t, put, 200)
	again := keyed(s, "PUT", "/api/v1/images/1", "put-1", "favorite=1")
	if again.Raw != put.Raw || again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("ETag") != `"1.2"` {
		t.Fatalf("PUT replay: %v %s", again.Header, again.Raw)
	}
	expect422(t, keyed(s, "PATCH", "/api/v1/images/1", "put-1", "favorite=1"), "Idempotency-Key")
	del := keyed(s, "DELETE", "/api/v1/images/1", "delete-1", "")
	expect(t, del, 200)
	again = keyed(s, "DELETE", "/api/v1/images/1", "delete-1", "")
	if again.Status != 200 || again.Raw != del.Raw || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("DELETE replay: %d %s", again.Status, again.Raw)
	}
	expect(t, s.do(request{method: "DELETE", path: "/api/v1/images/1", key: s.writeKey}), 404)
}
