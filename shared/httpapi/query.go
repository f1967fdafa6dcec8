package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"contentapi/shared/records"
)

// ParseQuery reads r's query string; a malformed escape is a 400.
func ParseQuery(r *http.Request) (records.Query, error) { return ParseQueryString(r.URL.RawQuery) }

// ParseQueryString is ParseQuery for a raw query string.
func ParseQueryString(raw string) (records.Query, error) {
	params, err := splitQuery(raw)
	if err != nil {
		return nil, BadRequest("The query string could not be parsed.")
	}
	return params, nil
}

// QueryWithPage encodes params with page set to n: in place if the request
// had one, else appended, as Laravel's paginator builds its links.
func QueryWithPage(params records.Query, n int64) string {
	var b strings.Builder
	page := strconv.FormatInt(n, 10)
	placed := false
	for _, p := range params {
		value := p.Value
		if p.Name == "page" {
			if placed {
				continue
			}
			value, placed = page, true
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p.Name))
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

// BaseURL is the scheme and host the client used, for absolute links:
// API Gateway says the scheme in X-Forwarded-Proto, the Lambda adapter in
// the request URL; a bare server answers by whether it runs TLS.
func BaseURL(r *http.Request) string {
	scheme, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	scheme = strings.TrimSpace(scheme)
	switch {
	case scheme == "http" || scheme == "https":
	case r.URL.Scheme != "":
		scheme = r.URL.Scheme
	case r.TLS != nil:
		scheme = "https"
	default:
		scheme = "http"
	}
	return scheme + "://" + r.Host
}
