package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Page is one page: its path from the repository's root, and its text.
type Page struct {
	Path, Text string
}

// ReadPages returns the pages under root, README.md first, then docs/*.md by
// name.
func ReadPages(root string) ([]Page, error) {
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []Page
	for _, p := range append([]string{filepath.Join(root, "README.md")}, paths...) {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil, err
		}
		out = append(out, Page{filepath.ToSlash(rel), string(raw)})
	}
	return out, nil
}

var (
	shellBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")
	anyBlock   = regexp.MustCompile("(?s)```.*?```")
)

// Commands returns the commands that start with one of prefixes ("go run
// ./cmd/apikey"), page by page: those of the sh blocks in order, then those
// of the inline code. Continuation lines are joined, a command substituted
// in an assignment (KEY=$(go run ...)) is taken out of it, and a comment
// after a command is left to the caller's shell split.
func Commands(pages []Page, prefixes ...string) []string {
	var out []string
	for _, p := range pages {
		text := strings.ReplaceAll(p.Text, "\\\n", " ")
		var lines []string
		for _, m := range shellBlock.FindAllStringSubmatch(text, -1) {
			lines = append(lines, strings.Split(m[1], "\n")...)
		}
		// Inline code that starts with a prefix: matched from the prefix,
		// so that a backtick left alone in prose pairs with nothing.
		prose := anyBlock.ReplaceAllString(text, "")
		for _, prefix := range prefixes {
			for _, m := range regexp.MustCompile("`("+regexp.QuoteMeta(prefix)+" [^`]*)`").FindAllStringSubmatch(prose, -1) {
				lines = append(lines, strings.Join(strings.Fields(m[1]), " "))
			}
		}
		for _, line := range lines {
			line = strings.TrimSpace(line)
			for _, prefix := range prefixes {
				if substituted := strings.Index(line, "$("+prefix+" "); substituted >= 0 {
					line = line[substituted+2 : strings.LastIndex(line, ")")]
				}
				if strings.HasPrefix(line, prefix+" ") {
					out = append(out, line)
					break
				}
			}
		}
	}
	return out
}

var (
	listItem    = regexp.MustCompile(`^([-*]|\d+\.)\s+`)
	linkTarget  = regexp.MustCompile(`\]\([^)]*\)`)
	sentenceEnd = regexp.MustCompile(`[.!?]\s+`)
	inlineCode  = regexp.MustCompile("`[^`]+`")
)

// Sentences returns the sentences of a page's prose, as a reader meets
// them: code blocks, headings and tables left out, a link read as its text,
// and each paragraph and list item ending a sentence of its own whether or
// not it ends in a full stop. A sentence ends at '.', '!' or '?' followed by
// a space or a line's end (a file's name, go.mod, ends none), or at the end
// of its paragraph or item.
func Sentences(text string) []string {
	text = anyBlock.ReplaceAllString(text, "")
	var units []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			units = append(units, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "", strings.HasPrefix(line, "#"), strings.HasPrefix(line, "|"):
			flush()
		case listItem.MatchString(line):
			flush()
			cur = []string{listItem.ReplaceAllString(line, "")}
		default:
			cur = append(cur, line)
		}
	}
	flush()
	var out []string
	for _, u := range units {
		u = linkTarget.ReplaceAllString(u, "]")
		// Inline code is a word or a few: its full stops end nothing.
		u = inlineCode.ReplaceAllStringFunc(u, func(code string) string { return strings.ReplaceAll(code, ".", "\x00") })
		start := 0
		for _, end := range sentenceEnd.FindAllStringIndex(u, -1) {
			out = append(out, u[start:end[0]+1])
			start = end[1]
		}
		if rest := strings.TrimSpace(u[start:]); rest != "" {
			out = append(out, rest)
		}
	}
	for i := range out {
		out[i] = strings.ReplaceAll(out[i], "\x00", ".")
	}
	return out
}

// InlineCode returns the text of every inline code span of a page's prose
// (code blocks left out), a span broken over lines joined with a space.
func InlineCode(text string) []string {
	var out []string
	for _, m := range inlineCode.FindAllString(anyBlock.ReplaceAllString(text, ""), -1) {
		out = append(out, strings.Join(strings.Fields(strings.Trim(m, "`")), " "))
	}
	return out
}
