package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"contentapi/shared/local/stack"
)

// artifacts are the binaries the bench builds while it seeds and measures.
type artifacts struct {
	done chan struct{}
	mu   sync.Mutex
	// By name, once done is closed: a path, or the build's error.
	paths map[string]string
	errs  map[string]error
	took  map[string]time.Duration
}

type build struct {
	name string
	run  func(ctx context.Context, root, out string) error
}

func lambda(arch, pkg string) func(context.Context, string, string) error {
	return func(ctx context.Context, root, out string) error {
		return stack.BuildLambda(ctx, root, out, arch, pkg)
	}
}

// buildQueues run side by side, each one build after another: the
// documents function's bootstrap for arm64 (its size) and amd64 (its cold
// start on this machine), the shared/app/integration test binary (the handler
// benchmarks) and the local stack; and the other functions' bootstraps,
// and the empty handler of the cold start's floor.
var buildQueues = [][]build{
	{
		{"bootstrap-arm64", lambda("arm64", "./functions/documents")},
		{"bootstrap-amd64", lambda("amd64", "./functions/documents")},
		{"app.test", func(ctx context.Context, root, out string) error {
			return stack.GoBuild(ctx, root, out, nil, "test", "-c", "./shared/app/integration")
		}},
		{"local", stack.BuildProcess},
	},
	{
		{"images-arm64", lambda("arm64", "./functions/images")},
		{"generator-arm64", lambda("arm64", "./functions/generator")},
		{"generator-amd64", lambda("amd64", "./functions/generator")},
		{"tally-arm64", lambda("arm64", "./functions/tally")},
		{"tally-amd64", lambda("amd64", "./functions/tally")},
		{"sender-arm64", lambda("arm64", "./functions/sender")},
		{"sender-amd64", lambda("amd64", "./functions/sender")},
		{"floor-amd64", lambda("amd64", "./shared/local/bench/floor")},
	},
}

// startBuilds builds buildQueues into work, in the background.
func startBuilds(ctx context.Context, root, work string) *artifacts {
	a := &artifacts{done: make(chan struct{}), paths: map[string]string{}, errs: map[string]error{}, took: map[string]time.Duration{}}
	var wg sync.WaitGroup
	for _, queue := range buildQueues {
		wg.Go(func() {
			for _, b := range queue {
				start, out := time.Now(), filepath.Join(work, b.name)
				err := b.run(ctx, root, out)
				a.mu.Lock()
				if err != nil {
					a.errs[b.name] = err
				} else {
					a.paths[b.name], a.took[b.name] = out, time.Since(start)
				}
				a.mu.Unlock()
			}
		})
	}
	go func() { wg.Wait(); close(a.done) }()
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

// path waits for the builds and returns the binary of that name, or why
// there is none.
func (a *artifacts) path(ctx context.Context, name string) (string, error) {
	if err := a.wait(ctx); err != nil {
		return "", err
	}
	if err := a.errs[name]; err != nil {
		return "", err
	}
	if a.paths[name] == "" {
		return "", fmt.Errorf("%s was not built", name)
	}
	return a.paths[name], nil
}
