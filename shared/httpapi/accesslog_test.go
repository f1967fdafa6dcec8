package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"
)

// FuzzAccessLineAsSlog holds LogHandler's access line to the line slog's
// JSON handler writes for the same record: the same tokens in the same
// order, strings read back equal and numbers written alike. (The bytes may
// differ only in how a control character is escaped: \b where slog writes
// \u0008.)
func FuzzAccessLineAsSlog(f *testing.F) {
	f.Add(int64(1763740110123456789), "S5fUv8gcNFRJa0l=", "acct-1", "GET", "/api/v1/documents/12", 200, int64(1234))
	f.Add(int64(0), "", "", "DELETE", "/", 503, int64(0))
	f.Add(int64(-1), "id\"\\\n\t\b\f\x01", "\u2028\u2029\xff<&>", "PO\x00ST", "/a b/é/\xc3", 999, int64(1))
	f.Add(int64(253402300799999999), "x", "é", "GET", "/", 0, int64(99999999999))
	f.Fuzz(func(t *testing.T, nanos int64, id, account, method, path string, status int, micros int64) {
		if micros < 0 {
			micros = -micros // a latency, never negative
		}
		micros %= 1 << 53 // beyond it float64 loses the microseconds
		l := accessLine{time: time.Unix(0, nanos).UTC(), requestID: id, account: account,
			method: method, path: path, status: status, latencyMicros: micros}

		var ours, theirs bytes.Buffer
		NewLogHandler(&ours, nil).writeAccess(l)
		if err := slog.NewJSONHandler(&theirs, nil).Handle(context.Background(), l.record()); err != nil {
			t.Fatal(err)
		}
		if got, want := tokens(t, ours.Bytes()), tokens(t, theirs.Bytes()); !slices.Equal(got, want) {
			t.Fatalf("ours:\n%s\nslog's:\n%s", ours.Bytes(), theirs.Bytes())
		}
		if bytes.Count(ours.Bytes(), []byte("\n")) != 1 || !bytes.HasSuffix(ours.Bytes(), []byte("}\n")) {
			t.Fatalf("not one line: %q", ours.Bytes())
		}
	})
}

// tokens reads a JSON line as its sequence of tokens, strings decoded and
// numbers as written.
func tokens(t *testing.T, line []byte) []any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var out []any
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%v in %q", err, line)
		}
		out = append(out, tok)
	}
}

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
					h.writeAccess(accessLine{time: time.Now(), requestID: "r", method: "GET", path: "/p", status: 200, latencyMicros: int64(i)})
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
