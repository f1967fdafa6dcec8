package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"contentapi/shared/records"
)

// The domain's errors, wrapped or not, become the contract's answers here
// and nowhere else; anything unknown is a 500 that shows nothing of it.
func TestWriteErrorMapsTheDomain(t *testing.T) {
	testCases := []struct {
		name       string
		err        error
		status     int
		retryAfter string
		body       string
	}{
		{"not found", records.ErrNotFound, 404, "", `{"message":"Resource not found.","status":404}`},
		{"not found, wrapped", fmt.Errorf("get image 7: %w", records.ErrNotFound), 404, "", `{"message":"Resource not found.","status":404}`},
		{"version mismatch", records.ErrVersionMismatch, 412, "", `{"message":"The resource has been changed since it was read.","status":412}`},
		{"conflict", records.ErrConflict, 409, "1", `{"message":"A conflicting request is still in progress.","status":409}`},
		{"unavailable", fmt.Errorf("%w: throttled", records.ErrUnavailable), 503, "1", `{"message":"Service temporarily unavailable, please retry.","status":503}`},
		{"invalid", &records.InvalidError{Fields: map[string][]string{"name": {"The name field is required."}}}, 422, "",
			`{"errors":{"name":["The name field is required."]},"message":{"name":["The name field is required."]},"status":422}`},
		{"an answer of our own", BadRequest("No."), 400, "", `{"message":"No.","status":400}`},
		{"anything else", errors.New("dynamodb: table contentapi-ImagesTable-XYZ is gone"), 500, "", `{"message":"Server error.","status":500}`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
			t.Cleanup(func() { slog.SetDefault(prev) })
			w := httptest.NewRecorder()
			WriteError(w, httptest.NewRequest("GET", "/", nil), tc.err)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if got := w.Header().Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if got := strings.TrimSpace(w.Body.String()); got != tc.body {
				t.Errorf("body %s, want %s", got, tc.body)
			}
			if tc.status == 500 && !strings.Contains(logs.String(), "ImagesTable") {
				t.Errorf("the 500's cause is not logged: %q", logs.String())
			}
			var v map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
				t.Errorf("body is not JSON: %v", err)
			}
		})
	}
}

// If-None-Match compares weakly and takes a list or "*" (RFC 9110).
func TestIfNoneMatch(t *testing.T) {
	testCases := []struct {
		header string
		want   bool
	}{
		{"", false},
		{`"7.3"`, true},
		{`W/"7.3"`, true},
		{`"7.2", "7.3"`, true},
		{`*`, true},
		{`"7.2"`, false},
		{`7.3`, false},
	}
	for _, tc := range testCases {
		t.Run(tc.header, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("If-None-Match", tc.header)
			if got := IfNoneMatch(r, `"7.3"`); got != tc.want {
				t.Errorf("IfNoneMatch = %v, want %v", got, tc.want)
			}
		})
	}
}
