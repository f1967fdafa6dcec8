// The gateway is the local stack's API Gateway HTTP API: an HTTP
// request becomes the payload 2.0 event API Gateway would send, routed by
// template.yaml's routes to a function's entry point in process, and the
// function's response goes back as API Gateway writes it.
//
// It answers only requests for its own address (127.0.0.1:<port>, or
// localhost:<port>): another Host is 403, so a web page that points its own
// name at the loopback address reaches nothing, and the functions build
// Location and links from that address, never from the client's Host. Like
// HTTP API it caps the request line and header values at 10,240 bytes
// together (431), takes bodies up to 10 MB, and refuses a function's
// response past Lambda's 6 MB with API Gateway's bare 500. Its access log
// is the template's (AccessLog): a line per request in the format the
// HTTP API's AccessLogSettings give, with its path, never its query string.

package lambdalocal

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/app"
	"contentapi/shared/httpapi"
	"contentapi/shared/local/sam"
)

// MaxBodyBytes is HTTP API's payload limit: a larger request body never
// reaches the function.
const MaxBodyBytes = 10 << 20

// MaxHeaderBytes is HTTP API's limit on the request line and the header
// values together: a 1 MB query string never reaches the function. A
// server of the gateway sets it as http.Server.MaxHeaderBytes too, so that
// no more is read.
const MaxHeaderBytes = 10_240

// Gateway is a local stand-in for API Gateway HTTP API with a $default
// stage: it turns each HTTP request into the payload 2.0 event API Gateway
// would send, calls the routed function's Lambda entry point in process,
// and writes the function's response back the way API Gateway would.
type Gateway struct {
	Router    *Router
	Functions map[string]app.APIEntry  // by logical ID
	Timeouts  map[string]time.Duration // by logical ID; a missing one means no limit
	Log       *slog.Logger             // function failures
	AccessLog *AccessLog               // a line per request; nil writes none
	Now       func() time.Time         // the request time; tests fix it
	RequestID func() string            // tests fix it
	Account   string                   // requestContext.accountId
	APIID     string                   // requestContext.apiId
	// Host is the address the gateway listens on (127.0.0.1:8080), which
	// the functions see as the request's host and build URLs (Location,
	// links) from. A request for another host is 403, so a web page that
	// rebinds its own name to the loopback address reaches nothing. Empty
	// takes any host, as it comes.
	Host string
}

// NewGateway builds a gateway for the template's routes, calling fns (by
// function logical ID) under the template's function timeouts, its access
// log written to access in the template's format.
func NewGateway(tmpl *sam.Template, fns map[string]app.APIEntry, log *slog.Logger, access io.Writer) (*Gateway, error) {
	settings, err := tmpl.HTTPAPIAccessLog()
	if err != nil {
		return nil, err
	}
	accessLog, err := NewAccessLog(settings.Format, access)
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		AccessLog: accessLog,
		Router:    NewRouter(tmpl.Routes()),
		Functions: fns,
		Timeouts:  map[string]time.Duration{},
		Log:       log,
		Now:       time.Now,
		RequestID: NewRequestID,
		// What `sam local` uses; nothing reads it, but a real event has one.
		Account: "123456789012",
		APIID:   "local",
	}
	for _, f := range tmpl.Functions() {
		g.Timeouts[f.LogicalID] = f.Timeout()
	}
	for _, r := range tmpl.Routes() {
		if fns[r.Function] == nil {
			return nil, fmt.Errorf("route %s goes to %s, which has no entry point here", r.Key(), r.Function)
		}
	}
	return g, nil
}

// NewRequestID makes an id shaped like HTTP API's ("LV7fzho-PHcEJPw="):
// 16 characters of URL-safe base64.
func NewRequestID() string {
	var b [11]byte
	_, _ = rand.Read(b[:]) // never fails, by its documentation
	return base64.URLEncoding.EncodeToString(b[:])
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := AccessEntry{RequestID: g.RequestID(), Time: g.Now(), Method: r.Method,
		// The path only: a query string holds search terms, and in a log
		// they outlive the request.
		Path: r.URL.EscapedPath(), SourceIP: r.RemoteAddr}
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		e.SourceIP = h
	}
	start := time.Now()
	cw := &countingWriter{ResponseWriter: w}
	g.serve(cw, r, &e)
	e.Latency, e.ResponseLength = time.Since(start), cw.n
	if g.AccessLog != nil {
		g.AccessLog.Write(e)
	}
}

// countingWriter counts the body bytes sent, for the access log.
type countingWriter struct {
	http.ResponseWriter
	n int
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += n
	return n, err
}

// serve answers one request and records in e what the access log says of
// it: the status, the route, and the function's part.
func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, e *AccessEntry) {
	requestID := e.RequestID
	if g.Host != "" {
		if !g.servesHost(r.Host) {
			e.Status = serviceError(w, requestID, http.StatusForbidden, "The local gateway answers only requests for its own address.")
			return
		}
		r.Host = g.Host
	}
	if headerBytes(r) > MaxHeaderBytes {
		e.Status = serviceError(w, requestID, http.StatusRequestHeaderFieldsTooLarge,
			fmt.Sprintf("The request line and header values are over %d bytes together.", MaxHeaderBytes))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		e.Status = gatewayError(w, requestID, http.StatusBadRequest, "Bad Request")
		return
	}
	if len(body) > MaxBodyBytes {
		e.Status = gatewayError(w, requestID, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	m, ok := g.Router.Match(r.Method, r.URL.EscapedPath())
	if !ok {
		e.Status = gatewayError(w, requestID, http.StatusNotFound, "Not Found")
		return
	}
	e.RouteKey = m.Route.Key()
	ev := g.Event(r, body, m, requestID)
	called := time.Now()
	resp, err := g.call(r.Context(), m.Route.Function, ev)
	e.Integration = time.Since(called)
	if err == nil {
		err = checkResponseSize(resp)
	}
	if err == nil {
		err = writeResponse(w, resp, requestID)
	}
	if err != nil {
		// What API Gateway answers for a function error, a timeout or a
		// response it cannot use; the details are in the function's logs.
		g.Log.Error("function failed", "function", m.Route.Function, "requestId", requestID, "error", err.Error())
		e.IntegrationError = err.Error()
		e.Status = gatewayError(w, requestID, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	e.Status = resp.StatusCode
}

// servesHost reports whether a request for host is the gateway's: its
// address, or localhost on its port.
func (g *Gateway) servesHost(host string) bool {
	_, port, _ := net.SplitHostPort(g.Host)
	return strings.EqualFold(host, g.Host) || strings.EqualFold(host, net.JoinHostPort("localhost", port))
}

// headerBytes is what HTTP API counts against MaxHeaderBytes: the request
// line and the header values.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 2
	for _, values := range r.Header {
		for _, v := range values {
			n += len(v)
		}
	}
	return n
}

// call runs a function the way Lambda does: under its timeout, with a panic
// turned into an invocation error.
func (g *Gateway) call(ctx context.Context, function string, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	fn := g.Functions[function]
	// The client going away does not stop a Lambda invocation either.
	ctx = context.WithoutCancel(ctx)
	timeout := g.Timeouts[function]
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	type result struct {
		resp events.APIGatewayV2HTTPResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		resp, err := fn(ctx, ev)
		done <- result{resp, err}
	}()
	select {
	case res := <-done:
		return res.resp, res.err
	case <-ctx.Done():
		// Lambda would freeze the sandbox here; the goroutine finishes on
		// its own once it notices its context.
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("task timed out after %s", timeout)
	}
}

// Event builds the payload 2.0 event for r, as HTTP API does.
func (g *Gateway) Event(r *http.Request, body []byte, m Match, requestID string) events.APIGatewayV2HTTPRequest {
	now := g.Now().UTC()
	host := r.Host
	headers := map[string]string{"host": host}
	var cookies []string
	// Sorted so repeated headers join in a stable order per name; net/http
	// keeps each name's values in arrival order.
	names := make([]string, 0, len(r.Header))
	for name := range r.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		values := r.Header[name]
		lower := strings.ToLower(name)
		if lower == "cookie" {
			// 2.0 moves cookies out of the headers into their own list.
			for _, v := range values {
				for _, c := range strings.Split(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[lower] = strings.Join(values, ",")
	}
	if _, ok := headers["content-length"]; !ok && len(body) > 0 {
		// A chunked request has none; API Gateway has read the whole body
		// and always passes its length.
		headers["content-length"] = strconv.Itoa(len(body))
	}
	// What HTTP API adds in front of any integration.
	clientIP := r.RemoteAddr
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		clientIP = h
	}
	_, port, _ := net.SplitHostPort(host)
	if port == "" {
		port = "80"
	}
	if prior, ok := headers["x-forwarded-for"]; ok {
		headers["x-forwarded-for"] = prior + ", " + clientIP
	} else {
		headers["x-forwarded-for"] = clientIP
	}
	headers["x-forwarded-port"] = port
	headers["x-forwarded-proto"] = "http"
	headers["x-amzn-trace-id"] = traceID(now)

	var query map[string]string
	if r.URL.RawQuery != "" {
		values, _ := url.ParseQuery(r.URL.RawQuery) // HTTP API passes the well-formed pairs
		query = make(map[string]string, len(values))
		for k, v := range values {
			query[k] = strings.Join(v, ",")
		}
	}

	domainPrefix, _, _ := strings.Cut(stripPort(host), ".")
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              m.Route.Key(),
		RawPath:               r.URL.EscapedPath(),
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        m.PathParams,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     m.Route.Key(),
			AccountID:    g.Account,
			Stage:        "$default",
			RequestID:    requestID,
			APIID:        g.APIID,
			DomainName:   host,
			DomainPrefix: domainPrefix,
			Time:         now.Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.EscapedPath(),
				Protocol:  r.Proto,
				SourceIP:  clientIP,
				UserAgent: r.UserAgent(),
			},
		},
	}
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type")) {
			ev.Body = string(body)
		} else {
			// HTTP API base64-encodes every other body, forms included
			// (`sam local` does not, and the app must take both).
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	return ev
}

// isText reports whether HTTP API passes a body of this content type as it
// is: text/* and JSON.
func isText(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func stripPort(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

// traceID is an X-Ray trace id as API Gateway adds it, so code that logs or
// parses it sees the real shape.
func traceID(now time.Time) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("Root=1-%08x-%x", now.Unix(), b)
}

// checkResponseSize refuses a response past Lambda's limit, measured as
// the Go runtime sends it: the event as JSON, HTML escaping off (the
// runtime's default), the body escaped inside it. Lambda fails such an
// invocation, and API Gateway answers its 500.
func checkResponseSize(resp events.APIGatewayV2HTTPResponse) error {
	var size byteCounter
	enc := json.NewEncoder(&size)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp); err != nil {
		return fmt.Errorf("function returned a response that does not serialise: %w", err)
	}
	if size > httpapi.MaxLambdaResponseBytes {
		return fmt.Errorf("function returned a response of %d bytes, over Lambda's %d", size, httpapi.MaxLambdaResponseBytes)
	}
	return nil
}

// byteCounter is a writer that only counts.
type byteCounter int

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}

// writeResponse writes a payload 2.0 response as API Gateway does. Like HTTP
// API, it ignores multiValueHeaders, which is not part of format 2.0. A
// response API Gateway could not use is an error, before anything is
// written.
func writeResponse(w http.ResponseWriter, resp events.APIGatewayV2HTTPResponse, requestID string) error {
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return fmt.Errorf("function returned status code %d", resp.StatusCode)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return fmt.Errorf("function returned a body that is not base64: %w", err)
		}
	}
	h := w.Header()
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for _, c := range resp.Cookies {
		h.Add("Set-Cookie", c)
	}
	h.Set("Apigw-Requestid", requestID)
	if h.Get("Content-Type") == "" {
		// net/http would sniff one; API Gateway does not invent a type,
		// and the app is expected to always send its own.
		h["Content-Type"] = nil
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(resp.StatusCode)
	// A failed write means the client left; the status is out, and there
	// is no one left to tell.
	_, _ = w.Write(body)
	return nil
}

// gatewayError answers the way API Gateway does when it, not the function,
// fails a request: a short JSON message, {"message"} alone.
func gatewayError(w http.ResponseWriter, requestID string, status int, message string) int {
	return writeError(w, requestID, status, map[string]any{"message": message})
}

// serviceError answers a refusal of the local gateway's own, which a
// client meets as the service's (its Host checked, its header cap), with
// the error body every answer of the service has: {"message", "status"}.
func serviceError(w http.ResponseWriter, requestID string, status int, message string) int {
	return writeError(w, requestID, status, map[string]any{"message": message, "status": status})
}

func writeError(w http.ResponseWriter, requestID string, status int, body map[string]any) int {
	b, _ := json.Marshal(body) // strings and ints always encode
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Apigw-Requestid", requestID)
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return status
}
