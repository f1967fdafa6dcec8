package doccheck

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A Query is a CloudWatch Logs Insights query as the runbook writes one,
// read in the part of the language the runbook uses: commands joined by
// |, of which fields, filter, stats (its fields and its by) and sort;
// filter's comparisons (=, !=, <, <=, >, >=) of a field with a string or a
// number, like with a /regex/, ispresent(field), and, or, not and
// parentheses. A field is a JSON member, a nested one by its dotted path
// (record.metrics.durationMs), as Logs Insights discovers them; the @
// fields are CloudWatch's own and every line has them.
type Query struct {
	Text string
	// Reads are the fields the query shows or aggregates (fields, stats):
	// a line the filter keeps should have them.
	Reads  []string
	filter expr
}

// InsightsQueries returns the queries of text: each fenced block without a
// language, and each inline code span outside the fenced blocks that
// starts with "fields " or "filter ", with the log groups (logical IDs)
// named in an "over `...`" between it and the next query; none if there
// is none.
func InsightsQueries(text string) []QueryIn {
	type found struct {
		start, end int
		query      string
	}
	var all []found
	inline := regexp.MustCompile("`((?:fields|filter) [^`]*)`")
	prose := func(from, to int) {
		for _, m := range inline.FindAllStringSubmatchIndex(text[from:to], -1) {
			all = append(all, found{from + m[0], from + m[1], text[from+m[2] : from+m[3]]})
		}
	}
	at, proseFrom := 0, 0
	blockStart, inBlock, plain := 0, false, false
	for _, l := range strings.SplitAfter(text, "\n") {
		if fence := strings.TrimSpace(l); strings.HasPrefix(fence, "```") {
			switch {
			case !inBlock:
				prose(proseFrom, at)
				inBlock, plain, blockStart = true, fence == "```", at
			case fence == "```":
				if plain {
					all = append(all, found{blockStart, at + len(l), text[blockStart+strings.Index(text[blockStart:], "\n")+1 : at]})
				}
				inBlock, proseFrom = false, at+len(l)
			}
		}
		at += len(l)
	}
	if !inBlock {
		prose(proseFrom, len(text))
	}
	over := regexp.MustCompile("over `([^`]*)`")
	var out []QueryIn
	for i, f := range all {
		end := len(text)
		if i+1 < len(all) {
			end = all[i+1].start
		}
		in := QueryIn{Text: strings.Join(strings.Fields(f.query), " ")}
		if g := over.FindStringSubmatch(text[f.end:end]); g != nil {
			in.Groups = strings.Fields(g[1])
		}
		out = append(out, in)
	}
	return out
}

// QueryIn is a query's text and the log groups it is run over.
type QueryIn struct {
	Text   string
	Groups []string
}

// ParseQuery reads q.
func ParseQuery(q string) (*Query, error) {
	out := &Query{Text: q}
	for _, cmd := range splitPipes(q) {
		verb, arg, _ := strings.Cut(strings.TrimSpace(cmd), " ")
		arg = strings.TrimSpace(arg)
		switch verb {
		case "fields":
			for _, f := range strings.Split(arg, ",") {
				out.Reads = append(out.Reads, strings.TrimSpace(f))
			}
		case "filter":
			p := &parser{toks: tokenize(arg)}
			e, err := p.or()
			if err == nil && p.i < len(p.toks) {
				err = fmt.Errorf("unexpected %q", p.toks[p.i])
			}
			if err != nil {
				return nil, fmt.Errorf("filter %s: %w", arg, err)
			}
			if out.filter != nil {
				prev := out.filter
				out.filter = func(l line) bool { return prev(l) && e(l) }
			} else {
				out.filter = e
			}
		case "stats":
			aggs, by, _ := strings.Cut(arg, " by ")
			for _, m := range regexp.MustCompile(`\w+\(([^()]*)\)`).FindAllStringSubmatch(aggs, -1) {
				if f := strings.TrimSpace(m[1]); f != "" && f != "*" {
					out.Reads = append(out.Reads, f)
				}
			}
			for _, f := range strings.Split(by, ",") {
				if f = strings.TrimSpace(f); f != "" && !strings.HasPrefix(f, "bin(") {
					out.Reads = append(out.Reads, f)
				}
			}
		case "sort", "limit":
		default:
			return nil, fmt.Errorf("a command the check does not know: %q", verb)
		}
	}
	return out, nil
}

// Matches reports whether the query's filter keeps the JSON line.
func (q *Query) Matches(raw []byte) bool {
	l, ok := parseLine(raw)
	return ok && (q.filter == nil || q.filter(l))
}

// Has reports whether the JSON line has field (every line has the @
// fields).
func Has(raw []byte, field string) bool {
	if strings.HasPrefix(field, "@") {
		return true
	}
	l, ok := parseLine(raw)
	_, present := l[field]
	return ok && present
}

// line is a JSON line's fields by their dotted paths, as text.
type line map[string]string

func parseLine(raw []byte) (line, bool) {
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	l := line{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(prefix+k+".", e)
			}
		default:
			l[strings.TrimSuffix(prefix, ".")] = fmt.Sprint(x)
		}
	}
	walk("", v)
	return l, true
}

type expr func(line) bool

func splitPipes(q string) []string {
	var parts []string
	inString, inRegex, start := false, false, 0
	for i, c := range q {
		switch {
		case c == '"' && !inRegex:
			inString = !inString
		case c == '/' && !inString:
			inRegex = !inRegex
		case c == '|' && !inString && !inRegex:
			parts = append(parts, q[start:i])
			start = i + 1
		}
	}
	return append(parts, q[start:])
}

var token = regexp.MustCompile(`\s*("(?:[^"\\]|\\.)*"|/(?:[^/\\]|\\.)*/|>=|<=|!=|[=<>()]|[\w@.]+)`)

func tokenize(s string) []string {
	var toks []string
	for _, m := range token.FindAllStringSubmatch(s, -1) {
		toks = append(toks, m[1])
	}
	return toks
}

type parser struct {
	toks []string
	i    int
}

func (p *parser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *parser) next() string { t := p.peek(); p.i++; return t }

func (p *parser) or() (expr, error) {
	return p.joined("or", p.and, func(a, b bool) bool { return a || b })
}

func (p *parser) and() (expr, error) {
	return p.joined("and", p.unary, func(a, b bool) bool { return a && b })
}

// joined reads operands separated by word, each read by operand, joined
// left to right.
func (p *parser) joined(word string, operand func() (expr, error), join func(a, b bool) bool) (expr, error) {
	l, err := operand()
	for err == nil && p.peek() == word {
		p.next()
		var r expr
		if r, err = operand(); err == nil {
			a, b := l, r
			l = func(x line) bool { return join(a(x), b(x)) }
		}
	}
	return l, err
}

func (p *parser) unary() (expr, error) {
	switch t := p.next(); t {
	case "not":
		e, err := p.unary()
		return func(x line) bool { return e != nil && !e(x) }, err
	case "(":
		e, err := p.or()
		if err == nil && p.next() != ")" {
			err = fmt.Errorf("a ( without its )")
		}
		return e, err
	case "ispresent":
		if p.next() != "(" {
			return nil, fmt.Errorf("ispresent without (")
		}
		field := p.next()
		if p.next() != ")" {
			return nil, fmt.Errorf("ispresent(%s without )", field)
		}
		return func(x line) bool { _, ok := x[field]; return ok }, nil
	default:
		return p.comparison(t)
	}
}

func (p *parser) comparison(field string) (expr, error) {
	op, lit := p.next(), p.next()
	if op == "like" {
		if !strings.HasPrefix(lit, "/") {
			return nil, fmt.Errorf("like %s: only a /regex/ here", lit)
		}
		re, err := regexp.Compile(lit[1 : len(lit)-1])
		if err != nil {
			return nil, err
		}
		return func(x line) bool { v, ok := x[field]; return ok && re.MatchString(v) }, nil
	}
	want, isString := lit, strings.HasPrefix(lit, `"`)
	if isString {
		var err error
		if want, err = strconv.Unquote(lit); err != nil {
			return nil, err
		}
	} else if _, err := strconv.ParseFloat(lit, 64); err != nil {
		return nil, fmt.Errorf("%s %s %s: neither a string nor a number", field, op, lit)
	}
	cmp := map[string]func(int) bool{
		"=": func(c int) bool { return c == 0 }, "!=": func(c int) bool { return c != 0 },
		"<": func(c int) bool { return c < 0 }, "<=": func(c int) bool { return c <= 0 },
		">": func(c int) bool { return c > 0 }, ">=": func(c int) bool { return c >= 0 },
	}[op]
	if cmp == nil {
		return nil, fmt.Errorf("%s: no operator %q", field, op)
	}
	return func(x line) bool {
		v, ok := x[field]
		if !ok {
			return false
		}
		// Numbers compare as numbers, whether the line wrote them as
		// numbers or as strings (the access log's status).
		a, errA := strconv.ParseFloat(v, 64)
		b, errB := strconv.ParseFloat(want, 64)
		if errA == nil && errB == nil {
			switch {
			case a < b:
				return cmp(-1)
			case a > b:
				return cmp(1)
			}
			return cmp(0)
		}
		return cmp(strings.Compare(v, want))
	}, nil
}
