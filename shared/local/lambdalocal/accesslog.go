package lambdalocal

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// AccessLog is the HTTP API's access log as template.yaml's
// AccessLogSettings make it: one line per request, the format with each
// $context variable replaced by the request's value, and "-" where the
// request has none, as API Gateway writes them. The gateway writes it for
// make run, and the bench measures what a request's line weighs with it.
type AccessLog struct {
	parts []accessPart
	mu    sync.Mutex
	out   io.Writer
}

// accessPart is a piece of the format: text as it is, or a variable's
// value.
type accessPart struct {
	text  string
	value func(AccessEntry) string // nil for text
}

// AccessEntry is what the gateway knows of a request once it has
// answered.
type AccessEntry struct {
	RequestID, SourceIP, Method, Path string
	// RouteKey is the route matched ("GET /api/v1/images/{id}",
	// "$default"); empty when none was.
	RouteKey string
	Status   int
	// ResponseLength is the answer's body as sent, in bytes.
	ResponseLength int
	// Time is when the request came; Latency how long the gateway took to
	// answer it, Integration how long the function took (0 for a request
	// that reached none).
	Time                 time.Time
	Latency, Integration time.Duration
	// IntegrationError is why the function gave no usable answer ("" when
	// it did).
	IntegrationError string
}

// accessVariables are the $context variables the local gateway knows, by
// name, as API Gateway's "Customizing HTTP API access logs" lists them.
var accessVariables = map[string]func(AccessEntry) string{
	"requestId":               func(e AccessEntry) string { return e.RequestID },
	"requestTime":             func(e AccessEntry) string { return e.Time.UTC().Format("02/Jan/2006:15:04:05 -0700") },
	"requestTimeEpoch":        func(e AccessEntry) string { return strconv.FormatInt(e.Time.UnixMilli(), 10) },
	"identity.sourceIp":       func(e AccessEntry) string { return e.SourceIP },
	"httpMethod":              func(e AccessEntry) string { return e.Method },
	"path":                    func(e AccessEntry) string { return e.Path },
	"routeKey":                func(e AccessEntry) string { return e.RouteKey },
	"status":                  func(e AccessEntry) string { return strconv.Itoa(e.Status) },
	"responseLength":          func(e AccessEntry) string { return strconv.Itoa(e.ResponseLength) },
	"responseLatency":         func(e AccessEntry) string { return strconv.FormatInt(e.Latency.Milliseconds(), 10) },
	"integrationErrorMessage": func(e AccessEntry) string { return jsonText(e.IntegrationError) },
	"integrationLatency": func(e AccessEntry) string {
		if e.RouteKey == "" {
			return ""
		}
		return strconv.FormatInt(e.Integration.Milliseconds(), 10)
	},
}

var contextVariable = regexp.MustCompile(`\$context\.([A-Za-z0-9_.]*[A-Za-z0-9_])`)

// NewAccessLog writes lines of format to out. A variable it does not know
// is an error, so that a format it would write wrong is refused.
func NewAccessLog(format string, out io.Writer) (*AccessLog, error) {
	l := &AccessLog{out: out}
	at := 0
	for _, m := range contextVariable.FindAllStringSubmatchIndex(format, -1) {
		name := format[m[2]:m[3]]
		value, ok := accessVariables[name]
		if !ok {
			return nil, fmt.Errorf("lambdalocal: the access log's $context.%s is not one the local gateway knows", name)
		}
		l.parts = append(l.parts, accessPart{text: format[at:m[0]]}, accessPart{value: value})
		at = m[1]
	}
	l.parts = append(l.parts, accessPart{text: format[at:]})
	return l, nil
}

// Line is e's line, without its newline.
func (l *AccessLog) Line(e AccessEntry) []byte {
	var b []byte
	for _, p := range l.parts {
		if p.value == nil {
			b = append(b, p.text...)
			continue
		}
		v := p.value(e)
		if v == "" {
			v = "-"
		}
		b = append(b, v...)
	}
	return b
}

// Write writes e's line to the log's output.
func (l *AccessLog) Write(e AccessEntry) {
	line := append(l.Line(e), '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.out.Write(line)
}

// jsonText is s as it may stand between a JSON string's quotes: the
// message of an error may hold anything.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
