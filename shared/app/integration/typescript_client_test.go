package integration_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"contentapi/shared/app"
	"contentapi/shared/webhook"
)

// TestTypeScriptClient compiles the TypeScript client and its tests
// (client/ts) with tsc --strict and runs them with node against a stack
// that generates and delivers webhooks, whose endpoints may be on
// 127.0.0.1 as under WEBHOOKS_ALLOW_LOOPBACK=1 make run: create, list and
// follow links.next, a conditional read and update, a regenerate with
// Prefer: respond-async, a webhook's deliveries verified with the
// standardwebhooks package, delete. make ts-client installs the tools
// (make test does).
func TestTypeScriptClient(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	tools := filepath.Join(root, ".cache", "ts-client")
	tsc := filepath.Join(tools, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Fatalf("the TypeScript client's tools are not installed (make ts-client): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	// Compiled from the sources as they are now, so that no earlier
	// build is what runs.
	build := filepath.Join(tools, "build")
	if err := os.RemoveAll(build); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tsc, "-p", filepath.Join(root, "client", "ts", "tsconfig.json")).CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}

	var hooks *webhooksQueue
	g := newGenStack(t, genOptions{configure: func(cfg *app.Config) {
		hooks = withWebhooks(t)(cfg)
		cfg.Webhooks.Client = webhook.Options{AllowLoopback: true}
	}})
	send, err := g.app.SenderEntry()
	if err != nil {
		t.Fatal(err)
	}
	hooks.runSender(t, send)

	tests, err := filepath.Glob(filepath.Join(build, "test", "*.test.js"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no compiled tests in %s: %v", build, err)
	}
	cmd := exec.Command(node, append([]string{"--test", "--test-reporter=spec"}, tests...)...)
	cmd.Env = append(os.Environ(), "CONTENTAPI_URL="+g.url, "CONTENTAPI_KEY="+g.writeKey)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the TypeScript client's tests failed: %v", err)
	}
}

// TestTypeScriptTypesAreGenerated: client/ts/src/schema.gen.ts is what
// make generate writes from openapi.yaml (openapi-typescript).
func TestTypeScriptTypesAreGenerated(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	gen := filepath.Join(root, ".cache", "ts-client", "node_modules", ".bin", "openapi-typescript")
	if _, err := os.Stat(gen); err != nil {
		t.Fatalf("the TypeScript client's tools are not installed (make ts-client): %v", err)
	}
	out := filepath.Join(t.TempDir(), "schema.gen.ts")
	if msg, err := exec.Command(gen, filepath.Join(root, "openapi.yaml"), "--output", out).CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join(root, "client", "ts", "src", "schema.gen.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Error("client/ts/src/schema.gen.ts is not what make generate writes from openapi.yaml: run make generate")
	}
}
