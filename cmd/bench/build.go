package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// artifacts are the binaries the bench builds while it seeds.
type artifacts struct {
	done chan struct{}
	// Paths, set once done is closed; a failed build leaves its error.
	bootstrapARM64, bootstrapAMD64, gateway, appTest string
	errs                                             map[string]error
	took                                             map[string]time.Duration
}

// lambdaBuildFlags are the deployed bootstrap's (the Makefile's
// build-<Function> targets): no RPC, no HTTP/2, no paths, no symbols.
var lambdaBuildFlags = []string{"-tags", "lambda.norpc,nethttpomithttp2", "-trimpath", "-ldflags=-s -w"}

// startBuilds builds, one after another in the background: the documents
// function's bootstrap for arm64 (its size) and amd64 (its cold start on
// this machine), the local gateway, and the shared/app test binary (the
// handler benchmarks). Given names, it builds only those.
func startBuilds(ctx context.Context, root, work string, only ...string) *artifacts {
	a := &artifacts{done: make(chan struct{}), errs: map[string]error{}, took: map[string]time.Duration{}}
	go func() {
		defer close(a.done)
		build := func(name string, env []string, args ...string) string {
			if len(only) > 0 && !slices.Contains(only, name) {
				return ""
			}
			start := time.Now()
			out := filepath.Join(work, name)
			cmd := exec.CommandContext(ctx, "go", append(args[:1:1], append([]string{"-o", out}, args[1:]...)...)...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				a.errs[name] = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
				return ""
			}
			a.took[name] = time.Since(start)
			return out
		}
		lambda := func(arch string) []string {
			return []string{"GOOS=linux", "GOARCH=" + arch, "CGO_ENABLED=0"}
		}
		a.bootstrapARM64 = build("bootstrap-arm64", lambda("arm64"), append(append([]string{"build"}, lambdaBuildFlags...), "./functions/documents")...)
		a.bootstrapAMD64 = build("bootstrap-amd64", lambda("amd64"), append(append([]string{"build"}, lambdaBuildFlags...), "./functions/documents")...)
		a.appTest = build("app.test", nil, "test", "-c", "./shared/app")
		a.gateway = build("local", nil, "build", "./cmd/local")
	}()
	return a
}

// wait blocks until every build is done.
func (a *artifacts) wait(ctx context.Context) error {
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
