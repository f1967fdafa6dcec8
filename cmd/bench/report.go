package main

import (
	"bytes"
	_ "embed"
	"runtime"
	"strings"
	"text/template"
	"time"

	"contentapi/shared/crud"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/stack"
	"contentapi/shared/store"
)

// reportTemplate is BENCHMARKS.md's prose; the figures fill it in.
//
//go:embed report.md.tmpl
var reportTemplate string

// report is everything BENCHMARKS.md is written from.
type report struct {
	board                  *bench.Board
	Started                time.Time
	SeedTime, Elapsed      time.Duration
	LoadAvg                [2]string // at start and end
	Operations             []operationResult
	RateLimit              rateLimitCost
	RateLimitPerMinute     int
	BuildTimes             []string
	ColdStarts             []lambdalocal.ColdStart
	BenchEnv, BenchLines   []string
	Profiles               []bench.Profile
	Ratios                 []benchRatios
	Costs                  *bench.CostModel
	Load                   *loadRun
	Machine, DynamoDBLocal string
	LoadClients            int
	Figures, Failing       []judged
	Worst                  *bench.WorstCaseReport
}

// benchRatios are a handler's ratios to its SDK floor, one per round.
type benchRatios struct {
	Figure string
	Rounds []float64
}

func (r *report) write(path string) error {
	for _, f := range r.board.All() {
		f := judged{f}
		r.Figures = append(r.Figures, f)
		if f.Verdict() == "FAIL" {
			r.Failing = append(r.Failing, f)
		}
	}
	r.Machine, r.DynamoDBLocal, r.LoadClients = bench.Machine(), ddblocal.Version(), 32
	if r.Load != nil {
		r.LoadClients = r.Load.Clients
	}
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"val":       func(name string) string { return bench.FormatFigure(r.board.Get(name).Value) },
		"num":       bench.FormatFigure,
		"dollars":   bench.Dollars,
		"percent":   func(share float64) float64 { return share * 100 },
		"hasPrefix": strings.HasPrefix,
		"hasSuffix": strings.HasSuffix,
		"contains":  strings.Contains,
		// The run's settings, named as in the code.
		"account":             func() string { return account },
		"seedDocuments":       func() int { return bench.SeededDocuments },
		"seedImages":          func() int { return bench.SeededImages },
		"resultBytes":         func() int { return bench.SeededResultBytes },
		"gzipRounds":          func() int { return bench.GzipRounds },
		"gzipBlock":           func() int { return bench.GzipBlock },
		"readBudget":          func() int { return store.DefaultReadBudget },
		"maxAnswerBytes":      func() int { return crud.DefaultMaxAnswerBytes },
		"contentionClients":   func() int { return contentionClients },
		"contentionPerClient": func() int { return contentionPerClient },
		"interleavedRounds":   func() int { return interleavedRounds },
		"interleavedCalls":    func() string { return interleavedCalls },
		"coldStartRuns":       func() int { return coldStartRuns },
		"genDocRuns":          func() int { return documentRuns },
		"genImageRuns":        func() int { return imageRuns },
		"lambdaBuildFlags":    func() []string { return stack.LambdaFlags },
		"loadMix":             func() []bench.LoadShare { return bench.LoadMix },
		"firstLine":           firstLine,
		"join":                strings.Join,
		"code":                func(s string) string { return strings.ReplaceAll(s, "`", "'") },
		"cores":               runtime.NumCPU,
		"percentile":          bench.Percentile,
		"ms":                  func(d time.Duration) string { return bench.FormatFigure(float64(d.Microseconds()) / 1000) },
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
	return bench.ChaosSection.WriteKeeping(path, out.Bytes())
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
