package crud

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/httpapi"
	"contentapi/shared/records"
	"contentapi/shared/store"
)

func status(err error) int {
	var e *httpapi.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func TestETag(t *testing.T) {
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	testCases := []struct {
		name string
		item store.Item
		want string
	}{
		{"first version", store.Item{store.AttrID: n("7"), store.AttrVersion: n("1")}, `"7.1"`},
		{"after updates", store.Item{store.AttrID: n("123456789012"), store.AttrVersion: n("42")}, `"123456789012.42"`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := etag(tc.item); got != tc.want {
				t.Errorf("etag = %s, want %s", got, tc.want)
			}
		})
	}
}

// If-Match names the version a write requires, strongly compared: only a
// tag of this record, as etag writes it, can match.
func TestIfMatchVersion(t *testing.T) {
	testCases := []struct {
		header  string
		version int64
		status  int
	}{
		{"", 0, 0},
		{"*", 0, 0},
		{` * `, 0, 0},
		{`"7.3"`, 3, 0},
		{`"8.1", "7.2"`, 2, 0},
		{`W/"7.3"`, 0, 412},
		{`"8.3"`, 0, 412},
		{`"7.0"`, 0, 412},
		{`"7.-1"`, 0, 412},
		{`"7.x"`, 0, 412},
		{`7.3`, 0, 412},
		{`"7.3`, 0, 412},
	}
	for _, tc := range testCases {
		t.Run(tc.header, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPut, "/api/v1/images/7", nil)
			r.Header.Set("If-Match", tc.header)
			version, err := ifMatchVersion(r, 7)
			if version != tc.version || status(err) != tc.status {
				t.Errorf("version %d, error %v; want %d, status %d", version, err, tc.version, tc.status)
			}
		})
	}
}

// An id is a plain positive integer; anything else is a record that does
// not exist.
func TestRecordID(t *testing.T) {
	testCases := []struct {
		path string
		id   int64
	}{
		{"1", 1},
		{"999999999999", 999_999_999_999},
		{"0", 0},
		{"01", 0},
		{"+1", 0},
		{"-1", 0},
		{"1.0", 0},
		{"1e3", 0},
		{"abc", 0},
		{"1000000000000", 0},
		{"", 0},
	}
	for _, tc := range testCases {
		t.Run(tc.path, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.SetPathValue("id", tc.path)
			id, err := recordID(r)
			if id != tc.id || (tc.id == 0) != (status(err) == http.StatusNotFound) {
				t.Errorf("id %d, error %v; want %d", id, err, tc.id)
			}
		})
	}
}

// Links are absolute, in the scheme and host the client used.
func TestBaseURL(t *testing.T) {
	testCases := []struct {
		name      string
		target    string
		forwarded string
		tls       bool
		want      string
	}{
		{"API Gateway says https", "/api/v1/images", "https", false, "https://api.example.com"},
		{"plain server", "/api/v1/images", "", false, "http://api.example.com"},
		{"TLS server", "/api/v1/images", "", true, "https://api.example.com"},
		{"the adapter's absolute URL", "https://api.example.com/api/v1/images", "", false, "https://api.example.com"},
		{"a chain of proxies, first wins", "/api/v1/images", "https, http", false, "https://api.example.com"},
		{"a scheme we do not serve is ignored", "/api/v1/images", "javascript", false, "http://api.example.com"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tc.target, nil)
			r.Host = "api.example.com"
			if tc.forwarded != "" {
				r.Header.Set("X-Forwarded-Proto", tc.forwarded)
			}
			r.TLS = nil
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := baseURL(r); got != tc.want {
				t.Errorf("baseURL = %s, want %s", got, tc.want)
			}
		})
	}
}

// The paginator's links: first and last always, prev past the first page
// (even past the end), next while a later page exists; every link keeps the
// request's other parameters, in their order.
func TestPageLinks(t *testing.T) {
	const path = "https://api.example.com/api/v1/images"
	testCases := []struct {
		name                    string
		query                   string
		page, perPage           int64
		total                   int64
		first, last, prev, next string
	}{
		{"one page", "", 1, 10, 3, "page=1", "page=1", "", ""},
		{"empty", "", 1, 10, 0, "page=1", "page=1", "", ""},
		{"middle", "style=anime&page=2", 2, 10, 25, "style=anime&page=1", "style=anime&page=3", "style=anime&page=1", "style=anime&page=3"},
		{"last", "page=3&per_page=25", 3, 25, 75, "page=1&per_page=25", "page=3&per_page=25", "page=2&per_page=25", ""},
		{"past the end", "search=caf%C3%A9&page=9", 9, 10, 12, "search=caf%C3%A9&page=1", "search=caf%C3%A9&page=2", "search=caf%C3%A9&page=8", ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			params, err := httpapi.ParseQueryString(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			q := records.ListQuery{Page: tc.page, PerPage: int(tc.perPage)}
			l := pageLinks(records.Cursors{}, path, params, records.Paginate(q, tc.total, q.Offset(), 0, path), q, nil)
			str := func(p *string) string {
				if p == nil {
					return ""
				}
				return *p
			}
			at := func(query string) string {
				if query == "" {
					return ""
				}
				return path + "?" + query
			}
			if l.First != at(tc.first) || l.Last != at(tc.last) || str(l.Prev) != at(tc.prev) || str(l.Next) != at(tc.next) {
				t.Errorf("links %s %s %s %s\nwant %s %s %s %s", l.First, l.Last, str(l.Prev), str(l.Next),
					at(tc.first), at(tc.last), at(tc.prev), at(tc.next))
			}
		})
	}
}

func TestLinkHeader(t *testing.T) {
	prev, next := "/p?page=1", "/p?page=3"
	testCases := []struct {
		name  string
		links Links
		want  string
	}{
		{"first page", Links{First: "/p?page=1", Last: "/p?page=1"}, `</p?page=1>; rel="first", </p?page=1>; rel="last"`},
		{"middle", Links{First: "/p?page=1", Last: "/p?page=5", Prev: &prev, Next: &next},
			`</p?page=1>; rel="first", </p?page=1>; rel="prev", </p?page=3>; rel="next", </p?page=5>; rel="last"`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := linkHeader(tc.links); got != tc.want {
				t.Errorf("Link: %s\nwant  %s", got, tc.want)
			}
		})
	}
}
