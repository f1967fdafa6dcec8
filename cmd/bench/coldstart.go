package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// runtimeAPI stands in for the Lambda Runtime API (2018-06-01): it hands
// one event to the bootstrap and takes its response. A second "next" waits
// until the bootstrap is killed, as a frozen sandbox would.
type runtimeAPI struct {
	srv  *http.Server
	addr string

	mu        sync.Mutex
	requestID string
	event     []byte
	delivered bool
	nextAt    time.Time // when the bootstrap first asked for an event
	answers   chan runtimeAnswer
}

type runtimeAnswer struct {
	at   time.Time
	body []byte
	err  string // set when the bootstrap reported an error
}

const runtimePrefix = "/2018-06-01/runtime/"

func startRuntimeAPI() (*runtimeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rt := &runtimeAPI{addr: ln.Addr().String(), answers: make(chan runtimeAnswer, 4)}
	rt.srv = &http.Server{Handler: http.HandlerFunc(rt.serve)}
	go rt.srv.Serve(ln)
	return rt, nil
}

func (rt *runtimeAPI) close() { rt.srv.Close() }

// arm sets the event the next bootstrap receives.
func (rt *runtimeAPI) arm(requestID string, event []byte) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.requestID, rt.event, rt.delivered = requestID, event, false
	for len(rt.answers) > 0 {
		<-rt.answers
	}
}

func (rt *runtimeAPI) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, runtimePrefix)
	switch {
	case r.Method == http.MethodGet && path == "invocation/next":
		rt.mu.Lock()
		if rt.delivered {
			rt.mu.Unlock()
			<-r.Context().Done()
			return
		}
		rt.delivered = true
		rt.nextAt = time.Now()
		id, ev := rt.requestID, rt.event
		rt.mu.Unlock()
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(10*time.Second).UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:contentapi-DocumentsFunction")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-6920a8ce-4b1c0e3b7d2a9f6e1c8b5a40;Parent=53995c3f42cd8ad8;Sampled=0")
		h.Set("Content-Type", "application/json")
		_, _ = w.Write(ev)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/response"):
		at := time.Now()
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		rt.answers <- runtimeAnswer{at: at, body: body}
	case r.Method == http.MethodPost && (strings.HasSuffix(path, "/error") || path == "init/error"):
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		rt.answers <- runtimeAnswer{at: time.Now(), err: string(body)}
	default:
		http.NotFound(w, r)
	}
}

// gatewayEvent is the payload 2.0 event of a GET with a bearer key.
func gatewayEvent(path, routeKey, key string) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{
		"accept":            "application/json",
		"authorization":     "Bearer " + key,
		"host":              "r3pmxmplak.execute-api.us-east-1.amazonaws.com",
		"user-agent":        "curl/8.5.0",
		"x-amzn-trace-id":   "Root=1-6920a8ce-4b1c0e3b7d2a9f6e1c8b5a40",
		"x-forwarded-for":   "203.0.113.7",
		"x-forwarded-port":  "443",
		"x-forwarded-proto": "https",
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey, RawPath: path, Headers: headers,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			AccountID: "123456789012", APIID: "r3pmxmplak",
			DomainName: "r3pmxmplak.execute-api.us-east-1.amazonaws.com", DomainPrefix: "r3pmxmplak",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: "GET", Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: "curl/8.5.0",
			},
			RequestID: "S5fUv8gcNFRJa0l=", RouteKey: routeKey, Stage: "$default",
			Time: time.Now().UTC().Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: time.Now().UnixMilli(),
		},
	}
	if strings.HasSuffix(routeKey, "{id}") {
		ev.PathParameters = map[string]string{"id": path[strings.LastIndex(path, "/")+1:]}
	}
	return ev
}

// coldStart is one fresh process's times from exec.
type coldStart struct {
	init  time.Duration // to its first request for an event: runtime, package init, main
	total time.Duration // to its response
}

// coldStarts execs the bootstrap runs times, each a fresh process given one
// event, and returns the time from exec to the response reaching the
// runtime API. want must be in the response body.
func coldStarts(ctx context.Context, bootstrap string, env []string, ev events.APIGatewayV2HTTPRequest, want string, runs int) ([]coldStart, error) {
	rt, err := startRuntimeAPI()
	if err != nil {
		return nil, err
	}
	defer rt.close()
	event, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	env = append(slices.Clone(env), "AWS_LAMBDA_RUNTIME_API="+rt.addr)
	var times []coldStart
	for i := range runs {
		rt.arm(fmt.Sprintf("c0ld5tart-%04d-4b1c-8e3b-7d2a9f6e1c8b", i), event)
		cmd := exec.Command(bootstrap)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		var answer runtimeAnswer
		select {
		case answer = <-rt.answers:
		case <-time.After(15 * time.Second):
			answer.err = "no response within 15s"
		case <-ctx.Done():
			answer.err = ctx.Err().Error()
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if answer.err != "" {
			return nil, fmt.Errorf("cold start %d: %s\n%s", i+1, answer.err, tailOf(out.String(), 2000))
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(answer.body, &resp); err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(resp.Body, want) {
			return nil, errors.New("cold start: unexpected response: " + tailOf(string(answer.body), 500))
		}
		rt.mu.Lock()
		init := rt.nextAt.Sub(start)
		rt.mu.Unlock()
		times = append(times, coldStart{init: init, total: answer.at.Sub(start)})
	}
	return times, nil
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
