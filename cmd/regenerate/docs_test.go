package main

import (
	"path/filepath"
	"testing"

	"github.com/google/shlex"

	"contentapi/shared/local/doccheck"
)

// Every regenerate command the pages show runs, in order, against the
// local stack, as the stack's API_URL and a key of its account give it.
func TestDocsCommands(t *testing.T) {
	pages, err := doccheck.ReadPages(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	commands := doccheck.Commands(pages, "go run ./cmd/regenerate")
	if len(commands) < 3 {
		t.Fatalf("found %d regenerate commands in the pages: the pattern no longer finds them", len(commands))
	}
	s := newStack(t)
	for _, line := range commands {
		words, err := shlex.Split(line)
		if err != nil || len(words) < 3 {
			t.Fatalf("%s: %v", line, err)
		}
		if code, _, stderr := s.regenerate(words[3:]...); code != 0 {
			t.Errorf("%s: exit %d\n%s", line, code, stderr)
		}
	}
}
