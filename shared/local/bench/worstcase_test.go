package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
	"unicode/utf8"

	"contentapi/shared/app"
	"contentapi/shared/local/bench"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/stack"
)

// The bounds scaled down, with an account scaled down to match: every
// index walk would read ~380 RRU, the results ~840, a page of 100
// documents answer ~4.5 MB, had nothing bounded them. One record answers
// up to ~115 KB, which a page always shows (and a GET answers whole).
const (
	readBudget     = 250
	maxAnswerBytes = 400_000
)

var small = bench.WorstCaseSize{Images: 600, Documents: 600, Results: 40}

// Every costly request of the worst-case account stays within the read
// budget and the answer bound, and each list that would walk its whole
// index shows the bound at work (a partial page or an estimated total).
func TestWorstCaseBounded(t *testing.T) {
	env := ddblocal.NewTestEnv(t)
	ctx := context.Background()
	acc, err := bench.SeedWorstCase(ctx, env.Client, env.Tables, "worst", small)
	if err != nil {
		t.Fatal(err)
	}
	// The account is large enough that reading either index whole would
	// pass the budget: what a filter, a search or a deep page would do
	// unbounded.
	for table, units := range acc.IndexReads {
		if units <= readBudget {
			t.Errorf("reading %s's whole index costs %g RRU, within the budget of %d: not a worst case", table, units, readBudget)
		}
	}
	t.Logf("whole index reads: %v", acc.IndexReads)
	if len(acc.IndexReads) != 2 {
		t.Errorf("index reads of %v", acc.IndexReads)
	}
	db, meter := env.Metered(t)
	a := app.New(app.Config{
		Region:           ddblocal.Region,
		DynamoDBEndpoint: env.Endpoint,
		Tables:           env.Tables,
		KeysTable:        env.Tables["ApiKeysTable"],
		AuthCacheTTL:     time.Minute,
		RequestTimeout:   time.Minute,
		LogLevel:         8, // errors only
		ReadBudget:       readBudget,
		MaxAnswerBytes:   maxAnswerBytes,
	}, db, stack.Parts)
	c, err := bench.NewCaller(a, acc.Key)
	if err != nil {
		t.Fatal(err)
	}

	// The counter item agrees with what was seeded.
	for path, want := range map[string]int64{
		"/api/v1/images":                       int64(small.Images),
		"/api/v1/documents":                    int64(small.Documents),
		"/api/v1/documents?template_id=2":      3,
		"/api/v1/documents?sort_by=name":       int64(small.Documents),
		"/api/v1/images?sort_by=name&sort=asc": int64(small.Images),
	} {
		if got := c.Do("GET", path, nil, nil); got.Status != 200 || got.Total != want {
			t.Errorf("GET %s: status %d, total %d, want %d", path, got.Status, got.Total, want)
		}
	}
	// The newest document has every field at its longest.
	got := c.Do("GET", fmt.Sprintf("/api/v1/documents/%d", acc.LastDocument()), nil, nil)
	var doc struct{ Name, Prompt, Result string }
	if err := json.Unmarshal(got.Data, &doc); err != nil {
		t.Fatalf("GET the newest document: %d %.300s", got.Status, got.Raw)
	}
	for field, n := range map[string]int{"name": utf8.RuneCountInString(doc.Name),
		"prompt": utf8.RuneCountInString(doc.Prompt), "result": utf8.RuneCountInString(doc.Result)} {
		if want := map[string]int{"name": 128, "prompt": 2048, "result": 20480}[field]; n != want {
			t.Errorf("the newest document's %s has %d characters, want %d", field, n, want)
		}
	}

	r := bench.MeasureWorstCase(meter, c, acc)
	for _, q := range r.Requests {
		t.Logf("%g RRU, %d bytes: GET %s", q.Reads, q.Bytes, q.Short())
	}
	if len(r.Requests) < 18 {
		t.Fatalf("%d requests measured", len(r.Requests))
	}
	for _, q := range r.Requests {
		if q.Reads > readBudget {
			t.Errorf("GET %s read %g RRU, over the budget of %d", q.Short(), q.Reads, readBudget)
		}
		if q.Bytes > maxAnswerBytes {
			t.Errorf("GET %s answered %d bytes, over the bound of %d", q.Short(), q.Bytes, maxAnswerBytes)
		}
		if q.Issue != "" {
			t.Errorf("GET %s: %s", q.Short(), q.Issue)
		}
	}
	// The largest page was cut short by its size, not only by its reads.
	if largest := r.Largest(); largest.Bytes < maxAnswerBytes/2 || !largest.Partial {
		t.Errorf("the largest answer, GET %s, is %d bytes, partial %v: the bound on answers was not reached",
			largest.Short(), largest.Bytes, largest.Partial)
	}
	if worst := r.Worst(); worst.Reads < readBudget/2 {
		t.Errorf("the costliest request, GET %s, read only %g RRU", worst.Short(), worst.Reads)
	}
	figs := r.Figures()
	if len(figs) != 2 || figs[0].Name != "rru_worst_request" || figs[0].Value != r.Worst().Reads ||
		figs[1].Name != "bytes_largest_response" || figs[1].Value != float64(r.Largest().Bytes) || figs[0].Missing != "" {
		t.Errorf("figures %+v", figs)
	}
}
