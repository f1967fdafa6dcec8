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
