// The Runtime API: this file stands in for Lambda's (2018-06-01), so
// that a function's bootstrap runs on this machine as Lambda runs it:
// exec'd with AWS_LAMBDA_RUNTIME_API pointing here, it is handed one event
// and its response is taken. make bench times cold starts with it.

package lambdalocal

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"contentapi/shared/local/ddblocal"
)

// server hands one event to the bootstrap and takes its response. A second
// "next" waits until the bootstrap is killed, as a frozen sandbox would.
type server struct {
	srv       *httptest.Server
	mu        sync.Mutex
	requestID string
	event     []byte
	delivered bool
	nextAt    time.Time // when the bootstrap first asked for an event
	answers   chan answer
}

type answer struct {
	at   time.Time
	body []byte
	err  string // set when the bootstrap reported an error
}

const prefix = "/2018-06-01/runtime/"

// arm sets the event the next bootstrap receives.
func (rt *server) arm(requestID string, event []byte) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.requestID, rt.event, rt.delivered = requestID, event, false
	for len(rt.answers) > 0 {
		<-rt.answers
	}
}

func (rt *server) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, prefix)
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
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:contentapi")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-6920a8ce-4b1c0e3b7d2a9f6e1c8b5a40;Parent=53995c3f42cd8ad8;Sampled=0")
		h.Set("Content-Type", "application/json")
		_, _ = w.Write(ev)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/response"):
		at := time.Now()
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		rt.answers <- answer{at: at, body: body}
	case r.Method == http.MethodPost && (strings.HasSuffix(path, "/error") || path == "init/error"):
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		rt.answers <- answer{at: time.Now(), err: string(body)}
	default:
		http.NotFound(w, r)
	}
}

// ColdStart is one fresh process of the bootstrap: its times from exec, and the
// response it gave.
type ColdStart struct {
	Init     time.Duration // to its first request for an event: runtime, package init, main
	Total    time.Duration // to its response
	Response []byte
}

// ColdStarts execs bootstrap until runs fresh processes, each given event
// (AWS_LAMBDA_RUNTIME_API added to env), have answered it with a response
// accept takes, and returns those runs. A run that reports an error, gives
// no response within 15 s or one accept refuses measures no cold start:
// on a busy machine it is the local parts (DynamoDB Local's JVM, a
// stand-in) that stall. It is run again, up to runs more times in all,
// and its reason is in failed; only past that is it an error, with the end
// of the process's output.
func ColdStarts(ctx context.Context, bootstrap string, env []string, event []byte, runs int, accept func(response []byte) error) (out []ColdStart, failed []string, err error) {
	rt := &server{answers: make(chan answer, 4)}
	rt.srv = httptest.NewServer(http.HandlerFunc(rt.serve))
	defer rt.srv.Close()
	env = append(slices.Clone(env), "AWS_LAMBDA_RUNTIME_API="+rt.srv.Listener.Addr().String())
	for i := 0; len(out) < runs; i++ {
		run, err := coldStart(ctx, rt, i, bootstrap, env, event)
		if err == nil {
			err = accept(run.Response)
		}
		if err == nil {
			out = append(out, run)
			continue
		}
		failed = append(failed, fmt.Sprintf("run %d: %v", i+1, err))
		if len(failed) > runs || ctx.Err() != nil {
			return nil, failed, fmt.Errorf("cold start: %d runs failed, the last: %w", len(failed), err)
		}
	}
	return out, failed, nil
}

// coldStart execs bootstrap once, as the ith run, and times it.
func coldStart(ctx context.Context, rt *server, i int, bootstrap string, env []string, event []byte) (ColdStart, error) {
	rt.arm(fmt.Sprintf("c0ld5tart-%04d-4b1c-8e3b-7d2a9f6e1c8b", i), event)
	cmd := exec.Command(bootstrap)
	cmd.Env = env
	output := ddblocal.NewTail(2000)
	cmd.Stdout, cmd.Stderr = output, output
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return ColdStart{}, err
	}
	var a answer
	select {
	case a = <-rt.answers:
	case <-time.After(15 * time.Second):
		a.err = "no response within 15s"
	case <-ctx.Done():
		a.err = ctx.Err().Error()
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if a.err != "" {
		return ColdStart{}, fmt.Errorf("%s\n%s", a.err, output)
	}
	rt.mu.Lock()
	init := rt.nextAt.Sub(start)
	rt.mu.Unlock()
	return ColdStart{Init: init, Total: a.at.Sub(start), Response: a.body}, nil
}

// RuntimeEnv is the environment Lambda gives the function named function (its
// logical ID) whose code is in taskRoot, over vars, the template's
// variables.
func RuntimeEnv(vars map[string]string, function, taskRoot string) []string {
	all := maps.Clone(vars)
	maps.Copy(all, map[string]string{
		"AWS_DEFAULT_REGION":              vars["AWS_REGION"],
		"AWS_LAMBDA_FUNCTION_NAME":        "contentapi-" + function,
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/contentapi-" + function,
		"AWS_EXECUTION_ENV":               "AWS_Lambda_provided.al2023",
		"_HANDLER":                        "bootstrap",
		"LAMBDA_TASK_ROOT":                taskRoot,
		"TZ":                              ":UTC",
		"PATH":                            "/usr/local/bin:/usr/bin:/bin",
	})
	env := make([]string, 0, len(all))
	for k, v := range all {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}
