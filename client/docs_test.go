package client_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"contentapi/shared/local/doccheck"
)

// TestDocsShowTheExamples: every Go block of README.md and docs/*.md is the
// body of an Example function of this package, which the compiler checks,
// so a page's Go code compiles wherever the page moves it.
func TestDocsShowTheExamples(t *testing.T) {
	pages, err := doccheck.ReadPages("..")
	if err != nil {
		t.Fatal(err)
	}
	examples := exampleBodies(t)
	blocks := 0
	for _, p := range pages {
		for _, m := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(p.Text, -1) {
			blocks++
			if !examples[m[1]] {
				t.Errorf("%s: a Go block is no Example's body in client/example_test.go:\n%s", p.Path, m[1])
			}
		}
	}
	if blocks == 0 {
		t.Fatal("no page has a ```go block")
	}
}

// exampleBodies are the bodies of the Example functions of
// example_test.go, unindented once, as a page shows them.
func exampleBodies(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?s)\nfunc Example\w*\(\) \{\n(.*?)\n\}\n`).FindAllStringSubmatch(string(src), -1) {
		var body strings.Builder
		for _, line := range strings.Split(m[1], "\n") {
			body.WriteString(strings.TrimPrefix(line, "\t") + "\n")
		}
		out[body.String()] = true
	}
	if len(out) == 0 {
		t.Fatal("example_test.go has no func Example")
	}
	return out
}
