package integration_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/ddblocal"
	localstack "contentapi/shared/local/stack"
)

// stack is the service as a client sees it: the real handlers behind the
// local API Gateway, on DynamoDB Local, with keys of three kinds.
type stack struct {
	t        testing.TB
	url      string
	env      *ddblocal.TestEnv
	app      *app.App
	writeKey string // account "acme", read and write
	readKey  string // account "acme", read only
	otherKey string // account "globex", read and write
	// tally takes deletes' counts down as the tally function does in AWS.
	tally *localstack.Tally
}

func newStack(t testing.TB) *stack { return newStackWith(t, nil) }

// newStackWith is newStack with a change to the configuration.
func newStackWith(t testing.TB, configure func(*app.Config)) *stack {
	t.Helper()
	env := ddblocal.NewTestEnv(t)
	cfg := app.Config{
		Region:           ddblocal.Region,
		DynamoDBEndpoint: env.Endpoint,
		Tables:           env.Tables,
		KeysTable:        env.Tables["ApiKeysTable"],
		RateLimitTable:   env.Tables["RateLimitTable"],
		IdempotencyTable: env.Tables["IdempotencyTable"],
		AuthCacheTTL:     time.Minute,
		RequestTimeout:   30 * time.Second, // roomy for a loaded CI machine; faults_test sets its own
		AllowOrigin:      "*",
		LogLevel:         8,          // quiet: only errors above Error level
		LogOutput:        io.Discard, // and no metrics, which are written at any level
	}
	if configure != nil {
		configure(&cfg)
	}
	// The service's own client: its retries and timeouts are under test too.
	db, err := app.NewDynamoDB(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(cfg, db, localstack.Parts)
	s := &stack{t: t, env: env, app: a}
	tally, err := a.Tally()
	if err != nil {
		t.Fatal(err)
	}
	s.tally = localstack.StartTally(t, env.Client, env.Endpoint, env.Tables, tally)
	keys := auth.NewKeys(env.Client, cfg.KeysTable, cfg.KeyChecksum)
	create := func(account string, scopes ...auth.Scope) string {
		key, _, err := keys.Create(context.Background(), account, scopes, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	s.writeKey = create("acme", auth.ScopeRead, auth.ScopeWrite)
	s.readKey = create("acme", auth.ScopeRead)
	s.otherKey = create("globex", auth.ScopeRead, auth.ScopeWrite)
	srv := httptest.NewServer(serve(t, a))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// response is an answer with its JSON body decoded.
type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

func (r response) data() map[string]any {
	d, _ := r.Body["data"].(map[string]any)
	return d
}

func (r response) list() []any {
	d, _ := r.Body["data"].([]any)
	return d
}

func (r response) meta() map[string]any {
	m, _ := r.Body["meta"].(map[string]any)
	return m
}

// request is one call: method, path (with query), key and body.
type request struct {
	method, path, key string
	contentType, body string
	header            map[string]string
}

func (s *stack) do(rq request) response {
	s.t.Helper()
	req, err := http.NewRequest(rq.method, s.url+rq.path, strings.NewReader(rq.body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if rq.key != "" {
		req.Header.Set("Authorization", "Bearer "+rq.key)
	}
	if rq.contentType != "" {
		req.Header.Set("Content-Type", rq.contentType)
	}
	for k, v := range rq.header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := response{Status: res.StatusCode, Header: res.Header, Raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			s.t.Fatalf("%s %s: body is not a JSON object: %q", rq.method, rq.path, raw)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			s.t.Errorf("%s %s: Content-Type %q", rq.method, rq.path, ct)
		}
	}
	if res.Header.Get("X-Request-Id") == "" || res.Header.Get("Access-Control-Allow-Origin") == "" {
		s.t.Errorf("%s %s: no X-Request-Id or CORS header", rq.method, rq.path)
	}
	return out
}

// get, form and the others are the common calls with the write key.
func (s *stack) get(path string) response {
	return s.do(request{method: "GET", path: path, key: s.writeKey})
}

func (s *stack) form(method, path string, fields ...string) response {
	v := url.Values{}
	for i := 0; i < len(fields); i += 2 {
		v.Add(fields[i], fields[i+1])
	}
	return s.do(request{method: method, path: path, key: s.writeKey,
		contentType: "application/x-www-form-urlencoded", body: v.Encode()})
}

func (s *stack) json(method, path, body string) response {
	return s.do(request{method: method, path: path, key: s.writeKey, contentType: "application/json", body: body})
}

func expect(t testing.TB, r response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Raw)
	}
	if r.Body != nil && r.Body["status"] != nil && r.Body["status"] != float64(status) {
		t.Errorf("body status %v, want %d", r.Body["status"], status)
	}
}

// expect422 checks a validation answer names field (in message and errors).
func expect422(t testing.TB, r response, field string) {
	t.Helper()
	expect(t, r, 422)
	for _, part := range []string{"message", "errors"} {
		m, _ := r.Body[part].(map[string]any)
		if msgs, _ := m[field].([]any); len(msgs) == 0 {
			t.Fatalf("422 %s does not name %q: %s", part, field, r.Raw)
		}
	}
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}
