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
	blocksAreExamples(t, pages, "go", exampleBodies(t), "client/example_test.go")
}

// blocksAreExamples fails where a page's block of lang is none of the
// examples' bodies, and where no page has one.
func blocksAreExamples(t *testing.T, pages []doccheck.Page, lang string, examples map[string]bool, file string) {
	t.Helper()
	blocks := 0
	for _, p := range pages {
		for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(p.Text, -1) {
			blocks++
			if !examples[m[1]] {
				t.Errorf("%s: a %s block is no example's body in %s:\n%s", p.Path, lang, file, m[1])
			}
		}
	}
	if blocks == 0 {
		t.Fatalf("no page has a ```%s block", lang)
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

// TestDocsShowTheTypeScriptExamples: every TypeScript block of README.md and
// docs/*.md is the body of an example function of client/ts/test/example.ts,
// which tsc --strict compiles (TestTypeScriptClient).
func TestDocsShowTheTypeScriptExamples(t *testing.T) {
	pages, err := doccheck.ReadPages("..")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("ts/test/example.ts")
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?s)\nexport async function example\w*\(\): Promise<void> \{\n(.*?)\n\}\n`).FindAllStringSubmatch(string(src), -1) {
		var body strings.Builder
		for _, line := range strings.Split(m[1], "\n") {
			body.WriteString(strings.TrimPrefix(line, "  ") + "\n")
		}
		examples[body.String()] = true
	}
	if len(examples) == 0 {
		t.Fatal("example.ts has no example function")
	}
	blocksAreExamples(t, pages, "ts", examples, "client/ts/test/example.ts")
}
