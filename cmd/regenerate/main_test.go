package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"contentapi/shared/app"
	"contentapi/shared/auth"
	"contentapi/shared/documents"
	"contentapi/shared/local/bedrockstandin"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/lambdalocal"
	"contentapi/shared/local/sam"
	localstack "contentapi/shared/local/stack"
)

// stack is the service with generation on, its real parts (DynamoDB Local,
// the Bedrock stand-in, the local S3, the streams delivered to the
// generator) behind the local API Gateway, and a key of account acme.
type stack struct {
	t     *testing.T
	url   string
	key   string
	parts *localstack.Generation
}

func newStack(t *testing.T) *stack {
	env := ddblocal.NewTestEnv(t)
	parts, err := localstack.StartGeneration(localstack.GenerationOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(parts.Close)
	cfg := app.Config{
		Region: ddblocal.Region, DynamoDBEndpoint: env.Endpoint, Tables: env.Tables,
		KeysTable: env.Tables["ApiKeysTable"], IdempotencyTable: env.Tables["IdempotencyTable"],
		AuthCacheTTL: time.Minute, RequestTimeout: 30 * time.Second, LogOutput: io.Discard,
		Generation: parts.Config(),
	}
	// One try in the request and one from the queue, each of two calls,
	// with short waits between them.
	cfg.Generation.ModelAttempts, cfg.Generation.ModelBackoff = 2, time.Millisecond
	cfg.Generation.MaxTries = 1
	cfg.Generation.Backoff = func(int) time.Duration { return 10 * time.Millisecond }
	db, err := app.NewDynamoDB(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(cfg, db, localstack.Parts)
	tmpl, err := sam.LoadProject()
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	stream, err := a.GeneratorEntry()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, err := localstack.DeliverGenerator(ctx, env.Client, env.Endpoint, tmpl, env.Tables, stream, quiet); err != nil {
		t.Fatal(err)
	}
	fns, err := a.APIEntries()
	if err != nil {
		t.Fatal(err)
	}
	gw, err := lambdalocal.NewGateway(tmpl, fns, quiet, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for fn := range gw.Timeouts {
		gw.Timeouts[fn] = time.Minute
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	key, _, err := auth.NewKeys(env.Client, cfg.KeysTable, cfg.KeyChecksum).
		Create(context.Background(), "acme", []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return &stack{t: t, url: srv.URL, key: key, parts: parts}
}

// call makes a request with the account's key and decodes its record.
func (s *stack) call(method, path string, form url.Values) (int, map[string]any) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Data map[string]any }
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		s.t.Fatal(err)
	}
	return res.StatusCode, body.Data
}

// create makes a record and waits for its generation to end; it returns
// the record's path and its generation's status and code.
func (s *stack) create(resource string, fields ...string) (string, string, string) {
	s.t.Helper()
	form := url.Values{}
	for i := 0; i < len(fields); i += 2 {
		form.Set(fields[i], fields[i+1])
	}
	status, d := s.call("POST", "/api/v1/"+resource, form)
	if status != http.StatusCreated {
		s.t.Fatalf("create %s: %d %v", resource, status, d)
	}
	path := fmt.Sprintf("/api/v1/%s/%v", resource, d["id"])
	st, code := s.settled(path)
	return path, st, code
}

// settled waits for the record's generation to end.
func (s *stack) settled(path string) (status, code string) {
	s.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		_, d := s.call("GET", path, nil)
		g, _ := d["generation"].(map[string]any)
		status, _ = g["status"].(string)
		if e, ok := g["error"].(map[string]any); ok {
			code, _ = e["code"].(string)
		}
		if status == "done" || status == "failed" {
			return status, code
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: generation still %q", path, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// regenerate runs the command against the stack.
func (s *stack) regenerate(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	env := map[string]string{"API_URL": s.url, "API_KEY": s.key}
	code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errs, http.DefaultClient)
	return code, out.String(), errs.String()
}

func ids(out string) []string {
	var rows []string
	for line := range strings.Lines(out) {
		f := strings.Split(strings.TrimSpace(line), "\t")
		rows = append(rows, f[0]+" "+f[1]+" "+f[2])
	}
	return rows
}

// The account's failed generations are listed, across pages and
// templates, by code; --apply regenerates them, and they are done.
func TestListsAndRegeneratesFailedGenerations(t *testing.T) {
	s := newStack(t)
	// Both tries of each record fail: two calls each, in the request and
	// from the queue.
	fail := []bedrockstandin.Fault{bedrockstandin.ServerError, bedrockstandin.ServerError, bedrockstandin.ServerError, bedrockstandin.ServerError}
	s.parts.Bedrock.Inject(fail...)
	image, st, code := s.create("images", "name", "x", "description", "A lighthouse", "resolution", "256x256")
	if st != "failed" || code != "model_unavailable" {
		t.Fatalf("image: %s %s", st, code)
	}
	s.parts.Bedrock.Inject(fail...)
	document, st, code := s.create("documents", "name", "x", "prompt", "Coffee", "template_id", "7")
	if st != "failed" || code != "model_unavailable" {
		t.Fatalf("document: %s %s", st, code)
	}
	filtered, st, code := s.create("documents", "name", "x", "prompt", "Something [standin:filter]")
	if st != "failed" || code != "content_filtered" {
		t.Fatalf("filtered: %s %s", st, code)
	}
	if _, st, _ := s.create("documents", "name", "x", "prompt", "Tea"); st != "done" {
		t.Fatalf("ok: %s", st)
	}
	row := func(path, code string) string {
		parts := strings.Split(path, "/")
		return parts[3] + " " + parts[4] + " " + code
	}

	exit, out, errs := s.regenerate()
	if want := []string{row(image, "model_unavailable"), row(document, "model_unavailable")}; exit != 0 || strings.Join(ids(out), ",") != strings.Join(want, ",") {
		t.Fatalf("list: exit %d, %q (%s), want %v", exit, ids(out), errs, want)
	}
	exit, out, _ = s.regenerate("--codes", "content_filtered", "--resources", "documents")
	if want := row(filtered, "content_filtered"); exit != 0 || strings.Join(ids(out), ",") != want {
		t.Fatalf("content_filtered: exit %d, %q, want %s", exit, ids(out), want)
	}

	exit, out, errs = s.regenerate("--apply")
	if exit != 0 || strings.Count(out, "regenerate: 202") != 2 {
		t.Fatalf("apply: exit %d\n%s%s", exit, out, errs)
	}
	for _, path := range []string{image, document} {
		if st, code := s.settled(path); st != "done" {
			t.Errorf("%s after --apply: %s %s", path, st, code)
		}
	}
	if st, code := s.settled(filtered); st != "failed" || code != "content_filtered" {
		t.Errorf("a code not asked for was regenerated: %s %s", st, code)
	}
	if exit, out, _ := s.regenerate(); exit != 0 || out != "" {
		t.Errorf("after --apply: exit %d, %q", exit, out)
	}
	// A run that stopped midway and is run again regenerates nothing
	// twice: the same failure sends the same Idempotency-Key.
	s.parts.Bedrock.Inject(fail...)
	again, st, _ := s.create("documents", "name", "x", "prompt", "Coffee", "template_id", "3")
	if st != "failed" {
		t.Fatalf("again: %s", st)
	}
	r, err := newRunner(s.url, s.key, http.DefaultClient, []string{"model_unavailable"})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := r.failures(context.Background(), documents.Resource)
	if err != nil || len(failed) != 1 || row(again, "model_unavailable") != "documents "+fmt.Sprint(failed[0].id)+" model_unavailable" {
		t.Fatalf("failed documents %+v, %v", failed, err)
	}
	for i, want := range []bool{false, true} {
		status, replayed, err := r.regenerate(context.Background(), failed[0])
		if err != nil || status != http.StatusAccepted || replayed != want {
			t.Fatalf("regenerate %d: %d, replayed %v, %v", i+1, status, replayed, err)
		}
	}
	if st, _ := s.settled(again); st != "done" {
		t.Errorf("again: %s", st)
	}

	// A key the API refuses stops the run, saying so.
	s.key = "not-a-key"
	if exit, _, errs := s.regenerate(); exit != 1 || !strings.Contains(errs, "listing images: 401") {
		t.Errorf("a refused key: exit %d, %s", exit, errs)
	}
}

func TestUsage(t *testing.T) {
	var out, errs bytes.Buffer
	for _, c := range []struct {
		args []string
		env  map[string]string
	}{
		{nil, map[string]string{"API_URL": "http://127.0.0.1:9"}}, // no key
		{[]string{"--nope"}, map[string]string{"API_URL": "http://127.0.0.1:9", "API_KEY": "k"}},
		{[]string{"extra"}, map[string]string{"API_URL": "http://127.0.0.1:9", "API_KEY": "k"}},
	} {
		if code := run(context.Background(), c.args, func(k string) string { return c.env[k] }, &out, &errs, http.DefaultClient); code != 2 {
			t.Errorf("%v %v: exit %d, want 2", c.args, c.env, code)
		}
	}
	if !strings.Contains(errs.String(), "usage:") {
		t.Errorf("no usage: %s", errs.String())
	}
}
