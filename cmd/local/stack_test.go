package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/local/ddblocal"
)

// TestStack runs what `make run` runs, on free ports and a temporary data
// directory: it must come up, print a working key, serve the API through
// the gateway over real HTTP, take `invoke` against it, and stop cleanly on
// cancel (Ctrl-C).
func TestStack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local")
	}
	p, err := loadProject()
	if err != nil {
		t.Fatal(err)
	}
	// runStack sets the functions' environment in this process; have the
	// test restore it.
	for k := range ddblocal.EnvVars(p.tmpl, "", localTables(p.tmpl)) {
		t.Setenv(k, "")
	}
	// A cold DynamoDB Local on a loaded two-core machine can take seconds
	// over its first transaction; this test checks wiring, not latency.
	t.Setenv(app.EnvRequestTimeout, "60")
	cfg := stackConfig{DataDir: t.TempDir(), FunctionTimeout: time.Minute}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, outW := io.Pipe()
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runStack(ctx, p, cfg, outW, stderr)
		outW.Close()
	}()
	defer func() {
		if t.Failed() {
			t.Logf("the stack's log:\n%s", stderr)
		}
	}()

	api, ddb, key := readBanner(t, out, done)

	client := &http.Client{Timeout: 2 * time.Minute}
	do := func(method, path, key, form string) (*http.Response, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, api+path, strings.NewReader(form))
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %v", method, path, err)
		}
		return resp, body
	}

	form := url.Values{"name": {"Hello"}, "prompt": {"Say hi"}}.Encode()
	resp, _ := do("POST", "/api/v1/documents", key, form)
	if resp.StatusCode != 201 || resp.Header.Get("Location") == "" {
		t.Errorf("create with the printed key: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// X-Request-Id is the gateway's request id: the app takes it from the event.
	if id := resp.Header.Get("X-Request-Id"); id == "" || id != resp.Header.Get("Apigw-Requestid") {
		t.Errorf("X-Request-Id %q, apigw-requestid %q", id, resp.Header.Get("Apigw-Requestid"))
	}
	if resp, body := do("GET", "/api/v1/documents?search=needle-for-the-log", key, ""); resp.StatusCode != 200 || body["data"] == nil {
		t.Errorf("list: %d %v", resp.StatusCode, body)
	}
	if resp, _ := do("GET", "/api/v1/images", auth.DemoKey, ""); resp.StatusCode != 200 {
		t.Errorf("the demo key: %d", resp.StatusCode)
	}
	if resp, _ := do("GET", "/api/v1/images", "", ""); resp.StatusCode != 401 {
		t.Errorf("no key: %d", resp.StatusCode)
	}
	// Through the ANY route to the app's 405, and the $default route to its
	// JSON 404: the gateway's own answers would have no "status".
	if resp, body := do("POST", "/api/v1/documents/1", key, form); resp.StatusCode != 405 || resp.Header.Get("Allow") == "" || body["status"] != float64(405) {
		t.Errorf("wrong method: %d Allow %q %v", resp.StatusCode, resp.Header.Get("Allow"), body)
	}
	if resp, body := do("GET", "/api/v1/nothing", key, ""); resp.StatusCode != 404 || body["status"] != float64(404) {
		t.Errorf("unknown path: %d %v", resp.StatusCode, body)
	}

	t.Run("invoke", func(t *testing.T) {
		u, err := url.Parse(ddb)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("DYNAMODB_PORT", u.Port())
		var stdout, errOut bytes.Buffer
		if err := run(ctx, []string{"invoke", filepath.Join(p.root, "events", "images-list.json")}, &stdout, &errOut); err != nil {
			t.Fatalf("invoke: %v\n%s", err, errOut.String())
		}
		var got events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || got.StatusCode != 200 {
			t.Errorf("invoke printed %s (%v)", stdout.String(), err)
		}
	})

	// Both servers stay on this machine, and the logs keep no query string.
	if !strings.HasPrefix(ddb, "http://127.0.0.1:") {
		t.Errorf("DynamoDB Local at %s", ddb)
	}
	if log := stderr.String(); !strings.Contains(log, "/api/v1/documents") || strings.Contains(log, "needle-for-the-log") {
		t.Errorf("the stack's log lacks the path or carries the query string:\n%s", log)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runStack after cancel: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runStack did not stop after cancel")
	}
	if _, err := http.Get(ddb); err == nil {
		t.Errorf("DynamoDB Local still answers on %s after the stack stopped", ddb)
	}
}

var (
	apiLine = regexp.MustCompile(`Local API:\s+(http://127\.0\.0\.1:\d+)/api/v1/`)
	ddbLine = regexp.MustCompile(`DynamoDB Local:\s+(http://\S+)`)
	keyLine = regexp.MustCompile(`^\s+(ck_\S+)\s*$`)
)

// readBanner reads what runStack prints at start: the API URL, DynamoDB
// Local's endpoint and the new key (the first key line).
func readBanner(t *testing.T, out io.Reader, done <-chan error) (api, ddb, key string) {
	t.Helper()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(90 * time.Second)
	for api == "" || ddb == "" || key == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("runStack ended its output early: %v", <-done)
			}
			if m := apiLine.FindStringSubmatch(line); m != nil {
				api = m[1]
			}
			if m := ddbLine.FindStringSubmatch(line); m != nil {
				ddb = m[1]
			}
			if m := keyLine.FindStringSubmatch(line); m != nil && key == "" {
				key = m[1]
			}
		case <-timeout:
			t.Fatal("runStack printed no banner in 90s")
		}
	}
	// The rest of the output must keep flowing, or runStack blocks on it.
	go func() {
		for range lines {
		}
	}()
	return api, ddb, key
}

// syncBuffer is a bytes.Buffer the server's goroutines can log into while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
