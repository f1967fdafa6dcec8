package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"

	"contentapi/shared/documents"
	"contentapi/shared/fold"
	"contentapi/shared/local/ddbmeter"
	"contentapi/shared/records"
)

// client calls a handler the way API Gateway would, with one API key.
type client struct {
	documents, images http.Handler
	key               string
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (c *client) do(method, path string, form url.Values, header map[string]string) answer {
	h := c.documents
	if strings.HasPrefix(path, "/api/v1/images") {
		h = c.images
	}
	var body string
	if form != nil {
		body = form.Encode()
	}
	r := httptest.NewRequest(method, "https://api.example.com"+path, strings.NewReader(body))
	r.Header.Set("Accept", "application/json")
	r.Header.Set("Authorization", "Bearer "+c.key)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	a := answer{status: w.Code, header: w.Header(), raw: w.Body.String()}
	_ = json.Unmarshal(w.Body.Bytes(), &a.body)
	return a
}

func (a answer) total() int64 {
	m, _ := a.body["meta"].(map[string]any)
	f, _ := m["total"].(float64)
	return int64(f)
}

func (a answer) count() int {
	d, _ := a.body["data"].([]any)
	return len(d)
}

func (a answer) id() int64 {
	d, _ := a.body["data"].(map[string]any)
	f, _ := d["id"].(float64)
	return int64(f)
}

// operation is one measured request.
type operation struct {
	name   string // figure prefix, e.g. "get" for rru_get and calls_get
	what   string // for BENCHMARKS.md
	method string
	path   string
	form   url.Values
	header map[string]string
	status int
	// check returns a problem with the answer ("" when it is right).
	check func(answer) string
	// figures to report: "rru", "wru", "calls".
	figures []string
}

// operationResult is what one operation cost.
type operationResult struct {
	op     operation
	calls  []ddbmeter.Call
	totals ddbmeter.Totals
	status int
	issue  string
	took   time.Duration // on DynamoDB Local, through the handler
}

// measureOperations runs each operation once through the real handlers
// (auth, parsing, store, rendering) with the key already authenticated, and
// returns what each cost. The lists come before the writes, so their
// totals can be checked against the seeded data.
func measureOperations(m *ddbmeter.Meter, c *client, s *seeded) (cold operationResult, results []operationResult, rl rateLimitCost) {
	freestyle := func(v records.Values) bool { return v["template_id"] == int64(documents.FreestyleID) }
	other := func(v records.Values) bool { return !freestyle(v) }
	getID := s.document(0, freestyle)
	coldID := s.document(int(getID-s.firstDocument)+1, freestyle)
	updateID := s.document(100, freestyle)
	deleteID := s.document(200, freestyle)
	deleteOtherID := s.document(300, other)

	var wantFreestyle, wantSearch, wantFiltered int64
	for _, v := range s.docs {
		if freestyle(v) {
			wantFreestyle++
			if strings.Contains(fold.String(v["name"].(string)), searchDocuments) {
				wantSearch++
			}
		}
	}
	for _, v := range s.imgs {
		if v["style"] == filterStyle && v["favorite"] == true {
			wantFiltered++
		}
	}
	checkList := func(count int, total int64) func(answer) string {
		return func(a answer) string {
			if a.count() != count || a.total() != total {
				return fmt.Sprintf("got %d records of %d, want %d of %d", a.count(), a.total(), count, total)
			}
			return ""
		}
	}
	resultText := newGenerator(7).text(resultBytes)
	var created int64

	ops := []operation{
		{name: "get", what: "GET /api/v1/documents/{id}: a Freestyle document with a ~5 KB result",
			method: "GET", path: fmt.Sprintf("/api/v1/documents/%d", getID), status: 200, figures: []string{"rru", "calls"}},
		{name: "list_default", what: "GET /api/v1/documents: page 1, per_page 10, id desc, template 1 (Freestyle)",
			method: "GET", path: "/api/v1/documents", status: 200, check: checkList(10, wantFreestyle), figures: []string{"rru", "calls"}},
		{name: "list_filtered", what: "GET /api/v1/images?style=" + filterStyle + "&favorite=1&sort_by=name: page 1 with its total",
			method: "GET", path: "/api/v1/images?style=" + filterStyle + "&favorite=1&sort_by=name", status: 200,
			check: checkList(int(min(10, wantFiltered)), wantFiltered), figures: []string{"rru", "calls"}},
		{name: "list_search_name", what: "GET /api/v1/documents?search=" + searchDocuments + ": name search, page 1 with its total",
			method: "GET", path: "/api/v1/documents?search=" + searchDocuments, status: 200,
			check: checkList(int(min(10, wantSearch)), wantSearch), figures: []string{"rru", "calls"}},
		{name: "list_deep", what: "GET /api/v1/documents?page=50&per_page=100",
			method: "GET", path: "/api/v1/documents?page=50&per_page=100", status: 200,
			check: checkList(100, wantFreestyle), figures: []string{"rru", "calls"}},
		{name: "list_search_result", what: "GET /api/v1/documents?search=brûlée&search_by=result: bounded by store.ResultSearchBudget",
			method: "GET", path: "/api/v1/documents?search=" + url.QueryEscape("brûlée") + "&search_by=result", status: 200,
			check: func(a answer) string {
				if a.header.Get("X-Search-Partial") != "true" {
					return "expected a partial search (X-Search-Partial: true)"
				}
				return ""
			}, figures: []string{"rru", "calls"}},
		{name: "create", what: "POST /api/v1/documents (form: name, prompt, creativity)",
			method: "POST", path: "/api/v1/documents", status: 201,
			form:    url.Values{"name": {"Café opening: press release"}, "prompt": {"Write a short press release about the opening of our café in Zürich."}, "creativity": {"0.75"}},
			figures: []string{"wru", "calls"}},
		{name: "create_idempotent", what: "POST /api/v1/documents with an Idempotency-Key header",
			method: "POST", path: "/api/v1/documents", status: 201, header: map[string]string{"Idempotency-Key": "bench-3f1c9a7e-create"},
			form:    url.Values{"name": {"Newsletter: spring collection"}, "prompt": {"Write a newsletter about our spring collection."}},
			figures: []string{"wru", "calls"}},
		{name: "update", what: "PUT /api/v1/documents/{id} (form: name, favorite) on a document with a ~5 KB result",
			method: "PUT", path: fmt.Sprintf("/api/v1/documents/%d", updateID), status: 200,
			form: url.Values{"name": {"Crème brûlée recipe, final"}, "favorite": {"1"}}, figures: []string{"wru", "calls"}},
		{name: "update_result", what: "PUT /api/v1/documents/{id} (form: result of ~5 KB) on the document just created",
			method: "PUT", status: 200, form: url.Values{"result": {resultText}}, figures: []string{"wru", "calls"}},
		{name: "delete", what: "DELETE /api/v1/documents/{id}: a Freestyle document with a ~5 KB result",
			method: "DELETE", path: fmt.Sprintf("/api/v1/documents/%d", deleteID), status: 200, figures: []string{"wru", "calls"}},
		{name: "delete_other_template", what: "DELETE /api/v1/documents/{id}: a document of another template (the store guesses Freestyle first)",
			method: "DELETE", path: fmt.Sprintf("/api/v1/documents/%d", deleteOtherID), status: 200, figures: []string{"wru", "calls"}},
	}

	run := func(op operation) operationResult {
		var a answer
		start := time.Now()
		calls := m.Measure(func() { a = c.do(op.method, op.path, op.form, op.header) })
		r := operationResult{op: op, calls: calls, totals: ddbmeter.Sum(calls), status: a.status, took: time.Since(start)}
		if a.status != op.status {
			r.issue = fmt.Sprintf("status %d, want %d: %.200s", a.status, op.status, a.raw)
		} else if op.check != nil {
			r.issue = op.check(a)
		}
		if op.name == "create" {
			created = a.id()
		}
		return r
	}
	cold = run(operation{name: "auth_cold", what: "the first request of a key: GET /api/v1/documents/{id}",
		method: "GET", path: fmt.Sprintf("/api/v1/documents/%d", coldID), status: 200})
	for _, op := range ops {
		if op.name == "update_result" {
			op.path = "/api/v1/documents/" + strconv.FormatInt(created, 10)
		}
		results = append(results, run(op))
	}
	// The rate limiter leases a block of the key's minute at a time: its
	// cost per request shows over many requests.
	rl.requests = 240
	calls := m.Measure(func() {
		for i := range rl.requests {
			c.do("GET", fmt.Sprintf("/api/v1/documents/%d", s.firstDocument+int64(i)), nil, nil)
		}
	})
	t := ddbmeter.Sum(calls)
	rl.leases, rl.wru = t.RateLimit, t.RateLimitWRU
	return cold, results, rl
}

// rateLimitCost is what the rate limiter's leases cost over many requests.
type rateLimitCost struct {
	requests, leases int
	wru              float64
}
