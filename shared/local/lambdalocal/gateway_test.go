package lambdalocal

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/app"
	"contentapi/shared/local/sam"
)

var fixedNow = time.Date(2026, 11, 21, 16, 48, 30, 123e6, time.UTC)

// testGateway routes GET /items/{id}, ANY /items and $default to fn.
func testGateway(fn app.APIEntry) *Gateway {
	return &Gateway{
		Router:    NewRouter(routes("GET /items/{id}", "ANY /items", sam.DefaultRoute)),
		Functions: map[string]app.APIEntry{"F": fn},
		Timeouts:  map[string]time.Duration{"F": time.Second},
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:       func() time.Time { return fixedNow },
		RequestID: func() string { return "AbCdEfGhIjKlMnO=" },
		Account:   "123456789012",
		APIID:     "local",
	}
}

func TestEvent(t *testing.T) {
	g := testGateway(nil)
	r := httptest.NewRequest("GET", "http://127.0.0.1:3000/items/a%20b?x=1&x=2&y=&z=%C3%A9", nil)
	r.RemoteAddr = "127.0.0.1:51234"
	r.Header.Add("Accept", "application/json")
	r.Header.Add("X-Multi", "one")
	r.Header.Add("X-Multi", "two")
	r.Header.Add("Cookie", "a=1; b=2")
	r.Header.Add("Cookie", "c=3")
	r.Header.Set("User-Agent", "curl/8.5.0")
	m, _ := g.Router.Match(r.Method, r.URL.EscapedPath())
	ev := g.Event(r, nil, m, "AbCdEfGhIjKlMnO=")

	trace := ev.Headers["x-amzn-trace-id"]
	if !strings.HasPrefix(trace, "Root=1-") {
		t.Errorf("x-amzn-trace-id = %q", trace)
	}
	want := events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       "GET /items/{id}",
		RawPath:        "/items/a%20b",
		RawQueryString: "x=1&x=2&y=&z=%C3%A9",
		Cookies:        []string{"a=1", "b=2", "c=3"},
		Headers: map[string]string{
			"accept":            "application/json",
			"host":              "127.0.0.1:3000",
			"user-agent":        "curl/8.5.0",
			"x-multi":           "one,two",
			"x-forwarded-for":   "127.0.0.1",
			"x-forwarded-port":  "3000",
			"x-forwarded-proto": "http",
			"x-amzn-trace-id":   trace,
		},
		QueryStringParameters: map[string]string{"x": "1,2", "y": "", "z": "é"},
		PathParameters:        map[string]string{"id": "a b"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     "GET /items/{id}",
			AccountID:    "123456789012",
			Stage:        "$default",
			RequestID:    "AbCdEfGhIjKlMnO=",
			APIID:        "local",
			DomainName:   "127.0.0.1:3000",
			DomainPrefix: "127",
			Time:         "21/Nov/2026:16:48:30 +0000",
			TimeEpoch:    fixedNow.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: "GET", Path: "/items/a%20b", Protocol: "HTTP/1.1",
				SourceIP: "127.0.0.1", UserAgent: "curl/8.5.0",
			},
		},
	}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("event:\n got %+v\nwant %+v", ev, want)
	}
}

func TestEventDefaultRouteAndForwardedFor(t *testing.T) {
	g := testGateway(nil)
	r := httptest.NewRequest("DELETE", "http://localhost:3000/nowhere", nil)
	r.RemoteAddr = "127.0.0.1:1"
	r.Header.Set("X-Forwarded-For", "198.51.100.1")
	m, _ := g.Router.Match(r.Method, r.URL.EscapedPath())
	ev := g.Event(r, nil, m, "id")
	if ev.RouteKey != "$default" || ev.RequestContext.RouteKey != "$default" || ev.PathParameters != nil {
		t.Errorf("routeKey %q / %q, pathParameters %v", ev.RouteKey, ev.RequestContext.RouteKey, ev.PathParameters)
	}
	if ev.QueryStringParameters != nil || ev.RawQueryString != "" || ev.Cookies != nil {
		t.Errorf("query %v %q, cookies %v: want none", ev.QueryStringParameters, ev.RawQueryString, ev.Cookies)
	}
	if got := ev.Headers["x-forwarded-for"]; got != "198.51.100.1, 127.0.0.1" {
		t.Errorf("x-forwarded-for = %q: API Gateway appends the client it saw", got)
	}
	if ev.RequestContext.DomainPrefix != "localhost" {
		t.Errorf("domainPrefix = %q", ev.RequestContext.DomainPrefix)
	}
}

func TestEventBodyEncoding(t *testing.T) {
	tests := []struct {
		contentType string
		base64      bool
	}{
		{"application/json", false},
		{"application/json; charset=utf-8", false},
		{"application/vnd.api+json", false},
		{"text/plain", false},
		{"text/csv; charset=utf-8", false},
		// Real HTTP API base64-encodes forms; `sam local` does not.
		{"application/x-www-form-urlencoded", true},
		{"multipart/form-data; boundary=xyz", true},
		{"application/octet-stream", true},
		{"image/png", true},
		{"", true},
		{"not a media type", true},
	}
	g := testGateway(nil)
	body := []byte("name=caf%C3%A9&x=\x00\xff")
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/items", bytes.NewReader(body))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			m, _ := g.Router.Match(r.Method, r.URL.EscapedPath())
			ev := g.Event(r, body, m, "id")
			if ev.IsBase64Encoded != tt.base64 {
				t.Fatalf("isBase64Encoded = %v, want %v", ev.IsBase64Encoded, tt.base64)
			}
			got := []byte(ev.Body)
			if ev.IsBase64Encoded {
				var err error
				if got, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, body) {
				t.Errorf("body = %q, want %q", got, body)
			}
		})
	}
	t.Run("no body", func(t *testing.T) {
		r := httptest.NewRequest("POST", "/items", nil)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		m, _ := g.Router.Match(r.Method, r.URL.EscapedPath())
		if ev := g.Event(r, nil, m, "id"); ev.Body != "" || ev.IsBase64Encoded {
			t.Errorf("body %q, base64 %v; want empty and false", ev.Body, ev.IsBase64Encoded)
		}
	})
}

// serveOnce sends req through a gateway calling fn and returns the response.
func serveOnce(t *testing.T, g *Gateway, req *http.Request) *http.Response {
	t.Helper()
	w := httptest.NewRecorder()
	g.ServeHTTP(w, req)
	return w.Result()
}

func readBody(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServeWritesTheFunctionsResponse(t *testing.T) {
	var got events.APIGatewayV2HTTPRequest
	g := testGateway(func(_ context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		got = ev
		return events.APIGatewayV2HTTPResponse{
			StatusCode:        201,
			Headers:           map[string]string{"Content-Type": "image/png", "Location": "/items/9"},
			MultiValueHeaders: map[string][]string{"X-Ignored": {"1"}},
			Cookies:           []string{"a=1; Path=/", "b=2"},
			Body:              base64.StdEncoding.EncodeToString([]byte{0x89, 'P', 'N', 'G'}),
			IsBase64Encoded:   true,
		}, nil
	})
	req := httptest.NewRequest("POST", "/items?q=1", strings.NewReader("name=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp := serveOnce(t, g, req)
	if resp.StatusCode != 201 {
		t.Errorf("status = %d", resp.StatusCode)
	}
	if body := readBody(t, resp); body != "\x89PNG" {
		t.Errorf("body = %q: a base64 response body is decoded", body)
	}
	h := resp.Header
	if h.Get("Content-Type") != "image/png" || h.Get("Location") != "/items/9" || h.Get("Apigw-Requestid") != "AbCdEfGhIjKlMnO=" {
		t.Errorf("headers = %v", h)
	}
	if h.Get("X-Ignored") != "" {
		t.Error("multiValueHeaders is not part of format 2.0 and must be ignored")
	}
	if c := h.Values("Set-Cookie"); !reflect.DeepEqual(c, []string{"a=1; Path=/", "b=2"}) {
		t.Errorf("Set-Cookie = %v", c)
	}
	if got.RouteKey != "ANY /items" || got.Body != base64.StdEncoding.EncodeToString([]byte("name=x")) || !got.IsBase64Encoded {
		t.Errorf("function got routeKey %q body %q base64 %v", got.RouteKey, got.Body, got.IsBase64Encoded)
	}
	if got.Headers["content-length"] != "6" {
		t.Errorf("content-length header = %q", got.Headers["content-length"])
	}
}

func TestServeDoesNotSniffContentType(t *testing.T) {
	g := testGateway(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "<html>"}, nil
	})
	resp := serveOnce(t, g, httptest.NewRequest("GET", "/items/1", nil))
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		t.Errorf("Content-Type = %q; the function sent none, so neither does the gateway", ct)
	}
}

func TestServeGatewayErrors(t *testing.T) {
	ok := func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
	}
	tests := []struct {
		name    string
		fn      app.APIEntry
		req     func() *http.Request
		status  int
		message string
	}{
		{"function error", func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			return events.APIGatewayV2HTTPResponse{}, errors.New("boom")
		}, get("/items/1"), 500, "Internal Server Error"},
		{"function panic", func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			panic("boom")
		}, get("/items/1"), 500, "Internal Server Error"},
		{"timeout", func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			<-ctx.Done() // the deadline reaches the function too
			time.Sleep(50 * time.Millisecond)
			return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
		}, get("/items/1"), 500, "Internal Server Error"},
		{"no status code", func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			return events.APIGatewayV2HTTPResponse{Body: "{}"}, nil
		}, get("/items/1"), 500, "Internal Server Error"},
		{"bad base64 response", func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "%%%", IsBase64Encoded: true}, nil
		}, get("/items/1"), 500, "Internal Server Error"},
		{"body over 10 MB", ok, func() *http.Request {
			return httptest.NewRequest("POST", "/items", bytes.NewReader(make([]byte, MaxBodyBytes+1)))
		}, 413, "Request Entity Too Large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := testGateway(tt.fn)
			g.Timeouts["F"] = 100 * time.Millisecond
			resp := serveOnce(t, g, tt.req())
			body := readBody(t, resp)
			if resp.StatusCode != tt.status || body != `{"message":"`+tt.message+`"}` {
				t.Errorf("got %d %s, want %d %s", resp.StatusCode, body, tt.status, tt.message)
			}
			if resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Apigw-Requestid") == "" {
				t.Errorf("headers = %v", resp.Header)
			}
		})
	}
	t.Run("body of exactly 10 MB passes", func(t *testing.T) {
		resp := serveOnce(t, testGateway(ok), httptest.NewRequest("POST", "/items", bytes.NewReader(make([]byte, MaxBodyBytes))))
		if resp.StatusCode != 200 {
			t.Errorf("status = %d", resp.StatusCode)
		}
	})
}

// Lambda's 6 MB applies to the response event as the runtime serialises
// it, the body escaped inside: a response past it is API Gateway's 500.
func TestServeRefusesAResponseOverLambdasLimit(t *testing.T) {
	base64Body := func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: base64.StdEncoding.EncodeToString(make([]byte, 5<<20)), IsBase64Encoded: true}, nil
	}
	for _, tt := range []struct {
		name   string
		fn     app.APIEntry
		status int
	}{
		// Each quote is two bytes escaped; the event's other fields fit in
		// the 4 KB left.
		{"3 MB of quotes, under 6 MB escaped", bodyOf(strings.Repeat(`"`, 3<<20-4<<10)), 200},
		{"3 MB of quotes, over 6 MB escaped", bodyOf(strings.Repeat(`"`, 3<<20)), 500},
		{"5 MB in base64, over 6 MB", base64Body, 500},
	} {
		resp := serveOnce(t, testGateway(tt.fn), get("/items/1")())
		body := readBody(t, resp)
		if resp.StatusCode != tt.status || tt.status == 500 && body != `{"message":"Internal Server Error"}` {
			t.Errorf("%s: %d %.80s, want %d", tt.name, resp.StatusCode, body, tt.status)
		}
	}
}

// bodyOf is a function answering 200 with body as text.
func bodyOf(body string) app.APIEntry {
	return func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: body, Headers: map[string]string{"Content-Type": "text/plain"}}, nil
	}
}

func TestServeWithoutDefaultRouteIsGateway404(t *testing.T) {
	called := false
	g := testGateway(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		called = true
		return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
	})
	g.Router = NewRouter(routes("GET /items/{id}"))
	resp := serveOnce(t, g, httptest.NewRequest("GET", "/other", nil))
	if body := readBody(t, resp); resp.StatusCode != 404 || body != `{"message":"Not Found"}` || called {
		t.Errorf("got %d %s (function called: %v)", resp.StatusCode, body, called)
	}
}

func TestNewGatewayNeedsAnEntryPointPerRoute(t *testing.T) {
	tmpl := projectTemplate(t)
	stub := func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{}, nil
	}
	fns := map[string]app.APIEntry{}
	for _, r := range app.Resources {
		fns[r.Function()] = stub
	}
	last := app.Resources[len(app.Resources)-1].Function()
	delete(fns, last)
	if _, err := NewGateway(tmpl, fns, slog.Default(), io.Discard); err == nil || !strings.Contains(err.Error(), last) {
		t.Errorf("NewGateway error = %v, want one naming %s", err, last)
	}
	fns[last] = stub
	g, err := NewGateway(tmpl, fns, slog.Default(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	f, err := tmpl.Function(last)
	if err != nil {
		t.Fatal(err)
	}
	if g.Timeouts[last] != f.Timeout() || f.Timeout() <= 3*time.Second {
		t.Errorf("timeout = %v, want the template's %v", g.Timeouts[last], f.Timeout())
	}
}

func TestRequestIDShape(t *testing.T) {
	a, b := NewRequestID(), NewRequestID()
	if len(a) != 16 || !strings.HasSuffix(a, "=") || a == b {
		t.Errorf("request ids %q, %q: want 16 characters ending in =, unique", a, b)
	}
}

func get(path string) func() *http.Request {
	return func() *http.Request { return httptest.NewRequest("GET", path, nil) }
}

// The access log names the path but not the query string: search terms
// and the like do not belong in logs.
func TestAccessLogLeavesQueryOut(t *testing.T) {
	var logs bytes.Buffer
	g := testGateway(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "{}"}, nil
	})
	var err error
	if g.AccessLog, err = NewAccessLog(`{"path":"$context.path"}`, &logs); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/items/7?search=needle&page=2", "/nowhere/x?search=needle"} {
		g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
	}
	if out := logs.String(); out != "{\"path\":\"/items/7\"}\n{\"path\":\"/nowhere/x\"}\n" {
		t.Errorf("the access log is\n%s", out)
	}
}

// The gateway's access line is the template's format filled in as API
// Gateway fills it: every variable with the request's value, "-" for what
// the request has none of (no route, no function), the body's length as
// sent, and a function's failure as its integration error, quoted so the
// line stays JSON.
func TestAccessLogIsTheTemplates(t *testing.T) {
	settings, err := projectTemplate(t).HTTPAPIAccessLog()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	g := testGateway(func(_ context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if ev.PathParameters["id"] == "crash" {
			return events.APIGatewayV2HTTPResponse{}, errors.New(`boom: "quoted"`)
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: `{"id":7}`}, nil
	})
	if g.AccessLog, err = NewAccessLog(settings.Format, &logs); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/items/7?q=x", "/items/crash"} {
		r := httptest.NewRequest("GET", target, nil)
		r.RemoteAddr = "203.0.113.9:4321"
		g.ServeHTTP(httptest.NewRecorder(), r)
	}
	g.Router = NewRouter(routes("GET /items/{id}"))
	g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/nowhere", nil))
	lines := strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), logs.String())
	}
	var got []map[string]string
	for _, l := range lines {
		var fields map[string]string
		if err := json.Unmarshal([]byte(l), &fields); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, l)
		}
		got = append(got, fields)
	}
	want := []map[string]string{
		{"requestId": "AbCdEfGhIjKlMnO=", "ip": "203.0.113.9", "method": "GET", "path": "/items/7", "routeKey": "GET /items/{id}",
			"status": "200", "bytes": "8", "integrationError": "-"},
		{"path": "/items/crash", "status": "500", "bytes": `{"message":"Internal Server Error"}`, "integrationError": `boom: "quoted"`},
		{"path": "/nowhere", "routeKey": "-", "status": "404", "integrationLatencyMs": "-", "integrationError": "-"},
	}
	want[1]["bytes"] = strconv.Itoa(len(want[1]["bytes"]))
	for i, w := range want {
		for k, v := range w {
			if got[i][k] != v {
				t.Errorf("line %d: %s = %q, want %q\n%s", i, k, got[i][k], v, lines[i])
			}
		}
		for _, k := range []string{"latencyMs", "integrationLatencyMs"} {
			if _, err := strconv.Atoi(got[i][k]); err != nil && w[k] != "-" {
				t.Errorf("line %d: %s = %q, want milliseconds", i, k, got[i][k])
			}
		}
	}
}

// A format with a variable the local gateway does not know is refused,
// not written wrong.
func TestAccessLogRefusesUnknownVariables(t *testing.T) {
	if _, err := NewAccessLog(`{"who":"$context.authorizer.claims.sub"}`, io.Discard); err == nil || !strings.Contains(err.Error(), "authorizer.claims.sub") {
		t.Errorf("err = %v, want one naming the variable", err)
	}
}

// A gateway that knows its address passes it as the request's host, so the
// functions build Location and links from it and not from what the client
// claimed; a request for a foreign host (a web page rebinding its name to
// the loopback address) is 403 and reaches no function.
func TestServeHostIsTheListenAddress(t *testing.T) {
	var got []string
	g := testGateway(func(_ context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		got = append(got, ev.Headers["host"]+" "+ev.RequestContext.DomainName)
		return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
	})
	g.Host = "127.0.0.1:8080"
	for host, status := range map[string]int{"127.0.0.1:8080": 200, "localhost:8080": 200, "LOCALHOST:8080": 200,
		"evil.example": 403, "evil.example:8080": 403, "127.0.0.1:9999": 403, "localhost": 403} {
		req := httptest.NewRequest("GET", "/items/1", nil)
		req.Host = host
		got = nil
		resp := serveOnce(t, g, req)
		if resp.StatusCode != status {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, status)
		}
		if want := []string{"127.0.0.1:8080 127.0.0.1:8080"}; status == 200 && !reflect.DeepEqual(got, want) {
			t.Errorf("Host %s: the function saw %q, want %q", host, got, want)
		}
		if status == 403 && (got != nil || readBody(t, resp) != `{"message":"The local gateway answers only requests for its own address.","status":403}`) {
			t.Errorf("Host %s: a foreign host reached the function (%q)", host, got)
		}
	}
}

// The request line and header values are capped as HTTP API caps them: a
// query string of a megabyte, or a header past the cap, is 431 and reaches
// no function.
func TestServeCapsRequestLineAndHeaders(t *testing.T) {
	called := 0
	g := testGateway(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		called++
		return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
	})
	fits := httptest.NewRequest("GET", "/items/1?q="+strings.Repeat("a", MaxHeaderBytes-100), nil)
	if resp := serveOnce(t, g, fits); resp.StatusCode != 200 || called != 1 {
		t.Fatalf("a query under the cap: %d", resp.StatusCode)
	}
	longHeader := httptest.NewRequest("GET", "/items/1", nil)
	longHeader.Header.Set("X-Long", strings.Repeat("h", MaxHeaderBytes))
	for _, req := range []*http.Request{httptest.NewRequest("GET", "/items/1?q="+strings.Repeat("a", 1<<20), nil), longHeader} {
		resp := serveOnce(t, g, req)
		if body := readBody(t, resp); resp.StatusCode != 431 || body != `{"message":"The request line and header values are over 10240 bytes together.","status":431}` || called != 1 {
			t.Errorf("%d %s (function called %d times), want 431", resp.StatusCode, body, called)
		}
	}
}
