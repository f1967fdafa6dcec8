package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/ddblocal/ddbtest"
	"contentapi/shared/local/gateway"
	"contentapi/shared/local/sam"
)

// expected is the status each event in events/ must get when the files run
// in the order of eventPhase. A file without an entry fails the test, so a
// new event cannot go unchecked.
var expected = map[string]int{
	"images-create.json":      http.StatusCreated,
	"images-create-json.json": http.StatusCreated,
	"images-list.json":        http.StatusOK,
	"images-get.json":         http.StatusOK,
	"images-update.json":      http.StatusOK,
	"images-delete.json":      http.StatusOK,

	"documents-create.json": http.StatusCreated,
	"documents-list.json":   http.StatusOK,
	"documents-get.json":    http.StatusOK,
	"documents-update.json": http.StatusOK,
	"documents-delete.json": http.StatusOK,
}

type eventFile struct {
	name string
	ev   events.APIGatewayV2HTTPRequest
}

// loadEvents reads every event in events/ (all *.json but env.json).
func loadEvents(t *testing.T, root string) []eventFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "events", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var files []eventFile
	for _, p := range paths {
		if filepath.Base(p) == "env.json" {
			continue
		}
		ev, err := readEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, eventFile{filepath.Base(p), ev})
	}
	if len(files) == 0 {
		t.Fatal("no events in events/")
	}
	return files
}

// eventPhase orders the events so each finds what it needs: creates first
// (the ids 1, 2, ... the get, update and delete events name), deletes last.
func eventPhase(ev events.APIGatewayV2HTTPRequest) int {
	switch m := ev.RequestContext.HTTP.Method; {
	case m == http.MethodPost:
		return 0
	case m == http.MethodGet && ev.PathParameters == nil:
		return 1
	case m == http.MethodGet:
		return 2
	case m == http.MethodPut || m == http.MethodPatch:
		return 3
	case m == http.MethodDelete:
		return 5
	}
	return 4
}

// TestEvents runs every file in events/ through the real Lambda entry point
// of the function its route names, against fresh DynamoDB Local tables.
func TestEvents(t *testing.T) {
	p, err := loadProject()
	if err != nil {
		t.Fatal(err)
	}
	files := loadEvents(t, p.root)
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.name] = true
		if _, ok := expected[f.name]; !ok {
			t.Errorf("events/%s has no expected status in events_test.go", f.name)
		}
	}
	for name := range expected {
		if !seen[name] {
			t.Errorf("expected lists %s, which is not in events/", name)
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return eventPhase(files[i].ev) < eventPhase(files[j].ev) })

	env := ddbtest.New(t)
	env.Setenv(t)
	// A cold DynamoDB Local on a loaded machine can be slow at first; the
	// statuses are what this test checks.
	t.Setenv(app.EnvRequestTimeout, "60")
	ctx := context.Background()
	a, err := app.FromEnv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.NewKeys(env.Client, os.Getenv(app.EnvKeysTable), auth.PublicChecksum).Import(ctx, auth.DemoKey, auth.DemoAccount, readWrite); err != nil {
		t.Fatal(err)
	}
	fns, err := a.Functions()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			function, err := functionFor(p.tmpl, f.ev)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := fns[function](ctx, f.ev)
			if err != nil {
				t.Fatalf("%s: %v", function, err)
			}
			var body struct{ Status int }
			if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
				t.Fatalf("body is not JSON: %v: %s", err, resp.Body)
			}
			if want := expected[f.name]; resp.StatusCode != want || body.Status != want {
				t.Errorf("status %d (body says %d), want %d: %s", resp.StatusCode, body.Status, want, resp.Body)
			}
		})
	}
}

// TestEventsAreWhatTheGatewaySends replays each event as the HTTP request it
// describes and checks the local gateway would build the same event, so the
// files stay true to the routes and to payload 2.0 (a form body base64, path
// parameters, joined query values).
func TestEventsAreWhatTheGatewaySends(t *testing.T) {
	fixedNow := time.Date(2026, 11, 21, 16, 48, 30, 0, time.UTC)
	p, err := loadProject()
	if err != nil {
		t.Fatal(err)
	}
	// Only Event is used: no functions needed.
	g := &gateway.Gateway{Router: gateway.NewRouter(p.tmpl.Routes()), Now: func() time.Time { return fixedNow }}
	for _, f := range loadEvents(t, p.root) {
		t.Run(f.name, func(t *testing.T) {
			ev := f.ev
			for k := range ev.Headers {
				if k != strings.ToLower(k) {
					t.Errorf("header %q is not lower case", k)
				}
			}
			if auth := ev.Headers["authorization"]; auth != "Bearer "+authDemoKey() {
				t.Errorf("authorization = %q, want the demo key", auth)
			}
			r, body := requestFor(t, ev)
			m, ok := g.Router.Match(r.Method, r.URL.EscapedPath())
			if !ok {
				t.Fatal("no route")
			}
			got := g.Event(r, body, m, ev.RequestContext.RequestID)
			type view struct {
				RouteKey, RawPath, RawQueryString, Body, Method, Path, ContextRouteKey, Stage string
				Query, Params                                                                 map[string]string
				Cookies                                                                       []string
				Base64                                                                        bool
			}
			see := func(e events.APIGatewayV2HTTPRequest) view {
				return view{e.RouteKey, e.RawPath, e.RawQueryString, e.Body, e.RequestContext.HTTP.Method,
					e.RequestContext.HTTP.Path, e.RequestContext.RouteKey, e.RequestContext.Stage,
					e.QueryStringParameters, e.PathParameters, e.Cookies, e.IsBase64Encoded}
			}
			if a, b := see(ev), see(got); !reflect.DeepEqual(a, b) {
				t.Errorf("the file says\n  %+v\nthe gateway would send\n  %+v", a, b)
			}
			for k, v := range got.Headers {
				if strings.HasPrefix(k, "x-forwarded-") || k == "x-amzn-trace-id" {
					continue // the gateway's own, different per hop
				}
				if ev.Headers[k] != v {
					t.Errorf("header %s = %q, the gateway would send %q", k, ev.Headers[k], v)
				}
			}
		})
	}
}

func authDemoKey() string { return auth.DemoKey }

// requestFor rebuilds the HTTP request an event describes.
func requestFor(t *testing.T, ev events.APIGatewayV2HTTPRequest) (*http.Request, []byte) {
	t.Helper()
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
			t.Fatal(err)
		}
	}
	u := &url.URL{Scheme: "https", Host: ev.RequestContext.DomainName, RawQuery: ev.RawQueryString}
	var err error
	if u.Path, err = url.PathUnescape(ev.RawPath); err != nil {
		t.Fatal(err)
	}
	u.RawPath = ev.RawPath
	r, err := http.NewRequest(ev.RequestContext.HTTP.Method, u.String(), strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	r.Proto = ev.RequestContext.HTTP.Protocol
	r.RemoteAddr = ev.RequestContext.HTTP.SourceIP + ":40000"
	for k, v := range ev.Headers {
		if k != "host" {
			r.Header.Set(k, v)
		}
	}
	r.Host = ev.Headers["host"]
	for _, c := range ev.Cookies {
		r.Header.Add("Cookie", c)
	}
	return r, body
}

// TestEnvJSON checks events/env.json against the template: `sam local`
// passes a variable only if the template declares it for that function, so
// an undeclared one there would silently do nothing.
func TestEnvJSON(t *testing.T) {
	p, err := loadProject()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(p.root, "events", "env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]map[string]string
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	tables := localTables(p.tmpl)
	for _, f := range p.tmpl.Functions() {
		vars, ok := env[f.LogicalID]
		if !ok {
			t.Errorf("env.json has no entry for %s", f.LogicalID)
			continue
		}
		declared := f.Env()
		// Explicit, though sam local would resolve !Ref Table to the
		// logical ID by itself: the file then says what make run creates.
		for name, v := range declared {
			if fn, arg, ok := sam.Intrinsic(v); ok && fn == "Ref" {
				if _, isTable := tables[arg.(string)]; isTable && vars[name] == "" {
					t.Errorf("env.json lacks %s.%s", f.LogicalID, name)
				}
			}
		}
		for name, v := range vars {
			if _, ok := declared[name]; !ok {
				t.Errorf("%s.%s is not declared in template.yaml, so sam local ignores it", f.LogicalID, name)
			}
			if fn, arg, ok := sam.Intrinsic(declared[name]); ok && fn == "Ref" {
				if table, isTable := tables[arg.(string)]; isTable && v != table {
					t.Errorf("%s.%s = %q, want %q, the name make run gives the table", f.LogicalID, name, v, table)
				}
			}
		}
		if vars[app.EnvEndpoint] != "http://host.docker.internal:8000" {
			t.Errorf("%s.%s = %q", f.LogicalID, app.EnvEndpoint, vars[app.EnvEndpoint])
		}
		// Unset, sam local would hand the function the template's
		// unresolved secret reference as a secret, and the demo key in the
		// events would fail its checksum.
		if secret, ok := vars[app.EnvKeyChecksum]; !ok || secret != "" {
			t.Errorf("%s.%s must be set, and empty", f.LogicalID, app.EnvKeyChecksum)
		}
	}
	for id := range env {
		if _, err := p.tmpl.Function(id); err != nil {
			t.Errorf("env.json has an entry for %s: %v", id, err)
		}
	}
}
