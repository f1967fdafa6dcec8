package bench

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"contentapi/shared/local/ddblocal"
)

// request is one costly GET of the account. walks marks a list whose
// matches are too few to fill its page: unbounded, it would read the
// whole index, so its answer must show a bound at work.
type request struct {
	path  string
	walks bool
}

// noMatch is a search no seeded name or text holds.
const noMatch = "zzzz"

// requests are the paths that cost the most on this account: every list
// path (default, filters, name search, search by result, name order, deep
// pages), the largest pages and the largest record.
func requests(a *WorstCaseAccount) []request {
	deep := "page=1000000000000"
	return []request{
		{path: "/api/v1/documents"},
		{path: "/api/v1/documents?per_page=100"},
		{path: "/api/v1/documents?per_page=100&page=2"},
		{path: "/api/v1/documents?sort_by=name&per_page=100"},
		{path: "/api/v1/documents?" + deep},
		{path: "/api/v1/documents/" + strconv.FormatInt(a.LastDocument(), 10)},
		{path: "/api/v1/documents?favorite=1", walks: true},
		{path: "/api/v1/documents?search=" + noMatch, walks: true},
		{path: "/api/v1/documents?search=" + noMatch + "&search_by=result", walks: true},
		{path: "/api/v1/documents?search=" + noMatch + "&search_by=result&per_page=100", walks: true},
		{path: fmt.Sprintf("/api/v1/documents?template_id=%d&sort_by=name&sort=asc", WorstCaseOtherTemplate), walks: true},
		{path: "/api/v1/documents?favorite=0&" + deep, walks: true},
		{path: "/api/v1/images?per_page=100"},
		{path: "/api/v1/images?favorite=1", walks: true},
		{path: "/api/v1/images?style=" + style + "&favorite=1&sort_by=name", walks: true},
		{path: "/api/v1/images?search=" + noMatch + "&per_page=100", walks: true},
		{path: "/api/v1/images?resolution=256x256&sort_by=name&per_page=100", walks: true},
		{path: "/api/v1/images?favorite=0&" + deep, walks: true},
	}
}

// WorstCaseRequest is what one request cost.
type WorstCaseRequest struct {
	Path   string
	Status int
	// Reads is every read unit the request cost, its key lookup included.
	Reads float64
	// Bytes is the answer's body.
	Bytes int
	// Partial and Estimated are the answer's meta.partial and
	// meta.total_estimated: a bound at work.
	Partial, Estimated bool
	// Issue is what is wrong with the answer ("" when nothing is).
	Issue string
}

// Short is the path with its cursor, if any, elided: a cursor in name
// order carries a name's folded form, up to 900 bytes.
func (q WorstCaseRequest) Short() string {
	if before, _, ok := strings.Cut(q.Path, "cursor="); ok {
		return before + "cursor=…"
	}
	return q.Path
}

// WorstCaseReport is what the account's costly requests cost.
type WorstCaseReport struct {
	Account  *WorstCaseAccount
	Requests []WorstCaseRequest
}

// MeasureWorstCase sends each costly request, and the one its links.next
// leads to when that carries a cursor, through c with the account's key,
// metering each with m.
func MeasureWorstCase(m *ddblocal.Meter, c *Caller, a *WorstCaseAccount) *WorstCaseReport {
	c = c.WithKey(a.Key)
	r := &WorstCaseReport{Account: a}
	for _, q := range requests(a) {
		got, next := measure(m, c, q.path)
		if q.walks && !got.Partial && !got.Estimated && got.Issue == "" {
			got.Issue = "no bound at work: the account is too small to be the worst case"
		}
		r.Requests = append(r.Requests, got)
		if next != "" {
			got, _ := measure(m, c, next)
			r.Requests = append(r.Requests, got)
		}
	}
	return r
}

func measure(m *ddblocal.Meter, c *Caller, path string) (WorstCaseRequest, string) {
	var a Answer
	calls := m.Measure(func() { a = c.Do("GET", path, nil, nil) })
	r := WorstCaseRequest{Path: path, Status: a.Status, Reads: ddblocal.SumMetered(calls).Reads, Bytes: len(a.Raw)}
	var body struct {
		Meta struct {
			Partial        bool `json:"partial"`
			TotalEstimated bool `json:"total_estimated"`
		} `json:"meta"`
		Links struct {
			Next *string `json:"next"`
		} `json:"links"`
	}
	if a.Status != 200 {
		r.Issue = fmt.Sprintf("status %d: %.200s", a.Status, a.Raw)
		return r, ""
	}
	if err := json.Unmarshal([]byte(a.Raw), &body); err != nil {
		r.Issue = "answer is not JSON: " + err.Error()
		return r, ""
	}
	r.Partial, r.Estimated = body.Meta.Partial, body.Meta.TotalEstimated
	if body.Links.Next == nil || !strings.Contains(*body.Links.Next, "cursor=") {
		return r, ""
	}
	u, err := url.Parse(*body.Links.Next)
	if err != nil {
		r.Issue = "links.next is no URL: " + err.Error()
		return r, ""
	}
	return r, u.RequestURI()
}

// Worst is the request that read the most.
func (r *WorstCaseReport) Worst() WorstCaseRequest {
	return r.most(func(q WorstCaseRequest) float64 { return q.Reads })
}

// Largest is the request with the largest answer.
func (r *WorstCaseReport) Largest() WorstCaseRequest {
	return r.most(func(q WorstCaseRequest) float64 { return float64(q.Bytes) })
}

func (r *WorstCaseReport) most(by func(WorstCaseRequest) float64) WorstCaseRequest {
	var top WorstCaseRequest
	for i, q := range r.Requests {
		if i == 0 || by(q) > by(top) {
			top = q
		}
	}
	return top
}

// Issues are the requests whose answer was wrong, one line each.
func (r *WorstCaseReport) Issues() []string {
	var out []string
	for _, q := range r.Requests {
		if q.Issue != "" {
			out = append(out, q.Short()+": "+q.Issue)
		}
	}
	return out
}

// Figures are rru_worst_request and bytes_largest_response; both are
// missing when a request failed, since a failed request proves no bound.
func (r *WorstCaseReport) Figures() []Figure {
	var failed string
	for _, q := range r.Requests {
		if q.Status != 200 {
			failed = q.Short() + ": " + q.Issue
			break
		}
	}
	return []Figure{
		{Name: "rru_worst_request", Value: r.Worst().Reads, Unit: "rru", Missing: failed},
		{Name: "bytes_largest_response", Value: float64(r.Largest().Bytes), Unit: "bytes", Missing: failed},
	}
}
