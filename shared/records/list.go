package records

import (
	"fmt"
	"slices"
	"strings"

	"contentapi/shared/fold"
)

// Allowed values of the list parameters, from the original app (openapi.yaml
// lists them from here: make generate).
var (
	PerPages = []int{10, 25, 50, 100}
	// perPageKind reads per_page as page does: digits only, no sign.
	perPageKind = Int{Min: 1, Max: 100}
	SortBys     = Enum{"id", "name"}
	// Sorts are taken in any letter case (ASC, Desc), as SQL writes them.
	Sorts = AnyCase{"desc", "asc"}
)

// MaxPage bounds page so offsets stay far from overflow; any page past the
// end is simply empty, so the bound only refuses absurd numbers.
const MaxPage = 1_000_000_000_000

// Equal selects records whose attribute equals a value.
type Equal struct {
	Attr  string
	Value any
}

// ListQuery is a validated list request.
type ListQuery struct {
	Scope int64
	// AllScopes lists the records of every scope (Scope.All), Scope unused.
	AllScopes bool
	Filters   []Equal
	Search    string // folded; "" means no search
	SearchBy  string
	SortBy    string // "id" or "name"
	Desc      bool
	PerPage   int
	Page      int64
	// Cursor resumes the reading where an answer cut short by its bounds
	// stopped; nil reads from the start.
	Cursor *Cursor
}

// Offset is the number of matching records before the page.
func (q ListQuery) Offset() int64 { return (q.Page - 1) * int64(q.PerPage) }

// ParseList validates a list request's query parameters, a cursor against
// the deployment's cursors. Every known parameter with an invalid value is a
// 422 naming it; unknown ones are ignored, as the contract says. The
// search is text, trimmed as a body's text is ("search= sunrise " searches
// for "sunrise"); the other parameters take the spellings the document
// lists, white space around them refused.
func (r *Resource) ParseList(q Query, cursors Cursors) (ListQuery, error) {
	in := &queryReader{q: q, errs: fieldErrors{}}
	get, parse := in.get, in.parse

	lq := ListQuery{SortBy: "id", Desc: true, PerPage: 10, Page: 1}
	if r.Scope != nil {
		lq.Scope = r.Scope.Default
		if v, ok := get(r.Scope.Field); ok && r.Scope.All != "" && v == r.Scope.All {
			lq.Scope, lq.AllScopes = 0, true
		} else if ok {
			if v, ok := in.value(r.Scope.Field, v, r.Scope.Kind); ok {
				lq.Scope = v.(int64)
			}
		}
	}
	for _, f := range r.Filters {
		if v, ok := parse(f.Param, f.Kind); ok {
			lq.Filters = append(lq.Filters, Equal{Attr: f.Param, Value: v})
		}
	}
	if v, ok := get("search"); ok {
		lq.Search = fold.String(strings.TrimSpace(v))
	}
	lq.SearchBy = r.SearchBy[0]
	if v, ok := parse("search_by", Enum(r.SearchBy)); ok {
		lq.SearchBy = v.(string)
	}
	if v, ok := parse("sort_by", SortBys); ok {
		lq.SortBy = v.(string)
	}
	if v, ok := parse("sort", Sorts); ok {
		lq.Desc = v.(string) == "desc"
	}
	in.page(&lq.Page, &lq.PerPage)
	if v, ok := get("cursor"); ok && len(in.errs) == 0 {
		c, ok := cursors.decode(lq, v)
		if !ok {
			in.errs.add(cursorField, invalidCursor)
		}
		lq.Cursor = c
	}
	if err := in.errs.err(); err != nil {
		return ListQuery{}, err
	}
	return lq, nil
}

// ParsePage validates a page's parameters alone, page and per_page, as a
// list's, for a list of what is no Resource (a webhook endpoint's
// deliveries); perPage is the default per_page.
func ParsePage(q Query, perPage int) (page int64, per int, err error) {
	in := &queryReader{q: q, errs: fieldErrors{}}
	page, per = 1, perPage
	in.page(&page, &per)
	if err := in.errs.err(); err != nil {
		return 0, 0, err
	}
	return page, per, nil
}

// queryReader reads a query's parameters, keeping each invalid one's
// problem by its name.
type queryReader struct {
	q    Query
	errs fieldErrors
}

// get is the value of a parameter given once, in valid text, and not
// empty.
func (in *queryReader) get(name string) (string, bool) {
	v, given, repeated := in.q.Get(name)
	if repeated {
		in.errs.add(name, fmt.Sprintf("The %s field must not be repeated.", label(name)))
		return "", false
	}
	if msg := checkText(name, v); msg != "" {
		in.errs.add(name, msg)
		return "", false
	}
	return v, given && v != ""
}

// parse is a given parameter's value of kind k.
func (in *queryReader) parse(name string, k Kind) (any, bool) {
	v, ok := in.get(name)
	if !ok {
		return nil, false
	}
	return in.value(name, v, k)
}

// value is the parameter's text v read as kind k.
func (in *queryReader) value(name, v string, k Kind) (any, bool) {
	val, msg := k.parse(name, InputValue{Text: v})
	if msg != "" {
		in.errs.add(name, msg)
		return nil, false
	}
	return val, true
}

// page reads page and per_page (one of PerPages) where they are given.
func (in *queryReader) page(page *int64, perPage *int) {
	if v, ok := in.parse("per_page", perPageKind); ok {
		if n := int(v.(int64)); slices.Contains(PerPages, n) {
			*perPage = n
		} else {
			in.errs.add("per_page", "The selected per page is invalid.")
		}
	}
	if v, ok := in.parse("page", Int{Min: 1, Max: MaxPage}); ok {
		*page = v.(int64)
	}
}

// Meta is the paginator's "meta" object, as Laravel's LengthAwarePaginator
// computes it.
type Meta struct {
	CurrentPage int64  `json:"current_page"`
	From        *int64 `json:"from"`
	LastPage    int64  `json:"last_page"`
	Path        string `json:"path"`
	PerPage     int    `json:"per_page"`
	To          *int64 `json:"to"`
	Total       int64  `json:"total"`
	// TotalEstimated: the read budget ended the counting, so Total (and
	// LastPage) are estimates.
	TotalEstimated bool `json:"total_estimated"`
	// Partial: a bound ended the page before it was full.
	Partial bool `json:"partial"`
}

// Paginate computes the meta of a page holding count records, the first of
// them after start matching records (the page's offset, or further on
// where a cursor resumed it).
func Paginate(q ListQuery, total, start int64, count int, path string) Meta {
	m := Meta{CurrentPage: q.Page, Path: path, PerPage: q.PerPage, Total: total}
	m.LastPage = max(1, (total+int64(q.PerPage)-1)/int64(q.PerPage))
	if count > 0 {
		from := start + 1
		to := start + int64(count)
		m.From, m.To = &from, &to
	}
	return m
}
