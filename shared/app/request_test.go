package app

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"contentapi/shared/httpapi"
)

type probeKey struct{}

// sameRequest fails t unless eventRequest makes of ev what the adapter
// makes of it: every exported field of the request equal, the bodies
// reading the same, and the context the one given. It reports whether
// ev took the plain path.
func sameRequest(t *testing.T, ev events.APIGatewayV2HTTPRequest) (plain bool) {
	t.Helper()
	ctx := context.WithValue(context.Background(), probeKey{}, "probe")
	var requests core.RequestAccessorV2
	want, wantErr := requests.EventToRequestWithContext(ctx, ev)
	_, plain = plainRequest(ctx, ev)
	got := eventRequest(ctx, ev)
	if plain && wantErr != nil {
		t.Fatalf("the plain path took an event the adapter fails on: %v", wantErr)
	}
	if got == nil || wantErr != nil {
		// An event the adapter fails on is a 400 here, and so is one
		// convertible refuses.
		if got != nil {
			t.Fatalf("made a request of an event the adapter fails on (%v)", wantErr)
		}
		return plain
	}
	if got.Context().Value(probeKey{}) != "probe" {
		t.Fatal("the request's context is not the one given")
	}
	// Two spellings of one name come out in the order of a map's
	// iteration, which the adapter leaves random; only their values count.
	spellings := map[string]int{}
	for name := range ev.Headers {
		spellings[textproto.CanonicalMIMEHeaderKey(name)]++
	}
	for name, n := range spellings {
		if n > 1 {
			slices.Sort(got.Header[name])
			slices.Sort(want.Header[name])
		}
	}
	g, w := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for _, f := range reflect.VisibleFields(g.Type()) {
		if !f.IsExported() {
			continue // the context, checked above
		}
		gf, wf := g.FieldByIndex(f.Index), w.FieldByIndex(f.Index)
		switch f.Name {
		case "Body":
			if a, b := readAll(t, got.Body), readAll(t, want.Body); a != b {
				t.Fatalf("body %q, the adapter's %q", a, b)
			}
		case "GetBody":
			if (got.GetBody == nil) != (want.GetBody == nil) {
				t.Fatalf("GetBody set %v, the adapter's %v", got.GetBody != nil, want.GetBody != nil)
			}
			if got.GetBody != nil {
				a, _ := got.GetBody()
				b, _ := want.GetBody()
				if a, b := readAll(t, a), readAll(t, b); a != b {
					t.Fatalf("GetBody %q, the adapter's %q", a, b)
				}
			}
		default:
			if !reflect.DeepEqual(gf.Interface(), wf.Interface()) {
				t.Fatalf("%s\n%#v\nthe adapter's\n%#v", f.Name, gf.Interface(), wf.Interface())
			}
		}
	}
	return plain
}

func readAll(t *testing.T, r io.ReadCloser) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// event is a GET of path with headers, as API Gateway sends it.
func event(path string, headers map[string]string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		RawPath: path,
		Headers: headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "example.execute-api.us-east-1.amazonaws.com",
			RequestID:  "S5fUv8gcNFRJa0l=",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: http.MethodGet, Path: path, SourceIP: "203.0.113.7",
			},
		},
	}
}

func TestRequestAsTheAdapter(t *testing.T) {
	singletons := map[string]string{}
	for _, name := range []string{"content-type", "content-disposition", "content-length", "user-agent",
		"referer", "host", "authorization", "proxy-authorization", "if-modified-since",
		"if-unmodified-since", "from", "location", "max-forwards"} {
		singletons[name] = "a, b,c"
	}
	testCases := map[string]struct {
		ev    events.APIGatewayV2HTTPRequest
		plain bool
	}{
		"API Gateway's lower case": {event("/api/v1/documents/7", map[string]string{
			"accept-encoding": "gzip, deflate, br", "authorization": "Bearer ck_x", "content-length": "0",
			"host": "example.com", "user-agent": "curl/8.5.0", "x-forwarded-for": "203.0.113.7, 10.0.0.1",
			"if-none-match": `"7.1", W/"7.2"`, "x-custom-thing": "a,b", "empty": "", "commas": " , ,",
		}), true},
		"every singleton, commas kept": {event("/", singletons), true},
		"names outside the table":      {event("/x", map[string]string{"x-made-up": "1", "X-Mixed-CASE": "2", "weird name": "3"}), true},
		"already canonical":            {event("/x", map[string]string{"Content-Type": "application/json", "Prefer": "wait=5"}), true},
		"two spellings of one header":  {event("/x", map[string]string{"accept": "text/html", "Accept": "application/json"}), false},
		"none":                         {event("/x", nil), true},
		"path only in the context": {func() events.APIGatewayV2HTTPRequest {
			ev := event("/api/v1/images", nil)
			ev.RawPath = ""
			return ev
		}(), true},
		"a query": {func() events.APIGatewayV2HTTPRequest {
			ev := event("/api/v1/documents", nil)
			ev.RawQueryString, ev.QueryStringParameters = "page=2&search=a%20b", map[string]string{"page": "2", "search": "a b"}
			return ev
		}(), true},
		"a query only in the parameters": {func() events.APIGatewayV2HTTPRequest {
			ev := event("/api/v1/documents", nil)
			ev.QueryStringParameters = map[string]string{"page": "2"}
			return ev
		}(), false},
		"a body": {func() events.APIGatewayV2HTTPRequest {
			ev := event("/api/v1/documents", map[string]string{"content-type": "application/json"})
			ev.RequestContext.HTTP.Method, ev.Body = "post", `{"name":"x"}`
			return ev
		}(), true},
		"cookies": {func() events.APIGatewayV2HTTPRequest {
			ev := event("/x", map[string]string{"accept": "a"})
			ev.Cookies = []string{"a=1", "b=2, c=3"}
			return ev
		}(), true},
		"cookies and a cookie header": {func() events.APIGatewayV2HTTPRequest {
			ev := event("/x", map[string]string{"cookie": "d=4, e=5"})
			ev.Cookies = []string{"a=1"}
			return ev
		}(), false},
		"an escaped path":             {event("/api/v1/images/%41", nil), false},
		"a path url.Parse would keep": {event("/a/(b)!", nil), false},
		"base64 left to the adapter": {func() events.APIGatewayV2HTTPRequest {
			ev := event("/x", nil)
			ev.Body, ev.IsBase64Encoded = "eyJhIjoxfQ==", true
			return ev
		}(), false},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if plain := sameRequest(t, tc.ev); plain != tc.plain {
				t.Fatalf("plain path %v, want %v", plain, tc.plain)
			}
		})
	}
}

// A host configured for the adapter (core.CustomHostVariable) is the
// adapter's business: such events go to it.
func TestRequestAsTheAdapterOnACustomHost(t *testing.T) {
	t.Setenv(core.CustomHostVariable, "https://api.example.com")
	if plain := sameRequest(t, event("/api/v1/images", nil)); plain {
		t.Fatal("the plain path ignored the adapter's custom host")
	}
}

// The events API Gateway sends for each operation (events/, as sam local
// invoke replays them) take the plain path: were they to miss it, every
// request would pay the adapter's cost again.
func TestGatewayEventsArePlain(t *testing.T) {
	paths, err := filepath.Glob("../../events/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no events: %v", err)
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(b, &ev); err != nil || ev.RequestContext.HTTP.Method == "" {
			continue // not a gateway event (env.json, the generator's)
		}
		if strings.HasPrefix(filepath.Base(path), "generator") {
			continue
		}
		ev.IsBase64Encoded = false // decoded by lambdaFunction first
		t.Run(filepath.Base(path), func(t *testing.T) {
			if !sameRequest(t, ev) {
				t.Fatal("not plain")
			}
		})
	}
}

// Whatever the event, eventRequest makes the adapter's request of it, or
// refuses an event the adapter would fail on.
func FuzzRequestAsTheAdapter(f *testing.F) {
	f.Add("GET", "api.example.com", "/api/v1/documents/7", "", "", "", "", false,
		"authorization", "Bearer ck_x", "accept-encoding", "gzip, br", "x-forwarded-for", "1.2.3.4")
	f.Add("post", "h", "", "/api/v1/images", "a=1&b=%20", "name=x", "a=1|b=2", false,
		"Accept", "a", "accept", "b", "ACCEPT", "c")
	f.Add("PUT", "h-1.example", "/a/(b)", "", "?", `{"a":1}`, "", true,
		"content-type", "text/plain", "x-ünïcode", "v", "cookie", "c=1, d=2")
	f.Add("DELETE", "h", "//x/../y", "/z", "q=1#f", "", "", false,
		"max-forwards", "1,2", "from", " a , b ", "", "")
	f.Add("GET", "", "a/b", "", "", "", "", false, "host", "x", "", "", "", "")
	// The adapter logs each event it fails on.
	log.SetOutput(io.Discard)
	f.Cleanup(func() { log.SetOutput(os.Stderr) })
	f.Fuzz(func(t *testing.T, method, host, rawPath, contextPath, query, body, cookies string, base64 bool,
		k1, v1, k2, v2, k3, v3 string) {
		ev := event(rawPath, map[string]string{k1: v1, k2: v2, k3: v3})
		ev.RequestContext.HTTP.Method, ev.RequestContext.DomainName = method, host
		ev.RequestContext.HTTP.Path, ev.RawQueryString = contextPath, query
		ev.Body, ev.IsBase64Encoded = body, base64
		if cookies != "" {
			ev.Cookies = strings.Split(cookies, "|")
		}
		if query == "" && strings.Contains(body, "=") {
			k, v, _ := strings.Cut(body, "=")
			ev.QueryStringParameters = map[string]string{k: v}
		}
		sameRequest(t, ev)
		// The same headers, cookies, query, body and method at a plain
		// URL, which most of what the fuzzer makes is not.
		ev.RawPath, ev.RequestContext.DomainName, ev.IsBase64Encoded = "/api/v1/documents", "api.example.com", false
		sameRequest(t, ev)
	})
}

// The gateway's request id reaches the handler, the answer's X-Request-Id
// and the access log, whichever path made the request.
func TestGatewayRequestID(t *testing.T) {
	var logs strings.Builder
	h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Seen-Id", httpapi.RequestID(r.Context()))
		w.WriteHeader(http.StatusNoContent)
	}), httpapi.Config{
		Public: func(*http.Request) bool { return true },
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	fn := lambdaFunction(h)
	for name, tc := range map[string]struct {
		path, id string
		plain    bool
	}{
		"plain":         {"/api/v1/images", "plain-id=", true},
		"the adapter's": {"/api/v1/images/(1)", "adapter-id=", false},
	} {
		t.Run(name, func(t *testing.T) {
			ev := event(tc.path, map[string]string{"accept": "application/json"})
			ev.RequestContext.RequestID = tc.id
			if _, plain := plainRequest(context.Background(), ev); plain != tc.plain {
				t.Fatalf("plain path %v, want %v", plain, tc.plain)
			}
			logs.Reset()
			resp, err := fn(context.Background(), ev)
			if err != nil || resp.StatusCode != http.StatusNoContent {
				t.Fatalf("%v, status %d: %s", err, resp.StatusCode, resp.Body)
			}
			if resp.Headers["X-Request-Id"] != tc.id || resp.Headers["Seen-Id"] != tc.id {
				t.Fatalf("X-Request-Id %q, the handler saw %q, want %q", resp.Headers["X-Request-Id"], resp.Headers["Seen-Id"], tc.id)
			}
			var line struct {
				Msg       string
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal([]byte(logs.String()), &line); err != nil || line.Msg != "request" || line.RequestID != tc.id {
				t.Fatalf("access log %q (%v), want request_id %q", logs.String(), err, tc.id)
			}
		})
	}
}
