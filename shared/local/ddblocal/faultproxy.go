package ddblocal

// FaultProxy stands between the service and DynamoDB Local and makes chosen
// calls fail the ways a real network and a real database do: refused or
// throttled before they reach the database, answered while the answer is
// lost on the way back, held while the client gives up and then applied
// late, or all of them stalled as if the database were paused. Tests use it
// to reproduce ambiguous outcomes deterministically; it counts and names
// every call it sees.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// Fault is what happens to a call.
type Fault int

const (
	// PassCall forwards the call and its answer.
	PassCall Fault = iota
	// FailCall answers DynamoDB's 500 InternalServerError; nothing is applied.
	FailCall
	// ThrottleCall answers ProvisionedThroughputExceededException; nothing is
	// applied.
	ThrottleCall
	// DropCall resets the connection before forwarding; nothing is applied.
	DropCall
	// LoseAnswer forwards the call, which DynamoDB applies, then resets the
	// connection instead of answering.
	LoseAnswer
	// HoldCall keeps the call until the rule (or Up, for Down) releases it,
	// then forwards it: applied late, after its client may have given up.
	HoldCall
	// HangCall keeps the call until its client gives up; it is never applied.
	HangCall
	// RefuseCall answers ValidationException, as DynamoDB refuses a call it
	// finds malformed (a bug's, which no retry mends); nothing is applied.
	RefuseCall
)

var faultNames = [...]string{"pass", "fail", "throttle", "drop", "lose answer", "hold", "hang", "refuse"}

func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "fault " + strconv.Itoa(int(f))
}

// ProxiedCall is a call as the proxy saw it.
type ProxiedCall struct {
	Op    string // DynamoDB operation, e.g. "PutItem"
	Table string
	Body  []byte
}

// Has reports whether the request's JSON body holds s, e.g. an attribute
// name such as `"next_id"`.
func (r ProxiedCall) Has(s string) bool { return bytes.Contains(r.Body, []byte(s)) }

// FaultRule applies a fault to the calls it matches, a given number of times.
type FaultRule struct {
	match   func(ProxiedCall) bool
	fault   Fault
	left    int
	held    chan ProxiedCall
	release chan struct{}
	once    sync.Once
}

// Held delivers each call the rule holds, as it is held.
func (r *FaultRule) Held() <-chan ProxiedCall { return r.held }

// Release lets the calls the rule holds (and will hold) through.
func (r *FaultRule) Release() { r.once.Do(func() { close(r.release) }) }

// FaultProxy is a running fault proxy.
type FaultProxy struct {
	*httptest.Server
	target string
	client *http.Client

	mu    sync.Mutex
	rules []*FaultRule
	down  Fault
	up    chan struct{} // closed by Up: releases what Down held
	calls []ProxiedCall
	// inflight counts the calls taken and not yet done with; idle is
	// signalled when it drops to zero. Not a WaitGroup: calls keep coming
	// while a test waits (a stream function writing in the background),
	// and a WaitGroup must not be added to while it is waited on.
	inflight int
	idle     *sync.Cond
}

// NewFaultProxy starts a proxy to target, a DynamoDB Local endpoint, on 127.0.0.1.
func NewFaultProxy(target string) *FaultProxy {
	p := &FaultProxy{target: strings.TrimSuffix(target, "/"), client: &http.Client{}, up: make(chan struct{})}
	p.idle = sync.NewCond(&p.mu)
	close(p.up)
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// Close stops the proxy after the calls it is still holding have gone
// through.
func (p *FaultProxy) Close() {
	p.Reset()
	p.Wait()
	p.Server.Close()
}

// Reset drops every rule and ends Down: held calls go through now (applied
// late), hung ones are reset (never applied).
func (p *FaultProxy) Reset() {
	p.Up()
	p.mu.Lock()
	rules := p.rules
	p.rules = nil
	p.mu.Unlock()
	for _, r := range rules {
		r.Release()
	}
}

// Wait returns once every call the proxy has taken is done with: forwarded
// and answered, or failed.
func (p *FaultProxy) Wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.inflight > 0 {
		p.idle.Wait()
	}
}

func (p *FaultProxy) enter() {
	p.mu.Lock()
	p.inflight++
	p.mu.Unlock()
}

func (p *FaultProxy) leave() {
	p.mu.Lock()
	if p.inflight--; p.inflight == 0 {
		p.idle.Broadcast()
	}
	p.mu.Unlock()
}

// Inject adds a rule: the next times calls that match get fault.
func (p *FaultProxy) Inject(match func(ProxiedCall) bool, fault Fault, times int) *FaultRule {
	r := &FaultRule{match: match, fault: fault, left: times, held: make(chan ProxiedCall, 64), release: make(chan struct{})}
	p.mu.Lock()
	p.rules = append(p.rules, r)
	p.mu.Unlock()
	return r
}

// Down makes every call that no rule takes suffer fault until Up.
func (p *FaultProxy) Down(fault Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = fault
	select {
	case <-p.up:
		p.up = make(chan struct{})
	default:
	}
}

// Up ends Down; calls it held go through now.
func (p *FaultProxy) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = PassCall
	select {
	case <-p.up:
	default:
		close(p.up)
	}
}

// Calls returns every call seen so far, in arrival order.
func (p *FaultProxy) Calls() []ProxiedCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProxiedCall(nil), p.calls...)
}

// MatchOp matches calls of a DynamoDB operation, optionally only those whose body
// holds every one of has.
func MatchOp(op string, has ...string) func(ProxiedCall) bool {
	return func(r ProxiedCall) bool {
		if r.Op != op {
			return false
		}
		for _, s := range has {
			if !r.Has(s) {
				return false
			}
		}
		return true
	}
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.enter()
	defer p.leave()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := ProxiedCall{Body: body}
	if _, op, ok := strings.Cut(r.Header.Get("X-Amz-Target"), "."); ok {
		req.Op = op
	}
	var named struct{ TableName string }
	_ = json.Unmarshal(body, &named)
	req.Table = named.TableName

	p.mu.Lock()
	p.calls = append(p.calls, req)
	fault, release := p.down, p.up
	var rule *FaultRule
	for _, candidate := range p.rules {
		if candidate.left > 0 && candidate.match(req) {
			candidate.left--
			rule, fault, release = candidate, candidate.fault, candidate.release
			break
		}
	}
	p.mu.Unlock()

	switch fault {
	case FailCall:
		answer(w, http.StatusInternalServerError, "InternalServerError", "Internal server error")
	case ThrottleCall:
		answer(w, http.StatusBadRequest, "ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded.")
	case RefuseCall:
		answer(w, http.StatusBadRequest, "ValidationException", "One or more parameter values were invalid")
	case DropCall:
		reset(w)
	case HangCall:
		select {
		case <-r.Context().Done():
		case <-release:
			reset(w)
		}
	case HoldCall:
		if rule != nil {
			rule.held <- req
		}
		<-release
		p.forward(w, r, body, r.Context().Err() == nil)
	case LoseAnswer:
		p.forward(nil, r, body, false)
		reset(w)
	default:
		p.forward(w, r, body, true)
	}
}

// forward sends the call on and, if answer, returns DynamoDB's answer. It
// runs to the end even when the client has gone: the database applies what
// it was sent.
func (p *FaultProxy) forward(w http.ResponseWriter, r *http.Request, body []byte, answerBack bool) {
	out, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return
	}
	out.Header = r.Header.Clone()
	resp, err := p.client.Do(out)
	if err != nil {
		if answerBack {
			reset(w)
		}
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if !answerBack || w == nil {
		return
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(data)
}

func answer(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#`+code+`","message":"`+message+`"}`)
}

// reset closes the connection with a TCP reset, as a dead peer would.
func reset(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	conn.Close()
}
