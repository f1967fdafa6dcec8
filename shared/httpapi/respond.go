package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
)

// ContentType is the only type this API answers with.
const ContentType = "application/json; charset=utf-8"

var contentType = []string{ContentType}

// MaxLambdaResponseBytes is Lambda's limit on a synchronous invocation's
// response (6 MB), measured on the response event as the runtime
// serialises it: the body travels inside it as one JSON string, escaped a
// second time, so a body of quotes counts double. Past it API Gateway
// answers a bare 500.
const MaxLambdaResponseBytes = 6 << 20

// WriteJSON writes v as the response body with the given status, as
// encoding/json does with HTML left unescaped. The Lambda adapter needs an
// explicit Content-Type, so it is always set here.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	bp := Buffer()
	buf := bytes.NewBuffer(*bp)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only our own types are encoded here; a failure is a bug, and the
		// client still gets a well-formed 500.
		slog.Error("encode response", "error", err.Error())
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"message":"Server error.","status":500}` + "\n")
	}
	WriteEncoded(w, status, buf.Bytes())
	*bp = buf.Bytes()[:0]
	Release(bp)
}

// WriteEncoded writes body, JSON as WriteJSON encodes it (its newline
// included), as the response body with the given status.
func WriteEncoded(w http.ResponseWriter, status int, body []byte) {
	// Shared, as nothing edits a header's values in place.
	w.Header()["Content-Type"] = contentType
	w.WriteHeader(status)
	// Every ResponseWriter copies what it is given, so the caller's buffer
	// serves the next answer; one grown by a rare huge answer is let go.
	_, _ = w.Write(body)
}

// Buffer is an empty buffer sized for a page of records, for a handler
// to build part of an answer in (or the middleware its access line);
// Release gives it back once the answer is written.
func Buffer() *[]byte {
	bp := bodies.Get().(*[]byte)
	*bp = (*bp)[:0]
	return bp
}

// Release keeps bp for a later answer, unless a rare huge answer grew it.
func Release(bp *[]byte) {
	if cap(*bp) <= maxPooledBody {
		bodies.Put(bp)
	}
}

// bodies are buffers for answers, sized for a page of records.
var bodies = sync.Pool{New: func() any {
	b := make([]byte, 0, 64<<10)
	return &b
}}

const maxPooledBody = 1 << 20

// WriteError answers with err: an *Error or a domain error in its contract
// shape; anything else is logged (it may hold internals) and becomes a bare
// 500.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e := clientError(err)
	if e == nil {
		Logger(r.Context()).Error("request failed", "error", err.Error())
		WriteJSON(w, http.StatusInternalServerError, map[string]any{"message": "Server error.", "status": http.StatusInternalServerError})
		return
	}
	if e.Code == CodeQuotaExceeded {
		if ri := info(r.Context()); ri != nil {
			ri.quotaRefused = true
		}
	}
	for k, vs := range e.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if e.Status == http.StatusUnprocessableEntity {
		WriteJSON(w, e.Status, map[string]any{"message": e.Fields, "errors": e.Fields, "status": e.Status})
		return
	}
	body := map[string]any{"message": e.Message, "status": e.Status}
	if e.Code != "" {
		body["code"] = e.Code
	}
	WriteJSON(w, e.Status, body)
}

// IfNoneMatch reports whether the request's If-None-Match names etag,
// or the tag of its gzip-encoded answer (weak comparison, as RFC 9110 has
// for If-None-Match): the client holds the current version, and gets 304.
func IfNoneMatch(r *http.Request, etag string) bool {
	return ifNoneMatchHolds(r, func(t string) bool { return t == "*" || IdentityTag(t) == etag })
}

// ifNoneMatchHolds reports whether any tag of the request's If-None-Match,
// its weakness set aside, satisfies match.
func ifNoneMatchHolds(r *http.Request, match func(tag string) bool) bool {
	header := r.Header.Get("If-None-Match")
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		if match(strings.TrimPrefix(strings.TrimSpace(t), "W/")) {
			return true
		}
	}
	return false
}
