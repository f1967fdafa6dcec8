package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Query is a request's query string with its order and repeats kept, so
// pagination links can rebuild it the way Laravel's paginator does.
type Query struct {
	pairs []queryPair
}

// ParseQuery reads r's query string; a malformed escape is a 400.
func ParseQuery(r *http.Request) (Query, error) { return ParseQueryString(r.URL.RawQuery) }

// Get returns the value of name and whether it was given; a name given more
// than once is reported through repeated so the caller can refuse it.
func (q Query) Get(name string) (value string, given, repeated bool) {
	for _, p := range q.pairs {
		if p.name != name {
			continue
		}
		if given {
			return value, true, true
		}
		value, given = p.value, true
	}
	return value, given, false
}

// WithPage encodes the query with page set to n: in place if the request
// had one, else appended, as Laravel's paginator builds its links.
func (q Query) WithPage(n int64) string {
	var b strings.Builder
	page := strconv.FormatInt(n, 10)
	placed := false
	for _, p := range q.pairs {
		value := p.value
		if p.name == "page" {
			if placed {
				continue
			}
			value, placed = page, true
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p.name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(value))
	}
	if !placed {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString("page=" + page)
	}
	return b.String()
}

// ParseQueryString is ParseQuery for a raw query string.
func ParseQueryString(raw string) (Query, error) {
	pairs, err := splitQuery(raw)
	if err != nil {
		return Query{}, BadRequest("The query string could not be parsed.")
	}
	return Query{pairs: pairs}, nil
}
