package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's curl examples are run as printed, in order, against a fresh
// stack: each must succeed.
func TestReadmeExamples(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	commands := curlCommands(string(raw))
	if len(commands) < 10 {
		t.Fatalf("found %d curl examples in README.md, want one per operation", len(commands))
	}
	s := newStack(t)
	vars := map[string]string{"API": s.url + "/api/v1", "KEY": s.writeKey}
	for _, line := range commands {
		rq, err := parseCurl(line, vars)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		r := s.do(rq)
		if r.Status != 200 && r.Status != 201 {
			t.Fatalf("README example failed with %d: %s\n%s", r.Status, line, r.Raw)
		}
	}
}

// curlCommands returns the curl commands of the README's sh blocks, with
// continuation lines joined.
func curlCommands(readme string) []string {
	var out []string
	inBlock := false
	var current string
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		if current != "" {
			current += " " + strings.TrimSpace(strings.TrimSuffix(line, "\\"))
		} else if strings.HasPrefix(strings.TrimSpace(line), "curl ") {
			current = strings.TrimSpace(strings.TrimSuffix(line, "\\"))
		}
		if current != "" && !strings.HasSuffix(strings.TrimSpace(line), "\\") {
			out = append(out, current)
			current = ""
		}
	}
	return out
}

// parseCurl reads the curl options the examples use: -s, -X, -H, -d.
func parseCurl(line string, vars map[string]string) (request, error) {
	words, err := shellWords(line, vars)
	if err != nil {
		return request{}, err
	}
	rq := request{header: map[string]string{}}
	var data []string
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-s":
		case "-X", "-H", "-d":
			if i+1 >= len(words) {
				return request{}, fmt.Errorf("%s without a value", w)
			}
			i++
			switch w {
			case "-X":
				rq.method = words[i]
			case "-H":
				k, v, _ := strings.Cut(words[i], ":")
				rq.header[strings.TrimSpace(k)] = strings.TrimSpace(v)
			case "-d":
				data = append(data, words[i])
			}
		default:
			if strings.HasPrefix(w, "-") {
				return request{}, fmt.Errorf("option %s is not understood by this test", w)
			}
			rq.path = w
		}
	}
	if rq.method == "" {
		rq.method = "GET"
		if len(data) > 0 {
			rq.method = "POST"
		}
	}
	if len(data) > 0 {
		rq.body = strings.Join(data, "&")
		rq.contentType = "application/x-www-form-urlencoded" // what curl -d sends
	}
	if ct, ok := rq.header["Content-Type"]; ok {
		rq.contentType = ct
		delete(rq.header, "Content-Type")
	}
	if auth, ok := rq.header["Authorization"]; ok {
		rq.key = strings.TrimPrefix(auth, "Bearer ")
		delete(rq.header, "Authorization")
	}
	base := vars["API"][:strings.Index(vars["API"], "/api/v1")]
	rq.path = strings.TrimPrefix(rq.path, base)
	return rq, nil
}

// shellWords splits like sh: single quotes literal, double quotes and bare
// words expand $NAME.
func shellWords(line string, vars map[string]string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '")
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unclosed \"")
			}
			cur.WriteString(expand(line[i+1:i+1+end], vars))
			i += end + 1
			inWord = true
		default:
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\'' && line[j] != '"' {
				j++
			}
			cur.WriteString(expand(line[i:j], vars))
			i = j - 1
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func expand(s string, vars map[string]string) string {
	return os.Expand(s, func(name string) string { return vars[name] })
}
