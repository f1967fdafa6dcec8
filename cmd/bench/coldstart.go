package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/local/sam"
)

// runtimeAPI stands in for the Lambda Runtime API (2018-06-01): it hands
// one event to the bootstrap and takes its response. A second "next" waits
// until the bootstrap is killed, as a frozen sandbox would.
type runtimeAPI struct {
	srv       *httptest.Server
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

// documentEvent is events/documents-get.json, the payload 2.0 event of
// GET /api/v1/documents/{id}, asking for document id with key.
func documentEvent(id int64, key string) ([]byte, error) {
	path, err := sam.Find()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "events", "documents-get.json"))
	if err != nil {
		return nil, err
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, err
	}
	ev.Headers["authorization"] = "Bearer " + key
	ev.PathParameters["id"] = strconv.FormatInt(id, 10)
	ev.RawPath = "/api/v1/documents/" + ev.PathParameters["id"]
	ev.RequestContext.HTTP.Path = ev.RawPath
	ev.RequestContext.TimeEpoch = time.Now().UnixMilli()
	return json.Marshal(ev)
}

// coldStart is one fresh process's times from exec.
type coldStart struct {
	Init  time.Duration // to its first request for an event: runtime, package init, main
	Total time.Duration // to its response
}

// coldStarts execs the bootstrap runs times, each a fresh process asked
// for document id with key, and returns the times from exec to the
// response reaching the runtime API.
func coldStarts(ctx context.Context, bootstrap string, env []string, id int64, key string, runs int) ([]coldStart, error) {
	rt := &runtimeAPI{answers: make(chan runtimeAnswer, 4)}
	rt.srv = httptest.NewServer(http.HandlerFunc(rt.serve))
	defer rt.srv.Close()
	event, err := documentEvent(id, key)
	if err != nil {
		return nil, err
	}
	want := `"id":` + strconv.FormatInt(id, 10)
	env = append(slices.Clone(env), "AWS_LAMBDA_RUNTIME_API="+rt.srv.Listener.Addr().String())
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
		times = append(times, coldStart{Init: init, Total: answer.at.Sub(start)})
	}
	return times, nil
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
