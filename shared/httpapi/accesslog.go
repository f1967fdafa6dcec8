package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// LogHandler is a function's log handler: slog's JSON handler, for the
// lines the code logs and the access line every request logs, over an
// output that other lines (metrics) share without interleaving.
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

// lineWriter is the output every kind of line shares, behind one lock, so
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

// logAccess writes the request's line: at Info for an answer that failed
// or was refused (4xx, 5xx), at Debug for the others. In AWS the HTTP
// API's access log already has a line for every request; this one adds
// what only the function knows, the account and (in the lines logged
// before it) why the answer failed, where that is worth a line. The query
// string is left out: search text is the client's data.
func logAccess(ctx context.Context, logger *slog.Logger, ri *requestInfo, r *http.Request, start time.Time) {
	level := slog.LevelDebug
	if ri.rec.status >= http.StatusBadRequest {
		level = slog.LevelInfo
	}
	if !logger.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("request_id", ri.id))
	if ri.authenticated {
		attrs = append(attrs, slog.String("account", ri.principal.Account))
	}
	attrs = append(attrs, slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", ri.rec.status),
		slog.Float64("latency_ms", float64(time.Since(start).Microseconds())/1000))
	logger.LogAttrs(ctx, level, "request", attrs...)
}
