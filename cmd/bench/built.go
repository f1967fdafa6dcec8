package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/pprof/profile"

	"contentapi/shared/documents"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/runtimeapi"
	"contentapi/shared/local/sam"
	"contentapi/shared/records"
)

// coldStartRuns is how many fresh processes the cold start is the median of.
const coldStartRuns = 9

// measureBuilt reports the figures that need the built binaries: the
// bootstrap's size and cold start, and the handler benchmarks.
func measureBuilt(ctx context.Context, b *board, a *artifacts, tmpl *sam.Template, endpoint string, tables map[string]string, s *seeded, key string, rep *report) error {
	logf("waiting for the builds")
	if err := a.wait(ctx); err != nil {
		return err
	}
	for name, d := range a.took {
		rep.BuildTimes = append(rep.BuildTimes, fmt.Sprintf("%s %s", name, d.Round(100*time.Millisecond)))
	}
	slices.Sort(rep.BuildTimes)

	if err := a.errs["bootstrap-arm64"]; err != nil {
		b.missing(err.Error(), "bytes_bootstrap")
	} else if st, err := os.Stat(a.bootstrapARM64); err != nil {
		return err
	} else {
		b.add(Figure{Name: "bytes_bootstrap", Value: float64(st.Size()), Unit: "bytes"})
	}

	if err := a.errs["bootstrap-amd64"]; err != nil {
		b.missing(err.Error(), "ms_cold_start")
	} else {
		logf("cold start: %d runs", coldStartRuns)
		env := lambdaEnv(tmpl, endpoint, tables, filepath.Dir(a.bootstrapAMD64))
		id := s.document(0, func(v records.Values) bool { return v["template_id"] == int64(documents.FreestyleID) })
		times, err := coldStarts(ctx, a.bootstrapAMD64, env, id, key)
		if err != nil {
			b.missing(err.Error(), "ms_cold_start")
			logf("%v", err)
		} else {
			var total, init []time.Duration
			for _, t := range times {
				total, init = append(total, t.Total), append(init, t.Init)
			}
			rep.ColdStarts = times
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.add(Figure{Name: "ms_cold_start", Value: ms(percentile(total, 50)), Unit: "ms"})
			b.add(Figure{Name: "ms_cold_init", Value: ms(percentile(init, 50)), Unit: "ms"})
		}
	}

	if err := a.errs["app.test"]; err != nil {
		b.missing(err.Error(), "ns_handler_get", "allocs_handler_get", "ns_handler_list", "allocs_handler_list")
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
	results, raw, err := runBenchmarks(ctx, a.appTest, rep.BenchEnv)
	rep.BenchLines = benchLines(raw)
	if err != nil {
		return err
	}
	for _, x := range []struct{ bench, figure string }{
		{"BenchmarkDocumentsGet", "handler_get"},
		{"BenchmarkDocumentsList", "handler_list"},
		{"BenchmarkSDKGetItem", "sdk_getitem"},
	} {
		r, ok := results[x.bench]
		if !ok {
			b.missing("no result", "ns_"+x.figure)
			continue
		}
		b.add(Figure{Name: "ns_" + x.figure, Value: slices.Min(r.ns), Unit: "ns"})
		b.add(Figure{Name: "allocs_" + x.figure, Value: r.allocs, Unit: "allocs"})
	}
	logf("profiling the handler benchmarks")
	for _, bench := range []string{"BenchmarkDocumentsGet", "BenchmarkDocumentsList"} {
		prof, err := profileHandler(ctx, a.appTest, bench, filepath.Dir(a.appTest), rep.BenchEnv)
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

func tailOf(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// handlerProfile is where a handler benchmark's CPU time goes.
type handlerProfile struct {
	Bench   string
	Shares  []profileShare
	Seconds float64
}

// lambdaEnv is the environment Lambda gives the documents function, with
// the template's variables pointed at DynamoDB Local.
func lambdaEnv(tmpl *sam.Template, endpoint string, tables map[string]string, taskRoot string) []string {
	vars := ddblocal.EnvVars(tmpl, endpoint, tables)
	vars["AWS_DEFAULT_REGION"] = vars["AWS_REGION"]
	vars["AWS_LAMBDA_FUNCTION_NAME"] = "contentapi-DocumentsFunction"
	vars["AWS_LAMBDA_FUNCTION_VERSION"] = "$LATEST"
	vars["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = "256"
	vars["AWS_LAMBDA_LOG_GROUP_NAME"] = "/aws/lambda/contentapi-DocumentsFunction"
	vars["AWS_EXECUTION_ENV"] = "AWS_Lambda_provided.al2023"
	vars["_HANDLER"] = "bootstrap"
	vars["LAMBDA_TASK_ROOT"] = taskRoot
	vars["TZ"] = ":UTC"
	vars["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

type benchResult struct {
	ns     []float64
	allocs float64
}

// benchCount runs of benchTime each: the figure is the fastest, since a
// busy machine only ever adds time.
const (
	benchCount = 5
	benchTime  = "1s"
)

var benchLine = regexp.MustCompile(`(?m)^(Benchmark\w+)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op.*\s([\d.]+) allocs/op`)

func runBenchmarks(ctx context.Context, testBinary string, env []string) (map[string]*benchResult, string, error) {
	out, err := runBench(ctx, testBinary, env, "-test.bench", "^Benchmark(DocumentsGet|DocumentsList|SDKGetItem)$",
		"-test.benchmem", "-test.count", strconv.Itoa(benchCount), "-test.benchtime", benchTime)
	if err != nil {
		return nil, out, err
	}
	results := map[string]*benchResult{}
	for _, m := range benchLine.FindAllStringSubmatch(out, -1) {
		r := results[m[1]]
		if r == nil {
			r = &benchResult{}
			results[m[1]] = r
		}
		ns, _ := strconv.ParseFloat(m[2], 64)
		r.ns = append(r.ns, ns)
		r.allocs, _ = strconv.ParseFloat(m[3], 64)
	}
	return results, out, nil
}

// runBench runs benchmarks of the test binary (args say which and how) with
// env added to the environment, and returns their output.
func runBench(ctx context.Context, testBinary string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, testBinary, append([]string{"-test.run", "^$"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		err = fmt.Errorf("%s %s: %v\n%s", filepath.Base(testBinary), strings.Join(args, " "), err, tailOf(string(out), 3000))
	}
	return string(out), err
}

// profileShare is one part of a handler benchmark's CPU profile.
type profileShare struct {
	What             string
	Seconds, Percent float64
}

// profileParts are the parts of a handler's time, matched in this order
// against each sample's stack (a sample counts in the first part it
// matches). A CPU profile keeps only the innermost 64 frames, less than
// the SDK's middleware stack, so SDK samples are known by the SDK's own
// frames rather than by the call into it; rendering goes first since its
// attributevalue package is the SDK's too.
var profileParts = []struct{ what, match string }{
	{"item to record (Render, attributevalue)", `(documents|images)\.Render$`},
	{"AWS SDK (serialize, sign, retry, deserialize; the canned transport included)", `^github\.com/aws/(aws-sdk-go-v2/(aws|service)/|smithy-go/)`},
	{"garbage collector, in the background", `^runtime\.gcBgMarkWorker$`},
	{"JSON answer (httpapi.WriteJSON)", `httpapi\.WriteJSON$`},
	{"API Gateway adapter: event to http.Request", `EventToRequestWithContext$`},
	{"API Gateway adapter: response to event", `(ProxyResponseWriterV2|GetAPIGatewayV2Response)`},
	{"access log (log/slog)", `^log/slog\.`},
	{"rate limiter (in memory)", `^contentapi/shared/ratelimit\.`},
	{"auth (cached key)", `^contentapi/shared/auth\.`},
	{"store: building requests, reading items", `^contentapi/shared/store\.`},
}

// profileHandler profiles one handler benchmark and splits its CPU time.
func profileHandler(ctx context.Context, testBinary, bench, work string, env []string) (handlerProfile, error) {
	h := handlerProfile{Bench: bench}
	path := filepath.Join(work, bench+".prof")
	if _, err := runBench(ctx, testBinary, env, "-test.bench", "^"+bench+"$", "-test.benchtime", "3s", "-test.cpuprofile", path); err != nil {
		return h, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return h, err
	}
	prof, err := profile.ParseData(data)
	if err != nil {
		return h, fmt.Errorf("profile %s: %w", bench, err)
	}
	res := make([]*regexp.Regexp, len(profileParts))
	h.Shares = make([]profileShare, len(profileParts)+1)
	for i, p := range profileParts {
		res[i], h.Shares[i].What = regexp.MustCompile(p.match), p.what
	}
	h.Shares[len(profileParts)].What = "the rest: routing, middleware, parsing, runtime"
	cpu := slices.IndexFunc(prof.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" })
	for _, sample := range prof.Sample {
		part := len(profileParts)
	match:
		for i, re := range res {
			for _, loc := range sample.Location {
				for _, line := range loc.Line {
					if re.MatchString(line.Function.Name) {
						part = i
						break match
					}
				}
			}
		}
		seconds := time.Duration(sample.Value[cpu]).Seconds()
		h.Shares[part].Seconds += seconds
		h.Seconds += seconds
	}
	if h.Seconds == 0 {
		return h, fmt.Errorf("profile %s: no samples", bench)
	}
	for i := range h.Shares {
		h.Shares[i].Percent = 100 * h.Shares[i].Seconds / h.Seconds
	}
	return h, nil
}
