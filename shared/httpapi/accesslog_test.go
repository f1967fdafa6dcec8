package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestLogHandlerSharesItsLines: the access lines and the lines code logs
// through the same handler come out whole, one per line, however many
// goroutines write at once.
func TestLogHandlerSharesItsLines(t *testing.T) {
	var out bytes.Buffer
	h := NewLogHandler(&out, slog.LevelInfo)
	logger := slog.New(h)
	const writers, lines = 4, 200
	done := make(chan struct{})
	for w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range lines {
				if w%2 == 0 {
					ri := &requestInfo{id: "r", base: logger}
					ri.rec.status = 500
					r, _ := http.NewRequest(http.MethodGet, "/p", nil)
					logAccess(context.Background(), logger, ri, r, time.Now())
				} else {
					logger.Info("other", "i", i)
				}
			}
		}()
	}
	for range writers {
		<-done
	}
	got := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for _, line := range got {
		if !json.Valid(line) {
			t.Fatalf("a line is not JSON: %q", line)
		}
	}
}

// TestLogHandlerLevel: an answer that succeeds has its line at Debug, one
// that failed or was refused at Info, and the handler's level leaves out
// what is below it, as slog's handler would.
func TestLogHandlerLevel(t *testing.T) {
	for _, tc := range []struct {
		level  slog.Level
		status int
		want   string // the line's level, "" for none
	}{
		{slog.LevelInfo, 200, ""},
		{slog.LevelInfo, 304, ""},
		{slog.LevelInfo, 404, "INFO"},
		{slog.LevelInfo, 503, "INFO"},
		{slog.LevelDebug, 200, "DEBUG"},
		{slog.LevelWarn, 500, ""},
	} {
		var out bytes.Buffer
		logger := slog.New(NewLogHandler(&out, tc.level))
		ri := &requestInfo{id: "r", base: logger}
		ri.rec.status = tc.status
		r, _ := http.NewRequest(http.MethodGet, "/x", nil)
		logAccess(context.Background(), logger, ri, r, time.Now())
		if tc.want == "" {
			if out.Len() != 0 {
				t.Errorf("%d at %v: written %q", tc.status, tc.level, out.String())
			}
			continue
		}
		var line struct{ Level, Msg, Path, Request_ID string }
		if err := json.Unmarshal(out.Bytes(), &line); err != nil || line.Level != tc.want || line.Msg != "request" || line.Path != "/x" || line.Request_ID != "r" {
			t.Errorf("%d at %v: %v: %q, want a request line at %s", tc.status, tc.level, err, out.String(), tc.want)
		}
	}
}
