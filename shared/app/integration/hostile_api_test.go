package integration_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// Input built to break things is refused cleanly, or stored as the plain
// data it is, and changes nothing it should not.
func TestHostileInput(t *testing.T) {
	s := newStack(t)
	// DynamoDB expression syntax in values is data: values only ever go to
	// DynamoDB as expression attribute values.
	tricky := []string{":v", "#n", "attribute_exists(id)", "name = :name OR 1=1", "${jndi:ldap://x}", "<script>", `"); DROP TABLE`}
	for i, name := range tricky {
		r := s.form("POST", "/api/v1/images", "name", name, "description", name, "resolution", "256x256")
		expect(t, r, 201)
		if r.data()["name"] != name || r.data()["description"] != name {
			t.Fatalf("%q stored as %v", name, r.data())
		}
		got := s.get("/api/v1/images?search=" + url.QueryEscape(name))
		if num(got.meta()["total"]) < 1 {
			t.Errorf("search for %q found nothing (%d stored)", name, i+1)
		}
	}
	total := num(s.get("/api/v1/images").meta()["total"])
	if total != int64(len(tricky)) {
		t.Fatalf("total %d, want %d", total, len(tricky))
	}
	for _, tc := range []struct {
		name   string
		rq     request
		status int
	}{
		{"path traversal", request{method: "GET", path: "/api/v1/images/../documents/1"}, 404},
		{"encoded traversal", request{method: "GET", path: "/api/v1/images/..%2F..%2Fetc%2Fpasswd"}, 404},
		{"double slash", request{method: "GET", path: "/api/v1//images"}, 404},
		{"trailing slash", request{method: "GET", path: "/api/v1/images/"}, 404},
		{"leading zeros", request{method: "GET", path: "/api/v1/images/001"}, 404},
		{"sign", request{method: "GET", path: "/api/v1/images/+1"}, 404},
		{"huge id", request{method: "GET", path: "/api/v1/images/99999999999999999999999"}, 404},
		{"page 10^12", request{method: "GET", path: "/api/v1/images?page=1000000000000"}, 200},
		{"page past 10^12", request{method: "GET", path: "/api/v1/images?page=1000000000001"}, 422},
		{"repeated query parameter", request{method: "GET", path: "/api/v1/images?sort=asc&sort=desc"}, 422},
		{"control characters in search", request{method: "GET", path: "/api/v1/images?search=%01"}, 422},
		{"invalid UTF-8 in search", request{method: "GET", path: "/api/v1/images?search=%ff"}, 422},
		{"bad escape in query", request{method: "GET", path: "/api/v1/images?search=%zz"}, 400},
		{"huge JSON number", request{method: "POST", path: "/api/v1/documents", contentType: "application/json",
			body: `{"name":"n","prompt":"p","creativity":1e999999,"template_id":1e30}`}, 422},
		{"JSON of the wrong types", request{method: "POST", path: "/api/v1/images", contentType: "application/json",
			body: `{"name":["a"],"description":{"x":1},"resolution":512}`}, 422},
		{"duplicate JSON keys", request{method: "POST", path: "/api/v1/images", contentType: "application/json",
			body: `{"name":"a","name":"b","description":"d","resolution":"256x256"}`}, 422},
		{"duplicate form fields", request{method: "POST", path: "/api/v1/images", contentType: "application/x-www-form-urlencoded",
			body: "name=a&name=b&description=d&resolution=256x256"}, 422},
		{"NUL in a field", request{method: "POST", path: "/api/v1/images", contentType: "application/x-www-form-urlencoded",
			body: "name=a%00b&description=d&resolution=256x256"}, 422},
		{"invalid UTF-8 in a field", request{method: "POST", path: "/api/v1/images", contentType: "application/x-www-form-urlencoded",
			body: "name=a%ffb&description=d&resolution=256x256"}, 422},
		{"over-long value", request{method: "POST", path: "/api/v1/images", contentType: "application/x-www-form-urlencoded",
			body: "name=" + strings.Repeat("x", 5000) + "&description=d&resolution=256x256"}, 422},
		{"body over 1 MiB", request{method: "POST", path: "/api/v1/images", contentType: "application/x-www-form-urlencoded",
			body: "name=" + strings.Repeat("x", 1<<20) + "&description=d&resolution=256x256"}, 413},
		{"wrong content type", request{method: "POST", path: "/api/v1/images", contentType: "text/plain", body: "name=a"}, 415},
		{"malformed JSON", request{method: "POST", path: "/api/v1/images", contentType: "application/json", body: `{"name":"a",`}, 400},
		{"JSON array", request{method: "POST", path: "/api/v1/images", contentType: "application/json", body: `[]`}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rq.key = s.writeKey
			expect(t, s.do(tc.rq), tc.status)
		})
	}
	if after := num(s.get("/api/v1/images").meta()["total"]); after != total {
		t.Fatalf("refused requests changed the total: %d, want %d", after, total)
	}
}

// However much bad input a request carries, its 422 stays small: a
// bounded number of fields, each named once, names cut short.
func TestInvalidAnswersAreBounded(t *testing.T) {
	s := newStack(t)
	const maxAnswer = 16 << 10
	formType := "application/x-www-form-urlencoded"
	oneMiB := func(unit string) string { return strings.Repeat(unit, (1<<20)/len(unit)) }
	var manyNames strings.Builder
	for i := 0; manyNames.Len() < 1<<20-200; i++ {
		fmt.Fprintf(&manyNames, "%%22%%01%s%d=&", strings.Repeat("%C3%A9", 20), i)
	}
	testCases := []struct {
		name string
		rq   request
	}{
		{"1 MiB of a=&a=&", request{method: "POST", path: "/api/v1/images", contentType: formType, body: oneMiB("a=&")}},
		{"a field name of 1 MiB", request{method: "POST", path: "/api/v1/images", contentType: formType, body: oneMiB("n")[9:] + "=x&name=y"}},
		{"1 MiB of distinct escaped names", request{method: "PUT", path: "/api/v1/documents/1", contentType: formType, body: manyNames.String()}},
		{"a JSON key of 1 MiB", request{method: "POST", path: "/api/v1/documents", contentType: "application/json",
			body: `{"` + oneMiB(`\u0001`)[12:] + `":1}`}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.rq.body) > 1<<20 {
				t.Fatalf("test body of %d bytes is over the limit", len(tc.rq.body))
			}
			tc.rq.key = s.writeKey
			r := s.do(tc.rq)
			expect(t, r, 422)
			if len(r.Raw) > maxAnswer {
				t.Fatalf("422 of %d bytes, want at most %d", len(r.Raw), maxAnswer)
			}
			errs, _ := r.Body["errors"].(map[string]any)
			if len(errs) == 0 {
				t.Fatalf("no field named: %s", r.Raw)
			}
			for name, msgs := range errs {
				seen := map[any]bool{}
				for _, m := range msgs.([]any) {
					if seen[m] {
						t.Errorf("%q says %q twice", name, m)
					}
					seen[m] = true
				}
			}
		})
	}
}
