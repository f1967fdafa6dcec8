package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"contentapi/shared/documents"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/records"
)

// coldStartRuns is how many fresh processes the cold start is the median of.
const coldStartRuns = 9

// measureBuilt reports the figures that need the built binaries: the
// bootstrap's size and cold start, and the handler benchmarks.
func measureBuilt(ctx context.Context, b *bench.Board, a *artifacts, tmpl *sam.Template, endpoint string, tables map[string]string, s *bench.SeededAccount, rep *report) error {
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
		floor, err := a.path(ctx, "floor-amd64")
		if err != nil {
			b.Missing(err.Error(), "ms_cold_start_floor")
		}
		times, err := coldStarts(ctx, bootstrap, floor, env, id, s.Key)
		if err != nil {
			b.Missing(err.Error(), "ms_cold_start")
			if floor != "" {
				b.Missing("timed after ms_cold_start", "ms_cold_start_floor")
			}
			logf("%v", err)
		} else {
			var total, init []time.Duration
			for _, t := range times.Runs {
				total, init = append(total, t.Total), append(init, t.Init)
			}
			rep.ColdStarts = times.Runs
			b.Add(bench.Figure{Name: "ms_cold_start", Value: ms(bench.Percentile(total, 50)), Unit: "ms"})
			b.Add(bench.Figure{Name: "ms_cold_init", Value: ms(bench.Percentile(init, 50)), Unit: "ms"})
		}
		if times.FloorErr != nil {
			b.Missing(times.FloorErr.Error(), "ms_cold_start_floor")
		} else if len(times.Floor) > 0 {
			var total []time.Duration
			for _, t := range times.Floor {
				total = append(total, t.Total)
			}
			b.Add(bench.Figure{Name: "ms_cold_start_floor", Value: ms(bench.Percentile(total, 50)), Unit: "ms"})
		}
	}

	appTest, err := a.path(ctx, "app.test")
	if err != nil {
		b.Missing(err.Error(), "ns_handler_get", "allocs_handler_get", "ns_handler_list", "allocs_handler_list", "ns_sdk_getitem", "ns_sdk_list_calls",
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
	// Allocations per call: one round of the handler benchmarks and their
	// SDK floors, each on its own.
	var names []string
	for _, h := range handlerBenchmarks {
		names = append(names, strings.TrimPrefix(h.handler, "Benchmark"), strings.TrimPrefix(h.floor, "Benchmark"))
	}
	allocRounds, raw, err := bench.BenchRounds(ctx, appTest, rep.BenchEnv, names, 1, "1s")
	rep.BenchLines = bench.BenchLines(raw)
	if err != nil {
		return err
	}
	// Time per call and the ratios: rounds of BenchmarkInterleaved, each
	// a fresh process.
	ratioRounds, raw, err := bench.BenchRounds(ctx, appTest, rep.BenchEnv, []string{"Interleaved"}, interleavedRounds, interleavedCalls)
	rep.BenchLines = append(rep.BenchLines, bench.BenchLines(raw)...)
	if err != nil {
		return err
	}
	reportBenchmarks(b, allocRounds[0], ratioRounds, rep)
	logf("profiling the handler benchmarks")
	for _, benchmark := range []string{"BenchmarkDocumentsGet", "BenchmarkDocumentsList"} {
		prof, err := bench.CPUProfile(ctx, appTest, benchmark, filepath.Dir(appTest), rep.BenchEnv, profileParts, "the rest: routing, middleware, parsing, runtime")
		if err != nil {
			logf("%v", err)
			continue
		}
		rep.Profiles = append(rep.Profiles, prof)
	}
	return nil
}

// coldStarts runs the bootstrap coldStartRuns times, each a fresh process
// asked for document id with key, and checks each answered with it; then
// the floor, unless it is "" (bench.ColdStartsWithFloor).
func coldStarts(ctx context.Context, bootstrap, floor string, env []string, id int64, key string) (bench.ColdStartTimes, error) {
	path, err := sam.Find()
	if err != nil {
		return bench.ColdStartTimes{}, err
	}
	event, err := bench.DocumentGet(filepath.Dir(path), id, key)
	if err != nil {
		return bench.ColdStartTimes{}, err
	}
	t, err := bench.ColdStartsWithFloor(ctx, bootstrap, floor, env, event, coldStartRuns, bench.Answered(`"id":`+strconv.FormatInt(id, 10)))
	logFailedRuns("DocumentsFunction", t.Failed)
	logFailedRuns("the floor's", t.FloorFailed)
	return t, err
}

// logFailedRuns says which cold starts were run again, and why.
func logFailedRuns(function string, failed []string) {
	for _, f := range failed {
		logf("%s cold start, run again: %.300s", function, f)
	}
}

// addSize adds the size of the binary built as name, as figure.
func addSize(ctx context.Context, b *bench.Board, a *artifacts, figure, name string) error {
	path, err := a.path(ctx, name)
	if err != nil {
		b.Missing(err.Error(), figure)
		return nil
	}
	return b.AddFileSize(figure, path)
}

// ms is a duration in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// lambdaEnv is the environment Lambda gives function, with the
// template's variables pointed at DynamoDB Local and generation's parts.
func lambdaEnv(tmpl *sam.Template, endpoint string, tables map[string]string, function, taskRoot string) []string {
	vars := ddblocal.EnvVars(tmpl, endpoint, tables)
	maps.Copy(vars, generationEnv)
	maps.Copy(vars, webhookEnv)
	return lambdalocal.RuntimeEnv(vars, function, taskRoot)
}

// interleavedRounds of BenchmarkInterleaved, each interleavedCalls calls of
// each handler and its floor together: the figures are the median
// round's. Five rounds take about a minute and a half.
const (
	interleavedRounds = 5
	interleavedCalls  = "60000x"
)

// handlerBenchmarks are the benchmarks behind the handler figures:
// interleaved names the handler's sub-benchmark of BenchmarkInterleaved,
// which times it against its floor, the SDK calls under it; handler and
// floor are the benchmarks that count their allocations.
var handlerBenchmarks = []struct {
	interleaved, handler, floor string
	figure, floorFigure         string
}{
	{"BenchmarkInterleaved/get", "BenchmarkDocumentsGet", "BenchmarkSDKGetItem", "handler_get", "sdk_getitem"},
	{"BenchmarkInterleaved/list", "BenchmarkDocumentsList", "BenchmarkSDKListCalls", "handler_list", "sdk_list_calls"},
}

// reportBenchmarks adds the handler figures: each handler's and its
// floor's time per call and their ratio, from the round whose ratio is the
// median (so the ratio is that round's ns_handler ÷ ns_sdk), and each
// benchmark's allocations per call, from the round that counted them.
func reportBenchmarks(b *bench.Board, allocs bench.BenchRound, ratioRounds []bench.BenchRound, rep *report) {
	for _, h := range handlerBenchmarks {
		var rounds []bench.BenchResult
		for _, round := range ratioRounds {
			if r, ok := round[h.interleaved]; ok && r.Metrics["x"] > 0 {
				rounds = append(rounds, r)
			}
		}
		if len(rounds) == 0 {
			b.Missing("no result of "+h.interleaved, "ns_"+h.figure, "ns_"+h.floorFigure, "ratio_"+h.figure)
		} else {
			var ratios []float64
			for _, r := range rounds {
				ratios = append(ratios, r.Metrics["x"])
			}
			rep.Ratios = append(rep.Ratios, benchRatios{Figure: "ratio_" + h.figure, Rounds: ratios})
			slices.SortFunc(rounds, func(a, b bench.BenchResult) int { return cmp.Compare(a.Metrics["x"], b.Metrics["x"]) })
			median := rounds[len(rounds)/2]
			b.Add(bench.Figure{Name: "ns_" + h.figure, Value: median.Metrics["ns/handler"], Unit: "ns"})
			b.Add(bench.Figure{Name: "ns_" + h.floorFigure, Value: median.Metrics["ns/sdk"], Unit: "ns"})
			b.Add(bench.Figure{Name: "ratio_" + h.figure, Value: median.Metrics["ns/handler"] / median.Metrics["ns/sdk"], Unit: "x"})
		}
		for _, benchmark := range []struct{ name, figure string }{{h.handler, h.figure}, {h.floor, h.floorFigure}} {
			r, ok := allocs[benchmark.name]
			if !ok {
				b.Missing("no result of "+benchmark.name, "allocs_"+benchmark.figure)
				continue
			}
			b.Add(bench.Figure{Name: "allocs_" + benchmark.figure, Value: r.Allocs, Unit: "allocs"})
		}
	}
}

// profileParts are the parts of a handler's time, matched in this order
// against each sample's stack (a sample counts in the first part it
// matches). A CPU profile keeps only the innermost 64 frames, less than
// the SDK's middleware stack, so SDK samples are known by the SDK's own
// frames rather than by the call into it; rendering goes first since it
// may fall back to attributevalue, which is the SDK's too.
var profileParts = []bench.ProfilePart{
	{What: "item to record (Render: attributevalue)", Match: `records\.renderAs\[.*\]\.Render$`},
	{What: "AWS SDK (serialize, sign, retry, deserialize; the canned transport included)", Match: `^github\.com/aws/(aws-sdk-go-v2/(aws|service)/|smithy-go/)`},
	{What: "garbage collector, in the background", Match: `^runtime\.gcBgMarkWorker$`},
	{What: "JSON answer (httpapi.WriteJSON)", Match: `httpapi\.WriteJSON$`},
	{What: "API Gateway event to http.Request (the adapter)", Match: `RequestAccessorV2\)\.EventToRequestWithContext$`},
	{What: "response to event (the adapter's writer)", Match: `^github\.com/awslabs/aws-lambda-go-api-proxy/core\.\(\*ProxyResponseWriterV2\)\.`},
	{What: "access log (httpapi's line, slog for the rest)", Match: `(httpapi\.logAccess|^log/slog\.)`},
	{What: "rate limiter (in memory)", Match: `^contentapi/shared/ratelimit\.`},
	{What: "auth (cached key)", Match: `^contentapi/shared/auth\.`},
	{What: "store: building requests, reading items", Match: `^contentapi/shared/store\.`},
}
