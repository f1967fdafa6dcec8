// Package faultproxy stands between the service and DynamoDB Local and
// makes chosen calls fail the ways a real network and a real database do:
// refused or throttled before they reach the database, answered while the
// answer is lost on the way back, held while the client gives up and then
// applied late, or all of them stalled as if the database were paused. Tests
// use it to reproduce ambiguous outcomes deterministically; it counts and
// names every call it sees.
package faultproxy

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
	// Pass forwards the call and its answer.
	Pass Fault = iota
	// Fail answers DynamoDB's 500 InternalServerError; nothing is applied.
	Fail
	// Throttle answers ProvisionedThroughputExceededException; nothing is
	// applied.
	Throttle
	// Drop resets the connection before forwarding; nothing is applied.
	Drop
	// LoseAnswer forwards the call, which DynamoDB applies, then resets the
	// connection instead of answering.
	LoseAnswer
	// Hold keeps the call until the rule (or Up, for Down) releases it,
	// then forwards it: applied late, after its client may have given up.
	Hold
	// Hang keeps the call until its client gives up; it is never applied.
	Hang
)

var faultNames = [...]string{"pass", "fail", "throttle", "drop", "lose answer", "hold", "hang"}

func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "fault " + strconv.Itoa(int(f))
}

// Request is a call as the proxy saw it.
type Request struct {
	Op    string // DynamoDB operation, e.g. "PutItem"
	Table string
	Body  []byte
}

// Has reports whether the request's JSON body holds s, e.g. an attribute
// name such as `"next_id"`.
func (r Request) Has(s string) bool { return bytes.Contains(r.Body, []byte(s)) }

// Rule applies a fault to the calls it matches, a given number of times.
type Rule struct {
	match   func(Request) bool
	fault   Fault
	left    int
	held    chan Request
	release chan struct{}
	once    sync.Once
}

// Held delivers each call the rule holds, as it is held.
func (r *Rule) Held() <-chan Request { return r.held }

// Release lets the calls the rule holds (and will hold) through.
func (r *Rule) Release() { r.once.Do(func() { close(r.release) }) }

// Proxy is a running fault proxy.
type Proxy struct {
	*httptest.Server
	target string
	client *http.Client

	mu    sync.Mutex
	rules []*Rule
	down  Fault
	up    chan struct{} // closed by Up: releases what Down held
	calls []Request
	// inflight counts the calls taken and not yet done with; idle is
	// signalled when it drops to zero. Not a WaitGroup: calls keep coming
	// while a test waits (a stream function writing in the background),
	// and a WaitGroup must not be added to while it is waited on.
	inflight int
	idle     *sync.Cond
}

// New starts a proxy to target, a DynamoDB Local endpoint, on 127.0.0.1.
func New(target string) *Proxy {
	p := &Proxy{target: strings.TrimSuffix(target, "/"), client: &http.Client{}, up: make(chan struct{})}
	p.idle = sync.NewCond(&p.mu)
	close(p.up)
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// Close stops the proxy after the calls it is still holding have gone
// through.
func (p *Proxy) Close() {
	p.Reset()
	p.Wait()
	p.Server.Close()
}

// Reset drops every rule and ends Down: held calls go through now (applied
// late), hung ones are reset (never applied).
func (p *Proxy) Reset() {
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
func (p *Proxy) Wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.inflight > 0 {
		p.idle.Wait()
	}
}

func (p *Proxy) enter() {
	p.mu.Lock()
	p.inflight++
	p.mu.Unlock()
}

func (p *Proxy) leave() {
	p.mu.Lock()
	if p.inflight--; p.inflight == 0 {
		p.idle.Broadcast()
	}
	p.mu.Unlock()
}

// Inject adds a rule: the next times calls that match get fault.
func (p *Proxy) Inject(match func(Request) bool, fault Fault, times int) *Rule {
	r := &Rule{match: match, fault: fault, left: times, held: make(chan Request, 64), release: make(chan struct{})}
	p.mu.Lock()
	p.rules = append(p.rules, r)
	p.mu.Unlock()
	return r
}

// Down makes every call that no rule takes suffer fault until Up.
func (p *Proxy) Down(fault Fault) {
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
func (p *Proxy) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = Pass
	select {
	case <-p.up:
	default:
		close(p.up)
	}
}

// Calls returns every call seen so far, in arrival order.
func (p *Proxy) Calls() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.calls...)
}

// Op matches calls of a DynamoDB operation, optionally only those whose body
// holds every one of has.
func Op(op string, has ...string) func(Request) bool {
	return func(r Request) bool {
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

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.enter()
	defer p.leave()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := Request{Body: body}
	if _, op, ok := strings.Cut(r.Header.Get("X-Amz-Target"), "."); ok {
		req.Op = op
	}
	var named struct{ TableName string }
	_ = json.Unmarshal(body, &named)
	req.Table = named.TableName

	p.mu.Lock()
	p.calls = append(p.calls, req)
	fault, release := p.down, p.up
	var rule *Rule
	for _, candidate := range p.rules {
		if candidate.left > 0 && candidate.match(req) {
			candidate.left--
			rule, fault, release = candidate, candidate.fault, candidate.release
			break
		}
	}
	p.mu.Unlock()

	switch fault {
	case Fail:
		answer(w, http.StatusInternalServerError, "InternalServerError", "Internal server error")
	case Throttle:
		answer(w, http.StatusBadRequest, "ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded.")
	case Drop:
		reset(w)
	case Hang:
		select {
		case <-r.Context().Done():
		case <-release:
			reset(w)
		}
	case Hold:
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
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, body []byte, answerBack bool) {
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
