package idempotency

import (
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/local/ddblocal"
)

func TestValidKey(t *testing.T) {
	testCases := []struct {
		key  string
		want bool
	}{
		{"order-1", true},
		{"a", true},
		{strings.Repeat("k", 255), true},
		{"", false},
		{strings.Repeat("k", 256), false},
		{"with space", false},
		{"tab\there", false},
		{"café", false},
		{"~!@#$%^&*()_+{}|:<>?", true},
		{"order-77,part-1", false},
	}
	for _, tc := range testCases {
		if got := ValidKey(tc.key); got != tc.want {
			t.Errorf("ValidKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func newRequest(method, path, contentType, body string, header ...string) (*http.Request, []byte) {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	return r, []byte(body)
}

func multipartBody(boundary string, fields ...string) (string, string) {
	var b strings.Builder
	w := multipart.NewWriter(&b)
	_ = w.SetBoundary(boundary)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = w.WriteField(fields[i], fields[i+1])
	}
	_ = w.Close()
	return w.FormDataContentType(), b.String()
}

func TestFingerprint(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	mpA, bodyA := multipartBody("boundary-a", "name", "x", "prompt", "p")
	mpB, bodyB := multipartBody("boundary-b", "prompt", "p", "name", "x")
	base := func() (*http.Request, []byte) {
		return newRequest("POST", "/api/v1/documents", form, "name=x&prompt=p")
	}
	testCases := []struct {
		name string
		req  func() (*http.Request, []byte)
		same bool
	}{
		{"identical", base, true},
		{"fields reordered", func() (*http.Request, []byte) {
			return newRequest("POST", "/api/v1/documents", form, "prompt=p&name=x")
		}, true},
		{"as JSON with spacing", func() (*http.Request, []byte) {
			return newRequest("POST", "/api/v1/documents", "application/json", `{ "prompt" : "p", "name":"x" }`)
		}, true},
		{"as multipart", func() (*http.Request, []byte) { return newRequest("POST", "/api/v1/documents", mpA, bodyA) }, true},
		{"multipart, another boundary", func() (*http.Request, []byte) { return newRequest("POST", "/api/v1/documents", mpB, bodyB) }, true},
		{"another value", func() (*http.Request, []byte) {
			return newRequest("POST", "/api/v1/documents", form, "name=y&prompt=p")
		}, false},
		{"a number, not a string", func() (*http.Request, []byte) {
			return newRequest("POST", "/api/v1/documents", "application/json", `{"name":"x","prompt":"p","creativity":1}`)
		}, false},
		{"another path", func() (*http.Request, []byte) { return newRequest("POST", "/api/v1/images", form, "name=x&prompt=p") }, false},
		{"another method", func() (*http.Request, []byte) {
			return newRequest("PUT", "/api/v1/documents", form, "name=x&prompt=p")
		}, false},
		{"with If-Match", func() (*http.Request, []byte) {
			return newRequest("POST", "/api/v1/documents", form, "name=x&prompt=p", "If-Match", `"1.1"`)
		}, false},
		{"with If-Match empty", func() (*http.Request, []byte) {
			return newRequest("POST", "/api/v1/documents", form, "name=x&prompt=p", "If-Match", "")
		}, false},
		{"with If-None-Match", func() (*http.Request, []byte) {
			return newRequest("POST", "/api/v1/documents", form, "name=x&prompt=p", "If-None-Match", "*")
		}, false},
		{"a field repeated", func() (*http.Request, []byte) {
			return newRequest("POST", "/api/v1/documents", form, "name=x&prompt=p&name=x")
		}, false},
	}
	want := Fingerprint(base())
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Fingerprint(tc.req()); (got == want) != tc.same {
				t.Errorf("same request: %v, want %v", got == want, tc.same)
			}
		})
	}
	// A body that does not parse is compared as sent.
	broken1 := Fingerprint(newRequest("POST", "/api/v1/documents", "application/json", `{"name":`))
	broken2 := Fingerprint(newRequest("POST", "/api/v1/documents", "application/json", `{"name": `))
	if broken1 == broken2 || broken1 != Fingerprint(newRequest("POST", "/api/v1/documents", "application/json", `{"name":`)) {
		t.Error("unparsable bodies are not compared byte for byte")
	}
}

// claimItem is a stored claim as judge sees it.
func claimItem(fp, state, owner string, lease time.Time) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrFingerprint: str(fp), attrState: str(state), attrOwner: str(owner), attrOp: str("op-1"),
		attrLease: num(lease.UnixMilli()), attrRecordID: num(7),
	}
}

func TestJudge(t *testing.T) {
	now := time.Date(2026, 11, 21, 16, 48, 30, 0, time.UTC)
	s := &Store{Now: func() time.Time { return now }}
	testCases := []struct {
		name       string
		old        map[string]types.AttributeValue
		outcome    outcome
		retryAfter int
	}{
		{"this execution's own claim", claimItem("fp", stateRunning, "me", now.Add(time.Minute)), owned, 0},
		{"another request", claimItem("other", stateRunning, "them", now.Add(time.Minute)), mismatch, 0},
		{"answered", claimItem("fp", stateDone, "them", now.Add(-time.Minute)), replay, 0},
		{"running, 2.1 s of lease left", claimItem("fp", stateRunning, "them", now.Add(2100*time.Millisecond)), busy, 3},
		{"running, lease just ended", claimItem("fp", stateRunning, "them", now), owned, 0},
		{"running, lease long over", claimItem("fp", stateRunning, "them", now.Add(-time.Hour)), owned, 0},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c := s.judge(tc.old, "fp", "me")
			if c.outcome != tc.outcome || c.retryAfter != tc.retryAfter {
				t.Fatalf("outcome %v retry after %d, want %v %d", c.outcome, c.retryAfter, tc.outcome, tc.retryAfter)
			}
			if c.outcome == owned && (c.op != "op-1" || c.recordID != 7) {
				t.Fatalf("a claim taken over keeps its operation and record: %+v", c)
			}
		})
	}
}

// The claims as DynamoDB Local stores them: who gets the key, and what the
// next request with it is told.
func TestClaims(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	now := time.Now()
	s := New(env.Client, env.Tables["IdempotencyTable"], func(err error) error { return err })
	s.Now = func() time.Time { return now }
	ctx := context.Background()
	lease := now.Add(5 * time.Second)
	claim := func(k, fp, exec string) claimed {
		t.Helper()
		c, err := s.claim(ctx, k, fp, exec, lease)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	first := claim("acme#k", "fp", "exec-1")
	if first.outcome != owned || first.op != "exec-1" {
		t.Fatalf("fresh key: %+v", first)
	}
	// The same execution again (its first write landed, the SDK retried).
	if c := claim("acme#k", "fp", "exec-1"); c.outcome != owned || c.op != "exec-1" {
		t.Fatalf("own retry: %+v", c)
	}
	if c := claim("acme#k", "fp", "exec-2"); c.outcome != busy || c.retryAfter != 5 {
		t.Fatalf("while running: %+v", c)
	}
	if c := claim("acme#k", "other", "exec-2"); c.outcome != mismatch {
		t.Fatalf("another request: %+v", c)
	}
	if err := s.bind(ctx, "acme#k", "exec-1", 42); err != nil {
		t.Fatal(err)
	}
	if err := s.bind(ctx, "acme#k", "exec-2", 43); err != errLostClaim {
		t.Fatalf("a request without the claim bound: %v", err)
	}
	// The lease ends (the request gave up, or died): the next request takes
	// over under the same operation and bound record.
	now = now.Add(6 * time.Second)
	taken := claim("acme#k", "fp", "exec-3")
	if taken.outcome != owned || taken.op != "exec-1" || taken.recordID != 42 {
		t.Fatalf("takeover: %+v", taken)
	}
	if err := s.bind(ctx, "acme#k", "exec-1", 44); err != errLostClaim {
		t.Fatalf("the old execution still writes: %v", err)
	}
	rec := &recorder{header: http.Header{"Content-Type": {"application/json"}, "Location": {"/x/42"}}, status: 201}
	rec.body.WriteString(`{"id":42}`)
	if err := s.complete(ctx, "acme#k", "exec-3", rec); err != nil {
		t.Fatal(err)
	}
	done := claim("acme#k", "fp", "exec-4")
	if done.outcome != replay {
		t.Fatalf("answered: %+v", done)
	}
	w := httptest.NewRecorder()
	replayAnswer(w, done.item)
	if w.Code != 201 || w.Body.String() != `{"id":42}` || w.Header().Get("Location") != "/x/42" || w.Header().Get(ReplayedHeader) != "true" {
		t.Fatalf("replay: %d %v %s", w.Code, w.Header(), w.Body)
	}
	// A request that ends in a 5xx gives its lease up at once.
	claim("acme#y", "fp", "exec-5")
	if err := s.yield(ctx, "acme#y", "exec-5"); err != nil {
		t.Fatal(err)
	}
	if c := claim("acme#y", "fp", "exec-6"); c.outcome != owned || c.op != "exec-5" {
		t.Fatalf("after yield: %+v", c)
	}
	// After the retention, the key is new again.
	now = now.Add(Retention + time.Minute)
	if c := claim("acme#k", "fp", "exec-7"); c.outcome != owned || c.op != "exec-7" || c.recordID != 0 {
		t.Fatalf("expired key: %+v", c)
	}
}

// If-Match's list is the request's whatever its lines: a second line is
// another request than the first line alone.
func TestFingerprintTakesEveryIfMatchLine(t *testing.T) {
	one := Fingerprint(newRequest("PUT", "/api/v1/images/1", "", "", "If-Match", `"1.1"`))
	two := Fingerprint(newRequest("PUT", "/api/v1/images/1", "", "", "If-Match", `"1.1"`, "If-Match", `"1.2"`))
	if one == two {
		t.Error("If-Match with a second line has the fingerprint of its first line alone")
	}
}
