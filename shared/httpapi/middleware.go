package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"contentapi/shared/auth"
	"contentapi/shared/metrics"
)

// Authenticator checks an API key; auth.ErrUnauthenticated means 401, any
// other error is a failure of the key store.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (auth.Principal, error)
}

// Config is what the middleware needs from the application.
type Config struct {
	Auth Authenticator
	// Limiter, when set, is asked once per authenticated request.
	Limiter Limiter
	// Public reports requests served without a key (the OpenAPI document).
	Public func(*http.Request) bool
	// Classify turns infrastructure errors into client answers (503 for
	// throttling and timeouts); nil keeps them as they are (500).
	Classify func(error) error
	// Timeout bounds each request's work (its context deadline); 0 = none.
	Timeout time.Duration
	// TimeoutFor, when set, may give a request longer than Timeout: one
	// that waits for generation.
	TimeoutFor func(*http.Request) time.Duration
	// AllowOrigin is the CORS origin, "*" unless configured.
	AllowOrigin string
	Logger      *slog.Logger
	// Metrics counts the answers that failed or were refused, as
	// Function's (its folder under functions/); nil counts none.
	Metrics  *metrics.Emitter
	Function string
}

// Limiter meters requests per key. Allow reports the headers to send and
// an *Error (429) once the key is over its limit.
type Limiter interface {
	Allow(ctx context.Context, p auth.Principal) (http.Header, error)
}

// requestInfo is what the middleware knows of a request, kept in its
// context under one key: its id, and once authenticated, its caller.
type requestInfo struct {
	id   string
	base *slog.Logger
	// principal is set by authenticate, before any handler runs.
	principal     auth.Principal
	authenticated bool
	// rec is the response writer the access log reads the status from;
	// kept here to make one allocation of the two.
	rec statusRecorder
	// quotaRefused is set by WriteError for a monthly limit's 429, which
	// the metrics count apart from the rate limit's.
	quotaRefused bool

	mu sync.Mutex
	// logger is base with the request's id and account, made when first
	// asked for: most requests log only their access line.
	logger *slog.Logger
}

type requestInfoKey struct{}

func info(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return ri
}

// Logger returns the request's logger, carrying its request id and, once
// authenticated, its account.
func Logger(ctx context.Context) *slog.Logger {
	ri := info(ctx)
	if ri == nil {
		return slog.Default()
	}
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if ri.logger == nil {
		ri.logger = ri.base.With(ri.attrs()...)
	}
	return ri.logger
}

// attrs are what every log line of the request carries.
func (ri *requestInfo) attrs() []any {
	if ri.authenticated {
		return []any{slog.String("request_id", ri.id), slog.String("account", ri.principal.Account)}
	}
	return []any{slog.String("request_id", ri.id)}
}

// authenticate records the request's caller.
func (ri *requestInfo) authenticate(p auth.Principal) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	ri.principal, ri.authenticated = p, true
	ri.logger = nil // made again with the account
}

// RequestID returns the gateway's id of the request.
func RequestID(ctx context.Context) string {
	if ri := info(ctx); ri != nil {
		return ri.id
	}
	return ""
}

type principalKey struct{}

// PrincipalFrom returns the authenticated caller of the request.
func PrincipalFrom(ctx context.Context) (auth.Principal, bool) {
	if ri := info(ctx); ri != nil && ri.authenticated {
		return ri.principal, true
	}
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

// WithPrincipal attaches the caller to a request context, for tests of
// handlers that run without the middleware.
func WithPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// Wrap puts h behind the middleware every request passes: compression,
// request id and access log, panic recovery, CORS, authentication, scopes
// and rate limit.
func Wrap(h http.Handler, cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.AllowOrigin == "" {
		cfg.AllowOrigin = "*"
	}
	if cfg.Classify == nil {
		cfg.Classify = func(err error) error { return err }
	}
	return compress(observe(cfg, cors(cfg, authenticate(cfg, h))))
}

// statusRecorder remembers the status for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func observe(cfg Config, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &requestInfo{id: gatewayRequestID(r.Context()), base: cfg.Logger}
		ctx := context.WithValue(r.Context(), requestInfoKey{}, ri)
		timeout := cfg.Timeout
		if cfg.TimeoutFor != nil {
			timeout = max(timeout, cfg.TimeoutFor(r))
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, requestDeadline(ctx, timeout))
			defer cancel()
		}
		r = r.WithContext(ctx)
		w.Header()["X-Request-Id"] = []string{ri.id}
		ri.rec.ResponseWriter = w
		rec := &ri.rec
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				Logger(ctx).Error("panic", "panic", v)
				if rec.status == 0 {
					WriteError(rec, r, errors.New("panic"))
				}
			}
			logAccess(ctx, cfg.Logger, ri, r, start)
			cfg.Metrics.Answer(cfg.Function, rec.status, ri.quotaRefused)
		}()
		next.ServeHTTP(rec, r)
	})
}

// functionMargin is kept between a request's deadline and the function's
// own (the Lambda context's), to answer and log before Lambda stops us.
const functionMargin = time.Second

// requestDeadline is timeout from now, but never later than the function's
// deadline less functionMargin: a slow database is our JSON 503, never the
// platform's 500 for a function that ran out of time.
func requestDeadline(ctx context.Context, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	if fn, ok := ctx.Deadline(); ok && fn.Add(-functionMargin).Before(deadline) {
		deadline = fn.Add(-functionMargin)
	}
	return deadline
}

type gatewayRequestIDKey struct{}

// WithGatewayRequestID gives the middleware API Gateway's id of the
// request, to log and answer with (X-Request-Id). The Lambda entry point
// sets it on every request it makes, whether its own code or the
// adapter's core made the request.
func WithGatewayRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, gatewayRequestIDKey{}, id)
}

// gatewayRequestID is the gateway's id of the request, or a random one
// where there is none.
func gatewayRequestID(ctx context.Context) string {
	if id, _ := ctx.Value(gatewayRequestIDKey{}).(string); id != "" {
		return id
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Headers a browser client may read, and may send, across origins.
const (
	exposedHeaders = "X-Request-Id, ETag, Location, Link, Retry-After, Preference-Applied, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset"
	allowedHeaders = "Authorization, Content-Type, Accept, Idempotency-Key, If-Match, If-None-Match, Prefer"
	allowedMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
)

func cors(cfg Config, next http.Handler) http.Handler {
	// Every answer carries these; the values are shared by all of them, as
	// nothing edits a header's values in place (Set and Add replace or
	// copy them).
	allowOrigin, exposed := []string{cfg.AllowOrigin}, []string{exposedHeaders}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Access-Control-Allow-Origin"] = allowOrigin
		h["Access-Control-Expose-Headers"] = exposed
		if cfg.AllowOrigin != "*" {
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", allowedMethods)
			h.Set("Access-Control-Allow-Headers", allowedHeaders)
			h.Set("Access-Control-Max-Age", "86400")
			h.Set("Allow", allowedMethods)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func authenticate(cfg Config, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cfg.Public != nil && cfg.Public(r) {
			next.ServeHTTP(w, r)
			return
		}
		key, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			WriteError(w, r, Unauthenticated())
			return
		}
		p, err := cfg.Auth.Authenticate(r.Context(), key)
		if errors.Is(err, auth.ErrUnauthenticated) {
			WriteError(w, r, Unauthenticated())
			return
		}
		if err != nil {
			WriteError(w, r, cfg.Classify(err))
			return
		}
		ri := info(r.Context())
		if ri != nil {
			ri.authenticate(p)
		} else {
			r = r.WithContext(WithPrincipal(r.Context(), p))
		}
		if cfg.Limiter != nil {
			headers, err := cfg.Limiter.Allow(r.Context(), p)
			for k, vs := range headers {
				w.Header()[k] = vs
			}
			if err != nil {
				WriteError(w, r, cfg.Classify(err))
				return
			}
		}
		if needsWrite(r.Method) && !p.Allows(auth.ScopeWrite) {
			WriteError(w, r, Forbidden("This API key is read-only."))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func needsWrite(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// bearer extracts the token of an "Authorization: Bearer <token>" header;
// the scheme is case-insensitive as RFC 6750 says.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
