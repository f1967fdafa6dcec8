package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
)

// ContentType is the only type this API answers with.
const ContentType = "application/json; charset=utf-8"

// WriteJSON writes v as the response body with the given status. The Lambda
// adapter needs an explicit Content-Type, so it is always set here.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only our own types are encoded here; a failure is a bug, and the
		// client still gets a well-formed 500.
		slog.Error("encode response", "error", err.Error())
		buf.Reset()
		status = http.StatusInternalServerError
		buf.WriteString(`{"message":"Server error.","status":500}` + "\n")
	}
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

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
	for k, vs := range e.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if e.Status == http.StatusUnprocessableEntity {
		WriteJSON(w, e.Status, map[string]any{"message": e.Fields, "errors": e.Fields, "status": e.Status})
		return
	}
	WriteJSON(w, e.Status, map[string]any{"message": e.Message, "status": e.Status})
}

// IfNoneMatch reports whether the request's If-None-Match names etag (weak
// comparison, as RFC 9110 has for If-None-Match): the client holds the
// current version, and gets 304.
func IfNoneMatch(r *http.Request, etag string) bool {
	header := r.Header.Get("If-None-Match")
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
