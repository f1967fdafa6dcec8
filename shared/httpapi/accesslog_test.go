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
					ri.rec.status = 200
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

// TestLogHandlerLevel: above Info, the access line is not written, as
// slog's handler would not write it.
func TestLogHandlerLevel(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(NewLogHandler(&out, slog.LevelWarn))
	ri := &requestInfo{id: "r", base: logger}
	ri.rec.status = 200
	r, _ := http.NewRequest(http.MethodGet, "/x", nil)
	logAccess(context.Background(), logger, ri, r, time.Now())
	if out.Len() != 0 {
		t.Fatalf("written at Warn: %q", out.String())
	}
	logger = slog.New(NewLogHandler(&out, nil))
	logAccess(context.Background(), logger, ri, r, time.Now())
	var line struct{ Msg, Path, Request_ID string }
	if err := json.Unmarshal(out.Bytes(), &line); err != nil || line.Msg != "request" || line.Path != "/x" || line.Request_ID != "r" {
		t.Fatalf("%v: %q", err, out.String())
	}
}
