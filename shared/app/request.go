package app

import (
	"context"
	"net/http"
	"net/textproto"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// eventRequest is the request the adapter makes of ev
// (core.RequestAccessorV2.EventToRequestWithContext), on ctx, or nil for
// an event the adapter would fail on (and log the raw URL of, in plain
// text). The events API Gateway sends, plain ones, are turned into it
// here, for a fraction of the adapter's cost: it builds and parses the
// URL again, sorts the headers through two maps, canonicalizes each name
// twice and copies the request to set its context. Anything else goes to
// the adapter, which stays the definition of the conversion:
// FuzzRequestAsTheAdapter holds the two to the same request, field by
// field.
//
// The request's context carries no adapter value (its key is the
// adapter's own): what the middleware needs of the gateway's context, the
// request id, lambdaFunction gives it on both paths.
func eventRequest(ctx context.Context, ev events.APIGatewayV2HTTPRequest) *http.Request {
	if r, ok := plainRequest(ctx, ev); ok {
		return r
	}
	if !convertible(ev) {
		return nil
	}
	var requests core.RequestAccessorV2
	r, err := requests.EventToRequestWithContext(ctx, ev)
	if err != nil {
		return nil
	}
	return r
}

// plainRequest is eventRequest for an event whose URL url.Parse takes as
// it is (a simple path, a plain host and query), whose header names are
// distinct once canonical, and with no custom host configured for the
// adapter; ok is false for any other.
func plainRequest(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (r *http.Request, ok bool) {
	path, host, query := ev.RawPath, ev.RequestContext.DomainName, ev.RawQueryString
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	if ev.IsBase64Encoded || !simplePath(path) || !plainURL(host, "", query) ||
		!validMethod(ev.RequestContext.HTTP.Method) || query == "" && len(ev.QueryStringParameters) > 0 {
		return nil, false
	}
	if _, custom := os.LookupEnv(core.CustomHostVariable); custom {
		return nil, false
	}
	header, ok := eventHeader(ev)
	if !ok {
		return nil, false
	}
	// http.NewRequest's own body, length and method; the URL, parsed
	// here from nothing, is filled in as url.Parse would read it.
	r, err := http.NewRequestWithContext(ctx, strings.ToUpper(ev.RequestContext.HTTP.Method), "", strings.NewReader(ev.Body))
	if err != nil {
		return nil, false
	}
	r.URL.Scheme, r.URL.Host, r.URL.Path, r.URL.RawQuery = "https", host, path, query
	r.Host, r.Header, r.RemoteAddr = host, header, ev.RequestContext.HTTP.SourceIP
	r.RequestURI = r.URL.RequestURI()
	return r, true
}

// simplePath is a path url.Parse keeps as it is in URL.Path, with no
// RawPath: it starts with a slash and holds nothing an escape or
// EscapedPath would change, nor a '?' that would start the query.
func simplePath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := range len(p) {
		if c := p[i]; !isAlnum(c) && strings.IndexByte("-._~$&+,/:;=@", c) < 0 {
			return false
		}
	}
	return true
}

// eventHeader is the adapter's header of ev: its cookies, then each header
// under its canonical name, split at commas and trimmed of spaces unless
// it is one of the adapter's singletonHeaders. Two names of one canonical
// form, which API Gateway never sends, are added by the adapter in the
// random order of a map's iteration: ok is false for those, and for a
// cookie header beside the event's cookies. The values share an array
// (one, unless many hold commas), each slice capped at its own end so an
// append to it copies.
func eventHeader(ev events.APIGatewayV2HTTPRequest) (h http.Header, ok bool) {
	values := make([]string, 0, len(ev.Cookies)+2*len(ev.Headers))
	h = make(http.Header, len(ev.Headers)+1)
	if len(ev.Cookies) > 0 {
		values = append(values, ev.Cookies...)
		h["Cookie"] = values[:len(values):len(values)]
	}
	for name, v := range ev.Headers {
		c, ok := canonicalNames[name]
		if !ok {
			c = textproto.CanonicalMIMEHeaderKey(name)
		}
		names, start := len(h), len(values)
		if singletonHeader(c) {
			values = append(values, v)
		} else {
			for more := true; more; {
				var part string
				part, v, more = strings.Cut(v, ",")
				values = append(values, strings.Trim(part, " "))
			}
		}
		if h[c] = values[start:len(values):len(values)]; len(h) == names {
			return nil, false // a name seen before
		}
	}
	return h, true
}

// singletonHeader reports the headers the adapter takes as one value,
// commas and all (its singletonHeaders, after RFC 7230).
func singletonHeader(canonical string) bool {
	switch canonical {
	case "Content-Type", "Content-Disposition", "Content-Length", "User-Agent", "Referer", "Host",
		"Authorization", "Proxy-Authorization", "If-Modified-Since", "If-Unmodified-Since", "From",
		"Location", "Max-Forwards":
		return true
	}
	return false
}

// canonicalNames are the canonical forms of the header names API Gateway
// usually sends (in lower case), spared textproto's allocation.
var canonicalNames = func() map[string]string {
	m := map[string]string{}
	for _, name := range []string{
		"accept", "accept-encoding", "accept-language", "access-control-request-headers",
		"access-control-request-method", "authorization", "cache-control", "connection",
		"content-encoding", "content-length", "content-type", "cookie", "forwarded", "host",
		"idempotency-key", "if-match", "if-modified-since", "if-none-match", "if-unmodified-since",
		"origin", "pragma", "prefer", "priority", "referer", "sec-ch-ua", "sec-ch-ua-mobile",
		"sec-ch-ua-platform", "sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "te",
		"user-agent", "via", "x-amz-cf-id", "x-amzn-trace-id", "x-forwarded-for",
		"x-forwarded-host", "x-forwarded-port", "x-forwarded-proto", "x-request-id",
	} {
		m[name] = textproto.CanonicalMIMEHeaderKey(name)
	}
	return m
}()
