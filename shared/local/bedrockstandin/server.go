// Package bedrockstandin is a local stand-in for Amazon Bedrock Runtime, not
// Bedrock and not a model. It speaks Bedrock Runtime's wire protocol on
// 127.0.0.1 (Converse: POST /model/{modelId}/converse; InvokeModel: POST
// /model/{modelId}/invoke, in the Nova Canvas and Stability AI image
// shapes) so that the real SDK client runs against it in tests and under
// `make run`; and of Bedrock's control plane, GetFoundationModel (GET
// /foundation-models/{modelIdentifier}), from a catalog of lifecycle
// statuses (List), for make preflight's tests, and the batch inference
// jobs (jobs.go: CreateModelInvocationJob, GetModelInvocationJob,
// StopModelInvocationJob, ListModelInvocationJobs), which read their input
// from S3, answer each record with the same model, write their output as
// Bedrock does and send its EventBridge events (ServeJobs). Its text is a deterministic draft that follows the template's
// brief and the prompt; its pictures are drawn from the prompt. Its errors
// are Bedrock's, header and body, so the SDK decodes them into the real
// exception types; tests inject them (Inject), and so can anyone through a
// marker in the prompt such as [standin:throttle]; [standin:japanese] asks
// for Japanese text that fills the token budget.
package bedrockstandin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Model ids for a local stack: the records it writes say where their
// content came from.
const (
	TextModel  = "local-standin.text"
	ImageModel = "local-standin.image"
)

// Fault is an error or a delay the stand-in answers with instead of its
// content.
type Fault int

// The faults, each as Bedrock sends it.
const (
	// Throttle is 429 ThrottlingException.
	Throttle Fault = iota + 1
	// BlockedInput is 400 ValidationException: the content filters blocked
	// the request.
	BlockedInput
	// BlockedOutput is the content filters blocking the result: Converse
	// stops with content_filtered, Nova Canvas answers 400
	// ValidationException, Stability AI a filter finish reason.
	BlockedOutput
	// ServerError is 500 InternalServerException.
	ServerError
	// Unavailable is 503 ServiceUnavailableException.
	Unavailable
	// NotReady is 429 ModelNotReadyException.
	NotReady
	// ModelTimeout is 408 ModelTimeoutException.
	ModelTimeout
	// AccessDenied is 403 AccessDeniedException (no model access granted).
	AccessDenied
	// Slow holds the answer until the caller gives up or SlowDelay passes,
	// then answers normally.
	Slow
)

// markers are the faults anyone can ask for in a prompt, for every call
// with that prompt.
var markers = map[string]Fault{
	"[standin:throttle]": Throttle,
	"[standin:filter]":   BlockedInput,
	"[standin:error]":    ServerError,
	"[standin:slow]":     Slow,
}

// Options configure a stand-in.
type Options struct {
	// Addr to listen on; default 127.0.0.1:0 (a free port).
	Addr string
	// SlowDelay is how long Slow holds an answer; default 30 s, longer
	// than a create waits by default, so that [standin:slow] shows a
	// create answering before its generation ends.
	SlowDelay time.Duration
}

// Server is a running stand-in.
type Server struct {
	url       string
	srv       *http.Server
	slowDelay time.Duration
	closeOnce sync.Once

	mu      sync.Mutex
	faults  []Fault
	catalog map[string]string // model id -> lifecycle status
	denied  map[string]bool   // model ids in access-denied mode
	calls   atomic.Int64
	asked   []Request
	rules   []rule
	ops     map[string]int // calls answered, by operation

	jobs     *Jobs     // nil until ServeJobs
	jobList  []*job    // in the order they were created
	jobAsked []Request // the records jobs answered
	lost     []string  // statuses whose job events are lost
	closed   chan struct{}
}

// Request is what a call asked of a model, as the stand-in read it: for a
// test to see what the service really tells the model.
type Request struct {
	Model string
	// System and Prompt are a Converse call's system prompt and user
	// message; Temperature and MaxTokens its inference settings.
	System, Prompt string
	Temperature    float64
	MaxTokens      int
	// Image is an image call's prompt, and Negative what it must not show.
	Image, Negative string
	// Embed is an embedding call's text, and Dimensions the vector's size
	// it asked for.
	Embed      string
	Dimensions int
}

// Requests are the calls the stand-in has read, in the order they came
// (faults included, requests it refused as malformed not).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

// Start serves a stand-in until Close.
func Start(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("bedrockstandin: %w", err)
	}
	s := New(opts)
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// New is a stand-in to serve with a server of one's own (httptest).
func New(opts Options) *Server {
	if opts.SlowDelay == 0 {
		opts.SlowDelay = 30 * time.Second
	}
	return &Server{
		slowDelay: opts.SlowDelay,
		catalog:   map[string]string{TextModel: Active, ImageModel: Active, EmbeddingModel: Active},
		denied:    map[string]bool{},
		ops:       map[string]int{},
		closed:    make(chan struct{}),
	}
}

// URL is the endpoint to give the SDK client (its BaseEndpoint).
func (s *Server) URL() string { return s.url }

// String is the stand-in as a startup banner names it.
func (s *Server) String() string {
	return "Bedrock Runtime stand-in (local, not a model) at " + s.url
}

// Close stops the server, and lets a held job go on to its end.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Inject queues faults: each of the next calls answers with the next fault
// instead of its content.
func (s *Server) Inject(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Calls is how many calls the stand-in has answered, faults included.
func (s *Server) Calls() int { return int(s.calls.Load()) }

// CallsOf is how many calls of one operation, by its name in Bedrock's API
// (Converse, InvokeModel, CreateModelInvocationJob, ...), the stand-in has
// answered, faults included.
func (s *Server) CallsOf(operation string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops[operation]
}

func (s *Server) count(operation string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops[operation]++
}

// InjectWhere makes every later call whose request matches answer with
// fault f instead of its content (a test's way to fail one of a
// document's variants, whose calls come at once).
func (s *Server) InjectWhere(match func(Request) bool, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, rule{match, f})
}

type rule struct {
	match func(Request) bool
	fault Fault
}

// next records the request and picks its fault: a rule's, a queued one,
// or its prompt's marker.
func (s *Server) next(r Request) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, r)
	if f := s.ruled(r); f != 0 {
		return f
	}
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		return f
	}
	return marked(r)
}

// ruleOrMarker is the fault a rule or the prompt's marker asks for r. The
// caller holds s.mu.
func (s *Server) ruleOrMarker(r Request) Fault {
	if f := s.ruled(r); f != 0 {
		return f
	}
	return marked(r)
}

// ruled is the fault of the first rule r matches. The caller holds s.mu.
func (s *Server) ruled(r Request) Fault {
	for _, rl := range s.rules {
		if rl.match(r) {
			return rl.fault
		}
	}
	return 0
}

// marked is the fault a marker in r's prompt asks for.
func marked(r Request) Fault {
	prompt := r.Prompt + r.Image + r.Embed
	for m, f := range markers {
		if strings.Contains(prompt, m) {
			return f
		}
	}
	return 0
}

// ServeHTTP answers Bedrock Runtime's two operations and the control
// plane's GetFoundationModel and batch inference jobs.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("standin-%d", s.calls.Load()))
	w.Header().Set("Server", "bedrock-standin")
	if s.serveJobs(w, r) {
		return
	}
	if escaped, ok := strings.CutPrefix(r.URL.EscapedPath(), "/foundation-models/"); ok && r.Method == http.MethodGet {
		if model, err := url.PathUnescape(escaped); err == nil && model != "" && !strings.Contains(model, "/") {
			s.count("GetFoundationModel")
			s.foundationModel(w, r, model)
			return
		}
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/model/")
	escaped, op, _ := strings.Cut(rest, "/")
	model, err := url.PathUnescape(escaped)
	if !ok || err != nil || model == "" || r.Method != http.MethodPost || (op != "converse" && op != "invoke") {
		sendError(w, http.StatusNotFound, "UnknownOperationException",
			"The stand-in serves POST /model/{modelId}/converse and /invoke, and GET /foundation-models/{modelIdentifier}.")
		return
	}
	if op == "converse" {
		s.count("Converse")
	} else {
		s.count("InvokeModel")
	}
	if s.deniedAccess(model) {
		s.fault(r.Context(), w, AccessDenied)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 25<<20))
	if err != nil {
		sendError(w, http.StatusBadRequest, "ValidationException", "The request body could not be read.")
		return
	}
	if op == "converse" {
		s.converse(r.Context(), w, model, body)
		return
	}
	s.invoke(r.Context(), w, model, body)
}

// fault answers a fault; it reports false when the call should go on
// (none, or Slow once its delay passed).
func (s *Server) fault(ctx context.Context, w http.ResponseWriter, f Fault) bool {
	if f == Slow {
		select {
		case <-ctx.Done():
			return true
		case <-time.After(s.slowDelay):
			return false
		}
	}
	e := f.answer()
	if e == nil {
		return false // none, or BlockedOutput, which each operation answers
	}
	sendError(w, e.status, e.code, e.message)
	return true
}

// apiError is an error as Bedrock answers it: an HTTP status, the
// exception's type and its message.
type apiError struct {
	status        int
	code, message string
}

// answer is the error Bedrock answers with for f, nil for a fault that is
// not an error.
func (f Fault) answer() *apiError {
	switch f {
	case Throttle:
		return &apiError{http.StatusTooManyRequests, "ThrottlingException", "Too many requests, please wait before trying again."}
	case BlockedInput:
		return &apiError{http.StatusBadRequest, "ValidationException", "This request has been blocked by our content filters."}
	case ServerError:
		return &apiError{http.StatusInternalServerError, "InternalServerException", "The server encountered an internal error while processing the request."}
	case Unavailable:
		return &apiError{http.StatusServiceUnavailable, "ServiceUnavailableException", "The service is unavailable. Try again later."}
	case NotReady:
		return &apiError{http.StatusTooManyRequests, "ModelNotReadyException", "The model is not ready to serve inference requests."}
	case ModelTimeout:
		return &apiError{http.StatusRequestTimeout, "ModelTimeoutException", "The request took too long to process."}
	case AccessDenied:
		return &apiError{http.StatusForbidden, "AccessDeniedException", "You don't have access to the model with the specified model ID."}
	}
	return nil
}

// sendError answers as Bedrock does: the error type in X-Amzn-ErrorType and
// a JSON message.
func sendError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", code+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func sendJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
