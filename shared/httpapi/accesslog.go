package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"contentapi/shared/codec"
)

// LogHandler is a function's log handler: slog's JSON handler for every
// line the code logs, and the one line every request logs, its access
// line, written here in that handler's format without the work slog does
// per record (a record of attributes, the latency through encoding/json,
// pooled state), which was about 3% of a cached get's time.
// FuzzAccessLineAsSlog holds the two to the same line.
type LogHandler struct {
	*slog.JSONHandler
	out *lineWriter
}

// NewLogHandler writes JSON lines to out, those below level left out (nil
// is Info, as for slog).
func NewLogHandler(out io.Writer, level slog.Leveler) *LogHandler {
	lw := &lineWriter{w: out}
	return &LogHandler{JSONHandler: slog.NewJSONHandler(lw, &slog.HandlerOptions{Level: level}), out: lw}
}

// Writer is the output the handler's lines go through, one Write a line:
// for other lines (metrics) that must not interleave with them.
func (h *LogHandler) Writer() io.Writer { return h.out }

// lineWriter is the output both kinds of line share, behind one lock, so
// a line is written whole whatever out is.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}

// accessLine is what a request's access line says. The query string is
// left out: search text is the client's data.
type accessLine struct {
	time          time.Time
	requestID     string
	account       string // "" before authentication: then not written
	method, path  string
	status        int
	latencyMicros int64
}

func newAccessLine(ri *requestInfo, r *http.Request, start, now time.Time) accessLine {
	l := accessLine{time: now, requestID: ri.id, method: r.Method, path: r.URL.Path,
		status: ri.rec.status, latencyMicros: now.Sub(start).Microseconds()}
	if ri.authenticated {
		l.account = ri.principal.Account
	}
	return l
}

// record is the line as a slog record, for a handler other than ours.
func (l accessLine) record() slog.Record {
	rec := slog.NewRecord(l.time, slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("request_id", l.requestID))
	if l.account != "" {
		rec.AddAttrs(slog.String("account", l.account))
	}
	rec.AddAttrs(slog.String("method", l.method), slog.String("path", l.path), slog.Int("status", l.status),
		slog.Float64("latency_ms", float64(l.latencyMicros)/1000))
	return rec
}

// append writes the line as slog's JSON handler writes record(): the same
// keys in the same order, strings escaped as JSON, the time in
// RFC 3339 with nanoseconds, the latency as encoding/json writes the float.
func (l accessLine) append(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = l.time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","request_id":`...)
	b = codec.AppendString(b, l.requestID)
	if l.account != "" {
		b = append(b, `,"account":`...)
		b = codec.AppendString(b, l.account)
	}
	b = append(b, `,"method":`...)
	b = codec.AppendString(b, l.method)
	b = append(b, `,"path":`...)
	b = codec.AppendString(b, l.path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"latency_ms":`...)
	// A whole number of microseconds in milliseconds: 0 or at least 1e-3,
	// and below 1e21, where encoding/json writes the shortest 'f' form.
	b = strconv.AppendFloat(b, float64(l.latencyMicros)/1000, 'f', -1, 64)
	return append(b, "}\n"...)
}

// writeAccess writes l as one line, built in one of the answers' buffers.
func (h *LogHandler) writeAccess(l accessLine) {
	bp := Buffer()
	*bp = l.append(*bp)
	_, _ = h.out.Write(*bp)
	Release(bp)
}

// logAccess writes the request's access line, through h's own path where
// h is a LogHandler.
func logAccess(ctx context.Context, logger *slog.Logger, ri *requestInfo, r *http.Request, start time.Time) {
	h := logger.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	line := newAccessLine(ri, r, start, time.Now())
	if lh, ok := h.(*LogHandler); ok {
		lh.writeAccess(line)
		return
	}
	_ = h.Handle(ctx, line.record())
}
