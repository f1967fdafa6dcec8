package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"contentapi/shared/documents"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/records"
)

// coldStartRuns is how many fresh processes the cold start is the median of.
const coldStartRuns = 9

// measureBuilt reports the figures that need the built binaries: the
// bootstrap's size and cold start, and the handler benchmarks.
func measureBuilt(ctx context.Context, b *board, a *artifacts, endpoint string, tables map[string]string, key string, s *seeded, rep *report) error {
	logf("waiting for the builds")
	if err := a.wait(ctx); err != nil {
		return err
	}
	for name, d := range a.took {
		rep.buildTimes = append(rep.buildTimes, fmt.Sprintf("%s %s", name, d.Round(100*time.Millisecond)))
	}
	slices.Sort(rep.buildTimes)

	if err := a.errs["bootstrap-arm64"]; err != nil {
		b.add(Figure{Name: "bytes_bootstrap", Unit: "bytes", Missing: err.Error()})
	} else if st, err := os.Stat(a.bootstrapARM64); err != nil {
		return err
	} else {
		b.add(Figure{Name: "bytes_bootstrap", Value: float64(st.Size()), Unit: "bytes"})
	}

	if err := a.errs["bootstrap-amd64"]; err != nil {
		b.add(Figure{Name: "ms_cold_start", Unit: "ms", Missing: err.Error()})
	} else {
		logf("cold start: %d runs", coldStartRuns)
		tmpl, err := loadTemplate()
		if err != nil {
			return err
		}
		env := lambdaEnv(tmpl, endpoint, tables, filepath.Dir(a.bootstrapAMD64))
		id := s.document(0, func(v records.Values) bool { return v["template_id"] == int64(documents.FreestyleID) })
		path := "/api/v1/documents/" + strconv.FormatInt(id, 10)
		times, err := coldStarts(ctx, a.bootstrapAMD64, env, gatewayEvent(path, "GET /api/v1/documents/{id}", key),
			`"id":`+strconv.FormatInt(id, 10), coldStartRuns)
		if err != nil {
			b.add(Figure{Name: "ms_cold_start", Unit: "ms", Missing: err.Error()})
			logf("%v", err)
		} else {
			var total, init []time.Duration
			for _, t := range times {
				total, init = append(total, t.total), append(init, t.init)
				rep.coldStarts = append(rep.coldStarts, t)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.add(Figure{Name: "ms_cold_start", Value: ms(median(total)), Unit: "ms"})
			b.add(Figure{Name: "ms_cold_init", Value: ms(median(init)), Unit: "ms"})
		}
	}

	if err := a.errs["app.test"]; err != nil {
		for _, n := range []string{"ns_handler_get", "allocs_handler_get", "ns_handler_list", "allocs_handler_list"} {
			b.add(Figure{Name: n, Unit: strings.SplitN(n, "_", 2)[0], Missing: err.Error()})
		}
		return nil
	}
	logf("handler benchmarks")
	tmpl, err := loadTemplate()
	if err != nil {
		return err
	}
	// The Go runtime settings the functions deploy with, if the template
	// sets any, so the figures are the deployed code's.
	var runtimeEnv []string
	vars := ddblocal.EnvVars(tmpl, endpoint, tables)
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG", "GOMAXPROCS"} {
		if v, ok := vars[k]; ok {
			runtimeEnv = append(runtimeEnv, k+"="+v)
		}
	}
	rep.benchEnv = runtimeEnv
	results, raw, err := runBenchmarks(ctx, a.appTest, runtimeEnv)
	rep.benchOutput = raw
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
			b.add(Figure{Name: "ns_" + x.figure, Unit: "ns", Missing: "no result"})
			continue
		}
		b.add(Figure{Name: "ns_" + x.figure, Value: slices.Min(r.ns), Unit: "ns"})
		b.add(Figure{Name: "allocs_" + x.figure, Value: r.allocs, Unit: "allocs"})
		rep.benchRuns = append(rep.benchRuns, benchRun{name: x.bench, ns: r.ns, allocs: r.allocs, bytes: r.bytes})
	}
	if !slices.ContainsFunc(runtimeEnv, func(kv string) bool { return strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=") }) {
		// With Go's default GOGC=100 and a live heap of a few MB, the
		// collector runs every few dozen requests; what would a warm
		// function gain from letting the heap grow more?
		logf("handler benchmarks with GOGC=%d", tunedGOGC)
		tuned, _, err := runBenchmarks(ctx, a.appTest, append(slices.Clone(runtimeEnv), fmt.Sprintf("GOGC=%d", tunedGOGC)))
		if err != nil {
			return err
		}
		for _, x := range []struct{ bench, figure string }{{"BenchmarkDocumentsGet", "handler_get"}, {"BenchmarkDocumentsList", "handler_list"}} {
			if r, ok := tuned[x.bench]; ok {
				b.add(Figure{Name: fmt.Sprintf("ns_%s_gogc%d", x.figure, tunedGOGC), Value: slices.Min(r.ns), Unit: "ns"})
			}
		}
	}
	logf("profiling the handler benchmarks")
	for _, bench := range []string{"BenchmarkDocumentsGet", "BenchmarkDocumentsList"} {
		shares, total, err := profileHandler(ctx, a.appTest, bench, filepath.Dir(a.appTest), runtimeEnv)
		if err != nil {
			logf("%v", err)
			continue
		}
		rep.profiles = append(rep.profiles, handlerProfile{bench: bench, shares: shares, seconds: total})
	}
	return nil
}

type handlerProfile struct {
	bench   string
	shares  []profileShare
	seconds float64
}

func loadTemplate() (*sam.Template, error) {
	p, err := sam.Find()
	if err != nil {
		return nil, err
	}
	return sam.Load(p)
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
	ns            []float64
	allocs, bytes float64
}

type benchRun struct {
	name          string
	ns            []float64
	allocs, bytes float64
}

// tunedGOGC is the GOGC the handler benchmarks also run with when the
// template sets none.
const tunedGOGC = 400

// benchCount runs of benchTime each: the figure is the fastest, since a
// busy machine only ever adds time.
const (
	benchCount = 5
	benchTime  = "1s"
)

var benchLine = regexp.MustCompile(`^(Benchmark\w+)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+[\d.]+ MB/s)?\s+([\d.]+) B/op\s+([\d.]+) allocs/op`)

func runBenchmarks(ctx context.Context, testBinary string, env []string) (map[string]*benchResult, string, error) {
	cmd := exec.CommandContext(ctx, testBinary, "-test.run", "^$",
		"-test.bench", "^Benchmark(DocumentsGet|DocumentsList|SDKGetItem)$",
		"-test.benchmem", "-test.count", strconv.Itoa(benchCount), "-test.benchtime", benchTime)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, out.String(), fmt.Errorf("handler benchmarks: %v\n%s", err, tailOf(out.String(), 3000))
	}
	results := map[string]*benchResult{}
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		r := results[m[1]]
		if r == nil {
			r = &benchResult{}
			results[m[1]] = r
		}
		ns, _ := strconv.ParseFloat(m[2], 64)
		r.ns = append(r.ns, ns)
		r.bytes, _ = strconv.ParseFloat(m[3], 64)
		r.allocs, _ = strconv.ParseFloat(m[4], 64)
	}
	return results, out.String(), nil
}

// profileShare is one part of a handler benchmark's CPU profile.
type profileShare struct {
	what    string
	seconds float64
	percent float64
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
func profileHandler(ctx context.Context, testBinary, bench, work string, env []string) ([]profileShare, float64, error) {
	prof := filepath.Join(work, bench+".prof")
	cmd := exec.CommandContext(ctx, testBinary, "-test.run", "^$", "-test.bench", "^"+bench+"$",
		"-test.benchtime", "3s", "-test.cpuprofile", prof)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, 0, fmt.Errorf("profile %s: %v\n%s", bench, err, tailOf(string(out), 2000))
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-traces", testBinary, prof).Output()
	if err != nil {
		return nil, 0, fmt.Errorf("pprof %s: %v", bench, err)
	}
	res := make([]*regexp.Regexp, len(profileParts))
	for i, p := range profileParts {
		res[i] = regexp.MustCompile(p.match)
	}
	shares := make([]profileShare, len(profileParts)+1)
	for i, p := range profileParts {
		shares[i].what = p.what
	}
	shares[len(profileParts)].what = "the rest: routing, middleware, parsing, runtime"
	var total float64
	var block []string
	flush := func() {
		defer func() { block = nil }()
		if len(block) == 0 {
			return
		}
		first := strings.Fields(block[0])
		if len(first) < 2 {
			return
		}
		d, err := time.ParseDuration(first[0])
		if err != nil {
			return
		}
		frames := []string{strings.Join(first[1:], " ")}
		for _, l := range block[1:] {
			frames = append(frames, strings.TrimSpace(l))
		}
		part := len(profileParts)
	match:
		for i, re := range res {
			for _, f := range frames {
				if re.MatchString(strings.TrimSuffix(f, " (inline)")) {
					part = i
					break match
				}
			}
		}
		shares[part].seconds += d.Seconds()
		total += d.Seconds()
	}
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "-----------+"):
			flush()
		case strings.TrimSpace(line) != "" && (len(block) > 0 || strings.HasPrefix(line, " ")):
			block = append(block, line)
		}
	}
	flush()
	if total == 0 {
		return nil, 0, fmt.Errorf("pprof %s: no samples", bench)
	}
	for i := range shares {
		shares[i].percent = 100 * shares[i].seconds / total
	}
	return shares, total, nil
}
