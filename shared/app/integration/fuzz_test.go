package integration_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/app"
)

// statuses are those a response may carry: the successes, and the errors
// docs/api.md lists in Limits and errors.
var statuses = map[int]bool{200: true, 201: true, 204: true, 304: true, 400: true, 401: true, 403: true,
	404: true, 405: true, 409: true, 412: true, 413: true, 415: true, 422: true, 429: true, 503: true}

// Whatever an API Gateway event holds, the real entry point answers a
// well-formed JSON body with a status from docs/api.md: never a panic or a 500,
// and never a Lambda error (which the gateway would turn into a bare 500).
func FuzzEntryPoint(f *testing.F) {
	for _, seed := range []struct {
		method, path, query, contentType, body string
		base64                                 bool
	}{
		{"GET", "/api/v1/images", "per_page=7&page=10000000000000", "", "", false},
		{"POST", "/api/v1/images", "", "application/x-www-form-urlencoded", "bmFtZT14JmRlc2NyaXB0aW9uPWQmcmVzb2x1dGlvbj01MTJ4NTEy", true},
		{"POST", "/api/v1/documents", "", "application/x-www-form-urlencoded", "not base64!", true},
		{"POST", "/api/v1/documents", "", "application/json", `{"name":":v","prompt":"#n attribute_exists(id)","template_id":"1"}`, false},
		{"PUT", "/api/v1/documents/00001", "", "application/json", `[]`, false},
		{"DELETE", "/api/v1/images/-1", "", "", "", false},
		{"GET", "/api/v1/images/../../etc/passwd", "", "", "", false},
		{"PATCH", "/api/v1/images", "", "text/xml", "<a/>", false},
		{"GET", "/api/v1/documents", "search=%ff%00&search_by=result&template_id=01", "", "", false},
		{"BREW", "/%zz", "a=%", "", "", false},
	} {
		f.Add(seed.method, seed.path, seed.query, seed.contentType, seed.body, seed.base64)
	}
	s := newStack(f)
	fns, err := s.app.APIEntries()
	if err != nil {
		f.Fatal(err)
	}
	createDocument(f, s, "Seeded")
	f.Fuzz(func(t *testing.T, method, path, query, contentType, body string, base64 bool) {
		ev := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RawPath: path, RawQueryString: query, Body: body, IsBase64Encoded: base64,
			Headers: map[string]string{"authorization": "Bearer " + s.writeKey, "content-type": contentType},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				RequestID: "fuzz", DomainName: "api.example.com", Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path},
			},
		}
		// As the template routes: a resource's paths to its function,
		// anything else to the first one's.
		entry := fns[app.Resources[0].Function()]
		for _, r := range app.Resources {
			if strings.HasPrefix(path, "/api/v1/"+r.Def.Name) {
				entry = fns[r.Function()]
			}
		}
		resp, err := entry(context.Background(), ev)
		if err != nil {
			t.Fatalf("entry point failed the invocation: %v", err)
		}
		if !statuses[resp.StatusCode] {
			t.Fatalf("%s %s?%s: status %d: %s", method, path, query, resp.StatusCode, resp.Body)
		}
		if resp.StatusCode == http.StatusNotModified || resp.StatusCode == http.StatusNoContent {
			return
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(resp.Body), &v); err != nil || v["status"] != float64(resp.StatusCode) {
			t.Fatalf("%s %s: body %q is not a JSON answer with its status", method, path, resp.Body)
		}
		if resp.Headers["Content-Type"] != "application/json; charset=utf-8" {
			t.Fatalf("Content-Type %q", resp.Headers["Content-Type"])
		}
	})
}
