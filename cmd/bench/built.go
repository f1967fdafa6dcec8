package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/documents"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/figures"
	"contentapi/shared/local/gobench"
	"contentapi/shared/local/loadgen"
	"contentapi/shared/local/runtimeapi"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/seed"
	"contentapi/shared/records"
)

// coldStartRuns is how many fresh processes the cold start is the median of.
const coldStartRuns = 9

// measureBuilt reports the figures that need the built binaries: the
// bootstrap's size and cold start, and the handler benchmarks.
func measureBuilt(ctx context.Context, b *figures.Board, a *artifacts, tmpl *sam.Template, endpoint string, tables map[string]string, s *seed.Account, rep *report) error {
	logf("waiting for the builds")
	if err := a.wait(ctx); err != nil {
		return err
	}
	for name, d := range a.took {
		rep.BuildTimes = append(rep.BuildTimes, fmt.Sprintf("%s %s", name, d.Round(100*time.Millisecond)))
	}
	slices.Sort(rep.BuildTimes)

	if err := addSize(ctx, b, a, "bytes_bootstrap", "bootstrap-arm64"); err != nil {
		return err
	}
	if bootstrap, err := a.path(ctx, "bootstrap-amd64"); err != nil {
		b.Missing(err.Error(), "ms_cold_start")
	} else {
		logf("cold start: %d runs", coldStartRuns)
		env := lambdaEnv(tmpl, endpoint, tables, "DocumentsFunction", filepath.Dir(bootstrap))
		id := s.Document(0, func(v records.Values) bool { return v["template_id"] == int64(documents.FreestyleID) })
		times, err := coldStarts(ctx, bootstrap, env, id, s.Key)
		if err != nil {
			b.Missing(err.Error(), "ms_cold_start")
			logf("%v", err)
		} else {
			var total, init []time.Duration
			for _, t := range times {
				total, init = append(total, t.Total), append(init, t.Init)
			}
			rep.ColdStarts = times
			b.Add(figures.Figure{Name: "ms_cold_start", Value: ms(loadgen.Percentile(total, 50)), Unit: "ms"})
			b.Add(figures.Figure{Name: "ms_cold_init", Value: ms(loadgen.Percentile(init, 50)), Unit: "ms"})
		}
	}

	appTest, err := a.path(ctx, "app.test")
	if err != nil {
		b.Missing(err.Error(), "ns_handler_get", "allocs_handler_get", "ns_handler_list", "allocs_handler_list",
			"ratio_handler_get", "ratio_handler_list")
		return nil
	}
	logf("handler benchmarks")
	// The Go runtime settings the functions deploy with, if the template
	// sets any, so the figures are the deployed code's.
	vars := ddblocal.EnvVars(tmpl, endpoint, tables)
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG", "GOMAXPROCS"} {
		if v, ok := vars[k]; ok {
			rep.BenchEnv = append(rep.BenchEnv, k+"="+v)
		}
	}
	names := make([]string, len(handlerBenchmarks))
	for i, h := range handlerBenchmarks {
		names[i] = strings.TrimPrefix(h.bench, "Benchmark")
	}
	// A round is one process running each once, so a handler and its
	// floor see the machine in the same state.
	rounds, raw, err := gobench.Rounds(ctx, appTest, rep.BenchEnv, names, benchCount, benchTime)
	rep.BenchLines = gobench.Lines(raw)
	if err != nil {
		return err
	}
	reportBenchmarks(b, rounds, rep)
	logf("profiling the handler benchmarks")
	for _, bench := range []string{"BenchmarkDocumentsGet", "BenchmarkDocumentsList"} {
		prof, err := gobench.CPUProfile(ctx, appTest, bench, filepath.Dir(appTest), rep.BenchEnv, profileParts, "the rest: routing, middleware, parsing, runtime")
		if err != nil {
			logf("%v", err)
			continue
		}
		rep.Profiles = append(rep.Profiles, prof)
	}
	return nil
}

// coldStarts runs the bootstrap coldStartRuns times, each a fresh process
// asked for document id with key, and checks each answered with it.
func coldStarts(ctx context.Context, bootstrap string, env []string, id int64, key string) ([]runtimeapi.Run, error) {
	path, err := sam.Find()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "events", "documents-get.json"))
	if err != nil {
		return nil, err
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, err
	}
	ev.Headers["authorization"] = "Bearer " + key
	ev.PathParameters["id"] = strconv.FormatInt(id, 10)
	ev.RawPath = "/api/v1/documents/" + ev.PathParameters["id"]
	ev.RequestContext.HTTP.Path = ev.RawPath
	ev.RequestContext.TimeEpoch = time.Now().UnixMilli()
	event, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	runs, err := runtimeapi.ColdStarts(ctx, bootstrap, env, event, coldStartRuns)
	for _, r := range runs {
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(r.Response, &resp); err != nil || resp.StatusCode != 200 || !strings.Contains(resp.Body, `"id":`+ev.PathParameters["id"]) {
			return nil, fmt.Errorf("cold start: unexpected response: %.500s", r.Response)
		}
	}
	return runs, err
}

// addSize adds the size of the binary built as name, as figure.
func addSize(ctx context.Context, b *figures.Board, a *artifacts, figure, name string) error {
	path, err := a.path(ctx, name)
	if err != nil {
		b.Missing(err.Error(), figure)
		return nil
	}
	st, err := os.Stat(path)
	if err == nil {
		b.Add(figures.Figure{Name: figure, Value: float64(st.Size()), Unit: "bytes"})
	}
	return err
}

// ms is a duration in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// lambdaEnv is the environment Lambda gives function, with the
// template's variables pointed at DynamoDB Local and generation's parts.
func lambdaEnv(tmpl *sam.Template, endpoint string, tables map[string]string, function, taskRoot string) []string {
	vars := ddblocal.EnvVars(tmpl, endpoint, tables)
	maps.Copy(vars, generationEnv)
	return runtimeapi.Env(vars, function, taskRoot)
}

// benchCount rounds of benchTime each: each ns figure is the fastest of its
// runs, since a busy machine only ever adds time, and so is each ratio the
// ratio of the fastest runs: the round by round ratios, measured moments
// apart, still swing with what else the machine does. Seven rounds left
// the get's ratio moving by a tenth from one make bench to the next on a
// shared machine; twelve give each side more chances at a quiet moment.
const (
	benchCount = 12
	benchTime  = "1s"
)

// handlerBenchmarks are the benchmarks behind the handler figures, in the
// order each round runs them; floor names the SDK benchmark a handler's
// ratio divides by.
var handlerBenchmarks = []struct{ bench, figure, floor string }{
	{"BenchmarkDocumentsGet", "handler_get", "BenchmarkSDKGetItem"},
	{"BenchmarkSDKGetItem", "sdk_getitem", ""},
	{"BenchmarkDocumentsList", "handler_list", "BenchmarkSDKListCalls"},
	{"BenchmarkSDKListCalls", "sdk_list_calls", ""},
}

// reportBenchmarks adds the handler figures: for each benchmark its
// fastest time and its allocations, and for each handler its ratio to the
// SDK calls under it.
func reportBenchmarks(b *figures.Board, rounds []gobench.Round, rep *report) {
	for _, h := range handlerBenchmarks {
		var ns, ratios []float64
		var allocs float64
		for _, round := range rounds {
			r, ok := round[h.bench]
			if !ok {
				continue
			}
			ns, allocs = append(ns, r.NS), r.Allocs
			if floor, ok := round[h.floor]; ok && floor.NS > 0 {
				ratios = append(ratios, r.NS/floor.NS)
			}
		}
		if len(ns) == 0 {
			b.Missing("no result", "ns_"+h.figure, "allocs_"+h.figure)
			continue
		}
		b.Add(figures.Figure{Name: "ns_" + h.figure, Value: slices.Min(ns), Unit: "ns"})
		b.Add(figures.Figure{Name: "allocs_" + h.figure, Value: allocs, Unit: "allocs"})
		if h.floor != "" {
			var floor []float64
			for _, round := range rounds {
				if r, ok := round[h.floor]; ok {
					floor = append(floor, r.NS)
				}
			}
			if len(floor) == 0 {
				b.Missing("no result for "+h.floor, "ratio_"+h.figure)
				continue
			}
			rep.Ratios = append(rep.Ratios, benchRatios{Figure: "ratio_" + h.figure, Rounds: ratios})
			b.Add(figures.Figure{Name: "ratio_" + h.figure, Value: slices.Min(ns) / slices.Min(floor), Unit: "x"})
		}
	}
}

// profileParts are the parts of a handler's time, matched in this order
// against each sample's stack (a sample counts in the first part it
// matches). A CPU profile keeps only the innermost 64 frames, less than
// the SDK's middleware stack, so SDK samples are known by the SDK's own
// frames rather than by the call into it; rendering goes first since it
// may fall back to attributevalue, which is the SDK's too.
var profileParts = []gobench.Part{
	{What: "item to record (Render, shared/codec)", Match: `(documents|images)\.Render$`},
	{What: "AWS SDK (serialize, sign, retry, deserialize; the canned transport included)", Match: `^github\.com/aws/(aws-sdk-go-v2/(aws|service)/|smithy-go/)`},
	{What: "garbage collector, in the background", Match: `^runtime\.gcBgMarkWorker$`},
	{What: "JSON answer (httpapi.WriteJSON)", Match: `httpapi\.WriteJSON$`},
	{What: "API Gateway event to http.Request (shared/app, or the adapter)", Match: `(app\.eventRequest|EventToRequestWithContext)$`},
	{What: "response to event (shared/app's writer)", Match: `^contentapi/shared/app\.\(\*response\)\.`},
	{What: "access log (log/slog)", Match: `^log/slog\.`},
	{What: "rate limiter (in memory)", Match: `^contentapi/shared/ratelimit\.`},
	{What: "auth (cached key)", Match: `^contentapi/shared/auth\.`},
	{What: "store: building requests, reading items", Match: `^contentapi/shared/store\.`},
}
