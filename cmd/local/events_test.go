package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/generation"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/stack"
	"contentapi/shared/store"
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

// expectedStream is, for each DynamoDB stream event in events/, the
// generation status its records end with once the generator function has
// taken the event.
var expectedStream = map[string]string{
	"generator-document-pending.json": "done",
}

type eventFile struct {
	name string
	ev   events.APIGatewayV2HTTPRequest
}

// expectedTally is, for each tally event in events/, the count of its
// records' template once the tally function has taken the event (from one
// record each).
var expectedTally = map[string]int64{
	"tally-document-deleted.json": 0,
}

type tallyFile struct {
	name string
	ev   events.DynamoDBTimeWindowEvent
}

type streamFile struct {
	name string
	ev   events.DynamoDBEvent
}

// eventPaths are the events in events/ (all *.json but env.json).
func eventPaths(t *testing.T, root string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "events", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(paths, func(p string) bool { return filepath.Base(p) == "env.json" })
}

// loadStreamEvents reads the DynamoDB stream events of events/.
func loadStreamEvents(t *testing.T, root string) []streamFile {
	t.Helper()
	var files []streamFile
	for _, p := range eventPaths(t, root) {
		ev, ok, err := readStreamEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			files = append(files, streamFile{filepath.Base(p), ev})
		}
	}
	return files
}

// loadEvents reads the API Gateway events of events/.
func loadEvents(t *testing.T, root string) []eventFile {
	t.Helper()
	var files []eventFile
	for _, p := range eventPaths(t, root) {
		_, stream, _ := readWindowEvent(p)
		_, scheduled, _ := readScheduledEvent(p)
		if stream || scheduled {
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

	a, env := eventsApp(t)
	ctx := context.Background()
	if err := auth.NewKeys(env.Client, os.Getenv(app.EnvKeysTable), auth.PublicChecksum).Import(ctx, auth.DemoKey, auth.DemoAccount, readWrite); err != nil {
		t.Fatal(err)
	}
	fns, err := a.APIEntries()
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

// eventsApp is the app as make run configures it, on fresh tables, with
// generation's local parts.
func eventsApp(t *testing.T) (*app.App, *ddblocal.TestEnv) {
	t.Helper()
	env := ddblocal.NewTestEnv(t)
	env.Setenv(t)
	parts, err := stack.StartGeneration(stack.GenerationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(parts.Close)
	for k, v := range parts.Env() {
		t.Setenv(k, v)
	}
	// The webhooks' queue, as make run starts it.
	p, err := loadProject()
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := startWebhookQueue(context.Background(), p.tmpl, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hooks.Close() })
	for k, v := range hooks.Vars() {
		t.Setenv(k, v)
	}
	// A cold DynamoDB Local on a loaded machine can be slow at first; the
	// statuses are what this test checks.
	t.Setenv(app.EnvRequestTimeout, "60")
	a, err := app.FromEnv(context.Background(), stack.Parts)
	if err != nil {
		t.Fatal(err)
	}
	return a, env
}

// TestStreamEvents runs every DynamoDB stream event in events/ through the
// generator function's real entry point. Each record's new image is first
// stored, as the stream shows what the table holds, with its times moved
// to now: the 15-minute rule would otherwise end it as timed out.
// localTable points a stream record of an events/ file, which names a
// table by its logical ID, at that table in the test's DynamoDB Local, and
// returns the table's name there.
func localTable(t *testing.T, env *ddblocal.TestEnv, file string, rec *events.DynamoDBEventRecord) string {
	t.Helper()
	logical := store.StreamTable(rec.EventSourceArn)
	table, ok := env.Tables[logical]
	if !ok {
		t.Fatalf("%s names table %s, which the template does not have", file, logical)
	}
	rec.EventSourceArn = strings.Replace(rec.EventSourceArn, ":table/"+logical+"/", ":table/"+table+"/", 1)
	return table
}

func TestStreamEvents(t *testing.T) {
	p, err := loadProject()
	if err != nil {
		t.Fatal(err)
	}
	files := loadStreamEvents(t, p.root)
	for _, f := range files {
		if _, ok := expectedStream[f.name]; !ok {
			t.Errorf("events/%s has no expected outcome in events_test.go", f.name)
		}
	}
	if len(files) != len(expectedStream) {
		t.Errorf("%d stream events in events/, %d expected", len(files), len(expectedStream))
	}
	a, env := eventsApp(t)
	fn, err := a.GeneratorEntry()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := generation.FormatTime(time.Now())
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			var keys []store.Item
			for i, rec := range f.ev.Records {
				table := localTable(t, env, f.name, &f.ev.Records[i])
				gen := rec.Change.NewImage["generation"].Map()
				gen["requested_at"] = events.NewStringAttribute(now)
				item := store.StreamItem(rec.Change.NewImage)
				if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
					t.Fatal(err)
				}
				keys = append(keys, store.Item{"account": item["account"], "id": item["id"], "table": &types.AttributeValueMemberS{Value: table}})
			}
			resp, err := fn(ctx, f.ev)
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("%s: %+v, %v", app.GeneratorFunction, resp, err)
			}
			for _, k := range keys {
				table := k["table"].(*types.AttributeValueMemberS).Value
				out, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
					Key: store.Item{"account": k["account"], "id": k["id"]}})
				if err != nil {
					t.Fatal(err)
				}
				s, err := store.StateOf(out.Item)
				if err != nil || s == nil || string(s.Status) != expectedStream[f.name] || out.Item["result"] == nil {
					t.Errorf("after the event: %+v (%v), result %v", s, err, out.Item["result"])
				}
			}
		})
	}
}

// TestTallyEvents runs every tally event in events/ through the tally
// function's real entry point, on a counter that counts its records once,
// twice: delivered again, the event counts nothing more.
func TestTallyEvents(t *testing.T) {
	p, err := loadProject()
	if err != nil {
		t.Fatal(err)
	}
	var files []tallyFile
	for _, path := range eventPaths(t, p.root) {
		ev, ok, err := readTallyEvent(path)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			files = append(files, tallyFile{filepath.Base(path), ev})
		}
	}
	if len(files) != len(expectedTally) {
		t.Errorf("%d tally events in events/, %d expected", len(files), len(expectedTally))
	}
	a, env := eventsApp(t)
	fn, err := a.Tally()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, f := range files {
		want, ok := expectedTally[f.name]
		if !ok {
			t.Errorf("events/%s has no expected outcome in events_test.go", f.name)
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			var counters []store.Item
			for i, rec := range f.ev.Records {
				table := localTable(t, env, f.name, &f.ev.Records[i])
				old := store.StreamItem(rec.Change.OldImage)
				counter := store.Item{"account": old["account"], "id": &types.AttributeValueMemberN{Value: "0"},
					"count_" + old["template_id"].(*types.AttributeValueMemberN).Value: &types.AttributeValueMemberN{Value: "1"}}
				if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: counter}); err != nil {
					t.Fatal(err)
				}
				counter["table"] = &types.AttributeValueMemberS{Value: table}
				counters = append(counters, counter)
			}
			for range 2 {
				resp, err := fn(ctx, f.ev)
				if err != nil || len(resp.BatchItemFailures) != 0 || resp.State == nil {
					t.Fatalf("%s: %+v, %v", app.TallyFunction, resp, err)
				}
			}
			for _, c := range counters {
				out, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(c["table"].(*types.AttributeValueMemberS).Value),
					ConsistentRead: aws.Bool(true), Key: store.Item{"account": c["account"], "id": c["id"]}})
				if err != nil {
					t.Fatal(err)
				}
				for name := range c {
					if n, isCount := strings.CutPrefix(name, "count_"); isCount {
						if got, _ := store.IntAttr(out.Item, name); got != want {
							t.Errorf("template %s counts %d after the event, want %d", n, got, want)
						}
					}
				}
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
	g := &lambdalocal.Gateway{Router: lambdalocal.NewRouter(p.tmpl.Routes()), Now: func() time.Time { return fixedNow }}
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

// TestEnvJSON: events/env.json is what make generate writes from the
// template (samLocalEnv), and that gives every function the local stack's
// DynamoDB Local and no checksum secret: unset, sam local would hand the
// function the template's unresolved secret reference as a secret, and the
// demo key in the events would fail its checksum.
func TestEnvJSON(t *testing.T) {
	p, err := loadProject()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(p.root, envJSONPath))
	if err != nil {
		t.Fatal(err)
	}
	want, err := samLocalEnvJSON(p.tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Errorf("%s is not what the template makes of it: run make generate", envJSONPath)
	}
	env := samLocalEnv(p.tmpl)
	for _, f := range p.tmpl.Functions() {
		vars := env[f.LogicalID]
		if vars[app.EnvEndpoint] != "http://host.docker.internal:8000" {
			t.Errorf("%s.%s = %q", f.LogicalID, app.EnvEndpoint, vars[app.EnvEndpoint])
		}
		if secret, ok := vars[app.EnvKeyChecksum]; !ok || secret != "" {
			t.Errorf("%s.%s must be set, and empty", f.LogicalID, app.EnvKeyChecksum)
		}
		_, wired := vars[app.EnvBedrockEndpoint]
		if generates := f.LogicalID != app.TallyFunction && f.LogicalID != app.SenderFunction; wired != generates {
			t.Errorf("%s: Bedrock wired %v, generates %v", f.LogicalID, wired, generates)
		}
		// The seal's unresolved reference would be taken for a secret.
		if _, declared := f.Env()[app.EnvWebhookSeal]; declared {
			if seal, ok := vars[app.EnvWebhookSeal]; !ok || seal != "" {
				t.Errorf("%s.%s must be set, and empty", f.LogicalID, app.EnvWebhookSeal)
			}
		}
	}
}

// TestSweepEvent runs the schedule's event in events/ through the tally
// function's real entry point: a create that crashed between its steps an
// hour ago, on an account that writes no more, is settled.
func TestSweepEvent(t *testing.T) {
	p, err := loadProject()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, path := range eventPaths(t, p.root) {
		if _, ok, err := readScheduledEvent(path); err != nil {
			t.Fatal(err)
		} else if ok {
			files = append(files, path)
		}
	}
	if len(files) != 1 || filepath.Base(files[0]) != "tally-sweep.json" {
		t.Fatalf("schedule events in events/: %v, want tally-sweep.json", files)
	}
	a, env := eventsApp(t)
	ctx := context.Background()
	table := env.Tables["DocumentsTable"]
	token := store.NewToken(time.Now().Add(-time.Hour))
	at, _ := store.TokenTime(token)
	counter := store.Item{"account": &types.AttributeValueMemberS{Value: "quiet"}, "id": &types.AttributeValueMemberN{Value: "0"},
		"next_id": &types.AttributeValueMemberN{Value: "1"}, "count_1": &types.AttributeValueMemberN{Value: "1"},
		"op_c1_" + token: &types.AttributeValueMemberN{Value: "1"}, store.AttrUnsettled: &types.AttributeValueMemberN{Value: strconv.FormatInt(at.Unix(), 10)},
		"last_intent": &types.AttributeValueMemberS{Value: token}}
	if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: counter}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := invokeSchedule(ctx, p.tmpl, io.Discard, raw, nil, a.TallyEntry); err != nil {
		t.Fatal(err)
	}
	out, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: store.Item{"account": counter["account"], "id": counter["id"]}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := store.IntAttr(out.Item, "count_1"); n != 0 || out.Item["op_c1_"+token] != nil || out.Item[store.AttrUnsettled] != nil {
		t.Errorf("after the sweep: count %d, counter %v", n, out.Item)
	}
}
