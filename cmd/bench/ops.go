package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/documents"
	"contentapi/shared/fold"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/records"
)

// The created records' prompt and description; the cost table asks what
// generating from them would cost.
const (
	createPrompt      = "Write a short press release about the opening of our café in Zürich."
	createDescription = "A small café terrace in Zürich at dusk, string lights, people at wooden tables."
)

// operation is one measured request.
type operation struct {
	Name   string // figure prefix, e.g. "get" for rru_get and calls_get
	What   string // for BENCHMARKS.md
	method string
	path   string
	form   url.Values
	header map[string]string
	status int
	// check returns a problem with the answer ("" when it is right).
	check func(bench.Answer) string
	// deletes is the record a delete removes: the tally's cost of it is
	// the operation's too.
	deletes int64
}

// figures are what an operation reports: request units and round trips.
func (op operation) figures() []string {
	if op.method == "GET" {
		return []string{"rru", "calls"}
	}
	return []string{"wru", "calls"}
}

// operationResult is what one operation cost.
type operationResult struct {
	Op     operation
	Calls  []ddblocal.MeteredCall
	Totals ddblocal.MeteredTotals
	// Tally is what the tally function paid for a delete's count.
	Tally  *ddblocal.MeteredTotals
	status int
	Issue  string
	Took   time.Duration // on DynamoDB Local, through the handler
	// Bytes is the answer's body as it leaves API Gateway for a client
	// that takes gzip; body is the answer itself, decoded.
	Bytes int
	body  string
}

// measureOperations runs each operation once through the real handlers
// (auth, parsing, store, rendering) with the key already authenticated, and
// returns what each cost. The lists come before the writes, so their
// totals can be checked against the seeded data.
func measureOperations(m *ddblocal.Meter, logs *bench.LogMeter, c *bench.Caller, s *bench.SeededAccount, tl *bench.Tallier) (cold operationResult, results []operationResult, rl rateLimitCost) {
	freestyle := func(v records.Values) bool { return v["template_id"] == int64(documents.FreestyleID) }
	other := func(v records.Values) bool { return !freestyle(v) }
	getID := s.Document(0, freestyle)
	coldID := s.Document(int(getID-s.FirstDocument)+1, freestyle)
	updateID := s.Document(100, freestyle)
	deleteID := s.Document(200, freestyle)
	deleteOtherID := s.Document(300, other)

	var wantFreestyle, wantSearch, wantFiltered int64
	for _, v := range s.Docs {
		if freestyle(v) {
			wantFreestyle++
			if strings.Contains(fold.String(v["name"].(string)), bench.SearchDocuments) {
				wantSearch++
			}
		}
	}
	for _, v := range s.Imgs {
		if v["style"] == bench.FilterStyle && v["favorite"] == true {
			wantFiltered++
		}
	}
	checkList := func(count int, total int64) func(bench.Answer) string {
		return func(a bench.Answer) string {
			if a.Count() != count || a.Total != total {
				return fmt.Sprintf("got %d records of %d, want %d of %d", a.Count(), a.Total, count, total)
			}
			return ""
		}
	}
	resultText := bench.NewSeeder(7).Text(bench.SeededResultBytes)
	var created int64

	ops := []operation{
		{Name: "get", What: "GET /api/v1/documents/{id}: a Freestyle document with a ~5 KB result",
			method: "GET", path: fmt.Sprintf("/api/v1/documents/%d", getID), status: 200},
		{Name: "list_default", What: "GET /api/v1/documents: page 1, per_page 10, id desc, template 1 (Freestyle)",
			method: "GET", path: "/api/v1/documents", status: 200, check: checkList(10, wantFreestyle)},
		{Name: "list_filtered", What: "GET /api/v1/images?style=" + bench.FilterStyle + "&favorite=1&sort_by=name: page 1 with its total",
			method: "GET", path: "/api/v1/images?style=" + bench.FilterStyle + "&favorite=1&sort_by=name", status: 200,
			check: checkList(int(min(10, wantFiltered)), wantFiltered)},
		{Name: "list_search_name", What: "GET /api/v1/documents?search=" + bench.SearchDocuments + ": name search, page 1 with its total",
			method: "GET", path: "/api/v1/documents?search=" + bench.SearchDocuments, status: 200,
			check: checkList(int(min(10, wantSearch)), wantSearch)},
		{Name: "list_deep", What: "GET /api/v1/documents?page=50&per_page=100",
			method: "GET", path: "/api/v1/documents?page=50&per_page=100", status: 200,
			check: checkList(100, wantFreestyle)},
		{Name: "list_all", What: "GET /api/v1/documents?template_id=all: page 1, per_page 10, id desc, every template",
			method: "GET", path: "/api/v1/documents?template_id=all", status: 200, check: checkList(10, int64(len(s.Docs)))},
		{Name: "list_all_deep", What: "GET /api/v1/documents?template_id=all&page=5&per_page=100: reads the 400 documents before the page",
			method: "GET", path: "/api/v1/documents?template_id=all&page=5&per_page=100", status: 200, check: checkList(100, int64(len(s.Docs)))},
		{Name: "list_search_result", What: "GET /api/v1/documents?search=brûlée&search_by=result: bounded by the read budget (store.DefaultReadBudget)",
			method: "GET", path: "/api/v1/documents?search=" + url.QueryEscape("brûlée") + "&search_by=result", status: 200,
			check: func(a bench.Answer) string {
				if a.Header.Get("X-Search-Partial") != "true" {
					return "expected a partial search (X-Search-Partial: true)"
				}
				return ""
			}},
		{Name: "create", What: "POST /api/v1/documents (form: name, prompt, creativity)",
			method: "POST", path: "/api/v1/documents", status: 201,
			form: url.Values{"name": {"Café opening: press release"}, "prompt": {createPrompt}, "creativity": {"0.75"}}},
		{Name: "create_image", What: "POST /api/v1/images (form: name, description, resolution, style)",
			method: "POST", path: "/api/v1/images", status: 201,
			form: url.Values{"name": {"Café terrace at dusk"}, "description": {createDescription}, "resolution": {"1024x1024"}, "style": {"photography"}}},
		{Name: "create_idempotent", What: "POST /api/v1/documents with an Idempotency-Key header",
			method: "POST", path: "/api/v1/documents", status: 201, header: map[string]string{"Idempotency-Key": "bench-3f1c9a7e-create"},
			form: url.Values{"name": {"Newsletter: spring collection"}, "prompt": {"Write a newsletter about our spring collection."}}},
		{Name: "update", What: "PUT /api/v1/documents/{id} (form: name, favorite) on a document with a ~5 KB result",
			method: "PUT", path: fmt.Sprintf("/api/v1/documents/%d", updateID), status: 200,
			form: url.Values{"name": {"Crème brûlée recipe, final"}, "favorite": {"1"}}},
		{Name: "update_result", What: "PUT /api/v1/documents/{id} (form: result of ~5 KB) on the document just created",
			method: "PUT", status: 200, form: url.Values{"result": {resultText}}},
		{Name: "delete", What: "DELETE /api/v1/documents/{id}: a Freestyle document with a ~5 KB result",
			method: "DELETE", path: fmt.Sprintf("/api/v1/documents/%d", deleteID), status: 200, deletes: deleteID},
		{Name: "delete_other_template", What: "DELETE /api/v1/documents/{id}: a document of another template than Freestyle",
			method: "DELETE", path: fmt.Sprintf("/api/v1/documents/%d", deleteOtherID), status: 200, deletes: deleteOtherID},
	}

	run := func(op operation) operationResult {
		if op.deletes != 0 {
			var r operationResult
			tally, err := tl.Measure(m, op.deletes, func() { r, _ = measure(m, logs, c, op) })
			r.Tally = &tally
			if err != nil && r.Issue == "" {
				r.Issue = "the tally: " + err.Error()
			}
			// The tally's invocation writes to its own group.
			w, lerr := logs.Invocation(app.TallyFunction)
			if lerr != nil && r.Issue == "" {
				r.Issue = lerr.Error()
			}
			logs.Add(op.Name, w)
			return r
		}
		r, a := measure(m, logs, c, op)
		if op.Name == "create" {
			created = a.ID()
		}
		return r
	}
	cold = run(operation{Name: "auth_cold", What: "the first request of a key: GET /api/v1/documents/{id}",
		method: "GET", path: fmt.Sprintf("/api/v1/documents/%d", coldID), status: 200})
	for _, op := range ops {
		if op.Name == "update_result" {
			op.path = "/api/v1/documents/" + strconv.FormatInt(created, 10)
		}
		results = append(results, run(op))
	}
	// The rate limiter leases a block of the key's minute at a time: its
	// cost per request shows over many requests.
	rl.Requests = 240
	calls := m.Measure(func() {
		for i := range rl.Requests {
			c.Do("GET", fmt.Sprintf("/api/v1/documents/%d", s.FirstDocument+int64(i)), nil, nil)
		}
	})
	t := ddblocal.SumMetered(calls)
	rl.Leases, rl.WRU = t.RateLimit, t.RateLimitWRU
	return cold, results, rl
}

// measure runs one operation and returns what it cost, and its answer;
// logs keeps what it wrote to CloudWatch Logs, under its name.
func measure(m *ddblocal.Meter, logs *bench.LogMeter, c *bench.Caller, op operation) (operationResult, bench.Answer) {
	var a bench.Answer
	logs.Mark()
	start := time.Now()
	calls := m.Measure(func() { a = c.Do(op.method, op.path, op.form, op.header) })
	r := operationResult{Op: op, Calls: calls, Totals: ddblocal.SumMetered(calls), status: a.Status, Took: time.Since(start), Bytes: a.Wire, body: a.Raw}
	if _, err := logs.Request(op.Name, op.method, op.path, a, r.Took); err != nil {
		r.Issue = err.Error()
	}
	if a.Status != op.status {
		r.Issue = fmt.Sprintf("status %d, want %d: %.200s", a.Status, op.status, a.Raw)
	} else if op.check != nil {
		r.Issue = op.check(a)
	}
	return r, a
}

// rateLimitCost is what the rate limiter's leases cost over many requests.
type rateLimitCost struct {
	Requests, Leases int
	WRU              float64
}
