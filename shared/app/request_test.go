package app

import (
	"context"
	"net/http"
	"net/textproto"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// sameRequest fails t unless the adapter makes the same request of ev's
// headers as given and as canonicalHeaders gives them.
func sameRequest(t *testing.T, headers map[string]string) {
	t.Helper()
	ev := events.APIGatewayV2HTTPRequest{
		RawPath: "/api/v1/documents/7",
		Headers: headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "example.execute-api.us-east-1.amazonaws.com",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodGet},
		},
	}
	var requests core.RequestAccessorV2
	want, wantErr := requests.EventToRequestWithContext(context.Background(), ev)
	canonical, pooled := canonicalHeaders(headers)
	ev.Headers = canonical
	got, err := requests.EventToRequestWithContext(context.Background(), ev)
	if pooled {
		releaseHeaders(canonical)
	}
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("error %v, the adapter's own %v", err, wantErr)
	}
	if err != nil {
		return
	}
	// Two spellings of one name come out in the order of a map's
	// iteration, which the adapter leaves random; only their values count.
	spellings := map[string]int{}
	for name := range headers {
		spellings[textproto.CanonicalMIMEHeaderKey(name)]++
	}
	for name, n := range spellings {
		if n > 1 {
			slices.Sort(got.Header[name])
			slices.Sort(want.Header[name])
		}
	}
	if !reflect.DeepEqual(got.Header, want.Header) {
		t.Fatalf("headers\n%#v\nthe adapter's own\n%#v", got.Header, want.Header)
	}
	if got.Host != want.Host || got.URL.String() != want.URL.String() || got.RequestURI != want.RequestURI {
		t.Fatalf("request %s %s %s, the adapter's own %s %s %s", got.Host, got.URL, got.RequestURI, want.Host, want.URL, want.RequestURI)
	}
}

func TestRequestAsTheAdapter(t *testing.T) {
	testCases := map[string]map[string]string{
		"API Gateway's lower case": {
			"accept-encoding": "gzip, deflate, br", "authorization": "Bearer ck_x", "content-length": "0",
			"host": "example.com", "user-agent": "curl/8.5.0", "x-forwarded-for": "203.0.113.7, 10.0.0.1",
			"if-none-match": `"7.1", W/"7.2"`, "x-custom-thing": "a,b",
		},
		"names outside the table":     {"x-made-up": "1", "X-Mixed-CASE": "2", "weird name": "3"},
		"already canonical":           {"Content-Type": "application/json", "Prefer": "wait=5"},
		"two spellings of one header": {"accept": "text/html", "Accept": "application/json"},
		"none":                        {},
	}
	for name, headers := range testCases {
		t.Run(name, func(t *testing.T) { sameRequest(t, headers) })
	}
}

// canonicalHeaders must give the adapter nothing it would turn into
// another request, whatever names and values arrive.
func FuzzRequestAsTheAdapter(f *testing.F) {
	f.Add("authorization", "Bearer ck_x", "accept-encoding", "gzip, br", "x-forwarded-for", "1.2.3.4")
	f.Add("Accept", "a", "accept", "b", "ACCEPT", "c")
	f.Add("content-type", "text/plain", "x-ünïcode", "v", "", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		sameRequest(t, map[string]string{k1: v1, k2: v2, k3: v3})
	})
}
