package bench

import (
	"bytes"
	"fmt"
	"net/url"
	"sync"
	"time"

	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
)

// LogWrite is what requests write to one log group: its class and how
// long it keeps lines, which price them, and the bytes of one request's
// lines (each line's text, as CloudWatch Logs takes it as an event).
type LogWrite struct {
	Group         string // the group's logical ID
	Class         string // sam.LogClassStandard or sam.LogClassInfrequentAccess
	RetentionDays int
	Bytes         float64
}

// ClientIP is the client address the access lines the bench measures
// carry: an IPv4 address of 13 characters (from the documentation range),
// as API Gateway logs a client's.
const ClientIP = "203.0.113.195"

// LogMeter measures what requests write to CloudWatch Logs as template.yaml
// deploys them: it is the functions' log output (app.Config.LogOutput) and
// keeps the lines they write; it knows how Lambda keeps them (the
// functions' LoggingConfig: which of their lines, which of its own), and
// writes the HTTP API's access line of a request as the local gateway
// writes it, in the template's format. Tracing is the template's tracing
// mode (Active or PassThrough), for the cost of traces.
type LogMeter struct {
	Tracing   string
	functions map[string]functionLogs // by logical ID
	access    *lambdalocal.AccessLog
	group     LogWrite // the access log's, without bytes
	router    *lambdalocal.Router

	mu    sync.Mutex
	lines []byte // written since the last mark
	// measured is what each named request wrote, as Request and Add
	// measured it.
	measured map[string][]LogWrite
}

// functionLogs is what reaches a function's group: its lines as Lambda's
// filter keeps them, and Lambda's own for each invocation.
type functionLogs struct {
	group    LogWrite
	keep     func([]byte) bool
	platform float64 // bytes of Lambda's lines per invocation
}

// NewLogMeter reads the functions' logging configuration, the access log
// and the tracing mode as a plain deploy of tmpl makes them.
func NewLogMeter(tmpl *sam.Template) (*LogMeter, error) {
	m := &LogMeter{functions: map[string]functionLogs{}, router: lambdalocal.NewRouter(tmpl.Routes()), measured: map[string][]LogWrite{}}
	for _, f := range tmpl.Functions() {
		l, err := f.Logging(tmpl)
		if err != nil {
			return nil, err
		}
		fl := functionLogs{group: LogWrite{Group: l.Group.LogicalID, Class: l.Group.Class, RetentionDays: l.Group.RetentionDays},
			keep: func([]byte) bool { return true }}
		if l.Format == lambdalocal.LogFormatJSON {
			if fl.keep, err = lambdalocal.ApplicationLogFilter(l.ApplicationLevel); err != nil {
				return nil, fmt.Errorf("bench: %s: %w", f.LogicalID, err)
			}
		}
		platform, err := platformBytes(l.Format, l.SystemLevel)
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", f.LogicalID, err)
		}
		fl.platform = float64(platform)
		m.functions[f.LogicalID] = fl
	}
	a, err := tmpl.HTTPAPIAccessLog()
	if err != nil {
		return nil, err
	}
	if m.access, err = lambdalocal.NewAccessLog(a.Format, nil); err != nil {
		return nil, err
	}
	m.group = LogWrite{Group: a.Group.LogicalID, Class: a.Group.Class, RetentionDays: a.Group.RetentionDays}
	tracing, _ := tmpl.ResolveParameters(tmpl.Globals["Function"]["Tracing"]).(string)
	m.Tracing = tracing
	return m, nil
}

// Write takes the functions' lines.
func (m *LogMeter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lines = append(m.lines, p...)
	return len(p), nil
}

// Mark forgets the lines written so far: what is written after it is the
// next request's.
func (m *LogMeter) Mark() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lines = m.lines[:0]
}

// Invocation is what one invocation of function wrote to its group since
// the last mark (which it moves to now): the lines Lambda keeps of those
// written meanwhile, and Lambda's own lines for an invocation.
func (m *LogMeter) Invocation(function string) (LogWrite, error) {
	fl, ok := m.functions[function]
	if !ok {
		return LogWrite{}, fmt.Errorf("bench: no function %s in the template", function)
	}
	m.mu.Lock()
	lines := bytes.Split(bytes.TrimSuffix(m.lines, []byte("\n")), []byte("\n"))
	m.lines = m.lines[:0]
	m.mu.Unlock()
	w := fl.group
	w.Bytes = fl.platform
	for _, l := range lines {
		if len(l) > 0 && fl.keep(l) {
			w.Bytes += float64(len(l))
		}
	}
	return w, nil
}

// Request is what the request name, for target (a path with its query),
// that got a in took, wrote since the last mark: its function's invocation
// (as Invocation) and the HTTP API's access line. It is kept as name's.
func (m *LogMeter) Request(name, method, target string, a Answer, took time.Duration) ([]LogWrite, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	route, ok := m.router.Match(method, u.EscapedPath())
	if !ok {
		return nil, fmt.Errorf("bench: no route of the template takes %s %s", method, u.EscapedPath())
	}
	fn, err := m.Invocation(route.Route.Function)
	if err != nil {
		return nil, err
	}
	line := m.access.Line(lambdalocal.AccessEntry{RequestID: a.Header.Get("X-Request-Id"), SourceIP: ClientIP,
		Method: method, Path: u.EscapedPath(), RouteKey: route.Route.Key(), Status: a.Status,
		ResponseLength: a.Wire, Time: time.Now(), Latency: took, Integration: took})
	access := m.group
	access.Bytes = float64(len(line))
	m.Add(name, fn, access)
	return m.Measured(name), nil
}

// Add adds writes to what name wrote: another function's invocation for it
// (a delete's tally).
func (m *LogMeter) Add(name string, writes ...LogWrite) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.measured[name] = append(m.measured[name], writes...)
}

// Measured is what name wrote, as Request and Add measured it; nil if
// nothing was.
func (m *LogMeter) Measured(name string) []LogWrite {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]LogWrite(nil), m.measured[name]...)
}

// LogBytes is the bytes of writes, in all groups.
func LogBytes(writes []LogWrite) float64 {
	var n float64
	for _, w := range writes {
		n += w.Bytes
	}
	return n
}
