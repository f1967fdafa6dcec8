package crud

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"contentapi/shared/generation"
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

// If-Match and If-None-Match name the versions a write requires and
// refuses (RFC 9110 13.1.1, 13.1.2): any tag of the list may match; If-Match
// compares strongly, so only a tag of this record as etag writes it
// matches, and one present but listing no such tag (empty, only commas,
// garbage) is 412 at once; If-None-Match compares weakly, and its "*"
// refuses a write of any existing record.
func TestPrecondition(t *testing.T) {
	testCases := []struct {
		name             string
		ifMatch, ifNone  []string // header lines; nil: no header
		match, noneMatch []int64
		absent           bool
		status           int
	}{
		{name: "no header"},
		{name: "star", ifMatch: []string{"*"}},
		{name: "star spaced", ifMatch: []string{` * `}},
		{name: "one tag", ifMatch: []string{`"7.3"`}, match: []int64{3}},
		{name: "any of a list", ifMatch: []string{`"8.1", "7.2", "7.5"`}, match: []int64{2, 5}},
		{name: "a list over two lines", ifMatch: []string{`"7.2"`, `"7.4"`}, match: []int64{2, 4}},
		{name: "a tag twice", ifMatch: []string{`"7.2", "7.2-gzip"`}, match: []int64{2}},
		{name: "empty", ifMatch: []string{""}, status: 412},
		{name: "commas only", ifMatch: []string{" , ,"}, status: 412},
		{name: "weak", ifMatch: []string{`W/"7.3"`}, status: 412},
		{name: "another record", ifMatch: []string{`"8.3"`}, status: 412},
		{name: "version 0", ifMatch: []string{`"7.0"`}, status: 412},
		{name: "negative", ifMatch: []string{`"7.-1"`}, status: 412},
		{name: "not a number", ifMatch: []string{`"7.x"`}, status: 412},
		{name: "unquoted", ifMatch: []string{`7.3`}, status: 412},
		{name: "unclosed", ifMatch: []string{`"7.3`}, status: 412},
		{name: "star among tags", ifMatch: []string{`*, "8.1"`}, status: 412},
		{name: "none-match star", ifNone: []string{"*"}, absent: true},
		{name: "none-match tags, weak too", ifNone: []string{`"7.3", W/"7.4", "8.5"`}, noneMatch: []int64{3, 4}},
		{name: "none-match empty", ifNone: []string{""}},
		{name: "both", ifMatch: []string{`"7.3"`}, ifNone: []string{`"7.2"`}, match: []int64{3}, noneMatch: []int64{2}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPut, "/api/v1/images/7", nil)
			for name, lines := range map[string][]string{"If-Match": tc.ifMatch, "If-None-Match": tc.ifNone} {
				for _, l := range lines {
					r.Header.Add(name, l)
				}
			}
			pre, absent, err := precondition(r, 7)
			if !slices.Equal(pre.Match, tc.match) || !slices.Equal(pre.NoneMatch, tc.noneMatch) || absent != tc.absent || status(err) != tc.status {
				t.Errorf("%+v, absent %v, error %v; want match %v, none %v, absent %v, status %d",
					pre, absent, err, tc.match, tc.noneMatch, tc.absent, tc.status)
			}
		})
	}
}

// More versions than DynamoDB's IN takes are 400, not a write DynamoDB
// refuses as a 500.
func TestPreconditionNamesAtMostAHundredVersions(t *testing.T) {
	var tags []string
	for v := range store.MaxPreconditionVersions + 1 {
		tags = append(tags, fmt.Sprintf(`"7.%d"`, v+1))
	}
	r := httptest.NewRequest(http.MethodPut, "/api/v1/images/7", nil)
	r.Header.Set("If-Match", strings.Join(tags, ", "))
	if _, _, err := precondition(r, 7); status(err) != 400 {
		t.Errorf("%d versions: %v, want 400", len(tags), err)
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
			if got := httpapi.BaseURL(r); got != tc.want {
				t.Errorf("BaseURL = %s, want %s", got, tc.want)
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

// A resource whose records are generated has a regenerate operation; one
// without Content (a plain stored resource) has none, so none is routed or
// documented.
func TestRoutesRegenerateOnlyWhatIsGenerated(t *testing.T) {
	plain := &records.Resource{Name: "voices", Object: "voice"}
	generated := *plain
	generated.Content = &generation.Content{}
	regenerates := func(def *records.Resource) bool {
		for _, r := range New(def, nil).Routes() {
			if r.Pattern == "/api/v1/voices/{id}/regenerate" {
				return true
			}
		}
		return false
	}
	if regenerates(plain) || !regenerates(&generated) {
		t.Errorf("regenerate routed without Content %v, with %v", regenerates(plain), regenerates(&generated))
	}
	if n := len(New(plain, nil).Routes()); n != 6 {
		t.Errorf("%d routes of a plain resource, want the five operations and PATCH", n)
	}
}
