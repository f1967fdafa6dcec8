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
	examples := functionBodies(t, "example_test.go", `(?s)\nfunc Example\w*\(\) \{\n(.*?)\n\}\n`, "\t")
	blocksAreExamples(t, pages, "go", examples, "client/example_test.go")
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

// functionBodies are the bodies of the functions of file that function
// (a regular expression whose group is the body) finds, each line
// unindented once by indent, as a page shows them.
func functionBodies(t *testing.T, file, function, indent string) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(function).FindAllStringSubmatch(string(src), -1) {
		var body strings.Builder
		for _, line := range strings.Split(m[1], "\n") {
			body.WriteString(strings.TrimPrefix(line, indent) + "\n")
		}
		out[body.String()] = true
	}
	if len(out) == 0 {
		t.Fatalf("%s has no example function", file)
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
	examples := functionBodies(t, "ts/test/example.ts", `(?s)\nexport async function example\w*\(\): Promise<void> \{\n(.*?)\n\}\n`, "  ")
	blocksAreExamples(t, pages, "ts", examples, "client/ts/test/example.ts")
}
