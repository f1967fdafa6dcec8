package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Any body, of any declared type, parses or is refused with 400, 413 or
// 415: never a panic, never another status.
func FuzzParseBody(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", []byte("name=a&name=b&x=%zz"))
	f.Add("application/json", []byte(`{"name":"x","n":1e999,"a":[1,{"b":null}],"name":"y"}`))
	f.Add("application/json", []byte(`[{"name":"x"}]`))
	f.Add("multipart/form-data; boundary=XX", []byte("--XX\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\nz\r\n--XX--\r\n"))
	f.Add("text/plain; charset=\x00", []byte("\xff\xfe"))
	f.Add("", []byte(" \n"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		in, err := ParseBody(r)
		if err != nil {
			e, ok := err.(*Error)
			if !ok || (e.Status != 400 && e.Status != 413 && e.Status != 415) {
				t.Fatalf("ParseBody error %v", err)
			}
			return
		}
		for _, name := range in.Names {
			if _, ok := in.Values[name]; !ok {
				t.Fatalf("name %q without value", name)
			}
		}
	})
}

// Any query string decodes or is a 400; QueryWithPage always yields a query
// that decodes again to the same parameters with the new page.
func FuzzParseQuery(f *testing.F) {
	f.Add("search=caf%C3%A9&page=2&page=3&=&&a")
	f.Add("%")
	f.Add("per_page=10&sort=asc&q=%00%ff")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := ParseQueryString(raw)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Status != 400 {
				t.Fatalf("error %v", err)
			}
			return
		}
		again, err := ParseQueryString(QueryWithPage(q, 7))
		if err != nil {
			t.Fatalf("QueryWithPage produced an undecodable query: %v", err)
		}
		if v, given, repeated := again.Get("page"); !given || repeated || v != "7" {
			t.Fatalf("page after QueryWithPage: %q %v %v", v, given, repeated)
		}
	})
}
