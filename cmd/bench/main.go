// Command bench measures what each operation of the API costs: DynamoDB
// round trips and request units, the handler's own time and allocations,
// the bootstrap's size and cold start, and throughput through the local
// gateway. It prints one line per figure,
//
//	bench: <name> <value> <unit>
//
// and writes the same figures, with the method behind each and the
// trade-offs of the data model, into BENCHMARKS.md at the module root.
//
//	go run ./cmd/bench            (make bench)
//	go run ./cmd/bench -quick     per-operation figures only, no builds or load
//
// It starts its own DynamoDB Local (in memory, on a free port), creates the
// tables of template.yaml, and seeds one account with 10,000 documents and
// 10,000 images, and beside it the worst-case account (bench.SeedWorstCase).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"contentapi/shared/app"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/stack"
	"contentapi/shared/quota"
)

// account owns the seeded records.
const account = "bench"

type options struct {
	quick    bool
	load     bool
	out      string
	duration time.Duration
	clients  int
}

func main() {
	var o options
	flag.BoolVar(&o.quick, "quick", false, "per-operation figures only (no builds, cold start, handler benchmark or load run)")
	flag.BoolVar(&o.load, "load", true, "run the load test through the local gateway")
	flag.StringVar(&o.out, "o", "BENCHMARKS.md", "report to write, relative to the module root unless absolute (\"\" for none)")
	flag.DurationVar(&o.duration, "load-duration", 30*time.Second, "length of the load run")
	flag.IntVar(&o.clients, "load-clients", 32, "concurrent clients of the load run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "[bench] error:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[bench] "+format+"\n", args...)
}

func run(ctx context.Context, o options) error {
	started := time.Now()
	startLoad := bench.LoadAverage()
	tmplPath, err := sam.Find()
	if err != nil {
		return err
	}
	root := filepath.Dir(tmplPath)
	tmpl, err := sam.Load(tmplPath)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "contentapi-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	// Builds run while DynamoDB Local starts and the account is seeded:
	// nothing timed runs meanwhile.
	var builds *artifacts
	if !o.quick {
		builds = startBuilds(ctx, root, work)
	}

	logf("starting DynamoDB Local, behind its vector indexes' stand-in as under make run")
	srv, err := ddblocal.StartFronted(ctx, ddblocal.Options{})
	if err != nil {
		return err
	}
	defer srv.Stop()
	plain, err := ddblocal.NewClient(ctx, srv.Endpoint())
	if err != nil {
		return err
	}
	tables, err := ddblocal.CreateTables(ctx, plain, tmpl, "")
	if err != nil {
		return err
	}

	s, err := seedAccount(ctx, plain, tables)
	if err != nil {
		return err
	}

	b := &bench.Board{}
	meter, err := ddblocal.NewMeter(tmpl, tables)
	if err != nil {
		return err
	}
	if err := meter.CalibrateTransactions(ctx, plain, tables["DocumentsTable"], "account", "id", "~meter"); err != nil {
		return err
	}
	metered := dynamodb.New(plain.Options(), meter.Options)
	// The functions' own configuration: template.yaml's environment (rate
	// limit, auth cache, idempotency table...) pointed at these tables.
	// Generation's local parts: the functions generate, as deployed.
	parts, err := stack.StartGeneration(stack.GenerationOptions{})
	if err != nil {
		return err
	}
	defer parts.Close()
	generationEnv = parts.Env()
	for k, v := range ddblocal.EnvVars(tmpl, srv.Endpoint(), tables) {
		os.Setenv(k, v)
	}
	for k, v := range generationEnv {
		os.Setenv(k, v)
	}
	// The webhooks' queue, in process, as make run has it.
	queue, err := stack.WebhookQueueSettingsFrom(tmpl)
	if err != nil {
		return err
	}
	hooks, err := stack.StartWebhookQueue(ctx, "", queue)
	if err != nil {
		return err
	}
	defer hooks.Close()
	webhookEnv = hooks.Vars()
	for k, v := range webhookEnv {
		os.Setenv(k, v)
	}
	cfg, err := app.ConfigFromEnv()
	if err != nil {
		return err
	}
	cfg.Webhooks = hooks.Config(tables)

	// The figures own stdout; the functions' lines go to the meter of what
	// each request writes to CloudWatch Logs.
	logs, err := bench.NewLogMeter(tmpl)
	if err != nil {
		return err
	}
	cfg.LogOutput = logs
	// Local stacks run without rate limits; the bench measures what a
	// deployment pays, so it uses the template's default limit.
	rate, err := deployedNumber(tmpl, app.EnvRateLimit)
	if err != nil {
		return err
	}
	cfg.RateLimitPerMinute = int(rate)
	// Long enough for the slowest lists on DynamoDB Local (see Method).
	cfg.RequestTimeout = 2 * time.Minute
	// The operations below measure storage; with generation on, a create
	// also writes its content back, measured apart (generation.go).
	storageOnly := cfg
	storageOnly.Generation = app.Generation{}
	c, err := bench.NewCaller(app.New(storageOnly, metered, stack.Parts), s.Key)
	if err != nil {
		return err
	}
	tally, err := app.New(storageOnly, metered, stack.Parts).Tally()
	if err != nil {
		return err
	}
	tl := &bench.Tallier{Fn: tally, DB: plain, Table: tables["DocumentsTable"], Account: account}
	cold, results, rl := measureOperations(meter, logs, c, s, tl)
	quotaResults, err := measureQuota(ctx, meter, logs, c, plain, tables)
	if err != nil {
		return err
	}
	results = append(results, quotaResults...)
	reportOperations(b, cold, results, rl)
	if err := measureGzip(b, results); err != nil {
		return err
	}
	if err := measureContention(ctx, b, meter, plain, tables["ApiKeysTable"], c); err != nil {
		return err
	}
	worst, err := measureWorstCase(ctx, b, meter, plain, tables, c)
	if err != nil {
		return err
	}

	rep := &report{board: b, Started: started, SeedTime: s.Took, Operations: append([]operationResult{cold}, results...),
		RateLimit: rl, RateLimitPerMinute: cfg.RateLimitPerMinute, LoadAvg: [2]string{startLoad}, Worst: worst}
	if err := measureGeneration(ctx, b, meter, logs, metered, plain, cfg, parts, tmpl, srv.Endpoint(), tables, builds); err != nil {
		return err
	}
	if err := measureWebhooks(ctx, b, meter, logs, metered, plain, cfg, parts, hooks, tmpl, srv.Endpoint(), tables, builds); err != nil {
		return err
	}
	if !o.quick {
		if err := measureTallyBuilt(ctx, b, builds, tmpl, srv.Endpoint(), tables, tl); err != nil {
			return err
		}
		if err := measureBuilt(ctx, b, builds, tmpl, srv.Endpoint(), tables, s, rep); err != nil {
			return err
		}
		// The load run has its own DynamoDB Local, under the gateway.
		_ = srv.Stop()
		if o.load {
			if err := measureLoad(ctx, b, builds, tmpl, root, o, rep); err != nil {
				return err
			}
		}
	}
	fn, err := tmpl.Function("DocumentsFunction")
	if err != nil {
		return err
	}
	rep.Costs = costs(b, logs, rep.Operations, fn.MemorySize())
	for _, f := range rep.Costs.Figures() {
		b.Add(f)
	}
	// The worst day of a key: the reads' and, every endpoint failing, the
	// deliveries', at the template's default limits.
	reads, err := deployedNumber(tmpl, app.EnvDefaultMonthly(quota.Reads))
	if err != nil {
		return err
	}
	deliveries, err := deployedNumber(tmpl, app.EnvDefaultMonthly(quota.Deliveries))
	if err != nil {
		return err
	}
	attempt := rep.Costs.Row(worstAttempt)
	keyDay := worst.KeyDay(bench.ResourceReads(reads), deliveries, attempt.Total/1e6)
	for _, f := range []string{"calls_webhook_delivery", "rru_webhook_delivery", "wru_webhook_delivery"} {
		if b.Get(f).Missing != "" {
			keyDay.Missing = "the worst webhook attempt's cost: " + f + " was not measured"
		}
	}
	b.Add(keyDay)
	rep.Elapsed = time.Since(started)
	rep.LoadAvg[1] = bench.LoadAverage()
	if o.out != "" {
		path := o.out
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		if err := rep.write(path); err != nil {
			return err
		}
		logf("wrote %s (%s in all)", path, rep.Elapsed.Round(time.Second))
	}
	return nil
}

// reportOperations turns the per-operation measurements into figures.
func reportOperations(b *bench.Board, cold operationResult, results []operationResult, rl rateLimitCost) {
	warmAuth := 0
	for _, r := range results {
		warmAuth += r.Totals.Auth
		if r.Issue != "" {
			logf("%s: %s", r.Op.Name, r.Issue)
		}
		values := map[string]float64{"rru": r.Totals.Reads, "wru": r.Totals.Writes, "calls": float64(r.Totals.RoundTrips)}
		names := r.Op.figures()
		if r.Tally != nil {
			// A delete's write units are its request's and its tally's;
			// its calls, the request's, and the tally's apart.
			values["wru"] += r.Tally.Writes
			values["calls_tally"] = float64(r.Tally.RoundTrips)
			names = append(names, "calls_tally")
		}
		for _, f := range names {
			name, unit := f+"_"+r.Op.Name, f
			if f == "calls_tally" {
				name, unit = "calls_"+r.Op.Name+"_tally", "calls"
			}
			fig := bench.Figure{Name: name, Value: values[f], Unit: unit}
			if r.status != r.Op.status || r.Issue != "" && r.Tally != nil {
				fig.Missing = r.Issue
			}
			b.Add(fig)
		}
	}
	b.Add(bench.Figure{Name: "calls_auth_warm", Value: float64(warmAuth), Unit: "calls"})
	b.Add(bench.Figure{Name: "calls_auth_cold", Value: float64(cold.Totals.Auth), Unit: "calls"})
	b.Add(bench.Figure{Name: "calls_ratelimit_per_request", Value: float64(rl.Leases) / float64(rl.Requests), Unit: "calls"})
	b.Add(bench.Figure{Name: "wru_ratelimit_per_request", Value: rl.WRU / float64(rl.Requests), Unit: "wru"})
}

// seedAccount seeds the bench account in db's tables.
func seedAccount(ctx context.Context, db *dynamodb.Client, tables map[string]string) (*bench.SeededAccount, error) {
	logf("seeding %d documents and %d images", bench.SeededDocuments, bench.SeededImages)
	s, err := bench.Seed(ctx, db, tables, account)
	if err == nil {
		logf("seeded in %s", s.Took.Round(100*time.Millisecond))
	}
	return s, err
}

// measureWorstCase seeds the worst-case account beside the bench's and
// measures its costliest requests (bench.MeasureWorstCase).
func measureWorstCase(ctx context.Context, b *bench.Board, m *ddblocal.Meter, db *dynamodb.Client, tables map[string]string, c *bench.Caller) (*bench.WorstCaseReport, error) {
	logf("seeding the worst case: %d images, %d documents", bench.FullWorstCase.Images, bench.FullWorstCase.Documents)
	acc, err := bench.SeedWorstCase(ctx, db, tables, account+"-worst", bench.FullWorstCase)
	if err != nil {
		return nil, err
	}
	logf("seeded in %s", acc.Took.Round(100*time.Millisecond))
	r := bench.MeasureWorstCase(m, c, acc)
	for _, issue := range r.Issues() {
		logf("worst case: %s", issue)
	}
	for _, f := range r.Figures() {
		b.Add(f)
	}
	return r, nil
}

// deployedNumber is the parameter default a deployment of tmpl gives name.
func deployedNumber(tmpl *sam.Template, name string) (float64, error) {
	fn, err := tmpl.Function("DocumentsFunction")
	if err != nil {
		return 0, err
	}
	v := fmt.Sprint(tmpl.ResolveParameters(fn.Env()[name]))
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("template %s %q: %w", name, v, err)
	}
	return n, nil
}
