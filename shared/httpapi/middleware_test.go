package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"contentapi/shared/auth"
	"contentapi/shared/metrics"
	"contentapi/shared/metrics/metricstest"
	"contentapi/shared/records"
)

// fakeAuthenticator is a test double for the key store: two known keys.
type fakeAuthenticator struct{}

func (fakeAuthenticator) Authenticate(_ context.Context, key string) (auth.Principal, error) {
	switch key {
	case "write-key":
		return auth.Principal{Account: "acme", Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}}, nil
	case "read-key":
		return auth.Principal{Account: "acme", Scopes: []auth.Scope{auth.ScopeRead}}, nil
	case "broken-store":
		return auth.Principal{}, errors.New("dynamodb: connection refused to table keys-123")
	}
	return auth.Principal{}, auth.ErrUnauthenticated
}

func testHandler(logs *bytes.Buffer) http.Handler {
	mux := NewMux([]Route{
		{Method: http.MethodGet, Pattern: "/api/v1/things", Handler: func(w http.ResponseWriter, r *http.Request) {
			p, _ := PrincipalFrom(r.Context())
			WriteJSON(w, 200, map[string]any{"account": p.Account})
		}},
		{Method: http.MethodPost, Pattern: "/api/v1/things", Handler: func(w http.ResponseWriter, r *http.Request) {
			WriteJSON(w, 201, map[string]any{})
		}},
		{Method: http.MethodGet, Pattern: "/api/v1/panic", Handler: func(w http.ResponseWriter, r *http.Request) {
			panic("secret internal state")
		}},
	})
	return Wrap(mux, Config{
		Auth:   fakeAuthenticator{},
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
	})
}

type answer struct {
	code   int
	header http.Header
	body   map[string]any
}

func do(t *testing.T, h http.Handler, method, path, key string) answer {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	if key != "" {
		r.Header.Set("Authorization", key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	a := answer{code: w.Code, header: w.Header()}
	if w.Body.Len() > 0 {
		if err := json.Unmarshal(w.Body.Bytes(), &a.body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %q", method, path, w.Body.String())
		}
		if ct := w.Header().Get("Content-Type"); ct != ContentType {
			t.Errorf("%s %s: Content-Type %q", method, path, ct)
		}
	}
	if w.Header().Get("X-Request-Id") == "" || w.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("%s %s: missing X-Request-Id or CORS: %v", method, path, w.Header())
	}
	return a
}

func TestMiddleware(t *testing.T) {
	var logs bytes.Buffer
	h := testHandler(&logs)
	tests := []struct {
		name, method, path, auth string
		code                     int
		message                  any
	}{
		{"no key", "GET", "/api/v1/things", "", 401, "Unauthenticated."},
		{"wrong scheme", "GET", "/api/v1/things", "Basic write-key", 401, "Unauthenticated."},
		{"unknown key", "GET", "/api/v1/things", "Bearer nope", 401, "Unauthenticated."},
		{"empty bearer", "GET", "/api/v1/things", "Bearer ", 401, "Unauthenticated."},
		{"ok", "GET", "/api/v1/things", "Bearer write-key", 200, nil},
		{"scheme is case-insensitive", "GET", "/api/v1/things", "bearer write-key", 200, nil},
		{"read key reads", "GET", "/api/v1/things", "Bearer read-key", 200, nil},
		{"read key cannot write", "POST", "/api/v1/things", "Bearer read-key", 403, "This API key is read-only."},
		{"write key writes", "POST", "/api/v1/things", "Bearer write-key", 201, nil},
		{"unknown path", "GET", "/api/v1/nothing", "Bearer write-key", 404, "Resource not found."},
		{"wrong method", "DELETE", "/api/v1/things", "Bearer write-key", 405, "Method not allowed."},
		{"panic", "GET", "/api/v1/panic", "Bearer write-key", 500, "Server error."},
		{"key store down", "GET", "/api/v1/things", "Bearer broken-store", 500, "Server error."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := do(t, h, tt.method, tt.path, tt.auth)
			if a.code != tt.code {
				t.Fatalf("status %d, want %d (%v)", a.code, tt.code, a.body)
			}
			if tt.message != nil && (a.body["message"] != tt.message || a.body["status"] != float64(tt.code)) {
				t.Errorf("body %v, want message %v", a.body, tt.message)
			}
			if tt.code == 401 && a.header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("401 without WWW-Authenticate: %v", a.header)
			}
			if tt.code == 405 && a.header.Get("Allow") != "GET, HEAD, OPTIONS, POST" {
				t.Errorf("Allow = %q", a.header.Get("Allow"))
			}
		})
	}
	if a := do(t, h, "GET", "/api/v1/things", "Bearer write-key"); a.body["account"] != "acme" {
		t.Errorf("principal not passed on: %v", a.body)
	}
	// Keys never reach the logs (internal errors may: logs are ours).
	for _, key := range []string{"write-key", "read-key", "broken-store"} {
		if strings.Contains(logs.String(), key) {
			t.Errorf("logs contain the key %q", key)
		}
	}
	if !strings.Contains(logs.String(), `"account":"acme"`) || !strings.Contains(logs.String(), `"request_id"`) {
		t.Errorf("access log lacks account or request id: %s", logs.String())
	}
}

func TestPreflight(t *testing.T) {
	var logs bytes.Buffer
	h := testHandler(&logs)
	r := httptest.NewRequest(http.MethodOptions, "/api/v1/things", nil)
	r.Header.Set("Origin", "https://app.example")
	r.Header.Set("Access-Control-Request-Method", "POST")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 204 || w.Header().Get("Access-Control-Allow-Methods") == "" ||
		!strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", w.Code, w.Header())
	}
}

// The answers an operator is alarmed on are counted as the function's
// (ServerErrors, DynamoDBUnavailable, QuotaRefusals); the rest, a rate
// limit's 429 among them, are not counted.
func TestAnswersCounted(t *testing.T) {
	fail := func(err error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { WriteError(w, r, err) }
	}
	mux := NewMux([]Route{
		{Method: http.MethodGet, Pattern: "/broken", Handler: fail(errors.New("internal"))},
		{Method: http.MethodGet, Pattern: "/slow", Handler: fail(records.ErrUnavailable)},
		{Method: http.MethodGet, Pattern: "/quota", Handler: fail(&records.QuotaError{Kind: "images", Limit: 5})},
		{Method: http.MethodGet, Pattern: "/throttled", Handler: fail(Throttled(time.Second))},
		{Method: http.MethodGet, Pattern: "/fine", Handler: func(w http.ResponseWriter, r *http.Request) {
			WriteJSON(w, 200, map[string]any{})
		}},
	})
	var out bytes.Buffer
	logs := NewLogHandler(&out, nil)
	h := Wrap(mux, Config{Auth: fakeAuthenticator{}, Logger: slog.New(logs),
		Metrics: metrics.New(logs.Writer(), "test"), Function: "things"})
	for path, status := range map[string]int{"/broken": 500, "/slow": 503, "/quota": 429, "/throttled": 429, "/fine": 200} {
		if a := do(t, h, "GET", path, "Bearer write-key"); a.code != status {
			t.Fatalf("%s: %d, want %d", path, a.code, status)
		}
	}
	do(t, h, "GET", "/nowhere", "Bearer write-key")
	lines, err := metricstest.Parse(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"ServerErrors": 2, "DynamoDBUnavailable": 1, "QuotaRefusals": 1} {
		if got := metricstest.Sum(lines, name, "Function=things", "Stack=test"); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if len(lines) != 3 {
		t.Errorf("%d metric lines, want 3 (500, 503, the quota's 429)", len(lines))
	}
}
