package client_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeShowsTheExample: the README's Go block is the body of Example,
// which the compiler checks.
func TestReadmeShowsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```go\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("README.md has no ```go block")
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "func Example() {\n")
	body, _, closed = strings.Cut(body, "\n}\n")
	if !ok || !closed {
		t.Fatal("example_test.go has no func Example")
	}
	var want strings.Builder
	for _, line := range strings.Split(body, "\n") {
		want.WriteString(strings.TrimPrefix(line, "\t") + "\n")
	}
	if block != want.String() {
		t.Errorf("README.md's Go example differs from Example in client/example_test.go:\n%s\nwant:\n%s", block, want.String())
	}
}
