package app

import (
	"net/textproto"
	"sync"
)

// API Gateway hands headers over with lower-case names, and the adapter
// canonicalizes each name twice on its way into the request (once to sort
// the singletons out, once in Header.Add), allocating a new string both
// times. Names already canonical are taken as they are, so the function
// gives the adapter the event with its names canonicalized once, from
// this table for the usual ones: the request the adapter builds is the same
// (FuzzRequestAsTheAdapter holds it so).
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

// headerMaps are the maps canonicalHeaders fills; the adapter copies what
// it reads out of the event, so each serves again once the request is made.
var headerMaps = sync.Pool{New: func() any { return make(map[string]string, 16) }}

// canonicalHeaders returns headers with canonical names; when pooled, in
// a map to give to releaseHeaders once the adapter is done with it. Two
// names of one canonical form, which API Gateway never sends, leave headers
// as they are: the adapter adds both to the request.
func canonicalHeaders(headers map[string]string) (canonical map[string]string, pooled bool) {
	if len(headers) == 0 {
		return headers, false
	}
	m := headerMaps.Get().(map[string]string)
	for name, value := range headers {
		c, ok := canonicalNames[name]
		if !ok {
			c = textproto.CanonicalMIMEHeaderKey(name)
		}
		if _, dup := m[c]; dup {
			releaseHeaders(m)
			return headers, false
		}
		m[c] = value
	}
	return m, true
}

// releaseHeaders takes back a map canonicalHeaders pooled.
func releaseHeaders(m map[string]string) {
	clear(m)
	headerMaps.Put(m)
}
